//! The Agent Client Protocol (`channel = "acp"`): duet is the client of a
//! headless agent (Qwen Code with `--acp`), JSON-RPC 2.0 over its stdin
//! and stdout, one message a line.
//!
//! duet calls `initialize` (advertising what it implements: text files
//! and terminals in the work dir), then `session/new` in the work dir —
//! or `session/load` when resuming and the agent can load — and
//! `session/prompt` per prompt (the conversation holds the next one until
//! the running prompt is answered); cancel is `session/cancel`, and every
//! permission request still waiting is answered `cancelled`, as ACP asks.
//! The agent's `session/update`s become chat events (`updates.rs`), the
//! answer to a prompt its `result`; `session/request_permission` becomes
//! an approval offering the agent's own options; `fs/read_text_file` and
//! `fs/write_text_file` are served inside the work dir only (`fs.rs`, with
//! paths resolved beneath it by `beneath.rs`), and so are `terminal/*`
//! (`terminals.rs`); any other method gets
//! "method not found". Every line the agent writes
//! is kept verbatim in `acp.jsonl` beside the events file.
//!
//! The serde_json values follow ACP's schema (protocol version 1) rather
//! than the `agent-client-protocol` crate's types: duet needs a dozen
//! fields of a few messages, and passes the rest through as written.

mod beneath;
pub(crate) mod fs;
mod incoming;
mod jsonrpc;
mod pipes;
mod quirks;
pub(crate) mod terminals;
#[cfg(test)]
mod tests;
pub(crate) mod updates;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use duet_protocol::rest::{ApprovalOption, ApprovalOptionKind};
use duet_protocol::sidecar::{CanUseTool, SidecarEvent};
use futures_util::future::BoxFuture;
use serde_json::{json, Value};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::conversation::Sink;
use super::piped::writer::{self, Out, OUT_QUEUE};
use super::piped::Agent;
use super::{option, Channel, ChannelError, Setup, Started, Tasks};
use crate::session::terminal::output::Output;
use crate::sync::lock;
use jsonrpc::{reply, request};
use pipes::{prompt, read};
use terminals::Terminals;
use updates::Updates;

/// The ACP version duet speaks.
const PROTOCOL_VERSION: u64 = 1;
/// How long the last output of an exited agent may take to drain.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);
/// Where an ACP channel reads and writes.
pub(crate) struct AcpOptions {
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ChildStdout,
    pub(crate) output: Arc<Output>,
    pub(crate) max_line: usize,
    /// The session's work dir: the agent's `cwd`, and all its files.
    pub(crate) work_dir: PathBuf,
    /// The agent's session to load (a resumed duet session).
    pub(crate) load: Option<String>,
    /// Where the agent's lines are kept verbatim.
    pub(crate) raw_log: PathBuf,
}

/// A call of duet's waiting for its answer.
enum Call {
    Initialize,
    NewSession,
    LoadSession(String),
    Prompt,
    /// `session/set_mode` to this mode.
    SetMode(String),
    /// `session/set_model` to this model.
    SetModel(String),
}

struct State {
    next_id: u64,
    calls: HashMap<u64, Call>,
    session_id: Option<String>,
    /// `initialize`'s answer.
    agent: Value,
    /// Permission requests waiting for a client: duet's request id → the
    /// agent's JSON-RPC id.
    permissions: HashMap<String, Value>,
    /// The session's `modes` (`currentModeId`, `availableModes`), if the
    /// agent offered any.
    modes: Value,
    /// The session's `models` (`currentModelId`, `availableModels`: ACP's
    /// unstable model selection), if the agent offered any.
    models: Value,
    /// A loaded session's replay may still be coming (Gemini CLI sends it
    /// after its `session/load` answer): history updates are dropped until
    /// the first prompt goes out.
    replaying: bool,
    /// What this agent does that the protocol does not say.
    quirks: quirks::Quirks,
    updates: Updates,
}

