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
pub(crate) mod per_turn;
mod pipes;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use duet_protocol::rest::ApprovalOption;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::conversation::{validate, Sink};
use super::piped::writer::{self, Out, OUT_QUEUE};
use super::piped::{first_line, user_event, Agent};
use super::{Channel, ChannelError, Setup, Started, Tasks};
use crate::session::terminal::output::Output;
use crate::session::WarningCode;
use crate::sync::lock;
use pipes::read;

/// How long the agent gets to answer `initialize` before prompts go to it
/// anyway (Qwen Code 0.24.4 takes 7–10 s on 2 busy cores).
const INIT_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the last output of an exited agent may take to drain.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// The id of duet's `initialize` request.
const INIT_ID: &str = "duet-initialize";
/// The ids of duet's `interrupt` requests start so.
const INTERRUPT_PREFIX: &str = "duet-interrupt-";

/// What the reader, the writer and the heartbeat share: the agent's side
/// of the conversation (`piped::Agent`) and what only stream-json has.
pub(crate) struct Shared {
    agent: Arc<Agent>,
    /// The input of each pending `can_use_tool`, by request id: Claude
    /// Code wants it back (`updatedInput`) with an allow.
    inputs: Mutex<HashMap<String, Value>>,
    /// Whether the agent answers heartbeats (`heartbeat.rs`).
    beat: Mutex<heartbeat::Beat>,
}

/// A stream-json channel is an agent on pipes with a few things more.
impl std::ops::Deref for Shared {
    type Target = Agent;
    fn deref(&self) -> &Agent {
        &self.agent
    }
}

impl Shared {
    fn new(agent: Arc<Agent>) -> Arc<Self> {
        Arc::new(Self {
            agent,
            inputs: Mutex::new(HashMap::new()),
            beat: Mutex::new(heartbeat::Beat::default()),
        })
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
                WarningCode::BadEvent,
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
    /// The writer, the reader and the heartbeat end with the channel.
    _tasks: Tasks,
}

/// Starts the agent on pipes and speaks stream-json with it.
pub(super) fn start(setup: &Setup<'_>) -> Result<Started> {
    Started::on_pipes(setup, setup.spawn(), |piped| {
        StreamJson::start(
            StreamJsonOptions {
                stdin: piped.stdin,
                stdout: piped.stdout,
                output: setup.terminal.output.clone(),
                max_line: setup.limits.max_sidecar_line,
                heartbeat: setup.limits.heartbeat,
            },
            setup.sink(),
        )
    })
}

impl StreamJson {
    /// Sends `initialize` and starts relaying the agent's stdout. Must run
    /// inside a tokio runtime.
    pub(crate) fn start(opts: StreamJsonOptions, conversation: Sink) -> Arc<Self> {
        let agent = Agent::new(conversation, opts.output);
        let shared = Shared::new(agent.clone());
        let tasks = Tasks::default();
        let (out, rx) = mpsc::channel(OUT_QUEUE);
        tasks.spawn(writer::write(opts.stdin, rx, agent.clone(), move |text| {
            agent.prompt(text);
            serde_json::to_string(&user_event(text)).ok()
        }));
        let init = json!({
            "type": "control_request",
            "request_id": INIT_ID,
            "request": {"subtype": "initialize", "hooks": null},
        });
        let _ = out.try_send(Out::Line(init.to_string()));
        let reader = tasks.spawn(read(
            opts.stdout,
            shared.clone(),
            out.clone(),
            opts.max_line,
        ));
        tasks.spawn({
            let shared = shared.clone();
            async move {
                tokio::time::sleep(INIT_TIMEOUT).await;
                if !shared.is_started() {
                    shared.conversation.warn(
                        WarningCode::NoHandshake,
                        format!("the agent did not answer initialize within {INIT_TIMEOUT:?}; sending prompts anyway"),
                        None,
                    );
                    shared.start(None, json!({"protocol": "stream-json"}));
                }
            }
        });
        let heartbeat = (!opts.heartbeat.is_zero())
            .then(|| tasks.spawn(heartbeat::run(shared.clone(), out.clone(), opts.heartbeat)));
        Arc::new(Self {
            out,
            shared,
            next_id: AtomicU64::new(1),
            reader: Mutex::new(Some(reader)),
            heartbeat,
            _tasks: tasks,
        })
    }

    fn send(&self, out: Out) -> Result<(), ChannelError> {
        writer::send(&self.out, out)
    }
}

impl Channel for StreamJson {
    fn ends_turns_with_result(&self) -> bool {
        true
    }

    fn deliver(&self, text: &str) -> Result<(), ChannelError> {
        self.send(Out::Prompt(text.to_string()))
    }

    fn decide(&self, request_id: &str, option: &ApprovalOption) -> Result<(), ChannelError> {
        self.decide_because(request_id, option, "Denied from the browser")
    }

    fn decide_because(
        &self,
        request_id: &str,
        option: &ApprovalOption,
        why: &str,
    ) -> Result<(), ChannelError> {
        let allowed = option.kind.allows();
        let input = lock(&self.shared.inputs).remove(request_id);
        let response = if allowed {
            // The tool's input unchanged (Claude Code requires it; Qwen
            // Code takes it as is).
            json!({"behavior": "allow", "updatedInput": input.unwrap_or_else(|| json!({}))})
        } else {
            json!({"behavior": "deny", "message": why})
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
