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
//! `fs/write_text_file` are served inside the work dir only (`fs.rs`),
//! and so are `terminal/*` (`terminals.rs`); any other method gets
//! "method not found". Every line the agent writes
//! is kept verbatim in `acp.jsonl` beside the events file.
//!
//! The serde_json values follow ACP's schema (protocol version 1) rather
//! than the `agent-client-protocol` crate's types: duet needs a dozen
//! fields of a few messages, and passes the rest through as written.

pub(crate) mod fs;
pub(crate) mod terminals;
pub(crate) mod updates;

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use duet_protocol::rest::{ApprovalOption, ApprovalOptionKind};
use duet_protocol::sidecar::CanUseTool;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tracing::{debug, warn, Instrument};

use super::stream_json::lines::{next_line, Line};
use super::stream_json::{first_line, Shared};
use super::{option, Channel, ChannelError, Conversation};
use crate::session::lock;
use crate::session::terminal::output::Output;
use terminals::Terminals;
use updates::Updates;

/// The ACP version duet speaks.
const PROTOCOL_VERSION: u64 = 1;
/// Lines queued for the agent's stdin.
const OUT_QUEUE: usize = 64;
/// How long the last output of an exited agent may take to drain.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// JSON-RPC's "method not found".
const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC's "invalid params".
const INVALID_PARAMS: i64 = -32602;

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
    updates: Updates,
}

struct Inner {
    shared: Arc<Shared>,
    state: Mutex<State>,
    out: mpsc::Sender<Out>,
    work_dir: PathBuf,
    load: Option<String>,
    terminals: Arc<Terminals>,
}

/// What goes to the agent's stdin, in order.
enum Out {
    /// A prompt: recorded as a `user` event, then sent as `session/prompt`.
    Prompt(String),
    /// A permission answer, mirrored as the `control_response` event that
    /// confirms the approval.
    Decision {
        line: String,
        request_id: String,
        allowed: bool,
    },
    Line(String),
}

/// See the module docs.
pub(crate) struct Acp {
    inner: Arc<Inner>,
    reader: Mutex<Option<JoinHandle<()>>>,
}

