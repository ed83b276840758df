//! Builders for the sidecar events the agent writes, in the shapes Qwen Code
//! 0.15 writes them (see the fixture in `protocol/tests/fixtures/qwen-code-0.15.10`),
//! made from `duet-protocol`'s typed models so the agent and the gateway agree
//! on the schema by construction.

use std::path::Path;

use duet_protocol::build::{self, message};
use duet_protocol::sidecar::{
    ContentBlock, Envelope, Extra, KnownStreamEvent, SessionStartData, SidecarEvent,
};
use serde_json::{json, Value};

/// Dual-output protocol version announced in `session_start`.
pub(crate) const PROTOCOL_VERSION: u32 = 1;

/// The model name the scripted replies carry.
pub(crate) const MODEL: &str = "duet-demo";

/// Every event kind this agent writes (it never writes `result`, which
/// Qwen Code's TUI does not write either).
pub(crate) const SUPPORTED_EVENTS: [&str; 6] = [
    "system",
    "user",
    "assistant",
    "stream_event",
    "control_request",
    "control_response",
];

/// The message of a `control_response` error for a request that is not pending.
pub(crate) const UNKNOWN_REQUEST: &str =
    "unknown request_id (already resolved, cancelled, or never issued)";

/// Token counts reported in an assistant message's `usage`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Makes events stamped with one session id.
#[derive(Debug, Clone)]
pub(crate) struct Events {
    session_id: String,
}

impl Events {
    /// Builders for session `session_id`.
    pub(crate) fn new(session_id: &str) -> Self {
        Events {
            session_id: session_id.to_string(),
        }
    }

    fn envelope(&self) -> Envelope {
        Envelope::new(&self.session_id)
    }

    /// `system/session_start` with the capability handshake.
    pub(crate) fn session_start(&self, cwd: &Path) -> SidecarEvent {
        build::handshake(
            self.envelope(),
            SessionStartData {
                session_id: Some(self.session_id.clone()),
                cwd: Some(cwd.display().to_string()),
                protocol_version: Some(PROTOCOL_VERSION),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
                supported_events: Some(SUPPORTED_EVENTS.iter().map(|s| s.to_string()).collect()),
                extra: Extra::new(),
            },
        )
    }

    /// `system/session_end`.
    pub(crate) fn session_end(&self) -> SidecarEvent {
        build::session_end(&self.session_id)
    }

    /// A `user` prompt.
    pub(crate) fn user_text(&self, text: &str) -> SidecarEvent {
        build::user_text(self.envelope(), text)
    }

    /// A `user` message carrying a tool's result back to the model.
    pub(crate) fn tool_result(
        &self,
        tool_use_id: &str,
        is_error: bool,
        content: &str,
    ) -> SidecarEvent {
        build::user(
            self.envelope(),
            vec![build::tool_result_block(
                tool_use_id,
                Some(is_error),
                Value::String(content.to_string()),
            )],
        )
    }

    /// `stream_event` / `message_start`.
    pub(crate) fn message_start(&self, message_id: &str) -> SidecarEvent {
        self.stream(KnownStreamEvent::MessageStart {
            message: json!({
                "id": message_id,
                "role": "assistant",
                "model": MODEL,
                "content": [],
            }),
            extra: Extra::new(),
        })
    }

    /// `stream_event` / `content_block_start` of `block` (as it starts: empty).
    pub(crate) fn block_start(&self, index: u32, block: ContentBlock) -> SidecarEvent {
        self.stream(build::block_start(index, block))
    }

    /// `stream_event` / `content_block_delta` with a `text_delta`.
    pub(crate) fn text_delta(&self, index: u32, text: &str) -> SidecarEvent {
        self.stream(build::text_delta(index, text))
    }

    /// `stream_event` / `content_block_delta` with an `input_json_delta`.
    pub(crate) fn input_json_delta(&self, index: u32, partial_json: &str) -> SidecarEvent {
        self.stream(build::input_json_delta(index, partial_json))
    }

    /// `stream_event` / `content_block_stop`.
    pub(crate) fn block_stop(&self, index: u32) -> SidecarEvent {
        self.stream(build::block_stop(index))
    }

    /// `stream_event` / `message_stop`.
    pub(crate) fn message_stop(&self) -> SidecarEvent {
        self.stream(KnownStreamEvent::MessageStop {
            extra: Extra::new(),
        })
    }

    fn stream(&self, event: KnownStreamEvent) -> SidecarEvent {
        build::stream(self.envelope(), event)
    }

