//! What duet tells its operators: Prometheus metrics (`metrics.rs`) and the
//! audit trail (`audit.rs`; refusals for a role bounded in `refusals.rs`,
//! the lines a restart writes for a crashed run in `recovery.rs`), fed from
//! the few places where things happen (the WebSocket halves, the REST
//! handlers, a session's conversation and process), and served over HTTP
//! (`http.rs`).

mod actor;
pub(crate) mod audit;
pub(crate) mod metrics;
mod record;
mod recovery;
mod refusals;
mod spending;

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use duet_protocol::ids::SessionId;
use duet_protocol::rest::{Approval, ApprovalState, Decider, ExitInfo, SessionInfo};
use serde_json::{json, Value};

use crate::sync::lock;
pub(crate) use actor::Actor;
use audit::Writer;
use metrics::Metrics;
pub(crate) use record::Record;

/// What a client asked the agent to switch: its mode or its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Switch {
    Mode,
    Model,
}

/// Approval requests whose request time is remembered at once (for the
/// decision latency); more are counted but not timed.
const MAX_TIMED_REQUESTS: usize = 1024;
/// Characters of a prompt kept in its audit line.
const SUBMIT_PREVIEW_CHARS: usize = 1000;

/// The server's metrics and audit trail.
pub(crate) struct Observer {
    pub(crate) metrics: Arc<Metrics>,
    writer: Writer,
    server_audit: Option<Arc<File>>,
    /// Where session directories (and the server's audit file) are.
    pub(crate) state_dir: PathBuf,
    /// `--behind-tls-proxy`: the proxy's `X-Forwarded-For` names the client.
    trust_forwarded: bool,
    auth_enabled: bool,
    /// Bounds the refusals written to the server's file.
    refusals: refusals::Refusals,
}

impl Observer {
    /// Opens `<state_dir>/audit.jsonl` (the directory must be prepared)
    /// and starts the audit writer.
    pub(crate) fn new(
        state_dir: &Path,
        trust_forwarded: bool,
        auth_enabled: bool,
    ) -> anyhow::Result<Arc<Self>> {
        let metrics = Arc::new(Metrics::new());
        Ok(Arc::new(Self {
            writer: Writer::start(metrics.clone())?,
            metrics,
            server_audit: audit::open(&state_dir.join("audit.jsonl")),
            state_dir: state_dir.to_path_buf(),
            trust_forwarded,
            auth_enabled,
            refusals: Default::default(),
        }))
    }

    /// Appends to the server's audit file.
    pub(crate) fn record(&self, record: Record<'_>) {
        if let Some(f) = &self.server_audit {
            self.writer.append(f, record.to_value());
        }
    }

    /// Waits until every audit line so far is on disk.
    pub(crate) async fn flush(&self) {
        self.writer.flush().await;
    }

    /// The observer of a new session of `profile` whose directory is `dir`.
    pub(crate) fn session(&self, id: SessionId, profile: &str, dir: &Path) -> Arc<SessionObserver> {
        self.metrics.sessions_in_memory.inc();
        Arc::new(SessionObserver {
            id,
            profile: profile.to_string(),
            metrics: self.metrics.clone(),
            writer: self.writer.clone(),
            file: audit::open(&dir.join("audit.jsonl")),
            server: self.server_audit.clone(),
            requested: Mutex::new(HashMap::new()),
            last_keys: Mutex::new(None),
            refusals: Default::default(),
        })
    }

    /// A session could not be started (`resumed_from`: as the
    /// continuation of that ended session).
    pub(crate) fn start_failed(
        &self,
        profile: Option<&str>,
        resumed_from: Option<SessionId>,
        error: &str,
        who: &Actor,
    ) {
        self.metrics.start_failures.inc();
        self.record(Record::SessionStartFailed {
            profile,
            resumed_from,
            error,
            who: who.json(),
        });
    }
}

/// One session's metrics and audit trail.
pub(crate) struct SessionObserver {
    id: SessionId,
    /// The session's profile: a label of what it spends.
    profile: String,
    pub(crate) metrics: Arc<Metrics>,
    writer: Writer,
    file: Option<Arc<File>>,
    server: Option<Arc<File>>,
    /// When each pending approval was requested.
    requested: Mutex<HashMap<String, Instant>>,
    /// Whose keystrokes reached the terminal last, and when: a decision
    /// made in the terminal was typed by someone, and the audit names them.
    last_keys: Mutex<Option<(Actor, Instant)>>,
    /// Bounds the refusals written to the session's file.
    refusals: refusals::Refusals,
}

