//! duet's REST bodies, also used inside WebSocket messages. One module per
//! idea (sessions, steering the agent, approvals, access), re-exported here:
//! every type keeps its path `rest::Name`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::ErrorCode;

mod access;
mod agent;
mod approval;
mod session;

pub use access::{ConnectedClient, CreateShare, Me, Role, Share};
pub use agent::{
    AgentMode, AgentModes, SetModeRequest, SetModelRequest, SubmitRequest, SubmitResponse,
};
pub use approval::{
    Approval, ApprovalDecision, ApprovalOption, ApprovalOptionKind, ApprovalState, Decider,
};
pub use session::{
    ChannelInfo, CreateSession, ExitInfo, HistoryLine, ProfileInfo, ResumeSession, SessionInfo,
    SessionStatus,
};

/// The body of every REST error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ApiError {
    /// What went wrong.
    pub error: ApiErrorBody,
}

/// `code` + human-readable `message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ApiErrorBody {
    /// Which error, for a program to branch on (e.g. `session_not_found`).
    pub code: ErrorCode,
    /// What went wrong, in words for a person (e.g. "cols and rows must be
    /// positive"); may change between versions.
    pub message: String,
}
