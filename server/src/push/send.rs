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

use super::egress::Egress;
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
    /// A proxy may carry requests: endpoints are checked before they go.
    proxied: bool,
    allow_loopback: bool,
}

/// Where deliveries go and who signs them.
pub(crate) struct SendOptions {
    pub(crate) vapid: Arc<Vapid>,
    pub(crate) store: Arc<Store>,
    /// The VAPID `sub` claim (a `mailto:` or https URL where the push
    /// service can reach the operator).
    pub(crate) subject: String,
    /// `--push-insecure-loopback`.
    pub(crate) allow_loopback: bool,
    pub(crate) egress: Egress,
}

/// What became of one delivery.
#[derive(Debug, PartialEq)]
enum Outcome {
    Sent,
    Pruned,
    Failed(String),
}

impl Worker {
    fn new(opts: SendOptions, metrics: &Metrics) -> anyhow::Result<Self> {
        Ok(Self {
            client: opts.egress.client(opts.allow_loopback, TIMEOUT)?,
            vapid: opts.vapid,
            store: opts.store,
            subject: opts.subject,
            counts: Arc::new(Counts {
                sent: metrics.push("sent"),
                pruned: metrics.push("pruned"),
                failed: metrics.push("failed"),
                dropped: metrics.push("dropped"),
            }),
            proxied: opts.egress.proxied(),
            allow_loopback: opts.allow_loopback,
        })
    }
}

/// Starts the delivery task.
pub(crate) fn start(opts: SendOptions, metrics: &Metrics) -> anyhow::Result<Sender> {
    let worker = Arc::new(Worker::new(opts, metrics)?);
    let counts = worker.counts.clone();
    let (tx, mut rx) = mpsc::channel::<Delivery>(QUEUE);
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
    /// Sends `d` and counts (and logs) what became of it.
    async fn deliver(&self, d: Delivery) -> Outcome {
        let outcome = self.post(&d).await;
        match &outcome {
            Outcome::Sent => {
                self.counts.sent.inc();
            }
            Outcome::Pruned => {
                self.counts.pruned.inc();
            }
            Outcome::Failed(why) => {
                self.counts.failed.inc();
                // The endpoint's path is a capability: log the origin only.
                let origin = origin(&d.sub.endpoint);
                tracing::warn!(?origin, error = %why, "push: delivery failed");
            }
        }
        outcome
    }

    async fn post(&self, d: &Delivery) -> Outcome {
        let failed = |why: &str| Outcome::Failed(why.to_string());
        let endpoint = d.sub.endpoint.as_str();
        let Some(audience) = origin(endpoint) else {
            return failed("the endpoint has no origin");
        };
        if self.proxied {
            // The proxy resolves the host, not duet's resolver: check it
            // first (egress.rs).
            let host = reqwest::Url::parse(endpoint)
                .ok()
                .and_then(|u| u.host_str().map(str::to_string));
            let Some(host) = host else {
                return failed("the endpoint has no host");
            };
            if let Err(e) = super::resolve::public_addrs(&host, self.allow_loopback).await {
                return failed(&e.to_string());
            }
        }
        let keys = (B64.decode(&d.sub.p256dh), B64.decode(&d.sub.auth));
        let (Ok(p256dh), Ok(auth)) = keys else {
            return failed("the subscription's keys are not base64url");
        };
        let body = match encrypt(&d.payload, &p256dh, &auth) {
            Ok(b) => b,
            Err(e) => return failed(&e.to_string()),
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
            Ok(resp) if resp.status().is_success() => Outcome::Sent,
            Ok(resp) if matches!(resp.status().as_u16(), 404 | 410) => {
                if self.store.prune(endpoint) {
                    tracing::info!(principal = %d.sub.principal, origin = %audience, status = %resp.status(), "push: the browser dropped this subscription; removed");
                }
                Outcome::Pruned
            }
            Ok(resp) => {
                let status = resp.status();
                let text = resp.text().await.unwrap_or_default();
                let text: String = text.chars().take(200).collect();
                failed(&format!("{status}: {text}"))
            }
            // Without the URL (its path is a capability); the cause
            // (refused, timed out, no public address) is in the chain.
            Err(e) => failed(&error_chain(&e.without_url())),
        }
    }
}

