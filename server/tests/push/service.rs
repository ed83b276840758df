//! A Web Push service for the tests (axum on 127.0.0.1:0) and a browser's
//! side of a subscription: each request's VAPID JWT is checked (ES256 with
//! the key duet publishes, `aud` the endpoint's origin, `exp` ahead but
//! within 24 h, `sub`) and its aes128gcm body decrypted as a browser does.

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes128Gcm, Nonce};
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use duet_protocol::push::PushPayload;
use hkdf::Hkdf;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::{PublicKey, SecretKey};
use serde_json::{json, Value};
use sha2::Sha256;
use tokio::sync::mpsc;

use crate::support::DEADLINE;

/// One request the push service received.
pub(crate) struct Received {
    pub name: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// The push service: `POST /push/{name}` answers 201, or 410 when the
/// name starts with `gone`.
pub(crate) struct PushService {
    pub origin: String,
    rx: mpsc::UnboundedReceiver<Received>,
    pub seen: Vec<Received>,
}

impl PushService {
    pub(crate) async fn start() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let app = axum::Router::new()
            .route(
                "/push/{name}",
                axum::routing::post(
                    |State(tx): State<mpsc::UnboundedSender<Received>>,
                     Path(name): Path<String>,
                     headers: HeaderMap,
                     body: Bytes| async move {
                        let gone = name.starts_with("gone");
                        let _ = tx.send(Received {
                            name,
                            headers,
                            body,
                        });
                        if gone {
                            StatusCode::GONE
                        } else {
                            StatusCode::CREATED
                        }
                    },
                ),
            )
            .with_state(tx);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            origin,
            rx,
            seen: Vec::new(),
        }
    }

    /// The next request to `name` (other requests are kept in `seen`).
    pub(crate) async fn next_for(&mut self, name: &str) -> Received {
        tokio::time::timeout(DEADLINE, async {
            loop {
                let r = self.rx.recv().await.expect("push service running");
                if r.name == name {
                    return r;
                }
                self.seen.push(r);
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no push to {name} in time"))
    }
}

/// A browser's side of a subscription: its key pair and auth secret.
pub(crate) struct Device {
    pub endpoint: String,
    secret: SecretKey,
    auth: [u8; 16],
}

impl Device {
    pub(crate) fn new(service: &PushService, name: &str) -> Self {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).unwrap();
        let mut auth = [0u8; 16];
        getrandom::fill(&mut auth).unwrap();
        Self {
            endpoint: format!("{}/push/{name}", service.origin),
            secret: SecretKey::from_slice(&bytes).unwrap(),
            auth,
        }
    }

    fn p256dh(&self) -> Vec<u8> {
        self.secret.public_key().to_sec1_bytes().to_vec()
    }

    /// `PushSubscription.toJSON()`.
    pub(crate) fn json(&self) -> Value {
        json!({
            "endpoint": self.endpoint,
            "expirationTime": null,
            "keys": {"p256dh": B64.encode(self.p256dh()), "auth": B64.encode(self.auth)},
        })
    }

    /// Checks the request's VAPID header against `vapid_key` and decrypts
    /// its body.
    pub(crate) fn open(&self, r: &Received, vapid_key: &str, origin: &str) -> PushPayload {
        let h = |k: &str| r.headers.get(k).map(|v| v.to_str().unwrap().to_string());
        assert_eq!(h("content-encoding").as_deref(), Some("aes128gcm"));
        assert!(h("ttl").unwrap().parse::<u32>().unwrap() > 0);
        let topic = h("topic").unwrap();
        assert!(topic.len() <= 32, "{topic}");
        check_vapid(&h("authorization").unwrap(), vapid_key, origin);
        let plain = decrypt(&r.body, &self.secret, &self.auth);
        serde_json::from_slice(&plain).unwrap()
    }
}

/// RFC 8292: `vapid t=<JWT>, k=<key>`; the JWT is ES256 by that key.
fn check_vapid(header: &str, vapid_key: &str, origin: &str) {
    let rest = header.strip_prefix("vapid ").expect("vapid scheme");
    let mut t = None;
    let mut k = None;
    for part in rest.split(',') {
        match part.trim().split_once('=') {
            Some(("t", v)) => t = Some(v),
            Some(("k", v)) => k = Some(v),
            _ => panic!("unexpected {part}"),
        }
    }
    assert_eq!(k, Some(vapid_key));
    let jwt = t.unwrap();
    let (input, sig) = jwt.rsplit_once('.').unwrap();
    let (head, claims) = input.split_once('.').unwrap();
    let head: Value = serde_json::from_slice(&B64.decode(head).unwrap()).unwrap();
    assert_eq!(head["alg"], "ES256");
    let key = VerifyingKey::from_sec1_bytes(&B64.decode(vapid_key).unwrap()).unwrap();
    let sig = Signature::from_slice(&B64.decode(sig).unwrap()).unwrap();
    key.verify(input.as_bytes(), &sig)
        .expect("the JWT's signature");
    let claims: Value = serde_json::from_slice(&B64.decode(claims).unwrap()).unwrap();
    assert_eq!(claims["aud"], origin);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let exp = claims["exp"].as_u64().unwrap();
    assert!(exp > now && exp <= now + 24 * 3600, "exp {exp}, now {now}");
    let sub = claims["sub"].as_str().unwrap();
    assert!(
        sub.starts_with("mailto:") || sub.starts_with("https://"),
        "{sub}"
    );
}

/// RFC 8291 / RFC 8188 decryption, as a browser does it.
fn decrypt(body: &[u8], ua_secret: &SecretKey, auth: &[u8; 16]) -> Vec<u8> {
    let salt = &body[..16];
    let rs = u32::from_be_bytes(body[16..20].try_into().unwrap());
    let idlen = body[20] as usize;
    let as_public = &body[21..21 + idlen];
    let ciphertext = &body[21 + idlen..];
    assert!(ciphertext.len() <= rs as usize, "one record");
    let sender = PublicKey::from_sec1_bytes(as_public).unwrap();
    let shared = p256::ecdh::diffie_hellman(ua_secret.to_nonzero_scalar(), sender.as_affine());
    let ua_public = ua_secret.public_key().to_sec1_bytes();
    let mut info = b"WebPush: info\0".to_vec();
    info.extend_from_slice(&ua_public);
    info.extend_from_slice(as_public);
    let mut ikm = [0u8; 32];
    Hkdf::<Sha256>::new(Some(auth), shared.raw_secret_bytes())
        .expand(&info, &mut ikm)
        .unwrap();
    let prk = Hkdf::<Sha256>::new(Some(salt), &ikm);
    let (mut cek, mut nonce) = ([0u8; 16], [0u8; 12]);
    prk.expand(b"Content-Encoding: aes128gcm\0", &mut cek)
        .unwrap();
    prk.expand(b"Content-Encoding: nonce\0", &mut nonce)
        .unwrap();
    let mut plain = Aes128Gcm::new_from_slice(&cek)
        .unwrap()
        .decrypt(Nonce::from_slice(&nonce), ciphertext)
        .expect("the body decrypts");
    while plain.last() == Some(&0) {
        plain.pop();
    }
    assert_eq!(plain.pop(), Some(2), "the last record's delimiter");
    plain
}