fn request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn reply(id: &Value, result: Result<Value, (i64, String)>) -> String {
    match result {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((code, message)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        }
    }
    .to_string()
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
        self.out.try_send(out).map_err(|e| match e {
            mpsc::error::TrySendError::Closed(_) => ChannelError::Closed,
            mpsc::error::TrySendError::Full(_) => {
                ChannelError::Refused("the agent is not reading its input".into())
            }
        })
    }

    fn emit_all(&self, events: Vec<Value>) {
        for e in events {
            self.shared.emit(&e);
        }
    }

    /// One message of the agent's.
    async fn on_message(&self, msg: Value) {
        let method = msg["method"].as_str();
        match (method, msg.get("id")) {
            (Some(method), Some(id)) => self.on_request(method, id.clone(), &msg["params"]).await,
            (Some("session/update"), None) => {
                let events = lock(&self.state).updates.events(&msg["params"]["update"]);
                self.emit_all(events);
            }
            (Some(method), None) => self.shared.emit(&json!({
                "type": "system", "subtype": "acp_notification", "method": method, "params": msg["params"],
            })),
            (None, Some(id)) => self.on_response(id, &msg),
            (None, None) => {}
        }
    }

    /// The answer to one of duet's calls.
    fn on_response(&self, id: &Value, msg: &Value) {
        let Some(call) = id
            .as_u64()
            .and_then(|id| lock(&self.state).calls.remove(&id))
        else {
            return;
        };
        let result = &msg["result"];
        let error = msg.get("error").filter(|e| !e.is_null());
        match call {
            Call::Initialize => {
                if let Some(e) = error {
                    self.shared.conversation.warn(
                        "no_handshake",
                        format!("the agent refused initialize: {e}"),
                        None,
                    );
                    return;
                }
                lock(&self.state).agent = result.clone();
                let can_load = result["agentCapabilities"]["loadSession"] == true;
                let cwd = self.work_dir.to_string_lossy().into_owned();
                let line = match &self.load {
                    Some(sid) if can_load => {
                        let id = self.call(Call::LoadSession(sid.clone()));
                        request(
                            id,
                            "session/load",
                            json!({"sessionId": sid, "cwd": cwd, "mcpServers": []}),
                        )
                    }
                    load => {
                        if load.is_some() {
                            self.shared.conversation.warn(
                                "no_resume",
                                "the agent cannot load sessions (no loadSession); this is a new conversation".into(),
                                None,
                            );
                        }
                        let id = self.call(Call::NewSession);
                        request(id, "session/new", json!({"cwd": cwd, "mcpServers": []}))
                    }
                };
                let _ = self.send(Out::Line(line));
            }
            Call::NewSession | Call::LoadSession(_) => {
                if let Some(e) = error {
                    self.shared.conversation.warn(
                        "no_handshake",
                        format!("the agent did not start a session: {e}"),
                        None,
                    );
                    return;
                }
                let sid = match call {
                    Call::LoadSession(sid) => Some(sid),
                    _ => result["sessionId"].as_str().map(str::to_string),
                };
                let (agent, events) = {
                    let mut st = lock(&self.state);
                    st.session_id = sid.clone();
                    (st.agent.clone(), st.updates.flush())
                };
                self.emit_all(events);
                self.shared.start(
                    sid.as_deref(),
                    json!({
                        "protocol": "acp",
                        "protocol_version": agent["protocolVersion"],
                        "agent": agent["agentInfo"],
                        "capabilities": agent["agentCapabilities"],
                        "modes": result["modes"],
                    }),
                );
            }
            Call::Prompt => {
                let events = lock(&self.state).updates.flush();
                self.emit_all(events);
                let event = match error {
                    Some(e) => json!({
                        "type": "result", "subtype": "error_during_execution", "is_error": true,
                        "result": e["message"].as_str().unwrap_or("the prompt failed"),
                    }),
                    None => {
                        let reason = result["stopReason"].as_str().unwrap_or("end_turn");
                        json!({
                            "type": "result",
                            "subtype": if reason == "end_turn" { "success" } else { reason },
                            "is_error": !matches!(reason, "end_turn" | "max_tokens" | "max_turn_requests"),
                            "stop_reason": reason,
                        })
                    }
                };
                self.shared.emit(&event);
            }
        }
    }

    /// A request of the agent's.
    async fn on_request(&self, method: &str, id: Value, params: &Value) {
        let answer = match method {
            "session/request_permission" => {
                self.permission(id, params);
                return;
            }
            "fs/read_text_file" => {
                let root = self.work_dir.clone();
                let path = PathBuf::from(params["path"].as_str().unwrap_or_default());
                let (line, limit) = (params["line"].as_u64(), params["limit"].as_u64());
                tokio::task::spawn_blocking(move || fs::read(&root, &path, line, limit))
                    .await
                    .unwrap_or_else(|e| Err(e.to_string()))
                    .map(|content| json!({"content": content}))
                    .map_err(|m| (INVALID_PARAMS, m))
            }
            "fs/write_text_file" => {
                let root = self.work_dir.clone();
                let path = PathBuf::from(params["path"].as_str().unwrap_or_default());
                let content = params["content"].as_str().unwrap_or_default().to_string();
                tokio::task::spawn_blocking(move || fs::write(&root, &path, &content))
                    .await
                    .unwrap_or_else(|e| Err(e.to_string()))
                    // The schema's WriteTextFileResponse is an object.
                    .map(|()| json!({}))
                    .map_err(|m| (INVALID_PARAMS, m))
            }
            "terminal/create" => self
                .terminals
                .create(params)
                .map_err(|m| (INVALID_PARAMS, m)),
            "terminal/output" => self
                .terminals
                .output(params)
                .map_err(|m| (INVALID_PARAMS, m)),
            "terminal/kill" => self.terminals.kill(params).map_err(|m| (INVALID_PARAMS, m)),
            "terminal/release" => self
                .terminals
                .release(params)
                .map_err(|m| (INVALID_PARAMS, m)),
            "terminal/wait_for_exit" => {
                // Answered when the command ends; the reader goes on.
                let terminals = self.terminals.clone();
                let out = self.out.clone();
                let params = params.clone();
                tokio::spawn(async move {
                    let answer = terminals.wait_for_exit(params).await;
                    let line = reply(&id, answer.map_err(|m| (INVALID_PARAMS, m)));
                    let _ = out.send(Out::Line(line)).await;
                });
                return;
            }
            other => Err((
                METHOD_NOT_FOUND,
                format!("Method not found: duet does not implement {other}"),
            )),
        };
        let _ = self.send(Out::Line(reply(&id, answer)));
    }

    /// `session/request_permission` as an approval with the agent's
    /// options.
    fn permission(&self, id: Value, params: &Value) {
        let request_id = format!("acp-{}", id.to_string().trim_matches('"'));
        let call = &params["toolCall"];
        let (events, known) = {
            let mut st = lock(&self.state);
            st.permissions.insert(request_id.clone(), id);
            let known = call["toolCallId"]
                .as_str()
                .and_then(|t| st.updates.known_name(t))
                .map(str::to_string);
            (st.updates.flush(), known)
        };
        self.emit_all(events);
        let mut input = call["rawInput"].clone();
        if !input.is_object() {
            input = json!({});
        }
        if let (Some(m), Some(title)) = (input.as_object_mut(), call["title"].as_str()) {
            m.entry("title").or_insert_with(|| json!(title));
        }
        self.shared.emit(&json!({
            "type": "control_request",
            "request_id": request_id,
            "request": {
                "subtype": "can_use_tool",
                "tool_name": updates::meta_name(call)
                    .or(known.as_deref())
                    .or(call["title"].as_str())
                    .unwrap_or("tool"),
                "tool_use_id": call["toolCallId"],
                "input": input,
                "acp_options": params["options"],
            },
        }));
    }
}

