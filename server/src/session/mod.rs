//! One hosted program: the facade clients and the REST API talk to.
//!
//! A session has a terminal (`terminal/`: the PTY and its output on the way
//! to clients) and, when its profile says so, a structured side channel
//! (`channel/`: events in for the chat view, prompts and decisions out),
//! plus the program's life as a process (`process.rs`). Everything clients
//! read is pulled with their own cursors, so no client can slow another
//! down.

mod audited;
pub(crate) mod channel;
mod error;
pub(crate) mod history;
pub(crate) mod process;
pub(crate) mod record;
mod start;
pub(crate) mod terminal;
mod warning;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use bytes::Bytes;
use duet_protocol::ids::{ClientId, SessionId};
use duet_protocol::rest::{
    AgentModes, Approval, ChannelInfo, ConnectedClient, ExitInfo, SessionInfo, SessionStatus,
};
use duet_protocol::ws::HeldPrompt;
use tokio::sync::{broadcast, watch};

pub(crate) use crate::config::Launch;
use crate::config::ResolvedProfile;
use crate::observe::Switch;
use crate::sync::lock;
pub(crate) use channel::approvals::{Choice, DecidedBy};
pub(crate) use channel::delivery::Accepted;
pub(crate) use channel::dual_output::watcher::Watcher;
pub(crate) use channel::log::Event;
use channel::log::EventLog;
use channel::{Channel, Conversation};
pub(crate) use error::SessionError;
use process::Process;
use terminal::output::OutputLimits;
pub(crate) use terminal::output::ReadResult;
pub(crate) use terminal::program::Misconfigured;
use terminal::Terminal;
pub(crate) use warning::{Warning, WarningCode};

/// The session's terminal recording (asciicast v2), in its directory.
pub(crate) const RECORDING_FILE: &str = "recording.cast";

/// How long prompts wait for a profile's `ready_text` at most.
const READY_TEXT_TIMEOUT: Duration = Duration::from_secs(20);

/// Bounds on what one session holds.
#[derive(Debug, Clone, Copy)]
pub struct SessionLimits {
    /// Bounds on the terminal output kept for clients and the screen
    /// (the window behind the newest output, scrollback, stalls).
    pub output: OutputLimits,
    /// Longest sidecar line relayed; longer ones are skipped with a warning.
    pub max_sidecar_line: usize,
    /// Bytes of recent events kept in memory (older ones are re-read from disk).
    pub event_cache_bytes: usize,
    /// Submits held while the program is not ready to read input.
    pub max_held_submits: usize,
    /// Longest submit text accepted.
    pub max_submit_bytes: usize,
    /// Clients attached at once.
    pub max_clients: u32,
    /// How long an ending program gets between SIGHUP/SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    /// Largest terminal recording, in bytes (0: none).
    pub max_recording: u64,
    /// How often a stream-json agent that answers heartbeats is asked for
    /// one (zero: never); two intervals of silence are reported.
    pub heartbeat: Duration,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            output: OutputLimits::default(),
            max_sidecar_line: 4 << 20,
            // The file holds every event; this tail serves live fan-out
            // and short resumes (a few hundred events), and bounds what a
            // thousand busy sessions keep (512 MiB rather than 4 GiB).
            event_cache_bytes: 512 << 10,
            max_held_submits: 32,
            max_submit_bytes: duet_protocol::command::MAX_SUBMIT_BYTES,
            max_clients: 128,
            kill_grace: Duration::from_secs(3),
            max_recording: 64 << 20,
            heartbeat: Duration::from_secs(10),
        }
    }
}

/// Everything needed to start a session.
pub(crate) struct SessionOptions {
    pub(crate) id: SessionId,
    pub(crate) profile: ResolvedProfile,
    /// The session's private directory (already created, mode 0700).
    pub(crate) dir: PathBuf,
    pub(crate) cols: u16,
    pub(crate) rows: u16,
    pub(crate) limits: SessionLimits,
    pub(crate) watcher: Arc<Watcher>,
    /// Continue an ended session's conversation.
    pub(crate) resume: Option<ResumeFrom>,
    pub(crate) observe: Arc<crate::observe::SessionObserver>,
    /// Where and how the owner asked it to run (already in `profile`).
    pub(crate) launch: Launch,
}

