//! duet's side of the conversation with the session's Codex app server:
//! what it waits for and holds (its calls, the thread it follows, the
//! running turn, held prompts, approvals), its prompts (`turn/start`, held
//! while a turn runs), the subscription to the TUI's thread and the
//! handshake (docs/codex.md §7). The notifications and requests it reads
//! are `notifications.rs`'s.

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use duet_protocol::build;
use duet_protocol::sidecar::Envelope;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::events::Normalizer;
use super::rpc;
use crate::session::channel::conversation::Sink;
use crate::session::channel::{ChannelError, Tasks};
use crate::session::WarningCode;
use crate::sync::lock;

/// How often a subscription the app server refused (the thread has no
/// rollout until its first turn started) is tried again, and how long
/// apart.
const SUBSCRIBE_TRIES: u32 = 50;
const SUBSCRIBE_PAUSE: Duration = Duration::from_millis(100);

/// A call of duet's waiting for its answer.
pub(super) enum Call {
    Initialize,
    /// `thread/resume`: the subscription (try number).
    Subscribe(u32),
    TurnStart,
    Interrupt,
}

/// An approval request of the app server's, waiting for an answer.
pub(super) struct Pending {
    /// The app server's JSON-RPC id.
    pub(super) id: Value,
    pub(super) decisions: Vec<Value>,
    /// The item it is about.
    pub(super) item: Option<String>,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) next_id: u64,
    pub(super) calls: HashMap<u64, Call>,
    pub(super) thread: Option<String>,
    pub(super) subscribed: bool,
    pub(super) subscribing: bool,
    /// `session_start` went out.
    pub(super) started: bool,
    /// The running turn.
    pub(super) turn: Option<String>,
    /// Prompts waiting for the running turn to end.
    pub(super) queued: VecDeque<String>,
    /// duet's request id → the request, while nobody has answered.
    pub(super) pending: HashMap<String, Pending>,
    /// Requests duet answered, until the app server says they are
    /// resolved: whether duet allowed.
    pub(super) answered: HashMap<String, bool>,
    /// Items whose approval the terminal answered: item → duet's request
    /// id (their outcome is the item's).
    pub(super) terminal: HashMap<String, String>,
    pub(super) normalizer: Normalizer,
}

pub(super) struct Inner {
    pub(super) conversation: Sink,
    pub(super) state: Mutex<State>,
    pub(super) out: mpsc::Sender<String>,
    /// The thread a resumed session continues.
    pub(super) resume: Option<String>,
    pub(super) raw: Mutex<Option<std::fs::File>>,
    pub(super) tasks: Tasks,
}

impl Inner {
    pub(super) fn call(&self, call: Call) -> u64 {
        let mut st = lock(&self.state);
        st.next_id += 1;
        let id = st.next_id;
        st.calls.insert(id, call);
        id
    }

    pub(super) fn send(&self, text: String) {
        if self.out.try_send(text).is_err() {
            self.conversation.warn(
                WarningCode::AgentInputClosed,
                "Codex's app server is not reading what duet sends".into(),
                None,
            );
        }
    }

    /// `thread/resume` of the session's thread: from then on its items
    /// come to duet too.
    pub(super) fn subscribe(&self, thread: &str, attempt: u32) {
        lock(&self.state).subscribing = true;
        let id = self.call(Call::Subscribe(attempt));
        self.send(rpc::request(
            id,
            "thread/resume",
            json!({"threadId": thread, "excludeTurns": false}),
        ));
    }

    /// Starts a turn with `text`, or holds it while one runs.
    pub(super) fn prompt(&self, text: String) -> Result<(), ChannelError> {
        let thread = {
            let mut st = lock(&self.state);
            let Some(thread) = st.thread.clone() else {
                return Err(ChannelError::Refused("Codex has no thread yet".into()));
            };
            if st.turn.is_some() {
                st.queued.push_back(text);
                return Ok(());
            }
            // Taken until the answer says which turn it started.
            st.turn = Some(String::new());
            thread
        };
        let id = self.call(Call::TurnStart);
        self.send(rpc::request(
            id,
            "turn/start",
            json!({"threadId": thread, "input": [{"type": "text", "text": text}]}),
        ));
        Ok(())
    }

