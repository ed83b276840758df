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
