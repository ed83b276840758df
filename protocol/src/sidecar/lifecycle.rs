//! Session and turn lifecycle: `system` events (`session_start` with the
//! program's capability handshake, `session_end`, and the other subtypes
//! duet passes on) and the end-of-turn `result` of stream-json.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use super::{Envelope, Extra};

/// `type: "system"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct SystemEvent {
    /// `session_start`, `session_end`, or another subtype.
    pub subtype: String,
    /// The session id, uuid and parent tool call, at the event's top level.
    #[serde(flatten)]
    pub envelope: Envelope,
    /// Subtype-specific payload; see [`SessionStartData`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub data: Option<Value>,
    /// Fields this crate does not model, kept verbatim (e.g. the `update`,
    /// `method` and `params` of duet's `acp_*` subtypes).
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
    /// The program's own id for its conversation: what a resume hands back
    /// to it (`SessionInfo.agent_session_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub session_id: Option<String>,
    /// The directory the program works in, as it says.
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
    /// The rest of the handshake, kept verbatim (e.g. an ACP agent's
    /// `models` and `modes`).
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// `type: "result"`: the end-of-turn summary of stream-json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ResultEvent {
    /// How the turn ended: `success`, or an `error_*` kind (e.g.
    /// `error_max_turns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub subtype: Option<String>,
    /// `true` when the turn failed: the chat shows `result` as the error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub is_error: Option<bool>,
    /// How long the turn took, in milliseconds, as the agent measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub duration_ms: Option<f64>,
    /// The turn's final text (the last answer, or what went wrong).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub result: Option<String>,
    /// The session id, uuid and parent tool call, at the event's top level.
    #[serde(flatten)]
    pub envelope: Envelope,
    /// Fields this crate does not model, kept verbatim (e.g. `usage`,
    /// `duration_api_ms`, `total_cost_usd`, which duet's usage reads).
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}
