//! Tool approvals: what a program asked to run, the choices it offers, who
//! decided and how, and the decision a client sends back.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// `POST /api/sessions/{id}/approvals/{request_id}`: one of the approval's
/// `options` by id, or `allowed` alone (the first allowing or rejecting
/// option).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct ApprovalDecision {
    /// `true` chooses the approval's first allowing option, `false` its
    /// first rejecting one. Send this or `option`, not both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub allowed: Option<bool>,
    /// The `id` of one of the approval's `options` (e.g. `allow`, `deny`;
    /// ACP agents name their own). Send this or `allowed`, not both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub option: Option<String>,
}

/// A tool approval requested by the program (`control_request` /
/// `can_use_tool`) and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct Approval {
    /// The `control_request`'s id: the agent's own (Qwen Code), or one duet
    /// made (a UUID for Claude Code's hooks, `acp-<n>`, `codex-<n>`). What
    /// `POST .../approvals/{request_id}` and `approve` name.
    pub request_id: String,
    /// The tool the agent wants to run, in its own name for it (e.g.
    /// `run_shell_command`, `Bash`, `edit`).
    pub tool_name: String,
    /// The tool call's id in the conversation (its `tool_use` block), when
    /// the agent says: ties the approval to the call in the chat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_use_id: Option<String>,
    /// The tool's arguments as the program reported them.
    pub input: Value,
    /// Where the approval stands: pending, allowed, denied or abandoned.
    pub state: ApprovalState,
    /// Who decided, once decided; absent for an abandoned request, and
    /// for a decision of a session from an earlier run of duet that did
    /// not keep its deciders (not known, rather than guessed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub decided_by: Option<Decider>,
    /// Which credential decided, when a client did (in the browser, over
    /// the API or from a notification): `owner`, a named token's name, or
    /// `share:<id>`; for a policy, the rule's name (audit and approval
    /// cards).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub decided_by_name: Option<String>,
    /// Why, when duet gave the agent a reason: a policy rule's message for
    /// a denial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    /// The choices the agent offers, in its order (its own UI shows the
    /// same ones).
    #[serde(default)]
    pub options: Vec<ApprovalOption>,
    /// The option chosen, once decided by a client (or known from the agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub chosen: Option<String>,
    /// The agent has confirmed the outcome. A client's decision is sent at
    /// once but counts as "sent, waiting for the agent" until then.
    #[serde(default)]
    pub confirmed: bool,
    /// Seq of the `control_request` event.
    #[ts(type = "number")]
    pub seq: u64,
}

/// One choice of an approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ApprovalOption {
    /// What a client sends back to choose it.
    pub id: String,
    /// The agent's own wording, e.g. "Yes, allow once".
    pub label: String,
    /// What choosing it does, whatever the agent calls it.
    pub kind: ApprovalOptionKind,
}

/// What an option does, whatever the agent calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalOptionKind {
    /// Run this call.
    AllowOnce,
    /// Run it and stop asking for calls like it (or switch the agent to a
    /// mode that does not ask).
    AllowAlways,
    /// Do not run it.
    RejectOnce,
    /// Do not run it and do not ask again.
    RejectAlways,
}

impl ApprovalOptionKind {
    /// Whether the tool runs.
    pub fn allows(self) -> bool {
        matches!(
            self,
            ApprovalOptionKind::AllowOnce | ApprovalOptionKind::AllowAlways
        )
    }
}

/// Lifecycle of an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalState {
    /// Waiting for an answer from a client or the terminal.
    Pending,
    /// The tool may run (whoever decided: see `decided_by`).
    Allowed,
    /// The tool must not run.
    Denied,
    /// The program stopped waiting without a decision we saw (turn
    /// cancelled, a new prompt started, the program exited).
    Abandoned,
}

/// Who decided an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum Decider {
    /// A duet client (WebSocket or REST).
    Client,
    /// The program itself: a key press in its own UI, or its own policy.
    Terminal,
    /// A person, from the Allow or Deny of a push notification.
    Notification,
    /// One of duet's `[[policy]]` rules, before anyone was asked.
    Policy,
}

impl Decider {
    /// Whether the decision was made inside duet (and written to the
    /// agent by duet), not in the agent's own UI.
    pub fn by_duet(self) -> bool {
        !matches!(self, Decider::Terminal)
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Decider::Client => "client",
            Decider::Terminal => "terminal",
            Decider::Notification => "notification",
            Decider::Policy => "policy",
        }
    }
}
