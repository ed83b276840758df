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
