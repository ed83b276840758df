//! The agent's modes (approval/permission modes), one path for every kind
//! of channel: the channel says which modes the agent offers and which it
//! is in (ACP's `session/new` and `current_mode_update`, a mode read from a
//! terminal agent's screen or hooks), the conversation keeps them, and
//! clients hear of each change (`Control::Modes`; `hello.modes` for one
//! that comes later). Not an event: a dual-output events file is the
//! agent's, and duet cannot add its news to it.

use duet_protocol::rest::{AgentMode, AgentModes};

use super::Conversation;
use crate::session::Control;
use crate::sync::lock;

impl Conversation {
    /// The agent offers `modes`; clients hear of it when it changed.
    pub(crate) fn set_modes(&self, modes: AgentModes) {
        let mut st = lock(&self.state);
        if st.modes.as_ref() == Some(&modes) {
            return;
        }
        st.modes = Some(modes.clone());
        // Sent under the lock, so clients see the changes in order.
        let _ = self.control.send(Control::Modes(modes));
    }

    /// The agent is in mode `id` now (one it offered; another is ignored).
    pub(crate) fn set_current_mode(&self, id: &str) {
        let mut st = lock(&self.state);
        let Some(modes) = st.modes.as_mut() else {
            return;
        };
        if modes.current.as_deref() == Some(id) || !modes.available.iter().any(|m| m.id == id) {
            return;
        }
        modes.current = Some(id.to_string());
        let _ = self.control.send(Control::Modes(modes.clone()));
    }

    /// The agent's modes, once known.
    pub(crate) fn modes(&self) -> Option<AgentModes> {
        lock(&self.state).modes.clone()
    }
}

/// Modes from `(id, name)` pairs, `current` among them.
pub(crate) fn modes_of<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    current: Option<&str>,
) -> AgentModes {
    AgentModes {
        current: current.map(str::to_string),
        available: pairs
            .into_iter()
            .map(|(id, name)| AgentMode {
                id: id.to_string(),
                name: name.to_string(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::sync::broadcast;

    use super::*;
    use crate::session::channel::log::EventLog;

    fn conversation() -> (Conversation, broadcast::Receiver<Control>) {
        let dir = tempfile::tempdir().unwrap();
        let log = Arc::new(EventLog::owned(dir.path().join("events.jsonl"), 1 << 16).unwrap());
        let (tx, rx) = broadcast::channel(16);
        (Conversation::new(log, tx, 4, 1 << 10), rx)
    }

    fn news(rx: &mut broadcast::Receiver<Control>) -> Vec<AgentModes> {
        std::iter::from_fn(|| match rx.try_recv() {
            Ok(Control::Modes(m)) => Some(Some(m)),
            Ok(_) => Some(None),
            Err(_) => None,
        })
        .flatten()
        .collect()
    }

    /// Clients hear of each change once, and of nothing that is no change;
    /// a mode the agent did not offer is not taken.
    #[test]
    fn clients_hear_of_each_change_of_mode_once() {
        let (c, mut rx) = conversation();
        c.set_current_mode("plan");
        assert_eq!(c.modes(), None);
        let modes = modes_of([("default", "Ask"), ("plan", "Plan")], Some("default"));
        c.set_modes(modes.clone());
        c.set_modes(modes.clone());
        c.set_current_mode("default");
        c.set_current_mode("warp");
        c.set_current_mode("plan");
        let told = news(&mut rx);
        assert_eq!(told.len(), 2, "{told:?}");
        assert_eq!(told[0], modes);
        assert_eq!(told[1].current.as_deref(), Some("plan"));
        assert_eq!(c.modes(), Some(told[1].clone()));
    }
}
