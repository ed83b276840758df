//! Builders for the sidecar events programs write (duet's demo agent) and
//! duet normalises itself (Claude Code's hooks, headless agents, ACP), made
//! from the typed models in [`crate::sidecar`]: what duet emits is, by
//! construction, what the chat reads.
//!
//! Each builder takes the [`Envelope`] it stamps (a session id, a uuid, a
//! parent tool call, or none of them: [`Envelope::none`]), since the shapes
//! differ by agent: Qwen Code stamps every event, duet's own normalised
//! events carry only what the agent said.

use serde_json::{json, Value};

use crate::sidecar::{
    CanUseTool, Content, ContentBlock, ControlRequest, ControlRequestBody, ControlResponse,
    ControlResponseBody, Delta, Envelope, Extra, KnownBlock, KnownDelta, KnownEvent,
    KnownStreamEvent, Message, MessageEvent, ResultEvent, SessionStartData, SidecarEvent,
    StreamEvent, StreamEventEnvelope, SystemEvent,
};

impl Envelope {
    /// An envelope with a fresh uuid for `session_id`, no parent tool call.
    pub fn new(session_id: &str) -> Self {
        Envelope {
            uuid: Some(uuid::Uuid::new_v4().to_string()),
            session_id: Some(session_id.to_string()),
            parent_tool_use_id: Some(None),
        }
    }

    /// No envelope fields at all.
    pub fn none() -> Self {
        Envelope::default()
    }

    /// Only the agent's session id, when it said one.
    pub fn session(session_id: Option<&str>) -> Self {
        Envelope {
            session_id: session_id.map(String::from),
            ..Envelope::default()
        }
    }

    /// The same envelope with `uuid`, when there is one.
    pub fn with_uuid(mut self, uuid: Option<&str>) -> Self {
        self.uuid = uuid.map(String::from);
        self
    }

    /// The same envelope with an explicit `"parent_tool_use_id": null`, as
    /// stream-json writes it on top-level messages.
    pub fn top_level(mut self) -> Self {
        self.parent_tool_use_id = Some(None);
        self
    }
}

/// A `system` event of `subtype`.
pub fn system(subtype: &str, envelope: Envelope, data: Option<Value>) -> SidecarEvent {
    SidecarEvent::Known(KnownEvent::System(SystemEvent {
        subtype: subtype.into(),
        envelope,
        data,
        extra: Extra::new(),
    }))
}

