//! Machine-readable error codes, shared by WebSocket `error` frames and REST
//! errors (here so that neither module depends on the other).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Machine-readable error codes, shared by WebSocket `error` frames and REST errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Not JSON, not an object, or missing/ill-typed fields.
    BadMessage,
    /// A `type` this server does not know.
    UnknownType,
    /// Over a size limit (message, submit text, ...).
    TooLarge,
    /// No such session.
    SessionNotFound,
    /// No such profile.
    UnknownProfile,
    /// No pending approval with that request id was ever seen.
    UnknownRequest,
    /// The approval was already decided (first answer wins).
    AlreadyResolved,
    /// The program has exited.
    SessionEnded,
    /// The profile has no sidecar input file, so `submit` cannot work.
    NoSidecar,
    /// Too many queued submits, sessions, or clients.
    LimitReached,
    /// Missing or wrong credentials.
    Unauthorized,
    /// Credentials fine, but not allowed from here (e.g. foreign Origin).
    Forbidden,
    /// Something failed on the server side.
    Internal,
    /// The session cannot be resumed (no resume support, still running, ...).
    NotResumable,
    /// The profile cannot start as the server configures it: its program
    /// or its working directory is missing. The operator's to fix; the
    /// request itself was fine.
    ProfileMisconfigured,
}

impl ErrorCode {
    /// The code's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadMessage => "bad_message",
            ErrorCode::UnknownType => "unknown_type",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::SessionNotFound => "session_not_found",
            ErrorCode::UnknownProfile => "unknown_profile",
            ErrorCode::UnknownRequest => "unknown_request",
            ErrorCode::AlreadyResolved => "already_resolved",
            ErrorCode::SessionEnded => "session_ended",
            ErrorCode::NoSidecar => "no_sidecar",
            ErrorCode::LimitReached => "limit_reached",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::Internal => "internal",
            ErrorCode::NotResumable => "not_resumable",
            ErrorCode::ProfileMisconfigured => "profile_misconfigured",
        }
    }
}
