//! Web Push: attention news (an approval waiting, a long turn finished, a
//! program exited, an approval withdrawn) reaches devices whose page is
//! closed. `keys.rs` holds the VAPID key, `store.rs` the devices,
//! `triggers.rs` finds what to say from the board, `encrypt.rs` seals each
//! message for its device (RFC 8291) and `send.rs` delivers it (RFC 8030)
//! off the session path, to public addresses only (`resolve.rs`), through
//! the environment's proxy if it names one (`egress.rs`); `capability.rs`
//! makes the one-use secrets behind an approval notification's Allow and
//! Deny; `api/push.rs` is `/api/push/*`.

pub(crate) mod capability;
pub(crate) mod egress;
pub(crate) mod encrypt;
pub(crate) mod keys;
pub(crate) mod resolve;
pub(crate) mod send;
pub(crate) mod store;
pub(crate) mod triggers;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use duet_protocol::push::{PushAction, PushDecide, PushKind, PushPayload, PushShow};
use tokio::sync::watch;

use crate::auth::{Action, Auth, Principal};
use crate::board::Board;
use crate::clock::now_ms;
use crate::observe::metrics::Metrics;
use capability::{Capabilities, Grant};
use keys::Vapid;
use send::{Delivery, Sender, Urgency};
use store::{Store, Subscription};
use triggers::Change;

/// How long a push service keeps a message for a device that is offline:
/// news older than this is stale (the board says it better).
const TTL_SECS: u32 = 3600;
/// Boards closer together than this are compared once (a burst: an
/// approval with its events).
const COALESCE: Duration = Duration::from_millis(100);
/// Approval notifications remembered (which devices got them), so a
/// withdrawal goes only to those: a push that shows nothing costs the
/// browser's patience (Chrome may show "updated in the background").
const MAX_REMEMBERED: usize = 4096;

/// How Web Push is set up (from the command line).
#[derive(Debug, Clone)]
pub(crate) struct PushConfig {
    /// Plain-http endpoints on a loopback address (tests only).
    pub insecure_loopback: bool,
    /// A turn this long or longer notifies when it finishes.
    pub long_turn: Duration,
    /// The VAPID `sub` claim: where push services can reach the operator.
    pub subject: String,
    /// How long a notification's Allow and Deny stay good.
    pub action_lifetime: Duration,
}

/// See the module docs.
pub(crate) struct Push {
    pub(crate) vapid: Arc<Vapid>,
    pub(crate) store: Arc<Store>,
    sender: Sender,
    pub(crate) config: PushConfig,
    /// The secrets of notifications' buttons.
    pub(crate) capabilities: Capabilities,
}

impl Push {
    /// Loads (or makes) the key and the devices from `state_dir`, starts
    /// delivery, and follows `board` until `stop`.
    pub(crate) fn start(
        state_dir: &std::path::Path,
        config: PushConfig,
        board: Arc<Board>,
        auth: Auth,
        metrics: &Metrics,
        stop: watch::Receiver<bool>,
    ) -> anyhow::Result<Arc<Self>> {
        let vapid = Arc::new(Vapid::load_or_create(state_dir)?);
        let store = Arc::new(Store::load(state_dir));
        let sender = send::start(
            send::SendOptions {
                vapid: vapid.clone(),
                store: store.clone(),
                subject: config.subject.clone(),
                allow_loopback: config.insecure_loopback,
                egress: egress::Egress::from_env(),
            },
            metrics,
        )?;
        let push = Arc::new(Self {
            vapid,
            store,
            sender,
            capabilities: Capabilities::new(config.action_lifetime),
            config,
        });
        tokio::spawn(follow(push.clone(), board, auth, stop));
        Ok(push)
    }

