//! An agent's mode as its terminal shows it, for agents whose side channel
//! does not say (Qwen Code's status line) or says so only when it next
//! calls a hook (Claude Code's footer): followed on every change of the
//! screen and kept in the conversation's modes (`conversation/modes.rs`),
//! so the chat shows what the terminal shows. Each agent gives the words
//! to read and the modes it offers ([`Reading`]); switching is its own
//! (a command, keys), confirmed here by the screen ([`ScreenModes::shows`]).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::conversation::modes::modes_of;
use super::conversation::Sink;
use crate::session::terminal::output::Output;
use crate::session::WarningCode;
use crate::sync::lock;

/// What one agent's screen says about its mode.
pub(crate) struct Reading {
    /// The mode the screen shows, if it shows one.
    pub(crate) read: fn(&str) -> Option<&'static str>,
    /// The modes (id, the agent's name) the agent of this handshake takes.
    pub(crate) offered: fn(Option<&Value>) -> Vec<(&'static str, &'static str)>,
}

/// The screen showed the agent refusing a switch.
#[derive(Debug)]
pub(crate) struct Refused;

/// Follows the mode on an agent's screen; see the module docs.
pub(crate) struct ScreenModes {
    output: Arc<Output>,
    conversation: Sink,
    reading: Reading,
    /// The mode the screen showed last.
    current: Mutex<Option<&'static str>>,
}

impl ScreenModes {
    pub(crate) fn new(output: Arc<Output>, conversation: Sink, reading: Reading) -> Arc<Self> {
        Arc::new(Self {
            output,
            conversation,
            reading,
            current: Mutex::new(None),
        })
    }

    /// Keeps the conversation's modes to the screen's, until the task is
    /// dropped.
    pub(crate) async fn follow(self: Arc<Self>) {
        let mut changed = self.output.subscribe_screen();
        loop {
            self.look();
            if changed.changed().await.is_err() {
                return;
            }
        }
    }

    /// Reads the screen once; the conversation's modes follow it.
    fn look(&self) -> Option<&'static str> {
        let mode = (self.reading.read)(&self.output.screen_text())?;
        *lock(&self.current) = Some(mode);
        // Every look, not only when the mode changed: the handshake that
        // says which modes the agent takes may come after the first one
        // (and the conversation tells clients of changes only).
        if let Some(conversation) = self.conversation.get() {
            let offered = (self.reading.offered)(conversation.handshake().as_ref());
            conversation.set_modes(modes_of(offered, Some(mode)));
        }
        Some(mode)
    }

    /// The mode the screen showed last.
    pub(crate) fn current(&self) -> Option<&'static str> {
        *lock(&self.current)
    }

    /// Whether `mode` is one the agent takes, once its screen has shown a
    /// mode (so it is the agent, ready); an error names the modes it takes.
    pub(crate) fn check(&self, mode: &str) -> Result<(), String> {
        if self.current().is_none() {
            return Err("the agent has shown no mode duet can read".into());
        }
        let handshake = self.conversation.get().and_then(|c| c.handshake());
        let offered = (self.reading.offered)(handshake.as_ref());
        if offered.iter().any(|(id, _)| *id == mode) {
            return Ok(());
        }
        let ids: Vec<&str> = offered.iter().map(|(id, _)| *id).collect();
        Err(format!(
            "the agent has no mode {mode:?}; it offers {}",
            ids.join(", ")
        ))
    }

    /// Waits (at most `wait`) until the screen shows a mode `done` takes;
    /// returns the mode it shows then.
    pub(crate) async fn shows(
        &self,
        wait: Duration,
        done: impl Fn(&'static str) -> bool,
    ) -> Option<&'static str> {
        self.shows_unless(wait, done, |_| false)
            .await
            .and_then(Result::ok)
    }

    /// [`ScreenModes::shows`], or `Err(Refused)` as soon as `refused`
    /// finds the agent's answer to the switch on the screen instead.
    pub(crate) async fn shows_unless(
        &self,
        wait: Duration,
        done: impl Fn(&'static str) -> bool,
        refused: impl Fn(&str) -> bool,
    ) -> Option<Result<&'static str, Refused>> {
        let mut changed = self.output.subscribe_screen();
        tokio::time::timeout(wait, async {
            loop {
                if let Some(mode) = self.look().filter(|m| done(m)) {
                    return Ok(mode);
                }
                if refused(&self.output.screen_text()) {
                    return Err(Refused);
                }
                if changed.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        })
        .await
        .ok()
    }

    /// The agent's screen now.
    pub(crate) fn screen_text(&self) -> String {
        self.output.screen_text()
    }

    /// Tells clients the agent did not show `mode` (its terminal may say
    /// why).
    pub(crate) fn not_shown(&self, mode: &str) {
        self.conversation.warn(
            WarningCode::SetModeFailed,
            format!("the agent did not show mode {mode:?} (its terminal may say why)"),
            None,
        );
    }
}
