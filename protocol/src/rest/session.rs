//! Sessions as REST shows them: starting one (`POST /api/sessions`) or
//! resuming an ended one, what `GET /api/sessions` lists, how a program
//! ended, the profiles a client may start, and the history of a resumed
//! conversation.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use super::ConnectedClient;
use crate::ids::SessionId;

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
    /// Terminal width in columns (character cells): 120 when absent,
    /// clamped to 2..=1000; 0 is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cols: Option<u16>,
    /// Terminal height in rows (character cells): 36 when absent, clamped
    /// to 1..=500; 0 is refused.
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
    /// Terminal width in columns (character cells), clamped to 2..=1000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cols: Option<u16>,
    /// Terminal height in rows (character cells), clamped to 1..=500.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rows: Option<u16>,
}

/// A session as `GET /api/sessions[/{id}]` and `POST /api/sessions` show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct SessionInfo {
    /// duet's id for the session: what `/api/sessions/{id}/...` and the
    /// WebSocket (`/api/sessions/{id}/ws`) take.
    pub id: SessionId,
    /// The name an owner gave the session (`PATCH /api/sessions/{id}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub name: Option<String>,
    /// The profile it runs, by name (`qwen`, `claude`, `demo`, ...; see
    /// `GET /api/profiles`).
    pub profile: String,
    /// Whether the program still runs.
    pub status: SessionStatus,
    /// When the session was started, Unix time in milliseconds.
    #[ts(type = "number")]
    pub created_at: u64,
    /// When the program ended, Unix time in milliseconds; absent while it
    /// runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub ended_at: Option<u64>,
    /// How the program ended; absent while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub exit: Option<ExitInfo>,
    /// The program's process id on the server (it leads a process group of
    /// its own); absent when the session has no long-lived process (a
    /// headless agent started once per turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub pid: Option<u32>,
    /// The terminal's width now, in columns (character cells).
    pub cols: u16,
    /// The terminal's height now, in rows (character cells).
    pub rows: u16,
    /// Highest event seq so far (0 before the first event).
    #[ts(type = "number")]
    pub last_seq: u64,
    /// Tool approvals waiting for a decision now.
    pub pending_approvals: u32,
    /// WebSocket clients attached now (`connected` lists them).
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
    /// The profile's `channel`: `dual_output` (an events file and an input
    /// file), `claude` or `gemini` (the agent's hooks), `codex` (its app
    /// server), `stream_json`, `stream_json_per_turn` or `acp` (a headless
    /// agent on pipes), or `none` (terminal only).
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
    /// The program runs: output and events may still come.
    Running,
    /// The program has ended (see `exit`); the session stays readable (and
    /// resumable) for `--retain` after that.
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
    /// Whether the program exited by itself with code 0.
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
    /// What `POST /api/sessions` takes as `profile`, e.g. `qwen` or `demo`.
    pub name: String,
    /// One line about the profile from its config, for a picker (e.g. "Qwen
    /// Code with dual output"); absent when the config gives none.
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
