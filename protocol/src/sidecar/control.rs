//! The control plane: `control_request` (a program asks its embedder, e.g.
//! for permission to run a tool) and `control_response` (how that request
//! was decided).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use super::Extra;

/// `type: "control_request"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ControlRequest {
    /// Names the request: duet's answer (`confirmation_response`), the
    /// `control_response` and the approval (`request_id`) all carry it.
    pub request_id: String,
    /// What is asked.
    pub request: ControlRequestBody,
    /// Fields this crate does not model, kept verbatim.
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// The body of a control request, tagged by `subtype`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum ControlRequestBody {
    /// Permission to run a tool.
    CanUseTool(CanUseTool),
    /// Any other request, kept verbatim (duet does not answer it).
    Other(Extra),
}

/// `subtype: "can_use_tool"`: a tool call waiting for approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "subtype", rename = "can_use_tool")]
#[ts(rename = "CanUseTool")]
pub struct CanUseTool {
    /// The tool, in the agent's name for it (e.g. `run_shell_command`).
    pub tool_name: String,
    /// The `id` of the call's `tool_use` block, when the agent says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_use_id: Option<String>,
    /// The tool's arguments, e.g. `{"command": "ls", "description": "..."}`.
    #[serde(default)]
    pub input: Value,
    /// Fields this crate does not model, kept verbatim: Qwen Code's
    /// `permission_suggestions` and `blocked_path`, the `options` duet adds
    /// for Gemini CLI and Codex, ACP's `acp_options`.
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// `type: "control_response"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ControlResponse {
    /// How the request was decided.
    pub response: ControlResponseBody,
    /// Fields this crate does not model, kept verbatim.
    #[ts(skip)]
    #[serde(flatten)]
    pub extra: Extra,
}

/// The body of a control response, tagged by `subtype`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum ControlResponseBody {
    /// The request was answered.
    Success {
        /// The `request_id` of the `control_request` it answers.
        request_id: String,
        /// For `can_use_tool`: `{"allowed": bool}`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        response: Option<Value>,
        /// Fields this crate does not model, kept verbatim.
        #[ts(skip)]
        #[serde(flatten)]
        extra: Extra,
    },
    /// The request could not be answered (e.g. the call was no longer
    /// waiting for approval).
    Error {
        /// The `request_id` of the `control_request` it answers.
        request_id: String,
        /// A message string (Qwen Code) or an object (the RFC).
        error: Value,
        /// Fields this crate does not model, kept verbatim.
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
