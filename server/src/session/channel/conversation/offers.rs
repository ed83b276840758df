//! What an agent's dialog offers, learned after its request arrived: the
//! channel reads it from the screen and the pending approval offers it
//! from then on. Clients are told; the audit trail and the metrics are not
//! (the request was asked once).

use duet_protocol::rest::ApprovalOption;

use super::Conversation;
use crate::session::Control;
use crate::sync::lock;

impl Conversation {
    /// Offers `options` for the pending approval `request_id` (see
    /// [`super::super::approvals::Approvals::reoffer`]).
    pub(crate) fn reoffer(&self, request_id: &str, options: Vec<ApprovalOption>) {
        let changed = lock(&self.state).approvals.reoffer(request_id, options);
        if let Some(a) = changed {
            let _ = self.control.send(Control::Approval(a));
        }
    }

    /// Whether the agent has yet to report how `request_id` was answered.
    pub(crate) fn awaits_agent(&self, request_id: &str) -> bool {
        lock(&self.state).approvals.awaits_agent(request_id)
    }
}