/// How recent the last keystrokes must be for a terminal decision to be
/// put down to them (an agent may also decide by itself, by its settings).
const KEYS_DECIDE_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// A session's observer lives exactly as long as the session (held by the
/// `Session` and its `Conversation` only), so this counts the sessions
/// still in memory: one that outlives its purge (a task or a map that
/// keeps it) shows in `duet_sessions_in_memory`.
impl Drop for SessionObserver {
    fn drop(&mut self) {
        self.metrics.sessions_in_memory.dec();
    }
}

impl SessionObserver {
    /// Appends to the session's audit file.
    fn record(&self, record: Record<'_>) {
        self.append_line(record.to_value());
    }

    /// Appends to the session's and to the server's audit file.
    fn record_both(&self, record: Record<'_>) {
        let mut line = record.to_value();
        line["session"] = json!(self.id);
        if let Some(f) = &self.server {
            self.writer.append(f, line.clone());
        }
        self.append_line(line);
    }

    /// Appends `line` (a [`Record`]) to the session's audit file, with the
    /// session's id.
    fn append_line(&self, mut line: Value) {
        line["session"] = json!(self.id);
        if let Some(f) = &self.file {
            self.writer.append(f, line);
        }
    }

    /// The session started, at a client's request (a create, or a resume
    /// of the ended session `info.resumed_from`).
    /// `cwd` and `args`: what the owner chose beyond the profile.
    pub(crate) fn created(
        &self,
        info: &SessionInfo,
        cwd: Option<&std::path::Path>,
        args: &[String],
        who: &Actor,
    ) {
        self.metrics.sessions_started.inc();
        self.record_both(Record::SessionCreate {
            profile: &info.profile,
            cols: info.cols,
            rows: info.rows,
            pid: info.pid,
            resumed_from: info.resumed_from,
            who: who.json(),
            cwd: cwd.map(|c| c.to_string_lossy().into_owned()),
            args,
        });
    }

    /// This ended session's conversation goes on in session `next`.
    pub(crate) fn resumed_as(&self, next: SessionId, who: &Actor) {
        self.record(Record::SessionResume {
            resumed_as: next,
            who: who.json(),
        });
    }

    /// The program exited.
    pub(crate) fn ended(&self, exit: &ExitInfo) {
        self.record_both(Record::SessionEnd {
            exit,
            recovered: false,
        });
    }

    /// A warning went to the session's clients.
    pub(crate) fn warning(&self, code: &'static str) {
        self.metrics.warning(code);
    }

    /// `who` sent keystrokes to the terminal just now. Called per key
    /// frame: the actor is cloned only when the typist changes.
    pub(crate) fn keys_from(&self, who: &Actor) {
        let now = Instant::now();
        let mut last = lock(&self.last_keys);
        match &mut *last {
            Some((w, at)) if w.client == who.client => *at = now,
            _ => *last = Some((who.clone(), now)),
        }
    }

    /// Approvals changed (requested, decided anywhere, abandoned): counts
    /// each request once, when it stops being pending, and records what
    /// no client call records (requests, terminal decisions, abandoned
    /// requests). A client's decision is recorded, with who made it, by
    /// [`Session::approve_as`].
    pub(crate) fn approvals_changed(&self, changed: &[Approval]) {
        for a in changed {
            if a.state == ApprovalState::Pending {
                let mut requested = lock(&self.requested);
                if requested.len() < MAX_TIMED_REQUESTS {
                    requested.insert(a.request_id.clone(), Instant::now());
                }
                drop(requested);
                self.record(Record::ApprovalRequest {
                    request_id: &a.request_id,
                    tool: &a.tool_name,
                    seq: a.seq,
                });
                continue;
            }
            let outcome = outcome_name(a.state);
            let decided_by = a.decided_by.map_or("none", Decider::as_str);
            if let Some(since) = lock(&self.requested).remove(&a.request_id) {
                self.metrics.approval(outcome, decided_by);
                // A rule decides as the request is born: recorded here,
                // after the request (not again when a restart replays it).
                if a.decided_by == Some(Decider::Policy) {
                    self.policy_decided(a);
                }
                // A person's time to decide; a policy takes none.
                if a.state != ApprovalState::Abandoned && a.decided_by != Some(Decider::Policy) {
                    self.metrics
                        .decision_seconds
                        .observe(since.elapsed().as_secs_f64());
                }
            }
            // Decisions made inside duet are recorded where they are made
            // (with who made them, or the rule).
            if !a.decided_by.is_some_and(Decider::by_duet) {
                let keys_from = (a.decided_by == Some(Decider::Terminal))
                    .then(|| lock(&self.last_keys).clone())
                    .flatten()
                    .filter(|(_, at)| at.elapsed() <= KEYS_DECIDE_WITHIN)
                    .map(|(who, _)| who.json());
                self.record(Record::Approval(record::Approval {
                    request_id: &a.request_id,
                    tool: Some(&a.tool_name),
                    option: json!(a.chosen),
                    outcome,
                    decided_by: (decided_by != "none").then_some(decided_by),
                    keys_from,
                    ..Default::default()
                }));
            }
        }
    }
}

