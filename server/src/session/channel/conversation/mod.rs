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

mod ingest;
pub(crate) mod modes;
mod peek;
mod policy;
mod sink;
mod spend;
mod unsent;
mod warnings;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use duet_protocol::rest::{Approval, Decider};
use duet_protocol::sidecar::SidecarEvent;
use duet_protocol::ws::HeldPrompt;
use serde_json::Value;
use tokio::sync::broadcast;
use tracing::{info, warn};

use super::approvals::{Approvals, Choice, DecidedBy};
use super::budget::Gate;
use super::decisions::{Decision, Decisions};
use super::delivery::{Accepted, Delivery, Overdue};
use super::held::HeldFile;
use super::log::EventLog;
use super::turn::{Signal, Turn};
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
        let _ = self.channel.set(channel);
    }

    fn channel(&self) -> Result<&Arc<dyn Channel>, SessionError> {
        self.channel.get().ok_or(SessionError::NoSidecar)
    }

    /// Holds prompts until [`Conversation::screen_ready`] (see
    /// `config::Profile::ready_text`).
    pub(crate) fn wait_for_screen(&self) {
        lock(&self.state).screen_ready = false;
    }

    /// The agent keeps every prompt it is handed (its channel sees to it
    /// being taken), so none is written twice: see `delivery.rs`.
    pub(crate) fn keeps_prompts(&self) {
        lock(&self.state).delivery.keeps_prompts();
    }

    /// Whether prompts still wait for [`Conversation::screen_ready`].
    pub(crate) fn waits_for_screen(&self) -> bool {
        !lock(&self.state).screen_ready
    }

    /// The screen shows that the agent takes prompts.
    pub(crate) fn screen_ready(&self) {
        let mut st = lock(&self.state);
        st.screen_ready = true;
        self.pump(&mut st);
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

    fn announce(&self, changed: Vec<Approval>) {
        self.observer
            .get()
            .inspect(|o| o.approvals_changed(&changed));
        for a in changed {
            let _ = self.control.send(Control::Approval(a));
        }
    }

    /// Updates the turn state and writes whatever prompts may go now.
    fn turn(&self, st: &mut State, signal: Signal) {
        let idle = st.turn.on(signal);
        let was = st.busy_since;
        st.busy_since = match (st.turn.started() && !idle, st.busy_since) {
            (true, since) => since.or_else(|| Some(crate::clock::now_ms())),
            (false, _) => None,
        };
        self.turn_changed(st, was);
        match (idle, st.idle_since) {
            (true, None) => st.idle_since = Some(Instant::now()),
            (false, Some(_)) => st.idle_since = None,
            _ => {}
        }
        self.pump(st);
    }

    /// Writes whatever prompts may go now, then keeps the ones still
    /// held on disk (only after: see `held.rs`) and tells clients.
    fn pump(&self, st: &mut State) {
        self.check_budget(st);
        if let Some(channel) = self.channel.get() {
            let ready = st.turn.started() && st.screen_ready && st.turn.idle() && st.budget.open();
            for text in st.delivery.next(ready, Instant::now()) {
                if let Err(e) = channel.deliver(&text) {
                    warn!(?e, "delivering a prompt");
                    self.warn_locked(
                        st,
                        WarningCode::SubmitFailed,
                        format!("a prompt could not be handed to the agent: {e}"),
                        None,
                    );
                }
            }
        }
        self.held_changed(st);
    }

    /// Called about once a second: redelivers a prompt the idle agent has
    /// not shown (see `delivery.rs`).
    pub(crate) fn tick(&self) {
        let mut st = lock(&self.state);
        // Working time grows by itself: a `wall` budget is reached here.
        if st.busy_since.is_some() {
            self.check_budget(&mut st);
        }
        let idle_since = st.idle_since;
        match st.delivery.tick(idle_since, Instant::now()) {
            Some(Overdue::Redeliver(text)) => {
                info!("the agent did not take a prompt; delivering it again");
                if let Ok(channel) = self.channel() {
                    if let Err(e) = channel.deliver(&text) {
                        warn!(?e, "redelivering a prompt");
                    }
                }
            }
            Some(Overdue::GaveUp(text)) => {
                self.warn_locked(
                    &mut st,
                    WarningCode::SubmitIgnored,
                    format!(
                        "the agent did not take the prompt {:?} (sent twice); it was dropped",
                        preview(&text)
                    ),
                    None,
                );
                self.pump(&mut st);
            }
            Some(Overdue::Unshown(text)) => {
                self.warn_locked(
                    &mut st,
                    WarningCode::SubmitUnshown,
                    format!(
                        "the agent has not shown the prompt {:?} yet; it keeps what it reads \
                         (a dialog may be open in its terminal), so it is not sent again",
                        preview(&text)
                    ),
                    None,
                );
                self.pump(&mut st);
            }
            None => {}
        }
    }

    /// Sends a prompt (held while the agent cannot take it).
    pub(crate) fn submit(&self, text: String) -> Result<Accepted, SessionError> {
        // Agents ignore a blank prompt, so delivery could never see it taken:
        // it was sent twice and then reported dropped.
        if text.trim().is_empty() {
            return Err(SessionError::EmptyPrompt);
        }
        if text.len() > self.max_submit_bytes {
            return Err(SessionError::TooLarge(text.len(), self.max_submit_bytes));
        }
        self.channel()?;
        let mut st = lock(&self.state);
        st.delivery.submit(text)?;
        let before = st.delivery.held();
        self.pump(&mut st);
        Ok(if st.delivery.held() < before {
            Accepted::Written
        } else {
            Accepted::Queued
        })
    }

    /// Someone inside duet (`by`: a client, a notification's button)
    /// answers a pending approval; the first answer wins.
    pub(crate) fn approve(
        &self,
        request_id: &str,
        choice: &Choice,
        by: &DecidedBy,
    ) -> Result<Approval, SessionError> {
        self.channel()?;
        let mut st = lock(&self.state);
        let approval = self.decide_locked(&mut st, request_id, choice, by)?;
        drop(st);
        self.announce(vec![approval.clone()]);
        Ok(approval)
    }

    /// [`Conversation::approve`] with the state locked, not announced.
    fn decide_locked(
        &self,
        st: &mut State,
        request_id: &str,
        choice: &Choice,
        by: &DecidedBy,
    ) -> Result<Approval, SessionError> {
        let channel = self.channel()?.clone();
        let (approval, option) = st.approvals.decide(request_id, choice, by)?;
        let sent = match (&by.reason, option.kind.allows()) {
            (Some(why), false) => channel.decide_because(request_id, &option, why),
            _ => channel.decide(request_id, &option),
        };
        if let Err(e) = sent {
            st.approvals.undo_decision(request_id);
            return Err(e.into());
        }
        let approval = if channel.confirms(&option) {
            approval
        } else {
            st.approvals.confirm(request_id).unwrap_or(approval)
        };
        st.decisions.write(&Decision {
            request_id: request_id.to_string(),
            seq: approval.seq,
            state: approval.state,
            by: approval.decided_by_name.clone(),
            chosen: approval.chosen.clone(),
            decider: approval.decided_by.filter(|d| *d != Decider::Client),
            reason: approval.reason.clone(),
        });
        if !option.kind.allows() {
            // Agents do not call the model again after a denial; the turn
            // is over until the next prompt.
            self.turn(st, Signal::Denied);
        } else {
            self.pump(st);
        }
        Ok(approval)
    }

    /// The user interrupted (Escape): Qwen Code writes nothing when Escape
    /// dismisses an approval, so pending approvals are abandoned here
    /// rather than left pending forever, and prompts may go again. The same
    /// for a turn with nothing pending: an agent that stops a running
    /// command may write nothing more than its `tool_result` (duet's demo
    /// agent does), and every later prompt was held for good. An agent that
    /// was not stopped after all drops or queues the next prompt, which
    /// delivery handles. An agent that does report the outcome corrects
    /// this.
    pub(crate) fn interrupted(&self) {
        let mut st = lock(&self.state);
        let changed = st.approvals.abandon_pending();
        self.turn(&mut st, Signal::Interrupted);
        drop(st);
        if !changed.is_empty() {
            self.announce(changed);
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

    /// Current approvals, oldest first.
    pub(crate) fn approvals(&self) -> Vec<Approval> {
        lock(&self.state).approvals.list()
    }

    /// How many approvals are pending.
    pub(crate) fn pending(&self) -> usize {
        lock(&self.state).approvals.pending()
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

    /// The conversation's first prompt, shortened: the session's name
    /// until an owner gives it one. Derived from the events, so a session
    /// recovered after a restart has it again.
    pub(crate) fn prompt_name(&self) -> Option<String> {
        lock(&self.state).prompt_name.clone()
    }
}

/// Longest name taken from a prompt, in characters (an ellipsis marks the cut).
const PROMPT_NAME_CHARS: usize = 60;

/// A session name from a prompt: its first non-blank line, whitespace
/// collapsed, at most [`PROMPT_NAME_CHARS`] characters, control characters
/// dropped. None for a slash command (`/help` names nothing) or a blank one.
pub(crate) fn prompt_name(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    if line.starts_with('/') {
        return None;
    }
    let words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect();
    let joined = words.join(" ");
    if joined.chars().count() <= PROMPT_NAME_CHARS {
        return Some(joined);
    }
    let cut: String = joined.chars().take(PROMPT_NAME_CHARS - 1).collect();
    Some(format!("{}…", cut.trim_end()))
}

fn preview(text: &str) -> String {
    let mut p: String = text.chars().take(60).collect();
    if p.len() < text.len() {
        p.push('…');
    }
    p
}

#[cfg(test)]
mod naming_tests {
    use super::prompt_name;

    #[test]
    fn a_prompt_names_by_its_first_line_shortened() {
        assert_eq!(
            prompt_name("\n  fix the   login bug\nthen tests").as_deref(),
            Some("fix the login bug")
        );
        assert_eq!(prompt_name("/help"), None);
        assert_eq!(prompt_name(" \n\t"), None);
        let long = prompt_name(&"word ".repeat(40)).unwrap();
        assert_eq!(long.chars().count(), 60);
        assert!(long.ends_with('…'));
    }
}