/// An error and its causes, on one line.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
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
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// An HTTP proxy that records each request line (`CONNECT host:port
    /// HTTP/1.1`) and refuses it.
    struct FakeProxy {
        url: String,
        seen: mpsc::UnboundedReceiver<String>,
    }

    impl FakeProxy {
        async fn start() -> Self {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}", listener.local_addr().unwrap());
            let (tx, seen) = mpsc::unbounded_channel();
            tokio::spawn(async move {
                while let Ok((mut tcp, _)) = listener.accept().await {
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n")
                        && tcp.read(&mut byte).await.unwrap_or(0) == 1
                    {
                        head.push(byte[0]);
                    }
                    let line = String::from_utf8_lossy(&head);
                    let _ = tx.send(line.lines().next().unwrap_or_default().to_string());
                    let _ = tcp
                        .write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
                        .await;
                }
            });
            Self { url, seen }
        }

        /// The request lines seen so far.
        fn seen(&mut self) -> Vec<String> {
            std::iter::from_fn(|| self.seen.try_recv().ok()).collect()
        }
    }

    fn delivery(endpoint: &str) -> Delivery {
        let ua = p256::SecretKey::from_slice(&[7; 32])
            .unwrap()
            .public_key()
            .to_sec1_bytes();
        Delivery {
            sub: Subscription {
                principal: "share:x".into(),
                session: None,
                endpoint: endpoint.into(),
                p256dh: B64.encode(&ua),
                auth: B64.encode([1u8; 16]),
                muted: Default::default(),
                created_at: 0,
            },
            payload: b"{}".to_vec(),
            urgency: Urgency::Normal,
            ttl: 60,
            topic: topic("t"),
        }
    }

    /// Issue 27: with `HTTPS_PROXY` set, an endpoint naming a host that
    /// resolves to loopback had the proxy connect there (`CONNECT
    /// localhost:9`): the resolver that filters addresses was only asked
    /// for the proxy's name.
    #[tokio::test]
    async fn through_a_proxy_an_endpoint_must_still_resolve_to_a_public_address() {
        let mut proxy = FakeProxy::start().await;
        let dir = tempfile::tempdir().unwrap();
        let metrics = Metrics::new();
        let worker = |allow_loopback| {
            Worker::new(
                SendOptions {
                    vapid: Arc::new(Vapid::load_or_create(dir.path()).unwrap()),
                    store: Arc::new(Store::load(dir.path())),
                    subject: "mailto:test@localhost".into(),
                    allow_loopback,
                    // As `HTTPS_PROXY=http://127.0.0.1:PORT` would give it.
                    egress: Egress {
                        proxy: Some(proxy.url.clone()),
                        no_proxy: None,
                    },
                },
                &metrics,
            )
            .unwrap()
        };
        for host in ["localhost", "127.0.0.1", "[::1]"] {
            let endpoint = format!("https://{host}:9/push/x");
            match worker(false).deliver(delivery(&endpoint)).await {
                Outcome::Failed(why) => assert!(why.contains("no public address"), "{why}"),
                other => panic!("{endpoint}: {other:?}"),
            }
        }
        // Where loopback is allowed (--push-insecure-loopback), the same
        // endpoint goes to the proxy: it was in use all along.
        let outcome = worker(true)
            .deliver(delivery("https://localhost:9/push/x"))
            .await;
        assert!(matches!(outcome, Outcome::Failed(_)), "{outcome:?}");
        assert_eq!(proxy.seen(), ["CONNECT localhost:9 HTTP/1.1"]);
    }

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
