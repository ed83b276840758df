//! RFC 8291 message encryption for Web Push: the `aes128gcm` content coding
//! of RFC 8188, one record, keyed by ECDH between a fresh sender key and the
//! browser's `p256dh` key, mixed with its `auth` secret.

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes128Gcm, Nonce};
use hkdf::Hkdf;
use p256::ecdh::diffie_hellman;
use p256::{PublicKey, SecretKey};
use sha2::Sha256;

/// The record size written in the header. One record holds the whole
/// message (push services take at most 4096 bytes of body).
const RECORD_SIZE: u32 = 4096;
/// Largest plaintext: a record minus the header (86), the tag (16) and
/// the delimiter (1).
pub(crate) const MAX_PLAINTEXT: usize = 3993;

/// Why a message could not be encrypted.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EncryptError {
    #[error("the subscription's p256dh is not a P-256 public key")]
    BadKey,
    #[error("the message is {0} bytes; at most {MAX_PLAINTEXT} fit a push")]
    TooLong(usize),
    #[error("reading OS randomness: {0}")]
    Random(String),
    #[error("key derivation or encryption failed")]
    Crypto,
}

/// The body of a push request carrying `plaintext` to the browser whose
/// subscription keys are `p256dh` (65 bytes, uncompressed) and `auth` (16).
pub(crate) fn encrypt(
    plaintext: &[u8],
    p256dh: &[u8],
    auth: &[u8],
) -> Result<Vec<u8>, EncryptError> {
    if plaintext.len() > MAX_PLAINTEXT {
        return Err(EncryptError::TooLong(plaintext.len()));
    }
    let ua_public = PublicKey::from_sec1_bytes(p256dh).map_err(|_| EncryptError::BadKey)?;
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| EncryptError::Random(e.to_string()))?;
    let secret = loop {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| EncryptError::Random(e.to_string()))?;
        // Out of range (≥ the group order, or 0) about once in 2^32.
        if let Ok(k) = SecretKey::from_slice(&bytes) {
            break k;
        }
    };
    let as_public = secret.public_key().to_sec1_bytes();
    let shared = diffie_hellman(secret.to_nonzero_scalar(), ua_public.as_affine());
    seal(
        plaintext,
        p256dh,
        auth,
        &as_public,
        shared.raw_secret_bytes(),
        &salt,
    )
}

/// The deterministic part of [`encrypt`], given the sender's public key,
/// the ECDH secret and the salt.
fn seal(
    plaintext: &[u8],
    ua_public: &[u8],
    auth: &[u8],
    as_public: &[u8],
    ecdh_secret: &[u8],
    salt: &[u8; 16],
) -> Result<Vec<u8>, EncryptError> {
    // IKM = HKDF(auth, ecdh, "WebPush: info\0" || ua_public || as_public, 32)
    let mut key_info = Vec::with_capacity(14 + 65 + 65);
    key_info.extend_from_slice(b"WebPush: info\0");
    key_info.extend_from_slice(ua_public);
    key_info.extend_from_slice(as_public);
    let mut ikm = [0u8; 32];
    Hkdf::<Sha256>::new(Some(auth), ecdh_secret)
        .expand(&key_info, &mut ikm)
        .map_err(|_| EncryptError::Crypto)?;
    let prk = Hkdf::<Sha256>::new(Some(salt), &ikm);
    let mut cek = [0u8; 16];
    let mut nonce = [0u8; 12];
    prk.expand(b"Content-Encoding: aes128gcm\0", &mut cek)
        .map_err(|_| EncryptError::Crypto)?;
    prk.expand(b"Content-Encoding: nonce\0", &mut nonce)
        .map_err(|_| EncryptError::Crypto)?;
    let mut record = Vec::with_capacity(plaintext.len() + 1);
    record.extend_from_slice(plaintext);
    record.push(2); // the last (and only) record's delimiter
    let sealed = Aes128Gcm::new_from_slice(&cek)
        .map_err(|_| EncryptError::Crypto)?
        .encrypt(Nonce::from_slice(&nonce), record.as_slice())
        .map_err(|_| EncryptError::Crypto)?;
    let mut body = Vec::with_capacity(16 + 4 + 1 + as_public.len() + sealed.len());
    body.extend_from_slice(salt);
    body.extend_from_slice(&RECORD_SIZE.to_be_bytes());
    body.push(as_public.len() as u8);
    body.extend_from_slice(as_public);
    body.extend_from_slice(&sealed);
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
    use base64::Engine;

    fn b64(s: &str) -> Vec<u8> {
        B64.decode(s).unwrap()
    }

    /// RFC 8291, Appendix A: the worked example, byte for byte.
    #[test]
    fn the_rfc_8291_example() {
        let as_private =
            SecretKey::from_slice(&b64("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw")).unwrap();
        let as_public = as_private.public_key().to_sec1_bytes();
        assert_eq!(B64.encode(&as_public), "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8");
        let ua_public = b64("BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4");
        let ua = PublicKey::from_sec1_bytes(&ua_public).unwrap();
        let shared = diffie_hellman(as_private.to_nonzero_scalar(), ua.as_affine());
        let salt: [u8; 16] = b64("DGv6ra1nlYgDCS1FRnbzlw").try_into().unwrap();
        let body = seal(
            b"When I grow up, I want to be a watermelon",
            &ua_public,
            &b64("BTBZMqHH6r4Tts7J_aSIgg"),
            &as_public,
            shared.raw_secret_bytes(),
            &salt,
        )
        .unwrap();
        assert_eq!(
            B64.encode(body),
            "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
        );
    }

    #[test]
    fn bad_keys_and_long_messages_are_refused() {
        assert!(matches!(
            encrypt(b"x", &[4; 65], &[0; 16]),
            Err(EncryptError::BadKey)
        ));
        let ua = SecretKey::from_slice(&[7; 32])
            .unwrap()
            .public_key()
            .to_sec1_bytes();
        assert!(encrypt(&[b'a'; MAX_PLAINTEXT], &ua, &[0; 16]).is_ok());
        assert!(matches!(
            encrypt(&[b'a'; MAX_PLAINTEXT + 1], &ua, &[0; 16]),
            Err(EncryptError::TooLong(_))
        ));
    }
}
