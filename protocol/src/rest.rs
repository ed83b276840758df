//! duet's REST bodies, also used inside WebSocket messages.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::error::ErrorCode;
use crate::ids::{ClientId, SessionId};

/// `POST /api/sessions`. A profile name, a size and, from the owner, where
/// to run and arguments to add: a client never supplies a command line,
/// only what a profile that allows it appends to its own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct CreateSession {
    /// Profile name; the server's default profile when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub profile: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cols: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rows: Option<u16>,
    /// The program's working directory (owner only): an absolute path to an
    /// existing directory outside duet's state directory. Default: the
    /// profile's `cwd`, else a fresh private directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cwd: Option<String>,
    /// Arguments appended to the profile's own (owner only, and only for a
    /// profile with `extra_args = true`), verbatim.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub args: Vec<String>,
}

/// `POST /api/sessions/{id}/resume` (the body is optional): the size the new
/// session starts at; the ended session's size when absent. A browser sends
/// its own pane's, so a session resumed on a phone does not start at the
/// desktop's width.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct ResumeSession {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cols: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rows: Option<u16>,
}

/// A session as `GET /api/sessions[/{id}]` and `POST /api/sessions` show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct SessionInfo {
    pub id: SessionId,
    /// The name an owner gave the session (`PATCH /api/sessions/{id}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub name: Option<String>,
    pub profile: String,
    pub status: SessionStatus,
    /// Unix time in milliseconds.
    #[ts(type = "number")]
    pub created_at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub ended_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub exit: Option<ExitInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub pid: Option<u32>,
    pub cols: u16,
    pub rows: u16,
    /// Highest event seq so far (0 before the first event).
    #[ts(type = "number")]
    pub last_seq: u64,
    pub pending_approvals: u32,
    pub clients: u32,
    /// Who is attached (the principal and role of each client).
    #[serde(default)]
    pub connected: Vec<ConnectedClient>,
    /// Where the program runs (its working directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub work_dir: Option<String>,
    /// The window title the program set, if any, without spinner glyphs
    /// and padding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    /// The session's side channel.
    pub channel: ChannelInfo,
    /// The agent's own id for its conversation (from its events), which a
    /// resume hands back to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent_session_id: Option<String>,
    /// The ended session this one resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub resumed_from: Option<SessionId>,
    /// The latest session that resumed this one: where its conversation
    /// goes on (a client offers to open it instead of resuming again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub resumed_by: Option<SessionId>,
    /// The conversation's first prompt, shortened: what the session is
    /// called until an owner names it (`name` wins whenever it is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub prompt_name: Option<String>,
    /// Whether `POST /api/sessions/{id}/resume` can start this conversation
    /// again (it ended, its profile can resume, and the agent's id is known).
    pub resumable: bool,
    /// What the agent reported spending so far (absent before its first
    /// turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub usage: Option<crate::usage::UsageTotals>,
    /// The session's budget, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub budget: Option<crate::usage::BudgetStatus>,
}

/// Which structured side channel a session has, and what it can do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ChannelInfo {
    /// `dual_output`, `claude_hooks`, or `none` (terminal only).
    pub kind: String,
    /// Events flow, so there is a chat view.
    pub events: bool,
    /// Prompts can be sent from the chat.
    pub submit: bool,
    /// Tool approvals can be answered from the chat.
    pub approve: bool,
}

/// Whether the program still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    Running,
    Exited,
}

/// How the program ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ExitInfo {
    /// Exit code, when the program exited by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub code: Option<u32>,
    /// The signal that ended the program, e.g. `SIGHUP` (then `code` is absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub signal: Option<String>,
    pub success: bool,
    /// duet ended the program because duet itself was stopping (a SIGTERM
    /// to the server, e.g. `systemctl stop`), or an earlier duet went away
    /// without recording the end. The code or signal is then that of the
    /// shutdown, not a crash of the program.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub server_stopped: bool,
    /// The principal that ended the session (`DELETE /api/sessions/{id}`):
    /// an end someone asked for, not a failure of the program, whatever
    /// its code or signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub ended_by: Option<String>,
}

/// A profile a client may start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ProfileInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    /// Whether sessions of this profile have the structured sidecar (chat view).
    pub sidecar: bool,
    /// The profile's side channel.
    pub channel: ChannelInfo,
    /// Whether ended sessions of this profile can be resumed.
    pub resume: bool,
    /// Whether this is the profile used when none is named.
    pub default: bool,
}

/// One line of `GET /api/sessions/{id}/history` (NDJSON): an event of an
/// earlier session in the chain this session resumed, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct HistoryLine {
    /// The earlier session the event belongs to.
    pub session: SessionId,
    /// Its seq in that session.
    pub seq: u64,
    /// The event as that session recorded it.
    #[ts(type = "SidecarEvent")]
    #[schemars(with = "crate::sidecar::SidecarEvent")]
    pub event: Value,
}

/// `POST /api/sessions/{id}/submit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct SubmitRequest {
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
    pub mode: String,
}

/// `POST /api/sessions/{id}/model`: switch the agent to one of the models
/// its handshake offered (`session_start.data.models.availableModels[].modelId`,
/// ACP agents).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct SetModelRequest {
    pub model: String,
}

/// `POST /api/sessions/{id}/submit` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct SubmitResponse {
    /// True when held until the program is ready to read input.
    pub queued: bool,
}

/// `POST /api/sessions/{id}/approvals/{request_id}`: one of the approval's
/// `options` by id, or `allowed` alone (the first allowing or rejecting
/// option).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct ApprovalDecision {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub allowed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub option: Option<String>,
}

/// A tool approval requested by the program (`control_request` /
/// `can_use_tool`) and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct Approval {
    pub request_id: String,
    pub tool_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_use_id: Option<String>,
    /// The tool's arguments as the program reported them.
    pub input: Value,
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
    Allowed,
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

/// The body of every REST error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ApiError {
    pub error: ApiErrorBody,
}

/// `code` + human-readable `message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ApiErrorBody {
    pub code: ErrorCode,
    pub message: String,
}

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
    pub client_id: ClientId,
    /// The principal: `owner` for the main token, a `[[token]]` name, or
    /// `share:<share id>`.
    pub name: String,
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
    pub id: String,
    pub role: Role,
    /// Unix time in milliseconds.
    #[ts(type = "number")]
    pub expires_at: u64,
    /// A relative URL (`/?share=<secret>`) that opens the session with
    /// this role; shown once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub url: Option<String>,
}