/// The ended session a new one continues.
pub(crate) struct ResumeFrom {
    pub(crate) session: SessionId,
    /// The agent's own id for the conversation.
    pub(crate) agent_session_id: String,
    /// Where it ran: agents find their conversations by directory.
    pub(crate) work_dir: PathBuf,
    /// Its session directory, whose events become the new one's history.
    pub(crate) dir: PathBuf,
}

/// Control-plane news for attached clients. Terminal bytes and events are not
/// sent this way: clients pull those with cursors.
#[derive(Debug, Clone)]
pub(crate) enum Control {
    Approval(Approval),
    /// The agent's modes changed (whole).
    Modes(AgentModes),
    Resize {
        cols: u16,
        rows: u16,
    },
    Warning(Warning),
    Exit(ExitInfo),
    /// Who is attached changed.
    Clients(Vec<ConnectedClient>),
    /// The unsent or the held prompts changed: both lists, whole.
    Prompts {
        unsent: Vec<HeldPrompt>,
        held: Vec<HeldPrompt>,
    },
}

struct State {
    cols: u16,
    rows: u16,
    exit: Option<ExitInfo>,
    ended_at: Option<u64>,
    /// The owner's name for the session (kept in `session.json`).
    name: Option<String>,
    /// The latest session that resumed this one.
    resumed_by: Option<SessionId>,
}

/// See the module docs.
pub(crate) struct Session {
    pub(crate) id: SessionId,
    pub(crate) profile: String,
    pub(crate) created_at: u64,
    pub(crate) dir: PathBuf,
    /// Where the program runs (its profile's `cwd`, or `dir/work`, or the
    /// work dir of the session it resumed).
    pub(crate) work_dir: PathBuf,
    /// What the owner chose beyond the profile; a resume does the same.
    pub(crate) launch: Launch,
    resumed_from: Option<SessionId>,
    can_resume: bool,
    pub(crate) limits: SessionLimits,
    pub(crate) terminal: Arc<Terminal>,
    pub(crate) conversation: Arc<Conversation>,
    pub(crate) observe: Arc<crate::observe::SessionObserver>,
    channel: Option<Arc<dyn Channel>>,
    channel_info: ChannelInfo,
    control: broadcast::Sender<Control>,
    state: Mutex<State>,
    exited: watch::Sender<bool>,
    /// Turns true when the registry forgets the session: clients close.
    removed: watch::Sender<bool>,
    process: Process,
    clients: AtomicU32,
    /// Who is attached, in attach order (for `clients` and the REST view).
    connected: Mutex<Vec<ConnectedClient>>,
    span: tracing::Span,
}

/// Creates an empty file readable and writable by the owner only.
fn create_private_file(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map(drop)
}

impl Session {
    /// The session's event log.
    pub(crate) fn events(&self) -> &Arc<EventLog> {
        &self.conversation.log
    }

    /// Sends keystrokes to the program.
    pub(crate) async fn write_keys(&self, bytes: Bytes) -> Result<(), SessionError> {
        if self.is_exited() {
            return Err(SessionError::Ended);
        }
        if self.terminal.is_headless() {
            return Err(SessionError::NoTerminal);
        }
        // A lone Escape or Ctrl-C is how a user dismisses an approval in
        // the terminal (see `Conversation::interrupted`).
        let interrupt = matches!(&bytes[..], b"\x1b" | b"\x03");
        match self.terminal.write(bytes).await {
            Ok(()) => {}
            Err(terminal::KeysError::Closed) => return Err(SessionError::Ended),
            Err(terminal::KeysError::Full(why)) => return Err(SessionError::InputFull(why)),
        }
        if interrupt {
            self.conversation.interrupted();
            if let Some(channel) = &self.channel {
                channel.interrupted();
            }
        }
        Ok(())
    }

