//! A channel's way back into its conversation. The session owns its
//! conversation and the conversation owns its channel; a channel that held
//! the conversation too made a cycle nothing broke, and every Claude,
//! stream-json and ACP session outlived its purge with its files and pipes
//! open (a few hundred sessions used up the process's descriptors). So a
//! channel, and every task it runs, reaches the conversation through this
//! weak handle: once the session is gone, what the agent still writes is
//! dropped and the channel's tasks end with their pipes.

use std::sync::{Arc, Weak};

use duet_protocol::sidecar::SidecarEvent;

use super::Conversation;
use crate::session::WarningCode;

/// See the module docs.
#[derive(Clone)]
pub(crate) struct Sink(Weak<Conversation>);

impl Sink {
    /// A handle on `conversation` that does not keep it alive.
    pub(crate) fn new(conversation: &Arc<Conversation>) -> Self {
        Self(Arc::downgrade(conversation))
    }

    /// The conversation, while its session lives.
    pub(crate) fn get(&self) -> Option<Arc<Conversation>> {
        self.0.upgrade()
    }

    /// [`Conversation::emit`]; `None` once the session is gone.
    pub(crate) fn emit(&self, event: &SidecarEvent) -> Option<u64> {
        self.get()?.emit(event)
    }

    /// [`Conversation::emit`] of each of `events`, in order.
    pub(crate) fn emit_all(&self, events: &[SidecarEvent]) {
        if let Some(c) = self.get() {
            for e in events {
                c.emit(e);
            }
        }
    }

    /// [`Conversation::emit_line`].
    pub(crate) fn emit_line(&self, line: &str) -> Option<u64> {
        self.get()?.emit_line(line)
    }

    /// [`Conversation::warn`].
    pub(crate) fn warn(&self, code: WarningCode, message: String, seq: Option<u64>) {
        if let Some(c) = self.get() {
            c.warn(code, message, seq);
        }
    }

    /// [`Conversation::learn_agent_session_id`].
    pub(crate) fn learn_agent_session_id(&self, id: &str) {
        if let Some(c) = self.get() {
            c.learn_agent_session_id(id);
        }
    }

    /// [`Conversation::keeps_prompts`].
    pub(crate) fn keeps_prompts(&self) {
        if let Some(c) = self.get() {
            c.keeps_prompts();
        }
    }

    /// [`Conversation::set_modes`].
    pub(crate) fn set_modes(&self, modes: duet_protocol::rest::AgentModes) {
        if let Some(c) = self.get() {
            c.set_modes(modes);
        }
    }

    /// [`Conversation::set_current_mode`].
    pub(crate) fn set_current_mode(&self, id: &str) {
        if let Some(c) = self.get() {
            c.set_current_mode(id);
        }
    }

    /// [`Conversation::agent_session_id`].
    pub(crate) fn agent_session_id(&self) -> Option<String> {
        self.get()?.agent_session_id()
    }
}
