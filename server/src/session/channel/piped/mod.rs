//! What every agent on pipes has in common (stream-json, print mode, ACP):
//! its side of the conversation (`session_start`, prompts as `user`
//! events, a turn that fails when the agent goes), the terminal pane's
//! line per prompt, tool call and turn end, and the lines (`lines.rs`),
//! the writer (`writer.rs`) and the tool-call normaliser (`tool_call.rs`)
//! each of them uses.

pub(crate) mod lines;
pub(crate) mod tool_call;
pub(crate) mod writer;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use duet_protocol::build;
use duet_protocol::sidecar::{Envelope, SidecarEvent};
use serde_json::{json, Value};

use super::conversation::Sink;
use crate::session::terminal::output::Output;
use crate::session::WarningCode;
use crate::sync::lock;
use lines::Line;

/// See the module docs.
pub(crate) struct Agent {
    /// Where the agent's events go (weakly: see `conversation/sink.rs`).
    pub(crate) conversation: Sink,
    pub(crate) output: Arc<Output>,
    /// A prompt went out and its `result` has not come.
    in_turn: AtomicBool,
    /// `session_start` has been emitted.
    started: AtomicBool,
    /// What the agent announced of its protocol before `session_start`
    /// (stream-json's `errors.rs`).
    protocol: Mutex<Option<Value>>,
}

impl Agent {
    /// The agent's side of a channel feeding `conversation`, writing its
    /// pane's lines into `output`.
    pub(crate) fn new(conversation: Sink, output: Arc<Output>) -> Arc<Self> {
        Arc::new(Self {
            conversation,
            output,
            in_turn: AtomicBool::new(false),
            started: AtomicBool::new(false),
            protocol: Mutex::new(None),
        })
    }

    /// Whether a prompt went out and its `result` has not come.
    pub(crate) fn in_turn(&self) -> bool {
        self.in_turn.load(Ordering::Acquire)
    }

    /// The agent announced its protocol (version, formats, capabilities):
    /// part of the handshake, or an event of its own once that is out.
    pub(crate) fn announce_protocol(&self, announced: Value) {
        if !self.is_started() {
            *lock(&self.protocol) = Some(announced);
            return;
        }
        self.conversation.emit(&build::system(
            "protocol",
            Envelope::none(),
            Some(announced),
        ));
    }

    /// Whether `session_start` has been emitted.
    pub(crate) fn is_started(&self) -> bool {
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
        self.conversation
            .emit(&build::session_start(Envelope::session(session_id), data));
    }

    /// A prompt is about to go to the agent.
    pub(crate) fn prompt(&self, text: &str) {
        self.in_turn.store(true, Ordering::Release);
        self.conversation.emit(&user_event(text));
        self.show(&format!("> {}", first_line(text, 200)));
    }

    /// Emits a normalised event (one the agent did not write itself).
    pub(crate) fn emit(&self, event: &SidecarEvent) {
        self.conversation.emit(event);
        self.describe(&event.to_value());
    }

    /// The terminal pane's line for an event, if it gets one.
    pub(crate) fn describe(&self, event: &Value) {
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
        self.failed(WarningCode::AgentExited, why);
    }

    /// The open turn ends with an error `result` saying `why` (and a
    /// warning with `code`).
    pub(crate) fn failed(&self, code: WarningCode, why: &str) {
        if !self.in_turn.swap(false, Ordering::AcqRel) {
            return;
        }
        self.conversation.warn(code, why.to_string(), None);
        self.emit(&build::failed(why));
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
        self.conversation.warn(WarningCode::BadEvent, message, None);
    }
}

/// A prompt as the `user` message stream-json agents read (and the chat
/// renders).
pub(crate) fn user_event(text: &str) -> SidecarEvent {
    build::user_text(Envelope::none().top_level(), text)
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
