//! Headless agents that speak stream-json on their stdin and stdout (Qwen
//! Code and Claude Code with `--input-format stream-json --output-format
//! stream-json`): the vocabulary the chat already renders, so every line
//! the agent writes is relayed as written.
//!
//! Out (stdin, one JSON object a line): an `initialize` control request
//! first (with it the agent asks for tool permission over this channel;
//! Qwen Code decides by itself — and refuses — without it), then a `user`
//! message per prompt, the `control_response` to each `can_use_tool`, and
//! an `interrupt` control request to cancel. In (stdout): `system`,
//! `user`, `assistant`, `stream_event`, `result`, `control_request`,
//! `control_response`, kept verbatim in the session's events file (duet
//! writes it), with duet's own events beside them: the prompt as a `user`
//! event (these agents do not echo it), `session_start` once the agent
//! answered `initialize`, and the `control_response` duet sent (the agent
//! does not mirror it). A turn ends with its `result`.
//!
//! Lines that are not one JSON object, or longer than the limit, are
//! skipped with a warning. Control requests duet does not implement
//! (hook callbacks, MCP messages) get an error response, so the agent
//! never waits for nothing. An agent that exits mid-turn gets an error
//! `result` and a warning in its place.
//!
//! The terminal pane shows the agent's stderr (`terminal/pipes.rs`) and
//! a line per prompt, tool call and turn end, written here.
//!
//! The structured I/O RFC (seed 000) also describes heartbeats
//! (`heartbeat.rs`: answered, probed, their absence reported) and its
//! version negotiation and error semantics (`errors.rs`). Its
//! `control/cancel` neither Qwen Code 0.24.4 nor Claude Code implements
//! (Qwen logs "Unknown message type"), so duet cancels with `interrupt`.

mod errors;
mod heartbeat;
pub(crate) mod lines;
pub(crate) mod per_turn;
pub(crate) mod pipes;
pub(crate) mod tool_call;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use duet_protocol::rest::ApprovalOption;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tracing::Instrument;

use super::conversation::validate;
use super::{Channel, ChannelError, Conversation};
use crate::session::lock;
use crate::session::terminal::output::Output;
use lines::Line;
use pipes::{read, write};

/// Lines queued for the agent's stdin; a full queue refuses (the agent
/// stopped reading).
const OUT_QUEUE: usize = 64;
/// How long the agent gets to answer `initialize` before prompts go to it
/// anyway (Qwen Code 0.24.4 takes 7–10 s on 2 busy cores).
const INIT_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the last output of an exited agent may take to drain.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// The id of duet's `initialize` request.
const INIT_ID: &str = "duet-initialize";
/// The ids of duet's `interrupt` requests start so.
const INTERRUPT_PREFIX: &str = "duet-interrupt-";

/// What goes to the agent's stdin, in order.
enum Out {
    /// A prompt: recorded as a `user` event, then written.
    Prompt(String),
    /// A decision: written, then mirrored as the `control_response` event
    /// the approvals are confirmed by.
    Decision {
        line: String,
        request_id: String,
        allowed: bool,
    },
    /// Any other line.
    Line(String),
}

/// What the reader and the writer share.
pub(crate) struct Shared {
    pub(crate) conversation: Arc<Conversation>,
    pub(crate) output: Arc<Output>,
    /// A prompt went out and its `result` has not come.
    in_turn: AtomicBool,
    /// `session_start` has been emitted.
    started: AtomicBool,
    /// The input of each pending `can_use_tool`, by request id: Claude
    /// Code wants it back (`updatedInput`) with an allow.
    inputs: Mutex<HashMap<String, Value>>,
    /// Whether the agent answers heartbeats (`heartbeat.rs`).
    beat: Mutex<heartbeat::Beat>,
    /// What the agent announced of its protocol before `session_start`
    /// (`errors.rs`).
    protocol: Mutex<Option<Value>>,
}

impl Shared {
    pub(crate) fn new(conversation: Arc<Conversation>, output: Arc<Output>) -> Arc<Self> {
        Arc::new(Self {
            conversation,
            output,
            in_turn: AtomicBool::new(false),
            started: AtomicBool::new(false),
            inputs: Mutex::new(HashMap::new()),
            beat: Mutex::new(heartbeat::Beat::default()),
            protocol: Mutex::new(None),
        })
    }

    /// Whether a prompt went out and its `result` has not come.
    fn in_turn(&self) -> bool {
        self.in_turn.load(Ordering::Acquire)
    }

    /// The agent announced its protocol (version, formats, capabilities):
    /// part of the handshake, or an event of its own once that is out.
    fn announce_protocol(&self, announced: Value) {
        if !self.is_started() {
            *lock(&self.protocol) = Some(announced);
            return;
        }
        self.conversation.emit(&json!({
            "type": "system", "subtype": "protocol", "data": announced,
        }));
    }