impl Acp {
    /// Sends `initialize` and starts reading the agent. Must run inside a
    /// tokio runtime.
    pub(crate) fn start(opts: AcpOptions, conversation: Arc<Conversation>) -> Arc<Self> {
        let shared = Shared::new(conversation, opts.output.clone());
        let (out, rx) = mpsc::channel(OUT_QUEUE);
        let inner = Arc::new(Inner {
            shared,
            state: Mutex::new(State {
                next_id: 0,
                calls: HashMap::new(),
                session_id: None,
                agent: Value::Null,
                permissions: HashMap::new(),
                updates: Updates::default(),
            }),
            out,
            terminals: Arc::new(Terminals::new(opts.work_dir.clone(), opts.output.clone())),
            work_dir: opts.work_dir,
            load: opts.load,
        });
        tokio::spawn(write(opts.stdin, rx, inner.clone()).in_current_span());
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
        let reader =
            tokio::spawn(read(opts.stdout, inner.clone(), opts.max_line, raw).in_current_span());
        Arc::new(Self {
            inner,
            reader: Mutex::new(Some(reader)),
        })
    }
}

impl Channel for Acp {
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

/// Writes queued lines to the agent's stdin, in order.
async fn write(mut stdin: ChildStdin, mut rx: mpsc::Receiver<Out>, inner: Arc<Inner>) {
    while let Some(out) = rx.recv().await {
        let (line, after) = match out {
            Out::Prompt(text) => {
                let Some(sid) = lock(&inner.state).session_id.clone() else {
                    inner.shared.conversation.warn(
                        "submit_failed",
                        "the agent has no session; the prompt was dropped".into(),
                        None,
                    );
                    continue;
                };
                inner.shared.prompt(&text);
                let id = inner.call(Call::Prompt);
                let params = json!({"sessionId": sid, "prompt": [{"type": "text", "text": text}]});
                (request(id, "session/prompt", params), None)
            }
            Out::Decision {
                line,
                request_id,
                allowed,
            } => (
                line,
                Some(json!({
                    "type": "control_response",
                    "response": {"subtype": "success", "request_id": request_id, "response": {"allowed": allowed}},
                })),
            ),
            Out::Line(line) => (line, None),
        };
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        if let Err(e) = stdin.write_all(&bytes).await {
            debug!(?e, "writing to the agent's stdin");
            inner.shared.conversation.warn(
                "agent_input_closed",
                format!("the agent no longer reads its input: {e}"),
                None,
            );
            return;
        }
        if let Some(event) = after {
            inner.shared.conversation.emit(&event);
        }
    }
}

/// Reads the agent's messages until EOF.
async fn read(
    stdout: ChildStdout,
    inner: Arc<Inner>,
    max_line: usize,
    mut raw: Option<std::fs::File>,
) {
    let mut r = BufReader::with_capacity(64 * 1024, stdout);
    let mut buf = Vec::new();
    loop {
        let line = match next_line(&mut r, &mut buf, max_line).await {
            Ok(Some(Line::Text(line))) => line,
            Ok(Some(other)) => {
                inner.shared.skipped(&other);
                continue;
            }
            Ok(None) => return,
            Err(e) => {
                warn!(?e, "reading the agent's stdout");
                return;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        if let Some(f) = raw.as_mut() {
            let _ = writeln!(f, "{line}");
        }
        match serde_json::from_str::<Value>(&line) {
            Ok(msg) if msg.is_object() => inner.on_message(msg).await,
            _ => {
                inner.shared.conversation.warn(
                    "bad_event",
                    format!(
                        "the agent wrote a line that is not a JSON-RPC message: {}",
                        first_line(&line, 120)
                    ),
                    None,
                );
                inner.shared.show(&line);
            }
        }
    }
}
