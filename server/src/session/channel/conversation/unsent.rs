//! Prompts duet took and has not handed to the program, as clients see
//! them. *Held* ones wait for the agent to be ready (`delivery.rs`) and go
//! by themselves. *Unsent* ones were held when the program ended (or duet
//! was killed): they are kept on disk (`held.rs`) until a client discards
//! them, and offered again by a session that resumes this one, but never
//! sent by themselves: the turn they waited behind was cut off, so whether
//! they still make sense is the user's call. Every client is told both
//! lists (in its hello, then whenever either changes), so a prompt one tab
//! sent shows as waiting in every tab, and again after a reload.

use duet_protocol::ws::HeldPrompt;

use super::{Conversation, State};
use crate::session::channel::held::HeldFile;
use crate::session::Control;
use crate::sync::lock;

impl Conversation {
    /// Keeps held prompts in `file`, starting with `unsent`: those an
    /// earlier duet left in a recovered session's directory, or those of
    /// the ended session a new one resumes (then written down at once).
    pub(crate) fn with_held(self, file: HeldFile, unsent: Vec<HeldPrompt>) -> Self {
        {
            let mut st = lock(&self.state);
            let last = unsent.iter().map(|p| p.n).max().unwrap_or(0);
            st.delivery.number_after(last);
            st.unsent = unsent;
            st.held_file = file;
            keep_held(&mut st);
        }
        self
    }

    /// The unsent prompts, oldest first.
    pub(crate) fn unsent(&self) -> Vec<HeldPrompt> {
        lock(&self.state).unsent.clone()
    }

    /// The held prompts, in the order they go.
    pub(crate) fn held(&self) -> Vec<HeldPrompt> {
        lock(&self.state).delivery.held_prompts().cloned().collect()
    }

    /// Lets go of unsent prompt `n`; returns it, or `None` if it was gone
    /// already (another client discarded it).
    pub(crate) fn discard(&self, n: u64) -> Option<HeldPrompt> {
        let mut st = lock(&self.state);
        let i = st.unsent.iter().position(|p| p.n == n)?;
        let prompt = st.unsent.remove(i);
        keep_held(&mut st);
        self.announce_unsent(&mut st);
        Some(prompt)
    }

    /// Keeps the lists on disk and tells clients if the held prompts
    /// changed (a prompt was held, or handed to the agent). Most changes of
    /// the conversation leave them as they were, and say nothing.
    pub(super) fn held_changed(&self, st: &mut State) {
        keep_held(st);
        if !st
            .delivery
            .held_prompts()
            .map(|p| p.n)
            .eq(st.held_shown.iter().copied())
        {
            self.announce_unsent(st);
        }
    }

    /// Tells clients both lists (under the lock, so lists arrive in order).
    pub(super) fn announce_unsent(&self, st: &mut State) {
        let held: Vec<HeldPrompt> = st.delivery.held_prompts().cloned().collect();
        st.held_shown = held.iter().map(|p| p.n).collect();
        let _ = self.control.send(Control::Prompts {
            unsent: st.unsent.clone(),
            held,
        });
    }
}

/// Writes the unsent and held prompts down if they changed.
pub(super) fn keep_held(st: &mut State) {
    let State {
        held_file,
        unsent,
        delivery,
        ..
    } = st;
    held_file.keep(unsent.iter().chain(delivery.held_prompts()));
}
