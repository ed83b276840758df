//! Builders for the sidecar events the agent writes, in the shapes Qwen Code
//! 0.15 writes them (see the fixture in `shared/fixtures/qwen-code-0.15.10`),
//! made from `duet-protocol`'s typed models so the agent and the gateway agree
//! on the schema by construction.

use std::path::Path;

use duet_protocol::sidecar::{
    CanUseTool, Content, ContentBlock, ControlRequest, ControlRequestBody, ControlResponse,
    ControlResponseBody, Delta, Envelope, Extra, KnownBlock, KnownDelta, KnownEvent,
    KnownStreamEvent, Message, MessageEvent, SessionStartData, SidecarEvent, StreamEvent,
    StreamEventEnvelope,
};
use serde_json::{json, Value};

/// Dual-output protocol version announced in `session_start`.
pub const PROTOCOL_VERSION: u32 = 1;

/// The model name the scripted replies carry.
pub const MODEL: &str = "duet-demo";

/// Every event kind this agent writes (it never writes `result`, which
/// Qwen Code's TUI does not write either).
pub const SUPPORTED_EVENTS: [&str; 6] = [
    "system",
    "user",
    "assistant",
    "stream_event",
    "control_request",
    "control_response",
];

/// The message of a `control_response` error for a request that is not pending.
pub const UNKNOWN_REQUEST: &str =
    "unknown request_id (already resolved, cancelled, or never issued)";

/// Token counts reported in an assistant message's `usage`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Makes events stamped with one session id.
#[derive(Debug, Clone)]
pub struct Events {
    session_id: String,
}

impl Events {
    /// Builders for session `session_id`.
    pub fn new(session_id: &str) -> Self {
        Events {
            session_id: session_id.to_string(),
        }
    }