    /// Whether `session_start` has been emitted.
    fn is_started(&self) -> bool {
        self.started.load(Ordering::Acquire)
    }

    /// Writes a line for the terminal pane (dim, so it reads as duet's).
    pub(crate) fn show(&self, text: &str) {
        let mut line = String::with_capacity(text.len() + 12);
        line.push_str("\x1b[2m");
        line.push_str(&text.replace('\n', "\r\n"));
        line.push_str("\x1b[0m\r\n");
        self.output.push(Bytes::from(line));
    }

    /// The agent is ready for prompts: `session_start` with what is known
    /// of it.
    pub(crate) fn start(&self, session_id: Option<&str>, data: Value) {
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut data = data;
        if let Some(announced) = lock(&self.protocol).take() {
            data["announced"] = announced;
        }
        if let Some(id) = session_id {
            data["session_id"] = json!(id);
        }
        self.conversation.emit(&json!({
            "type": "system",
            "subtype": "session_start",
            "session_id": session_id,
            "data": data,
        }));
    }

    /// A prompt is about to go to the agent.
    pub(crate) fn prompt(&self, text: &str) {
        self.in_turn.store(true, Ordering::Release);
        self.conversation.emit(&user_event(text));
        self.show(&format!("> {}", first_line(text, 200)));
    }

    /// A line the agent wrote: validated, recorded, shown. Returns the
    /// parsed event, for the caller's own handling.
    pub(crate) fn relay(&self, line: &str) -> Option<Value> {
        let line = line.trim_end();
        if line.trim().is_empty() {
            return None;
        }
        if let Err(e) = validate(line) {
            self.conversation.warn(
                "bad_event",
                format!(
                    "the agent wrote a line that is not a JSON object ({e}): {}",
                    first_line(line, 120)
                ),
                None,
            );
            // Not JSON: probably a message meant for a person.
            self.show(line);
            return None;
        }
        let event: Value = serde_json::from_str(line).ok()?;
        if heartbeat::is_heartbeat(&event) {
            return Some(event);
        }
        if event["type"] == "control_request" && event["request"]["subtype"] == "can_use_tool" {
            // Before the approval exists: a client may answer at once.
            if let Some(id) = event["request_id"].as_str() {
                let mut inputs = lock(&self.inputs);
                // Bounded: requests the agent abandons would pile up.
                if inputs.len() >= 256 {
                    inputs.clear();
                }
                inputs.insert(id.to_string(), event["request"]["input"].clone());
            }
        }
        self.conversation.emit_line(line);
        self.describe(&event);
        Some(event)
    }

    /// Emits a normalised event (one the agent did not write itself).
    pub(crate) fn emit(&self, event: &Value) {
        self.conversation.emit(event);
        self.describe(event);
    }

    /// The terminal pane's line for an event, if it gets one.
    fn describe(&self, event: &Value) {
        match event["type"].as_str() {
            Some("assistant") => {
                for block in event["message"]["content"].as_array().into_iter().flatten() {
                    if block["type"] == "tool_use" {
                        self.show(&format!(
                            "● {} {}",
                            block["name"].as_str().unwrap_or("tool"),
                            first_line(&block["input"].to_string(), 160)
                        ));
                    }
                }
            }
            Some("result") => {
                self.in_turn.store(false, Ordering::Release);
                let error = event["is_error"] == true;
                self.show(if error {
                    "✗ turn ended with an error"
                } else {
                    "✓ turn done"
                });
            }
            _ => {}
        }
    }

    /// The agent is gone: a turn it left open ends with an error.
    pub(crate) fn ended(&self, why: &str) {
        self.failed("agent_exited", why);
    }

    /// The open turn ends with an error `result` saying `why` (and a
    /// warning with `code`).
    pub(crate) fn failed(&self, code: &'static str, why: &str) {
        if !self.in_turn.swap(false, Ordering::AcqRel) {
            return;
        }
        self.conversation.warn(code, why.to_string(), None);
        self.emit(&json!({
            "type": "result",
            "subtype": "error_during_execution",
            "is_error": true,
            "result": why,
        }));
    }

    /// Reports a line the reader could not take.
    pub(crate) fn skipped(&self, line: &Line) {
        let message = match line {
            Line::TooLong(n) => {
                format!("the agent wrote a line of {n} bytes, over the limit; it was skipped")
            }
            Line::NotUtf8 => "the agent wrote a line that is not UTF-8; it was skipped".into(),
            Line::Text(_) => return,
        };
        self.conversation.warn("bad_event", message, None);
    }
}

/// A prompt as the `user` message stream-json agents read (and the chat
/// renders).
pub(crate) fn user_event(text: &str) -> Value {
    json!({
        "type": "user",
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
        "parent_tool_use_id": null,
    })
}