    /// One message of the app server's.
    pub(super) fn on_message(self: &Arc<Self>, msg: Value) {
        if let Some(raw) = lock(&self.raw).as_mut() {
            let _ = writeln!(raw, "{msg}");
        }
        match (msg["method"].as_str(), msg.get("id")) {
            (Some(method), Some(id)) => self.on_request(method, id.clone(), &msg["params"]),
            (Some(method), None) => self.on_notification(method, &msg["params"]),
            (None, Some(id)) => self.on_response(id, &msg),
            (None, None) => {}
        }
    }

    pub(super) fn on_response(self: &Arc<Self>, id: &Value, msg: &Value) {
        let Some(call) = id
            .as_u64()
            .and_then(|id| lock(&self.state).calls.remove(&id))
        else {
            return;
        };
        let error = msg.get("error").filter(|e| !e.is_null());
        let result = &msg["result"];
        match call {
            Call::Initialize => {
                self.send(rpc::notification("initialized", json!({})));
                if let Some(thread) = &self.resume {
                    lock(&self.state).thread = Some(thread.clone());
                    self.subscribe(thread, 0);
                }
            }
            Call::Subscribe(attempt) => match error {
                Some(e) => self.subscribe_failed(attempt, e),
                None => self.subscribed(result),
            },
            Call::TurnStart => match error {
                Some(e) => {
                    lock(&self.state).turn = None;
                    self.conversation.warn(
                        WarningCode::SubmitFailed,
                        format!("Codex did not start a turn for the prompt: {e}"),
                        None,
                    );
                }
                None => {
                    let subscribe = {
                        let mut st = lock(&self.state);
                        if st.turn.as_deref() == Some("") {
                            st.turn = result["turn"]["id"].as_str().map(String::from);
                        }
                        (!st.subscribed && !st.subscribing)
                            .then(|| st.thread.clone())
                            .flatten()
                    };
                    if let Some(thread) = subscribe {
                        self.subscribe(&thread, 0);
                    }
                }
            },
            Call::Interrupt => {
                if let Some(e) = error {
                    self.conversation.warn(
                        WarningCode::CancelFailed,
                        format!("Codex did not interrupt the turn: {e}"),
                        None,
                    );
                }
            }
        }
    }

    pub(super) fn subscribe_failed(self: &Arc<Self>, attempt: u32, error: &Value) {
        let thread = {
            let mut st = lock(&self.state);
            st.subscribing = false;
            st.thread.clone()
        };
        let Some(thread) = thread.filter(|_| attempt + 1 < SUBSCRIBE_TRIES) else {
            self.conversation.warn(
                WarningCode::NoHandshake,
                format!("duet could not follow Codex's thread, so the chat misses it: {error}"),
                None,
            );
            return;
        };
        // The thread has no rollout until its first turn is under way.
        let inner = self.clone();
        self.tasks.spawn(async move {
            tokio::time::sleep(SUBSCRIBE_PAUSE).await;
            inner.subscribe(&thread, attempt + 1);
        });
    }

    /// Subscribed: the handshake (on resume), and what was missed of the
    /// turn under way.
    pub(super) fn subscribed(&self, result: &Value) {
        let thread = &result["thread"];
        let (start, events) = {
            let mut st = lock(&self.state);
            st.subscribing = false;
            st.subscribed = true;
            let start = !std::mem::replace(&mut st.started, true);
            let mut events = Vec::new();
            if let Some(turn) = thread["turns"]
                .as_array()
                .and_then(|t| t.last())
                .filter(|t| t["status"] == "inProgress")
            {
                if st.turn.as_deref().is_none_or(str::is_empty) {
                    st.turn = turn["id"].as_str().map(String::from);
                }
                events = st.normalizer.catch_up(turn);
            }
            (start, events)
        };
        if start {
            self.session_start(thread, "resume");
        }
        self.conversation.emit_all(&events);
    }

    pub(super) fn session_start(&self, thread: &Value, source: &str) {
        let id = thread["id"].as_str();
        self.conversation.emit(&build::session_start(
            Envelope::session(id),
            json!({
                "session_id": id,
                "agent": "codex",
                "protocol": "codex-app-server",
                "source": source,
                "cwd": thread["cwd"],
                "model": thread["model"],
                "model_provider": thread["modelProvider"],
            }),
        ));
    }
}
