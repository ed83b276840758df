//! The agent's pipes: a writer task that sends queued lines to its stdin
//! in order, and a reader task that relays its stdout until EOF and
//! answers what it asks.

use std::sync::Arc;

use serde_json::json;
use tokio::io::{AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::ChildStdin;
use tokio::sync::mpsc;
use tracing::{debug, warn};

use super::lines::{next_line, Line};
use super::{errors, heartbeat, user_event, Conversation, Out, Shared, INIT_ID, INTERRUPT_PREFIX};

/// What the conversation records once a decision went to the agent: the
/// stream-json `control_response`, which every channel writes.
pub(crate) fn decision_record(request_id: String, allowed: bool) -> serde_json::Value {
    json!({
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": {"allowed": allowed}},
    })
}

/// Writes `line` and a newline to the agent's stdin. False, after one
/// `agent_input_closed` warning, once the agent no longer reads it.
pub(crate) async fn write_line(
    stdin: &mut ChildStdin,
    line: String,
    conversation: &Conversation,
) -> bool {
    let mut bytes = line.into_bytes();
    bytes.push(b'\n');
    if let Err(e) = stdin.write_all(&bytes).await {
        debug!(?e, "writing to the agent's stdin");
        conversation.warn(
            "agent_input_closed",
            format!("the agent no longer reads its input: {e}"),
            None,
        );
        return false;
    }
    true
}

/// Writes queued lines to the agent's stdin, in order.
pub(super) async fn write(mut stdin: ChildStdin, mut rx: mpsc::Receiver<Out>, shared: Arc<Shared>) {
    while let Some(out) = rx.recv().await {
        let (line, after) = match out {
            Out::Prompt(text) => {
                shared.prompt(&text);
                (user_event(&text).to_string(), None)
            }
            Out::Decision {
                line,
                request_id,
                allowed,
            } => (line, Some(decision_record(request_id, allowed))),
            Out::Line(line) => (line, None),
        };
        if !write_line(&mut stdin, line, &shared.conversation).await {
            return;
        }
        if let Some(event) = after {
            shared.conversation.emit(&event);
        }
    }
}

/// Relays the agent's stdout until EOF.
pub(super) async fn read(
    stdout: impl AsyncRead + Unpin,
    shared: Arc<Shared>,
    out: mpsc::Sender<Out>,
    max_line: usize,
) {
    let mut r = BufReader::with_capacity(64 * 1024, stdout);
    let mut buf = Vec::new();
    loop {
        let line = match next_line(&mut r, &mut buf, max_line).await {
            Ok(Some(Line::Text(line))) => line,
            Ok(Some(other)) => {
                shared.skipped(&other);
                continue;
            }
            Ok(None) => return,
            Err(e) => {
                warn!(?e, "reading the agent's stdout");
                return;
            }
        };
        let Some(event) = shared.relay(&line) else {
            continue;
        };
        errors::check(&shared, &event);
        match event["type"].as_str() {
            Some("result/heartbeat") => shared.heartbeat(),
            Some("heartbeat_request") => {
                let sid = event["session_id"].as_str();
                let _ = out.try_send(Out::Line(heartbeat::answer(sid)));
            }
            Some("control_response") if event["response"]["request_id"] == INIT_ID => {
                let response = &event["response"];
                if response["subtype"] != "success" {
                    shared.conversation.warn(
                        "no_handshake",
                        format!("the agent refused initialize: {}", response["error"]),
                        None,
                    );
                }
                let body = &response["response"];
                let mut data =
                    json!({"protocol": "stream-json", "capabilities": body["capabilities"]});
                if let Some(v) = body.get("protocol_version") {
                    data["protocol_version"] = v.clone();
                }
                shared.start(body["session_id"].as_str(), data);
            }
            Some("control_response")
                if event["response"]["subtype"] == "error"
                    && event["response"]["request_id"]
                        .as_str()
                        .is_some_and(|id| id.starts_with(INTERRUPT_PREFIX)) =>
            {
                shared.conversation.warn(
                    "cancel_failed",
                    format!(
                        "the agent refused the interrupt: {}",
                        event["response"]["error"]
                    ),
                    None,
                );
            }
            Some("control_request") => {
                let subtype = event["request"]["subtype"].as_str().unwrap_or_default();
                if subtype != "can_use_tool" {
                    let error = errors::error_response(
                        &event["request_id"],
                        &format!("duet does not implement {subtype:?} requests"),
                    );
                    let _ = out.try_send(Out::Line(error));
                }
            }
            Some("control_cancel_request") => {
                // The agent stopped waiting for an answer (its own
                // timeout, an interrupt): the request is abandoned.
                shared.conversation.emit(&json!({
                    "type": "control_response",
                    "response": {"subtype": "error", "request_id": event["request_id"], "error": "cancelled by the agent"},
                }));
            }
            Some("system") if event["subtype"] == "init" => {
                // An agent that skipped the handshake is ready all the same.
                let id = event["session_id"].as_str();
                shared.start(id, json!({"protocol": "stream-json"}));
                if let Some(id) = id {
                    shared.conversation.learn_agent_session_id(id);
                }
            }
            _ => {}
        }
    }
}