    /// Queues `change` for every device that should hear of it.
    fn dispatch(&self, change: Change, auth: &Auth, sent: &mut HashMap<String, Vec<String>>) {
        let subs = self.store.all();
        if subs.is_empty() {
            return;
        }
        match change {
            Change::Show(show) => {
                let urgency = match show.kind {
                    PushKind::Approval => Urgency::High,
                    PushKind::Turn | PushKind::Exit => Urgency::Normal,
                };
                let tag = show.tag.clone();
                let session = show.session;
                let payload =
                    serde_json::to_vec(&PushPayload::Show(show.clone())).unwrap_or_default();
                let mut to = Vec::new();
                for sub in subs {
                    if sub.wants(session) && self.allowed(&sub, auth) {
                        to.push(sub.endpoint.clone());
                        match self.actionable(&show, &sub, auth) {
                            Some(own) => self.queue(sub, &own, urgency, &tag),
                            None => self.queue(sub, &payload, urgency, &tag),
                        }
                    }
                }
                if urgency == Urgency::High {
                    if sent.len() >= MAX_REMEMBERED {
                        sent.clear();
                    }
                    sent.insert(tag, to);
                }
            }
            Change::Close { tag, session } => {
                // Decided (or withdrawn): the buttons' secrets open nothing.
                self.capabilities.revoke(&tag);
                let Some(to) = sent.remove(&tag) else { return };
                let payload = serde_json::to_vec(&PushPayload::Close { close: tag.clone() })
                    .unwrap_or_default();
                for sub in subs {
                    if to.contains(&sub.endpoint) && sub.wants(session) && self.allowed(&sub, auth)
                    {
                        self.queue(sub, &payload, Urgency::Normal, &tag);
                    }
                }
            }
        }
    }

    /// An approval's notification for `sub` with Allow and Deny, when its
    /// principal may approve (and see) the session: a secret of its own
    /// for this approval goes with it. `None`: the shared notification,
    /// without buttons.
    fn actionable(&self, show: &PushShow, sub: &Subscription, auth: &Auth) -> Option<Vec<u8>> {
        let request_id = show.request_id.clone()?;
        let who = auth.principal_named(&sub.principal)?;
        if !Action::Approve.allowed(who.role) || !who.sees(show.session) {
            return None;
        }
        let grant = Grant {
            session: show.session,
            request_id,
            principal: sub.principal.clone(),
            tag: show.tag.clone(),
        };
        let (capability, expires_at) = self
            .capabilities
            .mint(grant)
            .inspect_err(|e| tracing::warn!(?e, "push: a notification goes without buttons"))
            .ok()?;
        let own = PushShow {
            actions: vec![
                PushAction {
                    action: "allow".into(),
                    title: "Allow".into(),
                },
                PushAction {
                    action: "deny".into(),
                    title: "Deny".into(),
                },
            ],
            decide: Some(PushDecide {
                url: "./api/push/decide".into(),
                capability,
                expires_at,
            }),
            ..show.clone()
        };
        serde_json::to_vec(&PushPayload::Show(own)).ok()
    }

    /// Whether `sub`'s principal still exists: a share link that ended
    /// (revoked, expired, or duet restarted) loses its devices; a token
    /// taken out of the config hears nothing (and again if it comes back).
    fn allowed(&self, sub: &Subscription, auth: &Auth) -> bool {
        if auth.knows(&sub.principal) {
            return true;
        }
        if sub.principal.starts_with("share:") && self.store.prune(&sub.endpoint) {
            tracing::info!(principal = %sub.principal, "push: the share link ended; its device was removed");
        }
        false
    }

    fn queue(&self, sub: Subscription, payload: &[u8], urgency: Urgency, tag: &str) {
        self.sender.send(Delivery {
            sub,
            payload: payload.to_vec(),
            urgency,
            ttl: TTL_SECS,
            topic: send::topic(tag),
        });
    }
}

/// Compares each board with the last and dispatches what changed. The
/// owner's view: every session; each device is then filtered by whose it is.
async fn follow(push: Arc<Push>, board: Arc<Board>, auth: Auth, mut stop: watch::Receiver<bool>) {
    let everyone = Principal::owner();
    let mut generation = board.subscribe();
    let mut prev = board.snapshot(&everyone);
    let mut sent = HashMap::new();
    let long_turn = push.config.long_turn.as_millis() as u64;
    loop {
        tokio::select! {
            r = generation.changed() => if r.is_err() { return },
            _ = stop.wait_for(|s| *s) => return,
        }
        tokio::time::sleep(COALESCE).await;
        generation.borrow_and_update();
        let next = board.snapshot(&everyone);
        for change in triggers::changes(&prev, &next, long_turn, now_ms()) {
            push.dispatch(change, &auth, &mut sent);
        }
        prev = next;
    }
}
