//! What every channel feeds: the session's event log and, derived from the
//! normalised events, the agent's handshake, turn state, approvals and
//! prompt delivery. Channels call [`Conversation::ingest`] (events they
//! relay from a file of the agent's) or [`Conversation::emit`] (events duet
//! normalises and writes itself); clients act through
//! [`Conversation::submit`] and [`Conversation::approve`].
//!
//! All derived state sits behind one lock, and the channel is called under
//! it, so prompts and decisions reach the agent in the order they were
//! decided in. Channel calls never block (see [`Channel`]).
//!
//! Here: the state, the events in and out, the end. What the events change
//! is `ingest.rs`'s; prompts on their way are `prompts.rs`'s (held ones
//! kept by `unsent.rs`), answers to approvals `approving.rs`'s (and
//! `policy.rs`'s rules), the session's name `naming.rs`'s, spending and
//! budgets `spend.rs`'s, modes `modes.rs`'s, warnings `warnings.rs`'s.

mod approving;
mod ingest;
pub(crate) mod modes;
mod naming;
mod offers;
mod peek;
mod policy;
mod prompts;
mod sink;
mod spend;
mod unsent;
mod warnings;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use duet_protocol::sidecar::SidecarEvent;
use duet_protocol::ws::HeldPrompt;
use serde_json::Value;
use tokio::sync::broadcast;
use tracing::warn;

use super::approvals::Approvals;
use super::budget::Gate;
use super::decisions::Decisions;
use super::delivery::Delivery;
use super::held::HeldFile;
use super::log::EventLog;
use super::turn::Turn;
use super::usage::Usage;
use super::Channel;
use crate::session::WarningCode;
use crate::session::{Control, SessionError, Warning};
use crate::sync::lock;
pub(crate) use peek::validate;
pub(crate) use sink::Sink;
use unsent::keep_held;

struct State {
    approvals: Approvals,
    /// Outcomes the events will not show, kept for a restart.
    decisions: Decisions,
    turn: Turn,
    /// When the agent last became idle (`None` while busy or not started).
    idle_since: Option<Instant>,
    /// When the running turn began (Unix ms; `None` while idle).
    busy_since: Option<u64>,
    delivery: Delivery,
    /// Prompts the program never took (see `unsent.rs`).
    unsent: Vec<HeldPrompt>,
    /// The numbers of the held prompts clients were last told of.
    held_shown: Vec<u64>,
    /// Where held and unsent prompts are kept for a restart.
    held_file: HeldFile,
    /// `session_start.data`, once seen.
    handshake: Option<Value>,
    /// The agent's own id for its conversation.
    agent_session_id: Option<String>,
    /// The first prompt, shortened (see [`prompt_name`]).
    prompt_name: Option<String>,
    /// False until the screen shows the profile's `ready_text`, for agents
    /// that announce themselves before they can take a prompt.
    screen_ready: bool,
    /// `session_end` seen: the agent is on its way out.
    ended: bool,
    /// The newest warnings, for clients that attach (or lag) later.
    warnings: VecDeque<Warning>,
    warnings_sent: u64,
    /// What the agent spent (see `usage.rs`).
    usage: Usage,
    /// The session's budget (see `budget.rs`).
    budget: Gate,
    /// The agent's modes, once its channel knows them (see `modes.rs`).
    modes: Option<duet_protocol::rest::AgentModes>,
}

/// See the module docs.
pub(crate) struct Conversation {
    pub(crate) log: Arc<EventLog>,
    state: Mutex<State>,
    control: broadcast::Sender<Control>,
    channel: OnceLock<Arc<dyn Channel>>,
    max_submit_bytes: usize,
    /// Counts and records approvals and warnings (see `observe`).
    pub(crate) observer: OnceLock<Arc<crate::observe::SessionObserver>>,
    /// The `[[policy]]` rules that decide before anyone is asked, and the
    /// work dir their paths are placed against (see `policy.rs`).
    policy: OnceLock<policy::Rules>,
    /// Stops the running turn when a budget says so (set by the session).
    interrupter: OnceLock<Box<dyn Fn() + Send + Sync>>,
}