    /// Switches the agent's mode or model (one of those it offered).
    pub(crate) fn switch(&self, what: Switch, value: &str) -> Result<(), SessionError> {
        if self.is_exited() {
            return Err(SessionError::Ended);
        }
        let channel = self.channel.as_ref().ok_or(SessionError::NoSidecar)?;
        Ok(match what {
            Switch::Mode => channel.set_mode(value),
            Switch::Model => channel.set_model(value),
        }?)
    }

    /// The user interrupted the turn from a client.
    pub(crate) async fn cancel(&self) -> Result<(), SessionError> {
        if let Some(sent) = self.channel.as_ref().and_then(|c| c.cancel()) {
            if self.is_exited() {
                return Err(SessionError::Ended);
            }
            sent?;
            // As an Escape would: nothing pending stays pending.
            self.conversation.interrupted();
            return Ok(());
        }
        let keys = self
            .channel
            .as_ref()
            .map_or(&b"\x1b"[..], |c| c.cancel_keys());
        self.write_keys(Bytes::from_static(keys)).await
    }

    /// Sends a prompt through the side channel (held while the agent is
    /// busy, delivered again if the agent drops it).
    pub(crate) fn submit(&self, text: String) -> Result<Accepted, SessionError> {
        if !self.channel_info.submit {
            return Err(SessionError::NoSidecar);
        }
        if self.is_exited() {
            return Err(SessionError::Ended);
        }
        self.conversation.submit(text)
    }

    /// Someone inside duet (`by`) answers a pending approval; the first
    /// answer wins.
    pub(crate) fn approve(
        &self,
        request_id: &str,
        choice: &Choice,
        by: &DecidedBy,
    ) -> Result<Approval, SessionError> {
        if !self.channel_info.approve {
            return Err(SessionError::NoSidecar);
        }
        self.conversation.approve(request_id, choice, by)
    }

    /// Resizes the PTY (clamped to sane bounds); tells clients if it changed.
    pub(crate) fn resize(&self, cols: u16, rows: u16) -> (u16, u16) {
        let cols = cols.clamp(2, 1000);
        let rows = rows.clamp(1, 500);
        {
            let mut st = lock(&self.state);
            if (st.cols, st.rows) == (cols, rows) || st.exit.is_some() {
                return (st.cols, st.rows);
            }
            st.cols = cols;
            st.rows = rows;
        }
        self.terminal.resize(cols, rows);
        let _ = self.control.send(Control::Resize { cols, rows });
        (cols, rows)
    }

