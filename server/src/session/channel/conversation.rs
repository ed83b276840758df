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

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use duet_protocol::rest::Approval;
use duet_protocol::sidecar::{
    Content, ContentBlock, ControlRequestBody, KnownBlock, KnownEvent, SidecarEvent,
};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use tokio::sync::broadcast;
use tracing::{debug, info, warn};

use super::approvals::{Approvals, Choice};
use super::delivery::{Accepted, Delivery, Overdue};
use super::log::EventLog;
use super::turn::{Signal, Turn};
use super::Channel;
use crate::session::{lock, Control, SessionError, Warning};

struct State {
    approvals: Approvals,
    turn: Turn,
    /// When the agent last became idle (`None` while busy or not started).
    idle_since: Option<Instant>,
    /// When the running turn began (Unix ms; `None` while idle).
    busy_since: Option<u64>,
    delivery: Delivery,
    /// `session_start.data`, once seen.
    handshake: Option<Value>,
    /// The agent's own id for its conversation.
    agent_session_id: Option<String>,
    /// False until the screen shows the profile's `ready_text`, for agents
    /// that announce themselves before they can take a prompt.
    screen_ready: bool,
    /// `session_end` seen: the agent is on its way out.
    ended: bool,
    /// The newest warnings, for clients that attach (or lag) later.
    warnings: VecDeque<Warning>,
    warnings_sent: u64,
}

/// Warnings kept for clients that come later.
const KEEP_WARNINGS: usize = 64;

/// See the module docs.
pub(crate) struct Conversation {
    pub(crate) log: Arc<EventLog>,
    state: Mutex<State>,
    control: broadcast::Sender<Control>,
    channel: OnceLock<Arc<dyn Channel>>,
    max_submit_bytes: usize,
    /// Counts and records approvals and warnings (see `observe`).
    pub(crate) observer: OnceLock<Arc<crate::observe::SessionObserver>>,
}

/// The few fields duet looks at in every event; parsing only these (and
/// skipping the rest) also validates that the line is one JSON object.
/// They are taken raw and read afterwards, so that an odd `type` or
/// `event` (a number, an array) leaves the event unmodelled instead of
/// rejecting a valid object (found by fuzzing: `{"type":"system",
/// "event":[]}` was dropped as "not a JSON object").
#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a RawValue>,
    /// The inner event of a `stream_event`.
    #[serde(borrow, default)]
    event: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct PeekInner<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a RawValue>,
}

/// A raw field's text, when it is a string.
fn string_of(raw: Option<&RawValue>) -> Option<String> {
    serde_json::from_str(raw?.get()).ok()
}

/// Checks that `line` is one JSON object; the error says why not.
pub(crate) fn validate(line: &str) -> Result<(), String> {
    peek(line).map(drop)
}