    /// `system/session_start` with the capability handshake.
    pub fn session_start(&self, cwd: &Path) -> SidecarEvent {
        SidecarEvent::session_start(
            &self.session_id,
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
    pub fn session_end(&self) -> SidecarEvent {
        SidecarEvent::session_end(&self.session_id)
    }

    /// A `user` prompt.
    pub fn user_text(&self, text: &str) -> SidecarEvent {
        self.user(vec![text_block(text)])
    }

    /// A `user` message carrying a tool's result back to the model.
    pub fn tool_result(&self, tool_use_id: &str, is_error: bool, content: &str) -> SidecarEvent {
        self.user(vec![ContentBlock::Known(KnownBlock::ToolResult {
            tool_use_id: tool_use_id.to_string(),
            is_error: Some(is_error),
            content: Some(Value::String(content.to_string())),
            extra: Extra::new(),
        })])
    }

    fn user(&self, content: Vec<ContentBlock>) -> SidecarEvent {
        SidecarEvent::Known(KnownEvent::User(MessageEvent {
            envelope: Envelope::new(&self.session_id),
            message: Message {
                role: "user".into(),
                content: Content::Blocks(content),
                id: None,
                model: None,
                extra: Extra::new(),
            },
            extra: Extra::new(),
        }))
    }

    /// `stream_event` / `message_start`.
    pub fn message_start(&self, message_id: &str) -> SidecarEvent {
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
    pub fn block_start(&self, index: u32, block: ContentBlock) -> SidecarEvent {
        self.stream(KnownStreamEvent::ContentBlockStart {
            index,
            content_block: block,
            extra: Extra::new(),
        })
    }

    /// `stream_event` / `content_block_delta` with a `text_delta`.
    pub fn text_delta(&self, index: u32, text: &str) -> SidecarEvent {
        self.delta(
            index,
            KnownDelta::TextDelta {
                text: text.to_string(),
                extra: Extra::new(),
            },
        )
    }

    /// `stream_event` / `content_block_delta` with an `input_json_delta`.
    pub fn input_json_delta(&self, index: u32, partial_json: &str) -> SidecarEvent {
        self.delta(
            index,
            KnownDelta::InputJsonDelta {
                partial_json: partial_json.to_string(),
                extra: Extra::new(),
            },
        )
    }

    fn delta(&self, index: u32, delta: KnownDelta) -> SidecarEvent {
        self.stream(KnownStreamEvent::ContentBlockDelta {
            index,
            delta: Delta::Known(delta),
            extra: Extra::new(),
        })
    }

    /// `stream_event` / `content_block_stop`.
    pub fn block_stop(&self, index: u32) -> SidecarEvent {
        self.stream(KnownStreamEvent::ContentBlockStop {
            index,
            extra: Extra::new(),
        })
    }

    /// `stream_event` / `message_stop`.
    pub fn message_stop(&self) -> SidecarEvent {
        self.stream(KnownStreamEvent::MessageStop {
            extra: Extra::new(),
        })
    }

    fn stream(&self, event: KnownStreamEvent) -> SidecarEvent {
        SidecarEvent::Known(KnownEvent::StreamEvent(StreamEventEnvelope {
            envelope: Envelope::new(&self.session_id),
            event: StreamEvent::Known(event),
            extra: Extra::new(),
        }))
    }

    /// The complete `assistant` message; its `uuid` is the message id, as in
    /// Qwen Code.
    pub fn assistant(
        &self,
        message_id: &str,
        content: Vec<ContentBlock>,
        stop_reason: Option<&str>,
        usage: Usage,
    ) -> SidecarEvent {
        let mut extra = Extra::new();
        extra.insert("type".into(), json!("message"));
        extra.insert("stop_reason".into(), json!(stop_reason));
        extra.insert(
            "usage".into(),
            json!({
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_input_tokens": 0,
                "total_tokens": usage.input_tokens + usage.output_tokens,
            }),
        );
        SidecarEvent::Known(KnownEvent::Assistant(MessageEvent {
            envelope: Envelope {
                uuid: Some(message_id.to_string()),
                ..Envelope::new(&self.session_id)
            },
            message: Message {
                role: "assistant".into(),
                content: Content::Blocks(content),
                id: Some(message_id.to_string()),
                model: Some(MODEL.into()),
                extra,
            },
            extra: Extra::new(),
        }))
    }

    /// `control_request` / `can_use_tool`: a tool call waiting for approval.
    pub fn can_use_tool(
        &self,
        request_id: &str,
        tool_name: &str,
        tool_use_id: &str,
        input: &Value,
    ) -> SidecarEvent {
        let mut extra = Extra::new();
        extra.insert("permission_suggestions".into(), Value::Null);
        extra.insert("blocked_path".into(), Value::Null);
        SidecarEvent::Known(KnownEvent::ControlRequest(ControlRequest {
            request_id: request_id.to_string(),
            request: ControlRequestBody::CanUseTool(CanUseTool {
                tool_name: tool_name.to_string(),
                tool_use_id: Some(tool_use_id.to_string()),
                input: input.clone(),
                extra,
            }),
            extra: Extra::new(),
        }))
    }

    /// `control_response` / `success`: how an approval was decided.
    pub fn control_allowed(&self, request_id: &str, allowed: bool) -> SidecarEvent {
        control_response(ControlResponseBody::Success {
            request_id: request_id.to_string(),
            response: Some(json!({ "allowed": allowed })),
            extra: Extra::new(),
        })
    }

    /// `control_response` / `error`, e.g. for an answer to no pending request.
    pub fn control_error(&self, request_id: &str, error: &str) -> SidecarEvent {
        control_response(ControlResponseBody::Error {
            request_id: request_id.to_string(),
            error: Value::String(error.to_string()),
            extra: Extra::new(),
        })
    }
}

fn control_response(response: ControlResponseBody) -> SidecarEvent {
    SidecarEvent::Known(KnownEvent::ControlResponse(ControlResponse {
        response,
        extra: Extra::new(),
    }))
}

/// A text content block.
pub fn text_block(text: &str) -> ContentBlock {
    ContentBlock::Known(KnownBlock::Text {
        text: text.to_string(),
        extra: Extra::new(),
    })
}

/// A tool_use content block.
pub fn tool_use_block(id: &str, name: &str, input: Value) -> ContentBlock {
    ContentBlock::Known(KnownBlock::ToolUse {
        id: id.to_string(),
        name: name.to_string(),
        input,
        extra: Extra::new(),
    })
}

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