    /// Subscribes to control news. Subscribe *before* reading the state you
    /// announce, so nothing falls between the two.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Control> {
        self.control.subscribe()
    }

    /// Current approvals, oldest first.
    pub(crate) fn approvals(&self) -> Vec<Approval> {
        self.conversation.approvals()
    }

    /// The agent's modes, once known.
    pub(crate) fn modes(&self) -> Option<AgentModes> {
        self.conversation.modes()
    }

    /// Prompts the program never took, oldest first (see
    /// `channel/conversation/unsent.rs`).
    pub(crate) fn unsent(&self) -> Vec<HeldPrompt> {
        self.conversation.unsent()
    }

    /// Prompts waiting for the agent to be ready, in the order they go.
    pub(crate) fn held(&self) -> Vec<HeldPrompt> {
        self.conversation.held()
    }

    /// Recent warnings with an id over `after`, oldest first.
    pub(crate) fn warnings_after(&self, after: u64) -> Vec<Warning> {
        self.conversation.warnings_after(after)
    }

    /// Current size.
    pub(crate) fn size(&self) -> (u16, u16) {
        let st = lock(&self.state);
        (st.cols, st.rows)
    }

    /// The exit, once recorded.
    pub(crate) fn exit_info(&self) -> Option<ExitInfo> {
        lock(&self.state).exit.clone()
    }

    /// The program's handshake data, once seen.
    pub(crate) fn agent(&self) -> Option<serde_json::Value> {
        self.conversation.handshake()
    }

    /// What the side channel can do.
    pub(crate) fn channel_info(&self) -> &ChannelInfo {
        &self.channel_info
    }

    /// The tracing span of this session, for per-connection child spans.
    pub(crate) fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Registers a client; the guard unregisters it when dropped. Attached
    /// clients hear of it (`Control::Clients`).
    pub(crate) fn attach(
        self: &Arc<Self>,
        who: ConnectedClient,
    ) -> Result<ClientGuard, SessionError> {
        let max = self.limits.max_clients;
        self.clients
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .map_err(|_| SessionError::TooManyClients(max))?;
        let client = who.client_id;
        self.update_connected(|c| c.push(who));
        Ok(ClientGuard {
            session: self.clone(),
            client,
        })
    }

    /// Who is attached now.
    pub(crate) fn connected(&self) -> Vec<ConnectedClient> {
        lock(&self.connected).clone()
    }

    fn update_connected(&self, change: impl FnOnce(&mut Vec<ConnectedClient>)) {
        // Sent under the lock, so clients see the changes in order.
        let mut c = lock(&self.connected);
        change(&mut c);
        let _ = self.control.send(Control::Clients(c.clone()));
    }

    /// The REST view of this session.
    pub(crate) fn info(&self) -> SessionInfo {
        // Before the state lock: it takes that lock itself.
        let resumable = self.resume_from().is_some();
        let st = lock(&self.state);
        SessionInfo {
            id: self.id,
            name: st.name.clone(),
            profile: self.profile.clone(),
            status: if st.exit.is_some() {
                SessionStatus::Exited
            } else {
                SessionStatus::Running
            },
            created_at: self.created_at,
            ended_at: st.ended_at,
            exit: st.exit.clone(),
            pid: Some(self.process.pid()).filter(|p| *p != 0),
            cols: st.cols,
            rows: st.rows,
            last_seq: self.events().last_seq(),
            pending_approvals: self.conversation.pending() as u32,
            clients: self.clients.load(Ordering::Acquire),
            connected: self.connected(),
            work_dir: Some(self.work_dir.to_string_lossy().into_owned()),
            title: self.terminal.output.title(),
            channel: self.channel_info.clone(),
            agent_session_id: self.conversation.agent_session_id(),
            resumed_from: self.resumed_from,
            resumed_by: st.resumed_by,
            prompt_name: self.conversation.prompt_name(),
            resumable,
            usage: self.conversation.usage_totals(),
            budget: self.conversation.budget(),
        }
    }

    /// Session `by` resumed this one: clients lead there from it.
    pub(crate) fn set_resumed_by(&self, by: SessionId) {
        lock(&self.state).resumed_by = Some(by);
    }

    /// The session this one resumed, if any.
    pub(crate) fn resumed_from(&self) -> Option<SessionId> {
        self.resumed_from
    }

    /// The registry forgot this session (purged, or its retention ended):
    /// attached clients are closed, so none keeps it alive.
    pub(crate) fn mark_removed(&self) {
        self.removed.send_replace(true);
    }

    /// A receiver that turns true when the session is removed.
    pub(crate) fn removed(&self) -> watch::Receiver<bool> {
        self.removed.subscribe()
    }

    /// Whether this session continues the conversation of session `id`.
    pub(crate) fn resumes(&self, id: SessionId) -> bool {
        self.resumed_from == Some(id)
    }

    /// How to continue this session's conversation, when it has ended and
    /// its profile can resume it.
    pub(crate) fn resume_from(&self) -> Option<ResumeFrom> {
        if !self.can_resume || lock(&self.state).exit.is_none() || !self.work_dir.is_dir() {
            return None;
        }
        Some(ResumeFrom {
            session: self.id,
            agent_session_id: self.conversation.agent_session_id()?,
            work_dir: self.work_dir.clone(),
            dir: self.dir.clone(),
        })
    }
}

/// Membership of one client in a session's client count.
pub(crate) struct ClientGuard {
    session: Arc<Session>,
    client: ClientId,
}

impl Drop for ClientGuard {
    fn drop(&mut self) {
        self.session.clients.fetch_sub(1, Ordering::AcqRel);
        let client = self.client;
        self.session
            .update_connected(|c| c.retain(|x| x.client_id != client));
    }
}
