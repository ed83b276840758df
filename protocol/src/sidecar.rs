//! Typed models of the JSONL events a dual-output TUI writes to `--json-file`.
//!
//! The shapes follow what Qwen Code 0.15 actually writes (see
//! `docs/qwen-code.md`), which is the stream-json schema with partial messages
//! plus the control plane. Every struct keeps fields it does not know in
//! `extra`, and an event whose `type` is unknown (or whose known fields have an
//! unexpected shape) parses as [`SidecarEvent::Unknown`] with every byte of
//! meaning intact: serializing any parsed event gives back the same JSON value.
//!
//! The web chat renders these events: their TypeScript and JSON Schema are
//! generated (`generate.rs`) like the rest of the protocol. Unknown fields
//! (`extra`) are kept at run time but not typed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use ts_rs::TS;

/// Fields unknown to this crate, kept so nothing is lost on the way through.
pub type Extra = Map<String, Value>;

/// One line of the events file.
// Events are handled one at a time, never stored in bulk as this type, so
// the size difference between the variants costs nothing worth a Box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum SidecarEvent {
    /// An event type this crate models.
    Known(KnownEvent),
    /// Anything else that is a JSON object, kept verbatim.
    Unknown(Extra),
}

/// The event types this crate models, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KnownEvent {
    /// Session lifecycle: `session_start` (with the capability handshake) and
    /// `session_end`.
    System(SystemEvent),
    /// A user turn: a prompt, or tool results fed back to the model.
    User(MessageEvent),
    /// A completed assistant message.
    Assistant(MessageEvent),
    /// An incremental piece of the assistant message being generated.
    StreamEvent(StreamEventEnvelope),
    /// The end-of-turn summary (stream-json; not seen from Qwen Code's TUI).
    Result(ResultEvent),
    /// A request to the embedder, e.g. permission to run a tool.
    ControlRequest(ControlRequest),
    /// The outcome of a control request, however it was decided.
    ControlResponse(ControlResponse),
}

impl SidecarEvent {
    /// Parses one line (without its newline).
    pub fn from_line(line: &str) -> serde_json::Result<Self> {
        serde_json::from_str(line)
    }

    /// The event's `type` field, whether or not it is modelled.
    pub fn type_name(&self) -> Option<&str> {
        match self {
            SidecarEvent::Known(k) => Some(k.type_name()),
            SidecarEvent::Unknown(map) => map.get("type").and_then(Value::as_str),
        }
    }
}

impl KnownEvent {
    /// The wire name of the event type.
    pub fn type_name(&self) -> &'static str {
        match self {
            KnownEvent::System(_) => "system",
            KnownEvent::User(_) => "user",
            KnownEvent::Assistant(_) => "assistant",
            KnownEvent::StreamEvent(_) => "stream_event",
            KnownEvent::Result(_) => "result",
            KnownEvent::ControlRequest(_) => "control_request",
            KnownEvent::ControlResponse(_) => "control_response",
        }
    }
}

/// Fields most events carry to tie them to a session and a parent tool call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[ts(rename = "EventEnvelope")]
pub struct Envelope {
    /// Unique id of this event (an assistant message's id for `assistant`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub uuid: Option<String>,
    /// The program's own session id (not duet's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub session_id: Option<String>,
    /// Set when the event belongs to a sub-agent's tool call; often an explicit null.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::double_option"
    )]
    #[ts(optional, type = "string | null")]
    #[schemars(with = "Option<String>")]
    pub parent_tool_use_id: Option<Option<String>>,
}

/// `type: "system"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct SystemEvent {
    /// `session_start`, `session_end`, or another subtype.
    pub subtype: String,
    #[serde(flatten)]
    pub envelope: Envelope,
    /// Subtype-specific payload; see [`SessionStartData`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub data: Option<Value>,
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

impl SystemEvent {
    /// The handshake, when this is a `session_start` with a well-formed `data`.
    pub fn session_start(&self) -> Option<SessionStartData> {
        if self.subtype != "session_start" {
            return None;
        }
        serde_json::from_value(self.data.clone()?).ok()
    }
}

/// `data` of `system/session_start`: the capability handshake.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct SessionStartData {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cwd: Option<String>,
    /// Absent before protocol 1; treat absence as 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub protocol_version: Option<u32>,
    /// The program's version string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub version: Option<String>,
    /// Event kinds the program says it may emit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub supported_events: Option<Vec<String>>,
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// `type: "user"` and `type: "assistant"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct MessageEvent {
    #[serde(flatten)]
    pub envelope: Envelope,
    pub message: Message,
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// A chat message in the Anthropic-style shape stream-json uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[ts(rename = "SidecarMessage")]
pub struct Message {
    /// `user` or `assistant`.
    pub role: String,
    pub content: Content,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<String>,
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// Message content: usually blocks, sometimes a bare string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[ts(rename = "MessageContent")]
pub enum Content {
    Blocks(Vec<ContentBlock>),
    Text(String),
}

impl Content {
    /// The concatenated text blocks.
    pub fn text(&self) -> String {
        match self {
            Content::Text(t) => t.clone(),
            Content::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Known(KnownBlock::Text { text, .. }) => Some(text.as_str()),
                    _ => None,
                })
                .collect(),
        }
    }

    /// The blocks, treating a bare string as one text block.
    pub fn blocks(&self) -> Vec<ContentBlock> {
        match self {
            Content::Blocks(b) => b.clone(),
            Content::Text(t) => vec![ContentBlock::Known(KnownBlock::Text {
                text: t.clone(),
                extra: Extra::new(),
            })],
        }
    }
}