struct Inner {
    shared: Arc<Agent>,
    state: Mutex<State>,
    out: mpsc::Sender<Out>,
    work_dir: PathBuf,
    load: Option<String>,
    terminals: Arc<Terminals>,
}

/// See the module docs.
pub(crate) struct Acp {
    inner: Arc<Inner>,
    reader: Mutex<Option<JoinHandle<()>>>,
    /// The writer and the reader end with the channel.
    _tasks: Tasks,
}

/// Starts the agent on pipes and becomes its ACP client, in its work dir.
pub(super) fn start(setup: &Setup<'_>) -> Result<Started> {
    let spawn = setup.spawn();
    let work_dir = spawn.cwd.clone();
    Started::on_pipes(setup, spawn, |piped| {
        Acp::start(
            AcpOptions {
                stdin: piped.stdin,
                stdout: piped.stdout,
                output: setup.terminal.output.clone(),
                max_line: setup.limits.max_sidecar_line,
                work_dir,
                load: setup.resume.map(String::from),
                raw_log: setup.files.dir.join("acp.jsonl"),
            },
            setup.sink(),
        )
    })
}

impl Inner {
    /// Registers a call and returns its id.
    fn call(&self, call: Call) -> u64 {
        let mut st = lock(&self.state);
        st.next_id += 1;
        let id = st.next_id;
        st.calls.insert(id, call);
        id
    }

    fn send(&self, out: Out) -> Result<(), ChannelError> {
        writer::send(&self.out, out)
    }

    fn emit_all(&self, events: Vec<SidecarEvent>) {
        for e in events {
            self.shared.emit(&e);
        }
    }
}

impl Acp {
    /// Sends `initialize` and starts reading the agent. Must run inside a
    /// tokio runtime.
    pub(crate) fn start(opts: AcpOptions, conversation: Sink) -> Arc<Self> {
        let shared = Agent::new(conversation, opts.output.clone());
        let (out, rx) = mpsc::channel(OUT_QUEUE);
        let inner = Arc::new(Inner {
            shared,
            state: Mutex::new(State {
                next_id: 0,
                calls: HashMap::new(),
                session_id: None,
                agent: Value::Null,
                permissions: HashMap::new(),
                modes: Value::Null,
                models: Value::Null,
                replaying: false,
                quirks: quirks::Quirks::default(),
                updates: Updates::default(),
            }),
            out,
            terminals: Arc::new(Terminals::new(opts.work_dir.clone(), opts.output.clone())),
            work_dir: opts.work_dir,
            load: opts.load,
        });
        let tasks = Tasks::default();
        tasks.spawn(writer::write(opts.stdin, rx, inner.shared.clone(), {
            let inner = inner.clone();
            move |text| prompt(&inner, text)
        }));
        let id = inner.call(Call::Initialize);
        let init = request(
            id,
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                "clientCapabilities": {
                    "fs": {"readTextFile": true, "writeTextFile": true},
                    "terminal": true,
                },
                "clientInfo": {"name": "duet", "version": env!("CARGO_PKG_VERSION")},
            }),
        );
        let _ = inner.send(Out::Line(init));
        let raw = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(&opts.raw_log)
                .ok()
        };
        let reader = tasks.spawn(read(opts.stdout, inner.clone(), opts.max_line, raw));
        Arc::new(Self {
            inner,
            reader: Mutex::new(Some(reader)),
            _tasks: tasks,
        })
    }
}

impl Channel for Acp {
    fn ends_turns_with_result(&self) -> bool {
        true
    }

    fn deliver(&self, text: &str) -> Result<(), ChannelError> {
        self.inner.send(Out::Prompt(text.to_string()))
    }

    fn decide(&self, request_id: &str, option: &ApprovalOption) -> Result<(), ChannelError> {
        let id = lock(&self.inner.state)
            .permissions
            .remove(request_id)
            .ok_or(ChannelError::Closed)?;
        let line = reply(
            &id,
            Ok(json!({"outcome": {"outcome": "selected", "optionId": option.id}})),
        );
        self.inner.send(Out::Decision {
            line,
            request_id: request_id.to_string(),
            allowed: option.kind.allows(),
        })
    }

