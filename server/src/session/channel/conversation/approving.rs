//! Approvals answered from inside duet (a client, a notification's
//! button, a policy rule: `policy.rs`) or abandoned by the user's
//! interrupt, and clients told of every change. Each decision goes to the
//! agent through the channel, then to the decisions file (`decisions.rs`),
//! under the conversation's lock, so decisions reach the agent in the order
//! they were taken.

use duet_protocol::rest::{Approval, Decider};

use super::{Conversation, State};
use crate::session::channel::approvals::{Choice, DecidedBy};
use crate::session::channel::decisions::Decision;
use crate::session::channel::turn::Signal;
use crate::session::{Control, SessionError};
use crate::sync::lock;

impl Conversation {
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
    pub(super) fn decide_locked(
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

    /// Tells the observer and every client of `changed` approvals.
    pub(super) fn announce(&self, changed: Vec<Approval>) {
        self.observer
            .get()
            .inspect(|o| o.approvals_changed(&changed));
        for a in changed {
            let _ = self.control.send(Control::Approval(a));
        }
    }

    /// Current approvals, oldest first.
    pub(crate) fn approvals(&self) -> Vec<Approval> {
        lock(&self.state).approvals.list()
    }

    /// How many approvals are pending.
    pub(crate) fn pending(&self) -> usize {
        lock(&self.state).approvals.pending()
    }
}