    /// The complete `assistant` message; its `uuid` is the message id, as in
    /// Qwen Code.
    pub(crate) fn assistant(
        &self,
        message_id: &str,
        content: Vec<ContentBlock>,
        stop_reason: Option<&str>,
        usage: Usage,
    ) -> SidecarEvent {
        let mut m = message("assistant", content);
        m.id = Some(message_id.to_string());
        m.model = Some(MODEL.into());
        m.extra.insert("type".into(), json!("message"));
        m.extra.insert("stop_reason".into(), json!(stop_reason));
        m.extra.insert(
            "usage".into(),
            json!({
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_input_tokens": 0,
                "total_tokens": usage.input_tokens + usage.output_tokens,
            }),
        );
        build::assistant(self.envelope().with_uuid(Some(message_id)), m)
    }

    /// `control_request` / `can_use_tool`: a tool call waiting for approval.
    pub(crate) fn can_use_tool(
        &self,
        request_id: &str,
        tool_name: &str,
        tool_use_id: &str,
        input: &Value,
    ) -> SidecarEvent {
        let mut extra = Extra::new();
        extra.insert("permission_suggestions".into(), Value::Null);
        extra.insert("blocked_path".into(), Value::Null);
        build::can_use_tool(
            request_id,
            build::tool_request(tool_name, Some(tool_use_id), input.clone(), extra),
        )
    }

    /// `control_response` / `success`: how an approval was decided.
    pub(crate) fn control_allowed(&self, request_id: &str, allowed: bool) -> SidecarEvent {
        build::control_allowed(request_id, allowed)
    }

    /// `control_response` / `error`, e.g. for an answer to no pending request.
    pub(crate) fn control_error(&self, request_id: &str, error: &str) -> SidecarEvent {
        build::control_error(request_id, Value::String(error.to_string()))
    }
}

pub(crate) use build::{text_block, tool_use_block};

#[cfg(test)]
mod tests {
    use super::*;

    fn value(ev: &SidecarEvent) -> Value {
        serde_json::from_str(&ev.to_line()).unwrap()
    }

    #[test]
    fn handshake_has_the_qwen_code_fields() {
        let ev = value(&Events::new("s").session_start(Path::new("/w")));
        assert_eq!(ev["type"], "system");
        assert_eq!(ev["subtype"], "session_start");
        assert_eq!(ev["session_id"], "s");
        assert_eq!(ev["data"]["session_id"], "s");
        assert_eq!(ev["data"]["cwd"], "/w");
        assert_eq!(ev["data"]["protocol_version"], 1);
        assert_eq!(ev["data"]["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(ev["data"]["supported_events"][5], "control_response");
    }

    #[test]
    fn control_request_matches_the_fixture_shape() {
        let input = json!({"command": "ls", "description": "d"});
        let ev = value(&Events::new("s").can_use_tool("r", "run_shell_command", "t", &input));
        assert_eq!(
            ev,
            json!({"type": "control_request", "request_id": "r", "request": {
                "subtype": "can_use_tool", "tool_name": "run_shell_command",
                "tool_use_id": "t", "input": input,
                "permission_suggestions": null, "blocked_path": null}})
        );
    }

    #[test]
    fn control_responses_match_the_documented_shapes() {
        let events = Events::new("s");
        assert_eq!(
            value(&events.control_allowed("r", false)),
            json!({"type": "control_response", "response":
                {"subtype": "success", "request_id": "r", "response": {"allowed": false}}})
        );
        assert_eq!(
            value(&events.control_error("r", UNKNOWN_REQUEST)),
            json!({"type": "control_response", "response":
                {"subtype": "error", "request_id": "r", "error": UNKNOWN_REQUEST}})
        );
    }

    #[test]
    fn assistant_uuid_is_the_message_id() {
        let ev =
            value(&Events::new("s").assistant("m", vec![text_block("hi")], None, Usage::default()));
        assert_eq!(ev["uuid"], "m");
        assert_eq!(ev["message"]["id"], "m");
        assert_eq!(ev["message"]["content"][0]["text"], "hi");
        assert_eq!(ev["message"]["stop_reason"], Value::Null);
        assert_eq!(ev["parent_tool_use_id"], Value::Null);
    }

    #[test]
    fn tool_result_is_a_user_message() {
        let ev = value(&Events::new("s").tool_result("t", true, "denied by user"));
        assert_eq!(ev["type"], "user");
        assert_eq!(
            ev["message"]["content"][0],
            json!({"type": "tool_result", "tool_use_id": "t", "is_error": true,
                   "content": "denied by user"})
        );
    }
}
