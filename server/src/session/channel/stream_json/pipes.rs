//! The agent's stdout: a reader task that relays it until EOF and
//! answers what the agent asks (its stdin is `piped/writer.rs`).

use std::sync::Arc;

use duet_protocol::build;
use serde_json::json;
use tokio::io::{AsyncRead, BufReader};
use tokio::sync::mpsc;
use tracing::warn;

use super::{errors, heartbeat, Out, Shared, INIT_ID, INTERRUPT_PREFIX};
use crate::session::channel::piped::lines::{next_line, Line};
use crate::session::WarningCode;

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
                        WarningCode::NoHandshake,
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
                    WarningCode::CancelFailed,
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
                let id = event["request_id"].as_str().unwrap_or_default();
                shared
                    .conversation
                    .emit(&build::control_error(id, json!("cancelled by the agent")));
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