/// Fields of an event beside its model's own (an [`Extra`]).
pub fn extra<const N: usize>(fields: [(&str, Value); N]) -> Extra {
    fields
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// A `system` event of `subtype` whose payload sits in fields of its own
/// (`extra`), as ACP's updates are carried (`update`, `method` and
/// `params`).
pub fn system_with(subtype: &str, extra: Extra) -> SidecarEvent {
    SidecarEvent::Known(KnownEvent::System(SystemEvent {
        subtype: subtype.into(),
        envelope: Envelope::none(),
        data: None,
        extra,
    }))
}

/// `system/session_start` with the capability handshake `data`.
pub fn session_start(envelope: Envelope, data: Value) -> SidecarEvent {
    system("session_start", envelope, Some(data))
}

/// `system/session_start` with a typed handshake.
pub fn handshake(envelope: Envelope, data: SessionStartData) -> SidecarEvent {
    session_start(envelope, serde_json::to_value(data).unwrap_or_default())
}

/// `system/session_end`.
pub fn session_end(session_id: &str) -> SidecarEvent {
    system(
        "session_end",
        Envelope::new(session_id),
        Some(json!({ "session_id": session_id })),
    )
}

/// A message of `role` made of `content`.
pub fn message(role: &str, content: Vec<ContentBlock>) -> Message {
    Message {
        role: role.into(),
        content: Content::Blocks(content),
        id: None,
        model: None,
        extra: Extra::new(),
    }
}

/// A `user` event: a prompt, or tool results fed back to the model.
pub fn user(envelope: Envelope, content: Vec<ContentBlock>) -> SidecarEvent {
    SidecarEvent::Known(KnownEvent::User(MessageEvent {
        envelope,
        message: message("user", content),
        extra: Extra::new(),
    }))
}

/// A `user` prompt.
pub fn user_text(envelope: Envelope, text: &str) -> SidecarEvent {
    user(envelope, vec![text_block(text)])
}

/// A complete `assistant` message.
pub fn assistant(envelope: Envelope, message: Message) -> SidecarEvent {
    SidecarEvent::Known(KnownEvent::Assistant(MessageEvent {
        envelope,
        message,
        extra: Extra::new(),
    }))
}

/// A `result`: the end of a turn. `extra` carries what else the agent
/// reported (usage, durations).
pub fn result(
    envelope: Envelope,
    subtype: &str,
    is_error: bool,
    result: Option<&str>,
    extra: Extra,
) -> SidecarEvent {
    SidecarEvent::Known(KnownEvent::Result(ResultEvent {
        subtype: Some(subtype.into()),
        is_error: Some(is_error),
        duration_ms: None,
        result: result.map(String::from),
        envelope,
        extra,
    }))
}

/// A turn the user interrupted (the agent writes nothing of its own).
pub fn interrupted() -> SidecarEvent {
    result(Envelope::none(), "interrupted", true, None, Extra::new())
}

/// A turn that ended in an error: `why`.
pub fn failed(why: &str) -> SidecarEvent {
    result(
        Envelope::none(),
        "error_during_execution",
        true,
        Some(why),
        Extra::new(),
    )
}

/// `control_request` / `can_use_tool`: a tool call waiting for approval.
pub fn can_use_tool(request_id: &str, request: CanUseTool) -> SidecarEvent {
    SidecarEvent::Known(KnownEvent::ControlRequest(ControlRequest {
        request_id: request_id.into(),
        request: ControlRequestBody::CanUseTool(request),
        extra: Extra::new(),
    }))
}

/// The body of a `can_use_tool` request.
pub fn tool_request(
    tool_name: &str,
    tool_use_id: Option<&str>,
    input: Value,
    extra: Extra,
) -> CanUseTool {
    CanUseTool {
        tool_name: tool_name.into(),
        tool_use_id: tool_use_id.map(String::from),
        input,
        extra,
    }
}

fn control_response(response: ControlResponseBody) -> SidecarEvent {
    SidecarEvent::Known(KnownEvent::ControlResponse(ControlResponse {
        response,
        extra: Extra::new(),
    }))
}

/// `control_response` / `success`: how an approval was decided.
pub fn control_allowed(request_id: &str, allowed: bool) -> SidecarEvent {
    control_response(ControlResponseBody::Success {
        request_id: request_id.into(),
        response: Some(json!({ "allowed": allowed })),
        extra: Extra::new(),
    })
}

/// `control_response` / `error`: a request that was not answered (`error`
/// is a message string, or the RFC's error object).
pub fn control_error(request_id: &str, error: Value) -> SidecarEvent {
    control_response(ControlResponseBody::Error {
        request_id: request_id.into(),
        error,
        extra: Extra::new(),
    })
}

/// A `stream_event`.
pub fn stream(envelope: Envelope, event: KnownStreamEvent) -> SidecarEvent {
    SidecarEvent::Known(KnownEvent::StreamEvent(StreamEventEnvelope {
        envelope,
        event: StreamEvent::Known(event),
        extra: Extra::new(),
    }))
}

/// `content_block_start` of `block` (as it starts: empty).
pub fn block_start(index: u32, block: ContentBlock) -> KnownStreamEvent {
    KnownStreamEvent::ContentBlockStart {
        index,
        content_block: block,
        extra: Extra::new(),
    }
}

/// `content_block_delta` with a `text_delta`.
pub fn text_delta(index: u32, text: &str) -> KnownStreamEvent {
    delta(
        index,
        KnownDelta::TextDelta {
            text: text.into(),
            extra: Extra::new(),
        },
    )
}

/// `content_block_delta` with a `thinking_delta`.
pub fn thinking_delta(index: u32, thinking: &str) -> KnownStreamEvent {
    delta(
        index,
        KnownDelta::ThinkingDelta {
            thinking: thinking.into(),
            extra: Extra::new(),
        },
    )
}

/// `content_block_delta` with an `input_json_delta`.
pub fn input_json_delta(index: u32, partial_json: &str) -> KnownStreamEvent {
    delta(
        index,
        KnownDelta::InputJsonDelta {
            partial_json: partial_json.into(),
            extra: Extra::new(),
        },
    )
}

fn delta(index: u32, delta: KnownDelta) -> KnownStreamEvent {
    KnownStreamEvent::ContentBlockDelta {
        index,
        delta: Delta::Known(delta),
        extra: Extra::new(),
    }
}

/// `content_block_stop`.
pub fn block_stop(index: u32) -> KnownStreamEvent {
    KnownStreamEvent::ContentBlockStop {
        index,
        extra: Extra::new(),
    }
}

/// A text content block.
pub fn text_block(text: &str) -> ContentBlock {
    ContentBlock::Known(KnownBlock::Text {
        text: text.into(),
        extra: Extra::new(),
    })
}

/// A thinking content block.
pub fn thinking_block(thinking: &str) -> ContentBlock {
    ContentBlock::Known(KnownBlock::Thinking {
        thinking: thinking.into(),
        extra: Extra::new(),
    })
}

/// A `tool_use` content block.
pub fn tool_use_block(id: &str, name: &str, input: Value) -> ContentBlock {
    ContentBlock::Known(KnownBlock::ToolUse {
        id: id.into(),
        name: name.into(),
        input,
        extra: Extra::new(),
    })
}

/// A `tool_result` content block (`content`: a string or blocks).
pub fn tool_result_block(
    tool_use_id: &str,
    is_error: Option<bool>,
    content: Value,
) -> ContentBlock {
    ContentBlock::Known(KnownBlock::ToolResult {
        tool_use_id: tool_use_id.into(),
        is_error,
        content: Some(content),
        extra: Extra::new(),
    })
}

impl SidecarEvent {
    /// The event as one JSONL line, newline included.
    pub fn to_line(&self) -> String {
        let mut line = serde_json::to_string(self).unwrap_or_default();
        line.push('\n');
        line
    }

    /// The event as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duet_normalised_events_keep_their_shapes() {
        assert_eq!(
            failed("gone").to_value(),
            json!({"type": "result", "subtype": "error_during_execution", "is_error": true, "result": "gone"})
        );
        assert_eq!(
            interrupted().to_value(),
            json!({"type": "result", "subtype": "interrupted", "is_error": true})
        );
        assert_eq!(
            user_text(Envelope::none().top_level(), "hi").to_value(),
            json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                   "parent_tool_use_id": null})
        );
        assert_eq!(
            control_error("r", json!("cancelled by the agent")).to_value(),
            json!({"type": "control_response", "response":
                {"subtype": "error", "request_id": "r", "error": "cancelled by the agent"}})
        );
        assert_eq!(
            session_start(Envelope::session(Some("s")), json!({"protocol": "x"})).to_value(),
            json!({"type": "system", "subtype": "session_start", "session_id": "s", "data": {"protocol": "x"}})
        );
    }
}
