//! Prompts on their way to the agent: submitted, held while it cannot
//! take one (its screen not ready, a turn running, the budget spent),
//! handed to the channel as soon as it can, and handed again when the idle
//! agent did not show one. The rules are `delivery.rs`'s; this is where the
//! conversation applies them, under its lock.

use std::time::Instant;

use tracing::{info, warn};

use super::{Conversation, State};
use crate::session::channel::delivery::{Accepted, Overdue};
use crate::session::channel::turn::Signal;
use crate::session::{SessionError, WarningCode};
use crate::sync::lock;

impl Conversation {
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

    /// Updates the turn state and writes whatever prompts may go now.
    pub(super) fn turn(&self, st: &mut State, signal: Signal) {
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
    pub(super) fn pump(&self, st: &mut State) {
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
}

fn preview(text: &str) -> String {
    let mut p: String = text.chars().take(60).collect();
    if p.len() < text.len() {
        p.push('…');
    }
    p
}