impl Conversation {
    /// A conversation over `log`, announcing changes on `control`.
    pub(crate) fn new(
        log: Arc<EventLog>,
        control: broadcast::Sender<Control>,
        max_held: usize,
        max_submit_bytes: usize,
    ) -> Self {
        Self {
            log,
            state: Mutex::new(State {
                approvals: Approvals::default(),
                decisions: Decisions::default(),
                turn: Turn::default(),
                idle_since: None,
                busy_since: None,
                delivery: Delivery::new(max_held),
                unsent: Vec::new(),
                held_shown: Vec::new(),
                held_file: HeldFile::default(),
                handshake: None,
                agent_session_id: None,
                prompt_name: None,
                screen_ready: true,
                ended: false,
                warnings: VecDeque::new(),
                warnings_sent: 0,
                usage: Usage::default(),
                budget: Gate::default(),
                modes: None,
            }),
            control,
            channel: OnceLock::new(),
            max_submit_bytes,
            observer: OnceLock::new(),
            policy: OnceLock::new(),
            interrupter: OnceLock::new(),
        }
    }

    /// Keeps (a new session) or replays (a recovered one) the approval
    /// outcomes the events do not show: see `decisions.rs`.
    pub(crate) fn with_decisions(self, decisions: Decisions) -> Self {
        {
            let mut st = lock(&self.state);
            if !decisions.kept() {
                st.approvals.deciders_unknown();
            }
            st.decisions = decisions;
        }
        self
    }

    /// Connects the channel prompts and decisions go out through.
    pub(crate) fn set_channel(&self, channel: Arc<dyn Channel>) {
        if channel.ends_turns_with_result() {
            lock(&self.state).turn.ends_with_result();
        }
        let _ = self.channel.set(channel);
    }

    fn channel(&self) -> Result<&Arc<dyn Channel>, SessionError> {
        self.channel.get().ok_or(SessionError::NoSidecar)
    }

    /// An event duet normalised itself (built with `duet_protocol::build`,
    /// or an event of the agent's parsed and passed through): written to
    /// duet's events file, numbered, relayed, and taken in like any other.
    /// Returns its seq.
    pub(crate) fn emit(&self, event: &SidecarEvent) -> Option<u64> {
        let line = serde_json::to_string(event).ok()?;
        self.emit_line(&line)
    }

    /// [`Conversation::emit`] for a line the agent wrote itself (one JSON
    /// object, already validated), kept as written.
    pub(crate) fn emit_line(&self, line: &str) -> Option<u64> {
        match self.log.append(line, |seq| self.ingest(seq, line)) {
            Ok(seq) => Some(seq),
            Err(e) => {
                warn!(?e, "writing the events file");
                self.warn(
                    WarningCode::EventsWriteFailed,
                    format!("an event could not be written to the transcript: {e}"),
                    None,
                );
                None
            }
        }
    }

    /// The program is gone: nothing pending will be answered, nothing held
    /// will be delivered (held prompts become unsent, see `unsent.rs`).
    pub(crate) fn close(&self) {
        let mut st = lock(&self.state);
        let dropped = st.delivery.close();
        if !dropped.is_empty() {
            warn!(
                dropped = dropped.len(),
                "program exited before taking held prompts; they are kept as unsent"
            );
            st.unsent.extend(dropped);
            keep_held(&mut st);
            self.announce_unsent(&mut st);
        }
        let changed = st.approvals.abandon_pending();
        drop(st);
        self.announce(changed);
    }

    /// The agent's handshake data, once seen.
    pub(crate) fn handshake(&self) -> Option<Value> {
        lock(&self.state).handshake.clone()
    }

    /// Records the agent's own conversation id when its handshake did not
    /// carry it (Claude Code's stream-json names it only in `system/init`).
    pub(crate) fn learn_agent_session_id(&self, id: &str) {
        let mut st = lock(&self.state);
        if st.agent_session_id.is_none() {
            st.agent_session_id = Some(id.to_string());
        }
    }

    /// When the turn the agent is working on began (Unix ms), while it
    /// works on one.
    pub(crate) fn busy_since(&self) -> Option<u64> {
        let st = lock(&self.state);
        st.busy_since.filter(|_| !st.ended)
    }

    /// Whether the agent has announced its end (`session_end`).
    pub(crate) fn ended(&self) -> bool {
        lock(&self.state).ended
    }

    /// The agent's own conversation id, once seen.
    pub(crate) fn agent_session_id(&self) -> Option<String> {
        lock(&self.state).agent_session_id.clone()
    }
}
