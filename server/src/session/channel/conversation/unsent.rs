//! Unsent prompts: prompts duet took but never handed to the program,
//! because it ended (or duet was killed) while they were held. They are
//! shown to clients with their text, kept on disk (`held.rs`) until a
//! client discards them, and offered again by a session that resumes this
//! one. They are never sent by themselves: the turn they waited behind
//! was cut off, so whether they still make sense is the user's call.

use duet_protocol::ws::UnsentPrompt;

use super::{Conversation, State};
use crate::session::channel::held::HeldFile;
use crate::session::{lock, Control};

impl Conversation {
    /// Keeps held prompts in `file`, starting with `unsent`: those an
    /// earlier duet left in a recovered session's directory, or those of
    /// the ended session a new one resumes (then written down at once).
    pub(crate) fn with_held(self, file: HeldFile, unsent: Vec<UnsentPrompt>) -> Self {
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
    pub(crate) fn unsent(&self) -> Vec<UnsentPrompt> {
        lock(&self.state).unsent.clone()
    }

    /// Lets go of unsent prompt `n`; returns it, or `None` if it was gone
    /// already (another client discarded it).
    pub(crate) fn discard(&self, n: u64) -> Option<UnsentPrompt> {
        let mut st = lock(&self.state);
        let i = st.unsent.iter().position(|p| p.n == n)?;
        let prompt = st.unsent.remove(i);
        keep_held(&mut st);
        self.announce_unsent(&st);
        Some(prompt)
    }

    /// Tells clients the new list (under the lock, so lists arrive in order).
    pub(super) fn announce_unsent(&self, st: &State) {
        let _ = self.control.send(Control::Unsent(st.unsent.clone()));
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
