//! Delivery to push services (RFC 8030), off every session's path: the
//! triggers put messages on a bounded queue and go on; one task takes them
//! off and sends up to [`PARALLEL`] at once, each with a timeout. When the
//! queue is full the newest message is dropped (counted and logged): a
//! push service that stalls must not hold memory or the board.
//!
//! 201 (or any 2xx) is delivered; 404 and 410 mean the browser dropped the
//! subscription, so the device is pruned; anything else is logged.

use std::sync::Arc;
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use prometheus_client::metrics::counter::Counter;
use tokio::sync::{mpsc, Semaphore};

use super::encrypt::encrypt;
use super::keys::Vapid;
use super::store::{Store, Subscription};
use crate::observe::metrics::Metrics;

/// Messages waiting for delivery, all devices together.
pub(crate) const QUEUE: usize = 256;
/// Requests in flight at once.
const PARALLEL: usize = 8;
/// How long one request to a push service may take.
const TIMEOUT: Duration = Duration::from_secs(10);
/// How long the VAPID JWT is valid (RFC 8292: at most 24 h).
const JWT_LIFETIME: Duration = Duration::from_secs(12 * 3600);

/// RFC 8030 §5.3: how soon the push service should deliver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Urgency {
    Normal,
    High,
}

/// One message to one device.
pub(crate) struct Delivery {
    pub sub: Subscription,
    /// The JSON to encrypt.
    pub payload: Vec<u8>,
    pub urgency: Urgency,
    /// Seconds the push service keeps the message for an offline device.
    pub ttl: u32,
    /// RFC 8030 §5.4: a newer message with the same topic replaces one
    /// still undelivered (a withdrawal replaces its notification).
    pub topic: String,
}

/// The sending half of the queue.
#[derive(Clone)]
pub(crate) struct Sender {
    tx: mpsc::Sender<Delivery>,
    counts: Arc<Counts>,
}

/// `duet_push_deliveries{outcome}`.
struct Counts {
    sent: Counter,
    pruned: Counter,
    failed: Counter,
    dropped: Counter,
}

impl Sender {
    /// Queues `d`; drops it (counted) when the queue is full.
    pub(crate) fn send(&self, d: Delivery) {
        if let Err(e) = self.tx.try_send(d) {
            self.counts.dropped.inc();
            tracing::warn!(reason = %e, "push: delivery queue full ({QUEUE}); message dropped");
        }
    }
}

/// Who sends what the queue holds.
struct Worker {
    client: reqwest::Client,
    vapid: Arc<Vapid>,
    store: Arc<Store>,
    subject: String,
    counts: Arc<Counts>,
}

/// Starts the delivery task. `subject` is the VAPID `sub` claim (a
/// `mailto:` or https URL where the push service can reach the operator).
pub(crate) fn start(
    vapid: Arc<Vapid>,
    store: Arc<Store>,
    subject: String,
    allow_loopback: bool,
    metrics: &Metrics,
) -> anyhow::Result<Sender> {
    let client = reqwest::Client::builder()
        .dns_resolver(Arc::new(super::resolve::PublicOnly { allow_loopback }))
        .timeout(TIMEOUT)
        .connect_timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("duet/", env!("CARGO_PKG_VERSION")))
        .build()?;
    let counts = Arc::new(Counts {
        sent: metrics.push("sent"),
        pruned: metrics.push("pruned"),
        failed: metrics.push("failed"),
        dropped: metrics.push("dropped"),
    });
    let (tx, mut rx) = mpsc::channel::<Delivery>(QUEUE);
    let worker = Arc::new(Worker {
        client,
        vapid,
        store,
        subject,
        counts: counts.clone(),
    });
    tokio::spawn(async move {
        let slots = Arc::new(Semaphore::new(PARALLEL));
        // Ends when every Sender is gone (the server stopped).
        while let Some(d) = rx.recv().await {
            let Ok(slot) = slots.clone().acquire_owned().await else {
                return;
            };
            let worker = worker.clone();
            tokio::spawn(async move {
                worker.deliver(d).await;
                drop(slot);
            });
        }
    });
    Ok(Sender { tx, counts })
}

impl Worker {
    async fn deliver(&self, d: Delivery) {
        let endpoint = d.sub.endpoint.as_str();
        let Some(audience) = origin(endpoint) else {
            return self.failed(endpoint, "the endpoint has no origin");
        };
        let keys = (B64.decode(&d.sub.p256dh), B64.decode(&d.sub.auth));
        let (Ok(p256dh), Ok(auth)) = keys else {
            return self.failed(endpoint, "the subscription's keys are not base64url");
        };
        let body = match encrypt(&d.payload, &p256dh, &auth) {
            Ok(b) => b,
            Err(e) => return self.failed(endpoint, &e.to_string()),
        };
        let exp = crate::clock::now_ms() / 1000 + JWT_LIFETIME.as_secs();
        let req = self
            .client
            .post(endpoint)
            .header(
                "authorization",
                self.vapid.authorization(&audience, exp, &self.subject),
            )
            .header("content-encoding", "aes128gcm")
            .header("content-type", "application/octet-stream")
            .header("ttl", d.ttl.to_string())
            .header(
                "urgency",
                match d.urgency {
                    Urgency::Normal => "normal",
                    Urgency::High => "high",
                },
            )
            .header("topic", &d.topic)
            .body(body);
        match req.send().await {
            Ok(resp) if resp.status().is_success() => {
                self.counts.sent.inc();
            }
            Ok(resp) if matches!(resp.status().as_u16(), 404 | 410) => {
                self.counts.pruned.inc();
                if self.store.prune(endpoint) {
                    tracing::info!(principal = %d.sub.principal, origin = %audience, status = %resp.status(), "push: the browser dropped this subscription; removed");
                }
            }
            Ok(resp) => {
                let status = resp.status();
                let text = resp.text().await.unwrap_or_default();
                let text: String = text.chars().take(200).collect();
                self.failed(endpoint, &format!("{status}: {text}"));
            }
            Err(e) => self.failed(endpoint, &e.to_string()),
        }
    }

    fn failed(&self, endpoint: &str, why: &str) {
        self.counts.failed.inc();
        // The endpoint's path is a capability: log the origin only.
        tracing::warn!(origin = ?origin(endpoint), error = %why, "push: delivery failed");
    }
}

/// `scheme://host[:port]` of `url`: the JWT's audience.
pub(crate) fn origin(url: &str) -> Option<String> {
    let u = reqwest::Url::parse(url).ok()?;
    let o = u.origin();
    o.is_tuple().then(|| o.ascii_serialization())
}

/// A topic (at most 32 base64url characters) for `tag`.
pub(crate) fn topic(tag: &str) -> String {
    let hash = crate::secret::sha256(tag.as_bytes());
    B64.encode(&hash[..24])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_and_topics() {
        assert_eq!(
            origin("https://fcm.googleapis.com/fcm/send/abc").as_deref(),
            Some("https://fcm.googleapis.com")
        );
        assert_eq!(
            origin("http://127.0.0.1:4321/push/1").as_deref(),
            Some("http://127.0.0.1:4321")
        );
        assert_eq!(origin("not a url"), None);
        let t = topic("duet-approval-x-y");
        assert_eq!(t.len(), 32);
        assert!(t
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    }
}
