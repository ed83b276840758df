//! The live board: `GET /api/sessions/watch` (server-sent events) and
//! renaming a session (`PATCH /api/sessions/{id}`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::rest::{Approval, SessionInfo};

/// `PATCH /api/sessions/{id}`: gives the session a name (an empty name
/// clears it; spaces around it are trimmed). At most [`MAX_NAME_CHARS`]
/// characters, no control characters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct RenameSession {
    /// The new name, e.g. "nightly refactor"; `""` clears it (the session
    /// is then called by its first prompt again).
    pub name: String,
}

/// Longest session name accepted, in characters.
pub const MAX_NAME_CHARS: usize = 120;

/// One session on the board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct BoardEntry {
    /// The session as `GET /api/sessions/{id}` shows it.
    pub session: SessionInfo,
    /// When the program last did something: an event, terminal output (to
    /// the second), a change of clients or approvals; Unix time in ms.
    #[ts(type = "number")]
    pub last_activity: u64,
    /// The approvals waiting for a decision, oldest first (tool and input).
    pub pending: Vec<Approval>,
    /// When the running turn began (Unix ms), while the agent works on one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub busy_since: Option<u64>,
}

/// The data of each `sessions` event of `GET /api/sessions/watch`: every
/// session the caller may see, what needs attention first (see
/// [`BoardEntry`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct Board {
    /// Every session the caller may see: those with approvals waiting
    /// first, then running ones, then ended ones; newest first within each.
    pub sessions: Vec<BoardEntry>,
}