fn peek(line: &str) -> Result<Peek<'_>, String> {
    if !line.trim_start().starts_with('{') {
        return Err("not an object".into());
    }
    serde_json::from_str::<Peek<'_>>(line).map_err(|e| e.to_string())
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
                turn: Turn::default(),
                idle_since: None,
                busy_since: None,
                delivery: Delivery::new(max_held),
                handshake: None,
                agent_session_id: None,
                screen_ready: true,
                ended: false,
                warnings: VecDeque::new(),
                warnings_sent: 0,
            }),
            control,
            channel: OnceLock::new(),
            max_submit_bytes,
            observer: OnceLock::new(),
        }
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

    /// Tells clients about something odd in the stream; it goes on.
    pub(crate) fn warn(&self, code: &'static str, message: String, seq: Option<u64>) {
        let mut st = lock(&self.state);
        self.warn_locked(&mut st, code, message, seq);
    }

    /// [`Conversation::warn`] with the state already locked: numbered and
    /// sent under the lock, so ids reach clients in order.
    fn warn_locked(&self, st: &mut State, code: &'static str, message: String, seq: Option<u64>) {
        debug!(code, %message, ?seq, "channel warning");
        self.observer.get().inspect(|o| o.warning(code));
        st.warnings_sent += 1;
        let warning = Warning {
            id: st.warnings_sent,
            code,
            message,
            seq,
        };
        if st.warnings.len() == KEEP_WARNINGS {
            st.warnings.pop_front();
        }
        st.warnings.push_back(warning.clone());
        let _ = self.control.send(Control::Warning(warning));
    }

    /// Kept warnings with an id over `after`, oldest first.
    pub(crate) fn warnings_after(&self, after: u64) -> Vec<Warning> {
        let st = lock(&self.state);
        st.warnings
            .iter()
            .filter(|w| w.id > after)
            .cloned()
            .collect()
    }

    /// A line of the agent's own events file, already validated and
    /// recorded in the log as `seq`: updates the derived state.
    pub(crate) fn ingest(&self, seq: u64, line: &str) {
        let Ok(peek) = peek(line) else { return };
        match string_of(peek.kind).as_deref() {
            Some(
                "system" | "user" | "assistant" | "control_request" | "control_response" | "result",
            ) => {
                if let Ok(SidecarEvent::Known(ev)) = SidecarEvent::from_line(line) {
                    self.on_event(seq, ev);
                }
            }
            Some("stream_event") => match peek
                .event
                .and_then(|e| serde_json::from_str::<PeekInner<'_>>(e.get()).ok())
                .and_then(|e| string_of(e.kind))
                .as_deref()
            {
                Some("message_start") => self.signal(Signal::MessageStart),
                Some("message_stop") => self.signal(Signal::MessageStop),
                _ => {}
            },
            _ => {}
        }
    }

    /// An event duet normalised itself: written to duet's events file,
    /// numbered, relayed, and taken in like any other. Returns its seq.
    pub(crate) fn emit(&self, event: &Value) -> Option<u64> {
        self.emit_line(&event.to_string())
    }

    /// [`Conversation::emit`] for a line the agent wrote itself (one JSON
    /// object, already validated), kept as written.
    pub(crate) fn emit_line(&self, line: &str) -> Option<u64> {
        match self.log.append(line) {
            Ok(seq) => {
                self.ingest(seq, line);
                Some(seq)
            }
            Err(e) => {
                warn!(?e, "writing the events file");
                self.warn(
                    "events_write_failed",
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

    fn on_event(&self, seq: u64, ev: KnownEvent) {
        let mut st = lock(&self.state);
        let mut changed = Vec::new();
        match ev {
            KnownEvent::System(sys) if sys.subtype == "session_start" => {
                st.agent_session_id = sys
                    .data
                    .as_ref()
                    .and_then(|d| d.get("session_id"))
                    .and_then(Value::as_str)
                    .or(sys.envelope.session_id.as_deref())
                    .map(str::to_string);
                // Dual output protocol 2 (Qwen Code 0.24) keeps every
                // prompt read after session_start: queued behind a dialog,
                // or merged into a turn without a `user` event of its own
                // (docs/qwen-code.md §8.3). A copy would be answered twice.
                // Nor is there screen text to wait for: it never shows
                // 0.15's `? for shortcuts` (§8.2), so a profile written for
                // 0.15 would hold the first prompt for the whole fallback.
                let protocol = sys.data.as_ref().and_then(|d| d.get("protocol_version"));
                if protocol.and_then(Value::as_u64).is_some_and(|v| v >= 2) {
                    st.delivery.keeps_prompts();
                    st.screen_ready = true;
                }
                st.handshake = sys.data.clone();
                self.turn(&mut st, Signal::SessionStart);
            }
            KnownEvent::System(sys) if sys.subtype == "session_end" => {
                st.ended = true;
                changed = st.approvals.abandon_pending();
            }
            KnownEvent::Assistant(msg) => {
                let tool_use = msg
                    .message
                    .content
                    .blocks()
                    .iter()
                    .any(|b| matches!(b, ContentBlock::Known(KnownBlock::ToolUse { .. })));
                self.turn(&mut st, Signal::Assistant { tool_use });
            }
            KnownEvent::ControlRequest(req) => {
                self.turn(&mut st, Signal::ControlRequest);
                if let ControlRequestBody::CanUseTool(tool) = &req.request {
                    let options = self
                        .channel
                        .get()
                        .map(|c| c.options(tool))
                        .unwrap_or_else(super::allow_deny);
                    changed.push(st.approvals.requested(&req.request_id, tool, seq, options));
                }
            }
            KnownEvent::ControlResponse(resp) => {
                changed.extend(st.approvals.responded(&resp.response));
            }
            KnownEvent::User(msg) => {
                let results: Vec<(String, bool)> = match &msg.message.content {
                    Content::Blocks(blocks) => blocks
                        .iter()
                        .filter_map(|b| match b {
                            ContentBlock::Known(KnownBlock::ToolResult {
                                tool_use_id,
                                is_error,
                                ..
                            }) => Some((tool_use_id.clone(), is_error.unwrap_or(false))),
                            _ => None,
                        })
                        .collect(),
                    Content::Text(_) => Vec::new(),
                };
                if results.is_empty() {
                    // A new prompt: the previous turn, and anything it was
                    // waiting for, is over. It may be the one in flight.
                    changed = st.approvals.abandon_pending();
                    st.delivery.echoed(&msg.message.content.text());
                } else {
                    for (id, is_error) in results {
                        changed.extend(st.approvals.tool_finished(&id, is_error));
                    }
                }
                self.turn(&mut st, Signal::UserTurn);
            }
            KnownEvent::Result(_) => {
                changed = st.approvals.abandon_pending();
                self.turn(&mut st, Signal::Result);
            }
            _ => {}
        }
        // A decision or an abandoned request may let a held prompt go.
        self.pump(&mut st);
        drop(st);
        self.announce(changed);
    }

    fn signal(&self, signal: Signal) {
        let mut st = lock(&self.state);
        self.turn(&mut st, signal);
    }

    /// Updates the turn state and writes whatever prompts may go now.
    fn turn(&self, st: &mut State, signal: Signal) {
        let idle = st.turn.on(signal);
        st.busy_since = match (st.turn.started() && !idle, st.busy_since) {
            (true, since) => since.or_else(|| Some(crate::session::now_ms())),
            (false, _) => None,
        };
        match (idle, st.idle_since) {
            (true, None) => st.idle_since = Some(Instant::now()),
            (false, Some(_)) => st.idle_since = None,
            _ => {}
        }
        self.pump(st);
    }

    fn pump(&self, st: &mut State) {
        let Some(channel) = self.channel.get() else {
            return;
        };
        let ready = st.turn.started() && st.screen_ready && st.turn.idle();
        for text in st.delivery.next(ready, Instant::now()) {
            if let Err(e) = channel.deliver(&text) {
                warn!(?e, "delivering a prompt");
                self.warn_locked(
                    st,
                    "submit_failed",
                    format!("a prompt could not be handed to the agent: {e}"),
                    None,
                );
            }
        }
    }

    /// Called about once a second: redelivers a prompt the idle agent has
    /// not shown (see `delivery.rs`).
    pub(crate) fn tick(&self) {
        let mut st = lock(&self.state);
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
                    "submit_ignored",
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
                    "submit_unshown",
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

    /// A client answers a pending approval; the first answer wins.
    pub(crate) fn approve(
        &self,
        request_id: &str,
        choice: &Choice,
    ) -> Result<Approval, SessionError> {
        let channel = self.channel()?.clone();
        let mut st = lock(&self.state);
        let (approval, option) = st.approvals.decide(request_id, choice)?;
        if let Err(e) = channel.decide(request_id, &option) {
            st.approvals.undo_decision(request_id);
            return Err(e.into());
        }
        let approval = if channel.confirms(&option) {
            approval
        } else {
            st.approvals.confirm(request_id).unwrap_or(approval)
        };
        if !option.kind.allows() {
            // Agents do not call the model again after a denial; the turn
            // is over until the next prompt.
            self.turn(&mut st, Signal::Denied);
        } else {
            self.pump(&mut st);
        }
        drop(st);
        self.announce(vec![approval.clone()]);
        Ok(approval)
    }

    /// The user interrupted (Escape): Qwen Code writes nothing when Escape
    /// dismisses an approval, so pending approvals are abandoned here
    /// rather than left pending forever, and prompts may go again. An agent
    /// that does report the outcome corrects this.
    pub(crate) fn interrupted(&self) {
        let mut st = lock(&self.state);
        let changed = st.approvals.abandon_pending();
        if changed.is_empty() {
            return;
        }
        self.turn(&mut st, Signal::Denied);
        drop(st);
        self.announce(changed);
    }

    /// The program is gone: nothing pending will be answered, nothing held
    /// will be delivered.
    pub(crate) fn close(&self) {
        let mut st = lock(&self.state);
        let dropped = st.delivery.close();
        if dropped > 0 {
            warn!(dropped, "program exited before taking held prompts");
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
}

fn preview(text: &str) -> String {
    let mut p: String = text.chars().take(60).collect();
    if p.len() < text.len() {
        p.push('…');
    }
    p
}
