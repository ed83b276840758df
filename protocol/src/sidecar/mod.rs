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
//!
//! One module per kind of event (lifecycle, whole messages, streaming
//! deltas, the control plane), re-exported here: every type keeps its path
//! `sidecar::Name`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use ts_rs::TS;

mod control;
mod lifecycle;
mod message;
mod stream;

pub use control::{
    CanUseTool, ControlRequest, ControlRequestBody, ControlResponse, ControlResponseBody,
};
pub use lifecycle::{ResultEvent, SessionStartData, SystemEvent};
pub use message::{Content, ContentBlock, KnownBlock, Message, MessageEvent};
pub use stream::{Delta, KnownDelta, KnownStreamEvent, StreamEvent, StreamEventEnvelope};

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
