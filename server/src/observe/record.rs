//! The audit trail's records, one variant per kind of line (`kind` in the
//! JSON): what each line may hold is written down once, here, instead of in
//! a `json!` at every place that records. `audit.rs` stamps each with `ts`
//! and the session, and bounds its length. Only duet writes these; readers
//! (`recovery.rs`, `GET .../audit`) take the lines as JSON, so a kind this
//! build does not know (a newer duet's) passes through them unharmed.

use duet_protocol::ids::SessionId;
use duet_protocol::rest::ExitInfo;
use duet_protocol::usage::Budget;
use serde::Serialize;
use serde_json::Value;

/// One line of the audit trail. See the module docs.
#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Record<'a> {
    /// A client started a session (a create, or a resume of `resumed_from`).
    SessionCreate {
        profile: &'a str,
        cols: u16,
        rows: u16,
        pid: Option<u32>,
        resumed_from: Option<SessionId>,
        who: Value,
        /// The work directory the owner chose, if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
        /// Arguments the owner appended to the profile's, if any.
        #[serde(skip_serializing_if = "<[String]>::is_empty")]
        args: &'a [String],
    },
    /// A session could not be started.
    SessionStartFailed {
        profile: Option<&'a str>,
        resumed_from: Option<SessionId>,
        error: &'a str,
        who: Value,
    },
    /// This ended session's conversation goes on in `resumed_as`.
    SessionResume { resumed_as: SessionId, who: Value },
    /// The program exited (`recovered`: found so by a later duet).
    SessionEnd {
        exit: &'a ExitInfo,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        recovered: bool,
    },
    /// A client asked to end the session (and to delete its files).
    SessionDelete { purge: bool, who: Value },
    /// An owner created a share link.
    ShareCreate {
        share: &'a str,
        role: &'static str,
        expires_at: u64,
        who: Value,
    },
    /// An owner revoked a share link.
    ShareRevoke { share: &'a str, who: Value },
    /// The agent asked for an approval.
    ApprovalRequest {
        request_id: &'a str,
        tool: &'a str,
        seq: u64,
    },
    /// An approval was decided, refused or abandoned (see [`Approval`]).
    Approval(Approval<'a>),
    /// A prompt was submitted (kept in short).
    Submit {
        who: Value,
        text: String,
        bytes: usize,
        outcome: &'a str,
        error: Option<&'a str>,
    },
    /// An unsent prompt was let go.
    Discard {
        who: Value,
        text: String,
        bytes: usize,
    },
    /// The agent's mode was asked for.
    SetMode {
        who: Value,
        outcome: &'a str,
        error: Option<&'a str>,
        mode: String,
    },
    /// The agent's model was asked for.
    SetModel {
        who: Value,
        outcome: &'a str,
        error: Option<&'a str>,
        model: String,
    },
    /// An owner set the session's budget.
    Budget {
        budget: Option<&'a Budget>,
        exhausted: Option<&'a str>,
        who: Value,
    },
    /// A device subscribed to push notifications. `push_service` is its
    /// endpoint's origin: the endpoint's path is a capability (anyone
    /// holding it can push to the device), so it is not kept.
    PushSubscribe {
        push_service: Option<String>,
        who: Value,
    },
    /// A device unsubscribed (`push_service` as for a subscription).
    PushUnsubscribe {
        push_service: Option<String>,
        who: Value,
    },
    /// A device muted or unmuted a session's notifications.
    PushMute {
        push_service: Option<String>,
        session: SessionId,
        muted: bool,
        who: Value,
    },
    /// An action refused for the caller's role: its line has the kind of
    /// the action refused (see [`Refusal`]), so it carries its own.
    #[serde(untagged)]
    Refused(Refusal),
}

/// What a refusal line says (see `refusals.rs`).
#[derive(Debug, Serialize)]
pub(crate) struct Refusal {
    /// The kind the action's own line has (`submit`, `approval`,
    /// `session_delete`, ...).
    pub(super) kind: &'static str,
    pub(super) who: Value,
    /// What the action needed (`drive`, `approve`, ...).
    pub(super) action: &'static str,
    /// Always `refused`.
    pub(super) outcome: &'static str,
    /// Always `forbidden`.
    pub(super) error: &'static str,
    /// This principal's refusals left out since its last line, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) suppressed: Option<u64>,
}

/// What an `approval` line says: who decided what, or why it was refused.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Approval<'a> {
    pub(super) request_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) tool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) seq: Option<u64>,
    /// The option chosen (or asked for, when refused).
    pub(super) option: Value,
    pub(super) outcome: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) error: Option<&'a str>,
    /// `client`, `terminal`, `notification`, `policy`; none when nobody
    /// decided (abandoned).
    pub(super) decided_by: Option<&'a str>,
    /// The policy rule that decided, and its message for the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) policy: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) message: Option<&'a str>,
    /// The person, for a decision taken through duet; null otherwise.
    pub(super) who: Value,
    /// Who typed last, for a decision taken in the terminal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) keys_from: Option<Value>,
    /// Found so by a later duet, from the session's events.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(super) recovered: bool,
}

impl Record<'_> {
    /// The record as the JSON object the trail keeps.
    pub(super) fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The lines that were a `json!` of their own keep their shape: a
    /// refusal has the kind of the action refused, a push line the
    /// service's origin.
    #[test]
    fn refusals_and_push_lines_keep_their_shape() {
        let refused = Record::Refused(Refusal {
            kind: "submit",
            who: json!({"name": "viewer"}),
            action: "drive",
            outcome: "refused",
            error: "forbidden",
            suppressed: Some(3),
        });
        assert_eq!(
            refused.to_value(),
            json!({"kind": "submit", "who": {"name": "viewer"}, "action": "drive",
                   "outcome": "refused", "error": "forbidden", "suppressed": 3})
        );
        let session = SessionId::new();
        let mute = Record::PushMute {
            push_service: None,
            session,
            muted: true,
            who: Value::Null,
        };
        assert_eq!(
            mute.to_value(),
            json!({"kind": "push_mute", "push_service": null, "session": session,
                   "muted": true, "who": null})
        );
    }
}
