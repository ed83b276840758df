//! The structured I/O RFC's version negotiation and error semantics (seed
//! 000, "Version Negotiation and Error Semantics"), for agents that follow
//! it. Every line passes through [`check`]:
//!
//! - the protocol version, formats and capabilities an agent announces in
//!   `metadata` (or `system_fingerprint`) go into the handshake, or, once
//!   that is out, into a `system`/`protocol` event;
//! - a version mismatch (`metadata.error` `unsupported_protocol`, with
//!   `finish_reason: "error"`; the agent then exits non-zero) is reported
//!   as `unsupported_protocol`, and the open turn ends with it;
//! - a fatal error, a bare OpenAI-style `{"error": {"message", …}}` line
//!   before the agent ends, is reported as `agent_error` and ends the turn;
//! - control-protocol errors (`metadata.control_errors`) are reported as
//!   `control_error`, the turn going on;
//! - recoverable errors are ordinary completions: relayed as they are.
//!
//! duet's own failures go back in the RFC's shape, `{"subtype":"error",
//! "error":{"message","retryable":false}}` ([`error_response`]); Qwen Code
//! reads the message from it as from a bare string.

use serde_json::{json, Value};

use super::{first_line, Shared};
use crate::session::WarningCode;

/// Control errors reported from one line, at most.
const MAX_CONTROL_ERRORS: usize = 4;

/// duet's `control_response` refusing request `request_id`.
pub(super) fn error_response(request_id: &Value, message: &str) -> String {
    json!({
        "type": "control_response",
        "response": {
            "subtype": "error",
            "request_id": request_id,
            "error": {"message": message, "retryable": false},
        },
    })
    .to_string()
}

/// The text of an RFC error: a string, or an object's `message`, with its
/// `code` when it has one.
fn describe(error: &Value) -> String {
    match error {
        Value::String(s) => s.clone(),
        Value::Object(o) => {
            let message = o
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("no message");
            match o.get("code").or(o.get("type")).and_then(Value::as_str) {
                Some(code) => format!("{message} ({code})"),
                None => message.to_string(),
            }
        }
        other => other.to_string(),
    }
}

fn is_unsupported_protocol(error: &Value) -> bool {
    let named = |v: Option<&Value>| v.and_then(Value::as_str) == Some("unsupported_protocol");
    named(Some(error)) || named(error.get("code")) || named(error.get("type"))
}

/// See the module docs.
pub(super) fn check(shared: &Shared, event: &Value) {
    if event.get("type").is_none() {
        if let Some(error) = event.get("error").filter(|e| e.is_object()) {
            let why = format!("the agent reported a fatal error: {}", describe(error));
            fail(shared, WarningCode::AgentError, why);
            return;
        }
    }
    let Some(meta) = event.get("metadata").filter(|m| m.is_object()) else {
        return;
    };
    if let Some(error) = meta.get("error").filter(|e| !e.is_null()) {
        if is_unsupported_protocol(error) {
            let why = format!(
                "the agent does not support what duet asked of it (unsupported_protocol): {}",
                describe(error)
            );
            fail(shared, WarningCode::UnsupportedProtocol, why);
        } else if finished_with_error(event) {
            fail(
                shared,
                WarningCode::AgentError,
                format!("the agent reported an error: {}", describe(error)),
            );
        }
    }
    for e in meta["control_errors"]
        .as_array()
        .into_iter()
        .flatten()
        .take(MAX_CONTROL_ERRORS)
    {
        shared.conversation.warn(
            WarningCode::ControlError,
            format!(
                "the agent reported a control-protocol error: {}",
                describe(e)
            ),
            None,
        );
    }
    if let Some(version) = meta.get("protocol_version") {
        shared.announce_protocol(json!({
            "protocol_version": version,
            "input_format": meta["input_format"],
            "output_format": meta["output_format"],
            "capabilities": meta["capabilities"],
            "system_fingerprint": event["system_fingerprint"],
        }));
    }
}

fn finished_with_error(event: &Value) -> bool {
    event["choices"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["finish_reason"] == "error")
}

/// Reports `why` once, ending the open turn with it if there is one.
fn fail(shared: &Shared, code: WarningCode, why: String) {
    if shared.in_turn() {
        shared.failed(code, &why);
    } else {
        shared.conversation.warn(code, why.clone(), None);
    }
    shared.show(&format!("✗ {}", first_line(&why, 200)));
}
