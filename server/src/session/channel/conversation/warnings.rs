//! Warnings: something odd in the stream, told to clients (numbered, so
//! a client that attaches or lags later gets the ones it missed).

use super::{Conversation, State};
use crate::session::{Control, Warning, WarningCode};
use crate::sync::lock;
use tracing::debug;

/// Warnings kept for clients that come later.
const KEEP_WARNINGS: usize = 64;

impl Conversation {
    /// Tells clients about something odd in the stream; it goes on.
    pub(crate) fn warn(&self, code: WarningCode, message: String, seq: Option<u64>) {
        let mut st = lock(&self.state);
        self.warn_locked(&mut st, code, message, seq);
    }

    /// [`Conversation::warn`] with the state already locked: numbered and
    /// sent under the lock, so ids reach clients in order.
    pub(super) fn warn_locked(
        &self,
        st: &mut State,
        code: WarningCode,
        message: String,
        seq: Option<u64>,
    ) {
        debug!(code = code.as_str(), %message, ?seq, "channel warning");
        self.observer.get().inspect(|o| o.warning(code.as_str()));
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
}
