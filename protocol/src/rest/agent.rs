//! Steering the agent over REST: a prompt (`POST .../submit`) and its
//! answer, and the agent's modes and models a client can switch between.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// `POST /api/sessions/{id}/submit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct SubmitRequest {
    /// The prompt, as if typed into the agent (a slash command such as
    /// `/compact` too): not blank, at most 256 KiB of UTF-8
    /// ([`crate::command::MAX_SUBMIT_BYTES`]), else `too_large`.
    pub text: String,
}

/// The modes an agent works in (approval/permission modes: ask first,
/// accept edits, plan, ...), the same for every kind of agent: ACP's
/// `session/new` `modes`, or what duet reads from a terminal agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub struct AgentModes {
    /// The mode the agent is in now, when known (one of `available`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub current: Option<String>,
    /// The modes it can be switched to, in the agent's order.
    pub available: Vec<AgentMode>,
}

/// One mode of [`AgentModes`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub struct AgentMode {
    /// What `POST /api/sessions/{id}/mode` takes.
    pub id: String,
    /// The agent's own name for it.
    pub name: String,
}

/// `POST /api/sessions/{id}/mode`: switch the agent to one of the modes
/// it offers (`hello.modes.available[].id`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct SetModeRequest {
    /// The `id` of one of `hello.modes.available`, e.g. `plan`, `default`
    /// or `acceptEdits` (each agent names its own).
    pub mode: String,
}

/// `POST /api/sessions/{id}/model`: switch the agent to one of the models
/// its handshake offered (`session_start.data.models.availableModels[].modelId`,
/// ACP agents).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct SetModelRequest {
    /// The `modelId` of one of the handshake's `availableModels`.
    pub model: String,
}

/// `POST /api/sessions/{id}/submit` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct SubmitResponse {
    /// True when held until the program is ready to read input.
    pub queued: bool,
}