pub(super) fn outcome_name(state: ApprovalState) -> &'static str {
    match state {
        ApprovalState::Pending => "pending",
        ApprovalState::Allowed => "allowed",
        ApprovalState::Denied => "denied",
        ApprovalState::Abandoned => "abandoned",
    }
}

fn preview(text: &str) -> String {
    let mut p: String = text.chars().take(SUBMIT_PREVIEW_CHARS).collect();
    if p.len() < text.len() {
        p.push('…');
    }
    p
}

/// How a client's request ended, for its audit line: `outcome`, and the
/// error code of a refusal.
pub(crate) struct Outcome<'a> {
    pub(crate) outcome: &'a str,
    pub(crate) error: Option<&'a str>,
}

impl SessionObserver {
    /// `who` submitted `text` (it is kept in short).
    pub(crate) fn submitted(&self, who: &Actor, text: &str, how: Outcome<'_>) {
        self.record(Record::Submit {
            who: who.json(),
            text: preview(text),
            bytes: text.len(),
            outcome: how.outcome,
            error: how.error,
        });
    }

    /// `who` let go of an unsent prompt.
    pub(crate) fn discarded(&self, who: &Actor, text: &str) {
        self.record(Record::Discard {
            who: who.json(),
            text: preview(text),
            bytes: text.len(),
        });
    }

    /// `who` asked for the agent's mode or model `value`.
    pub(crate) fn switch_asked(&self, who: &Actor, what: Switch, value: &str, how: Outcome<'_>) {
        let (who, outcome, error) = (who.json(), how.outcome, how.error);
        self.record(match what {
            Switch::Mode => Record::SetMode {
                who,
                outcome,
                error,
                mode: preview(value),
            },
            Switch::Model => Record::SetModel {
                who,
                outcome,
                error,
                model: preview(value),
            },
        });
    }

    /// `who` decided approval `request_id` (`via` a client or a
    /// notification): taken (`Ok`, the approval as it now stands), or
    /// refused (`Err`: the option asked for, and why).
    pub(crate) fn decided(
        &self,
        who: &Actor,
        request_id: &str,
        via: Decider,
        result: Result<&Approval, (Value, &str)>,
    ) {
        let record = match result {
            Ok(a) => record::Approval {
                tool: Some(&a.tool_name),
                option: json!(a.chosen),
                outcome: outcome_name(a.state),
                ..Default::default()
            },
            Err((option, error)) => record::Approval {
                option,
                outcome: "refused",
                error: Some(error),
                ..Default::default()
            },
        };
        self.record(Record::Approval(record::Approval {
            request_id,
            decided_by: Some(via.as_str()),
            who: who.json(),
            ..record
        }));
    }
}

impl SessionObserver {
    /// A client asked to end the session.
    pub(crate) fn deleted(&self, purge: bool, who: &Actor) {
        self.record_both(Record::SessionDelete {
            purge,
            who: who.json(),
        });
    }

    /// An owner created a share link of this session.
    pub(crate) fn shared(&self, share: &duet_protocol::rest::Share, who: &Actor) {
        self.record(Record::ShareCreate {
            share: &share.id,
            role: share.role.as_str(),
            expires_at: share.expires_at,
            who: who.json(),
        });
    }

    /// An owner revoked a share link of this session.
    pub(crate) fn unshared(&self, share_id: &str, who: &Actor) {
        self.record(Record::ShareRevoke {
            share: share_id,
            who: who.json(),
        });
    }
}