/// The first line of `text`, at most `max` characters.
pub(crate) fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(max).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// Where a stream-json channel reads and writes.
pub(crate) struct StreamJsonOptions {
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ChildStdout,
    pub(crate) output: Arc<Output>,
    pub(crate) max_line: usize,
    /// How often to send heartbeats (zero: never; see `heartbeat.rs`).
    pub(crate) heartbeat: Duration,
}

/// See the module docs.
pub(crate) struct StreamJson {
    out: mpsc::Sender<Out>,
    shared: Arc<Shared>,
    next_id: AtomicU64,
    reader: Mutex<Option<JoinHandle<()>>>,
    heartbeat: Option<JoinHandle<()>>,
}

impl StreamJson {
    /// Sends `initialize` and starts relaying the agent's stdout. Must run
    /// inside a tokio runtime.
    pub(crate) fn start(opts: StreamJsonOptions, conversation: Arc<Conversation>) -> Arc<Self> {
        let shared = Shared::new(conversation, opts.output);
        let (out, rx) = mpsc::channel(OUT_QUEUE);
        tokio::spawn(write(opts.stdin, rx, shared.clone()).in_current_span());
        let init = json!({
            "type": "control_request",
            "request_id": INIT_ID,
            "request": {"subtype": "initialize", "hooks": null},
        });
        let _ = out.try_send(Out::Line(init.to_string()));
        let reader = tokio::spawn(
            read(opts.stdout, shared.clone(), out.clone(), opts.max_line).in_current_span(),
        );
        tokio::spawn(
            {
                let shared = shared.clone();
                async move {
                    tokio::time::sleep(INIT_TIMEOUT).await;
                    if !shared.started.load(Ordering::Acquire) {
                        shared.conversation.warn(
                            "no_handshake",
                            format!("the agent did not answer initialize within {INIT_TIMEOUT:?}; sending prompts anyway"),
                            None,
                        );
                        shared.start(None, json!({"protocol": "stream-json"}));
                    }
                }
            }
            .in_current_span(),
        );
        let heartbeat = (!opts.heartbeat.is_zero()).then(|| {
            tokio::spawn(
                heartbeat::run(shared.clone(), out.clone(), opts.heartbeat).in_current_span(),
            )
        });
        Arc::new(Self {
            out,
            shared,
            next_id: AtomicU64::new(1),
            reader: Mutex::new(Some(reader)),
            heartbeat,
        })
    }

    fn send(&self, out: Out) -> Result<(), ChannelError> {
        self.out.try_send(out).map_err(|e| match e {
            mpsc::error::TrySendError::Closed(_) => ChannelError::Closed,
            mpsc::error::TrySendError::Full(_) => {
                ChannelError::Refused("the agent is not reading its input".into())
            }
        })
    }
}

impl Drop for StreamJson {
    fn drop(&mut self) {
        if let Some(h) = &self.heartbeat {
            h.abort();
        }
    }
}

impl Channel for StreamJson {
    fn deliver(&self, text: &str) -> Result<(), ChannelError> {
        self.send(Out::Prompt(text.to_string()))
    }

    fn decide(&self, request_id: &str, option: &ApprovalOption) -> Result<(), ChannelError> {
        let allowed = option.kind.allows();
        let input = lock(&self.shared.inputs).remove(request_id);
        let response = if allowed {
            // The tool's input unchanged (Claude Code requires it; Qwen
            // Code takes it as is).
            json!({"behavior": "allow", "updatedInput": input.unwrap_or_else(|| json!({}))})
        } else {
            json!({"behavior": "deny", "message": "Denied from the browser"})
        };
        let line = json!({
            "type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": response},
        });
        self.send(Out::Decision {
            line: line.to_string(),
            request_id: request_id.to_string(),
            allowed,
        })
    }

    fn cancel(&self) -> Option<Result<(), ChannelError>> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let line = json!({
            "type": "control_request",
            "request_id": format!("{INTERRUPT_PREFIX}{id}"),
            "request": {"subtype": "interrupt"},
        });
        Some(self.send(Out::Line(line.to_string())))
    }

    fn finish(&self) -> BoxFuture<'static, ()> {
        if let Some(h) = &self.heartbeat {
            h.abort();
        }
        let reader = lock(&self.reader).take();
        let shared = self.shared.clone();
        Box::pin(async move {
            if let Some(mut reader) = reader {
                // Whatever the agent wrote before it exited is still in
                // the pipe; a grandchild holding it open must not keep
                // the session from ending.
                if tokio::time::timeout(DRAIN_TIMEOUT, &mut reader)
                    .await
                    .is_err()
                {
                    reader.abort();
                }
            }
            shared.ended("the agent exited before it finished its turn");
        })
    }
}