    fn options(&self, request: &CanUseTool) -> Vec<ApprovalOption> {
        let options: Vec<ApprovalOption> = request
            .extra
            .get("acp_options")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|o| {
                let kind = match o["kind"].as_str()? {
                    "allow_once" => ApprovalOptionKind::AllowOnce,
                    "allow_always" => ApprovalOptionKind::AllowAlways,
                    "reject_once" => ApprovalOptionKind::RejectOnce,
                    "reject_always" => ApprovalOptionKind::RejectAlways,
                    _ => return None,
                };
                let id = o["optionId"].as_str()?;
                Some(option(id, o["name"].as_str().unwrap_or(id), kind))
            })
            .collect();
        if options.is_empty() {
            super::allow_deny()
        } else {
            options
        }
    }

    fn set_mode(&self, mode: &str) -> Result<(), ChannelError> {
        let (sid, modes) = {
            let st = lock(&self.inner.state);
            (st.session_id.clone(), st.modes.clone())
        };
        let offered: Vec<&str> = modes["availableModes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["id"].as_str())
            .collect();
        if offered.is_empty() {
            return Err(ChannelError::Invalid(
                "this agent offered no modes in its session".into(),
            ));
        }
        if !offered.contains(&mode) {
            return Err(ChannelError::Invalid(format!(
                "the agent has no mode {mode:?}; it offers {}",
                offered.join(", ")
            )));
        }
        let sid = sid.ok_or(ChannelError::Closed)?;
        let id = self.inner.call(Call::SetMode(mode.to_string()));
        let line = request(
            id,
            "session/set_mode",
            json!({"sessionId": sid, "modeId": mode}),
        );
        self.inner.send(Out::Line(line))
    }

    fn set_model(&self, model: &str) -> Result<(), ChannelError> {
        let (sid, models) = {
            let st = lock(&self.inner.state);
            (st.session_id.clone(), st.models.clone())
        };
        let offered: Vec<&str> = models["availableModels"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["modelId"].as_str())
            .collect();
        if offered.is_empty() {
            return Err(ChannelError::Invalid(
                "this agent offered no models in its session".into(),
            ));
        }
        if !offered.contains(&model) {
            return Err(ChannelError::Invalid(format!(
                "the agent has no model {model:?}; it offers {}",
                offered.join(", ")
            )));
        }
        let sid = sid.ok_or(ChannelError::Closed)?;
        let id = self.inner.call(Call::SetModel(model.to_string()));
        let line = request(
            id,
            "session/set_model",
            json!({"sessionId": sid, "modelId": model}),
        );
        self.inner.send(Out::Line(line))
    }

    fn cancel(&self) -> Option<Result<(), ChannelError>> {
        let (sid, waiting) = {
            let mut st = lock(&self.inner.state);
            (
                st.session_id.clone(),
                st.permissions.drain().collect::<Vec<_>>(),
            )
        };
        let Some(sid) = sid else {
            return Some(Ok(()));
        };
        let cancel =
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}});
        let sent = self.inner.send(Out::Line(cancel.to_string()));
        // ACP: the client answers every pending permission request
        // `cancelled` once it has cancelled the turn.
        for (_, id) in waiting {
            let line = reply(&id, Ok(json!({"outcome": {"outcome": "cancelled"}})));
            let _ = self.inner.send(Out::Line(line));
        }
        Some(sent)
    }

    fn finish(&self) -> BoxFuture<'static, ()> {
        let reader = lock(&self.reader).take();
        let inner = self.inner.clone();
        Box::pin(async move {
            if let Some(mut reader) = reader {
                if tokio::time::timeout(DRAIN_TIMEOUT, &mut reader)
                    .await
                    .is_err()
                {
                    reader.abort();
                }
            }
            inner.terminals.close();
            let events = lock(&inner.state).updates.flush();
            inner.emit_all(events);
            inner
                .shared
                .ended("the agent exited before it answered the prompt");
        })
    }
}