/// One content block, modelled or kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum ContentBlock {
    Known(KnownBlock),
    Unknown(Extra),
}

/// Content block types, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KnownBlock {
    Text {
        text: String,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    Thinking {
        thinking: String,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    ToolResult {
        tool_use_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        is_error: Option<bool>,
        /// A string or a list of blocks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        content: Option<Value>,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
}

/// `type: "stream_event"`: one Anthropic-style streaming event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct StreamEventEnvelope {
    #[serde(flatten)]
    pub envelope: Envelope,
    pub event: StreamEvent,
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// The streaming event itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum StreamEvent {
    Known(KnownStreamEvent),
    Unknown(Extra),
}

/// Streaming event types, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KnownStreamEvent {
    MessageStart {
        message: Value,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    ContentBlockStart {
        index: u32,
        content_block: ContentBlock,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    ContentBlockDelta {
        index: u32,
        delta: Delta,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    ContentBlockStop {
        index: u32,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    MessageDelta {
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    MessageStop {
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
}

/// A `content_block_delta` payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[ts(rename = "StreamDelta")]
pub enum Delta {
    Known(KnownDelta),
    Unknown(Extra),
}

/// Delta types, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KnownDelta {
    TextDelta {
        text: String,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    InputJsonDelta {
        partial_json: String,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    ThinkingDelta {
        thinking: String,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
}

/// `type: "result"`: the end-of-turn summary of stream-json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ResultEvent {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub subtype: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub is_error: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub duration_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub result: Option<String>,
    #[serde(flatten)]
    pub envelope: Envelope,
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// `type: "control_request"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ControlRequest {
    pub request_id: String,
    pub request: ControlRequestBody,
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// The body of a control request, tagged by `subtype`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum ControlRequestBody {
    CanUseTool(CanUseTool),
    Other(Extra),
}

/// `subtype: "can_use_tool"`: a tool call waiting for approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "subtype", rename = "can_use_tool")]
#[ts(rename = "CanUseTool")]
pub struct CanUseTool {
    pub tool_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub input: Value,
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// `type: "control_response"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ControlResponse {
    pub response: ControlResponseBody,
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// The body of a control response, tagged by `subtype`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum ControlResponseBody {
    Success {
        request_id: String,
        /// For `can_use_tool`: `{"allowed": bool}`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        response: Option<Value>,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    Error {
        request_id: String,
        /// A message string (Qwen Code) or an object (the RFC).
        error: Value,
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
}

impl ControlResponseBody {
    /// The request this responds to.
    pub fn request_id(&self) -> &str {
        match self {
            ControlResponseBody::Success { request_id, .. }
            | ControlResponseBody::Error { request_id, .. } => request_id,
        }
    }

    /// For a successful tool-permission response, whether the tool was allowed.
    pub fn allowed(&self) -> Option<bool> {
        match self {
            ControlResponseBody::Success { response, .. } => {
                response.as_ref()?.get("allowed")?.as_bool()
            }
            ControlResponseBody::Error { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_type_is_kept_verbatim() {
        let line = r#"{"type":"x-qwen-thought","subject":"s","n":[1,2]}"#;
        let ev = SidecarEvent::from_line(line).unwrap();
        assert!(matches!(ev, SidecarEvent::Unknown(_)));
        assert_eq!(ev.type_name(), Some("x-qwen-thought"));
        assert_eq!(
            serde_json::to_value(&ev).unwrap(),
            serde_json::from_str::<Value>(line).unwrap()
        );
    }

    #[test]
    fn unknown_fields_survive_a_round_trip() {
        let line = r#"{"type":"user","uuid":"u","future":{"a":1},"message":{"role":"user","content":[{"type":"text","text":"hi","cache":true},{"type":"image","src":"x"}]}}"#;
        let ev = SidecarEvent::from_line(line).unwrap();
        let SidecarEvent::Known(KnownEvent::User(m)) = &ev else {
            panic!("not a user event: {ev:?}")
        };
        assert_eq!(m.message.content.text(), "hi");
        assert_eq!(
            serde_json::to_value(&ev).unwrap(),
            serde_json::from_str::<Value>(line).unwrap()
        );
    }

    #[test]
    fn control_error_response_with_rfc_object_error() {
        let line = r#"{"type":"control_response","response":{"subtype":"error","request_id":"r","error":{"message":"m","retryable":false}}}"#;
        let SidecarEvent::Known(KnownEvent::ControlResponse(r)) =
            SidecarEvent::from_line(line).unwrap()
        else {
            panic!()
        };
        assert_eq!(r.response.request_id(), "r");
        assert_eq!(r.response.allowed(), None);
    }

    #[test]
    fn non_object_json_is_an_error() {
        assert!(SidecarEvent::from_line("[1,2]").is_err());
        assert!(SidecarEvent::from_line("not json").is_err());
    }
}
