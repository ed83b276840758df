//! Who may do what: roles, the clients attached to a session, the caller's
//! own credential (`GET /api/me`), and share links.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::ids::{ClientId, SessionId};

/// What a principal may do. Each role includes reading (the terminal, the
/// chat, the session's state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Everything: create, delete and resume sessions, share them, drive
    /// and approve.
    Owner,
    /// Keystrokes, prompts, cancel and resize (not approvals).
    Driver,
    /// Approve or deny tool calls only.
    Approver,
    /// Read only.
    Viewer,
}

impl Role {
    /// The role's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Driver => "driver",
            Role::Approver => "approver",
            Role::Viewer => "viewer",
        }
    }
}

impl std::str::FromStr for Role {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "owner" => Ok(Role::Owner),
            "driver" => Ok(Role::Driver),
            "approver" => Ok(Role::Approver),
            "viewer" => Ok(Role::Viewer),
            _ => Err(format!(
                "unknown role {s:?}; expected owner, driver, approver or viewer"
            )),
        }
    }
}

/// One client attached to a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ConnectedClient {
    /// The connection's id, as its `hello.client_id` said (numbered from 1
    /// per server run).
    pub client_id: ClientId,
    /// The principal: `owner` for the main token, a `[[token]]` name, or
    /// `share:<share id>`.
    pub name: String,
    /// What this client may do (its credential's role).
    pub role: Role,
    /// What the client calls its device ("Chrome on Android"), as it said
    /// when it connected (`?device=` on the WebSocket); tells two tabs of
    /// one principal apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub device: Option<String>,
}

/// `POST /api/sessions/{id}/shares`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct CreateShare {
    /// `driver`, `approver` or `viewer` (an owner share is refused).
    pub role: Role,
    /// Seconds until the link stops working (1 to 604800, 7 days).
    #[ts(type = "number")]
    pub expires_in: u64,
}

/// `GET /api/me`: who the request's credential names. A browser tab asks
/// first, to know whether it runs on a share link (one session, no
/// profiles) before it asks for anything a share may not see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct Me {
    /// `owner` for the main token, a `[[token]]` name, or `share:<share id>`.
    pub name: String,
    /// The credential's role: what the caller may do.
    pub role: Role,
    /// For a share link: the one session it opens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub session: Option<SessionId>,
    /// For a share link: when it stops working (Unix time in milliseconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub expires_at: Option<u64>,
}

/// A share link of one session. `url` (with the secret) only in the answer
/// to its creation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct Share {
    /// The share's id: `DELETE /api/sessions/{id}/shares/{share_id}` revokes
    /// it, and its holder's principal is `share:<id>`.
    pub id: String,
    /// What the link lets its holder do (never `owner`).
    pub role: Role,
    /// When the link stops working, Unix time in milliseconds.
    #[ts(type = "number")]
    pub expires_at: u64,
    /// A relative URL (`/?share=<secret>`) that opens the session with
    /// this role; shown once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub url: Option<String>,
}
