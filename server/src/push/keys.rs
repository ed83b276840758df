//! The server's VAPID key (RFC 8292): one P-256 key pair, made on first
//! start and kept in `<state-dir>/push-vapid.key` (mode 0600, the private
//! scalar in base64url), so subscriptions made against its public key keep
//! working across restarts. It signs the ES256 JWT each push request carries.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};

/// File name of the key in the state directory.
pub(crate) const KEY_FILE: &str = "push-vapid.key";

/// See the module docs.
pub(crate) struct Vapid {
    key: SigningKey,
    /// The uncompressed public point, base64url.
    public_b64: String,
}

impl Vapid {
    /// Reads the key from `state_dir`, or makes one and saves it.
    pub(crate) fn load_or_create(state_dir: &Path) -> anyhow::Result<Self> {
        let path = state_dir.join(KEY_FILE);
        let key = match std::fs::read_to_string(&path) {
            Ok(text) => {
                let bytes = B64
                    .decode(text.trim())
                    .map_err(|e| anyhow::anyhow!("{}: not base64url: {e}", path.display()))?;
                SigningKey::from_slice(&bytes)
                    .map_err(|e| anyhow::anyhow!("{}: not a P-256 key: {e}", path.display()))?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut bytes = [0u8; 32];
                let key = loop {
                    getrandom::fill(&mut bytes)
                        .map_err(|e| anyhow::anyhow!("reading OS randomness: {e}"))?;
                    // Out of range (≥ the group order, or 0) about once in 2^32.
                    if let Ok(k) = SigningKey::from_slice(&bytes) {
                        break k;
                    }
                };
                // create_new: two duets on one state dir never overwrite
                // each other's key; 0600 from the first byte.
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&path)
                    .map_err(|e| anyhow::anyhow!("creating {}: {e}", path.display()))?;
                writeln!(f, "{}", B64.encode(key.to_bytes()))?;
                f.sync_all()?;
                tracing::info!(path = %path.display(), "made a VAPID key for Web Push");
                key
            }
            Err(e) => anyhow::bail!("reading {}: {e}", path.display()),
        };
        let public = key.verifying_key().to_encoded_point(false);
        Ok(Self {
            public_b64: B64.encode(public.as_bytes()),
            key,
        })
    }

    /// The public key, base64url (the browser's `applicationServerKey`).
    pub(crate) fn public_key(&self) -> &str {
        &self.public_b64
    }

    /// The `Authorization` header for a push to a service at `audience`
    /// (the endpoint's origin): `vapid t=<JWT>, k=<public key>`, valid
    /// until `exp` (Unix seconds; RFC 8292 allows at most 24 h ahead).
    pub(crate) fn authorization(&self, audience: &str, exp: u64, subject: &str) -> String {
        let header = B64.encode(br#"{"typ":"JWT","alg":"ES256"}"#);
        let claims = serde_json::json!({"aud": audience, "exp": exp, "sub": subject});
        let claims = B64.encode(claims.to_string());
        let signing_input = format!("{header}.{claims}");
        // ES256 in a JWT is the raw r||s (64 bytes), not DER.
        let sig: Signature = self.key.sign(signing_input.as_bytes());
        format!(
            "vapid t={signing_input}.{}, k={}",
            B64.encode(sig.to_bytes()),
            self.public_b64
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::VerifyingKey;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn made_once_private_and_reloaded() {
        let dir = tempfile::tempdir().unwrap();
        let a = Vapid::load_or_create(dir.path()).unwrap();
        let mode = std::fs::metadata(dir.path().join(KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let b = Vapid::load_or_create(dir.path()).unwrap();
        assert_eq!(a.public_key(), b.public_key());
        assert_eq!(B64.decode(a.public_key()).unwrap().len(), 65);
    }

    #[test]
    fn the_jwt_verifies_with_the_public_key() {
        let dir = tempfile::tempdir().unwrap();
        let v = Vapid::load_or_create(dir.path()).unwrap();
        let auth = v.authorization("https://push.example", 1_900_000_000, "mailto:a@b");
        let (t, k) = auth
            .strip_prefix("vapid t=")
            .unwrap()
            .split_once(", k=")
            .unwrap();
        assert_eq!(k, v.public_key());
        let (input, sig) = t.rsplit_once('.').unwrap();
        let key = VerifyingKey::from_sec1_bytes(&B64.decode(k).unwrap()).unwrap();
        let sig = Signature::from_slice(&B64.decode(sig).unwrap()).unwrap();
        key.verify(input.as_bytes(), &sig).unwrap();
        let claims: serde_json::Value =
            serde_json::from_slice(&B64.decode(input.split_once('.').unwrap().1).unwrap()).unwrap();
        assert_eq!(claims["aud"], "https://push.example");
    }

    #[test]
    fn a_damaged_key_file_is_an_error_not_a_new_key() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(KEY_FILE), "not a key\n").unwrap();
        assert!(Vapid::load_or_create(dir.path()).is_err());
    }
}
