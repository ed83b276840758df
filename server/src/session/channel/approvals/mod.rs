//! Tool approvals of one session, derived from the sidecar control plane and
//! from client decisions.
//!
//! The program's own `control_response` is the truth: it mirrors the outcome
//! however it was decided. A client's decision is recorded at once (first
//! answer wins inside duet, so two tabs cannot both answer) and later
//! confirmed — or corrected, when the terminal answered first — by that
//! response. Requests the program stops waiting for without saying so (a new
//! prompt starts, the turn ends, the program exits) become `abandoned`, so
//! nothing stays pending forever.

use std::collections::{HashMap, VecDeque};

use duet_protocol::rest::{Approval, ApprovalOption, ApprovalState, Decider};
use duet_protocol::sidecar::{CanUseTool, ControlResponseBody};

use super::decisions::Decision;

mod choice;
pub(crate) use choice::{Choice, DecideError, DecidedBy};

/// Resolved approvals kept for clients that attach later.
const KEEP_RESOLVED: usize = 100;

struct Entry {
    approval: Approval,
    /// The program's `control_response` has been seen.
    confirmed: bool,
}

/// See the module docs.
#[derive(Default)]
pub(crate) struct Approvals {
    entries: HashMap<String, Entry>,
    /// Request ids in arrival order, for pruning and listing.
    order: VecDeque<String>,
    /// Set for a replay that cannot tell a client's decision from the
    /// terminal's (see [`Approvals::deciders_unknown`]).
    deciders_unknown: bool,
}

fn state_name(state: ApprovalState) -> &'static str {
    match state {
        ApprovalState::Pending => "pending",
        ApprovalState::Allowed => "allowed",
        ApprovalState::Denied => "denied",
        ApprovalState::Abandoned => "abandoned",
    }
}

impl Approvals {
    /// A `control_request`/`can_use_tool` arrived as event `seq`, offering
    /// `options`.
    pub(crate) fn requested(
        &mut self,
        request_id: &str,
        tool: &CanUseTool,
        seq: u64,
        options: Vec<ApprovalOption>,
    ) -> Approval {
        let approval = Approval {
            request_id: request_id.to_string(),
            tool_name: tool.tool_name.clone(),
            tool_use_id: tool.tool_use_id.clone(),
            input: tool.input.clone(),
            state: ApprovalState::Pending,
            decided_by: None,
            decided_by_name: None,
            reason: None,
            options,
            chosen: None,
            confirmed: false,
            seq,
        };
        if self
            .entries
            .insert(
                request_id.to_string(),
                Entry {
                    approval: approval.clone(),
                    confirmed: false,
                },
            )
            .is_none()
        {
            self.order.push_back(request_id.to_string());
        }
        self.prune();
        approval
    }

    /// The events are replayed without the record of who decided
    /// (`decisions.rs`; a session recorded by an earlier version): an
    /// outcome the program reports may have been a client's, so it is not
    /// put down to the terminal but left without a decider.
    pub(crate) fn deciders_unknown(&mut self) {
        self.deciders_unknown = true;
    }

    /// Who decided an outcome the program reported without a client's
    /// decision before it: the terminal, unless that cannot be told.
    fn reporter(&self) -> Option<Decider> {
        (!self.deciders_unknown).then_some(Decider::Terminal)
    }

    /// Replaying after a restart: the outcome written down when request
    /// `decision.request_id` was live (a client's decision), applied as it
    /// was then. Returns the approval if it changed.
    pub(crate) fn restore(&mut self, decision: Decision) -> Option<Approval> {
        let entry = self.entries.get_mut(&decision.request_id)?;
        let decided = matches!(
            decision.state,
            ApprovalState::Allowed | ApprovalState::Denied
        );
        if entry.approval.state != ApprovalState::Pending || !decided {
            return None;
        }
        let a = &mut entry.approval;
        a.state = decision.state;
        a.decided_by = Some(decision.decider.unwrap_or(Decider::Client));
        a.decided_by_name = decision.by;
        a.reason = decision.reason;
        a.chosen = decision.chosen;
        Some(a.clone())
    }

    /// Someone inside duet decided (`by`). Returns the updated approval
    /// and the option chosen.
    pub(crate) fn decide(
        &mut self,
        request_id: &str,
        choice: &Choice,
        by: &DecidedBy,
    ) -> Result<(Approval, ApprovalOption), DecideError> {
        let entry = self
            .entries
            .get_mut(request_id)
            .ok_or_else(|| DecideError::Unknown(request_id.to_string()))?;
        if entry.approval.state != ApprovalState::Pending {
            return Err(DecideError::AlreadyResolved(
                request_id.to_string(),
                state_name(entry.approval.state),
            ));
        }
        let option = match choice {
            Choice::Option(id) => entry.approval.options.iter().find(|o| &o.id == id),
            Choice::Allowed(allowed) => entry
                .approval
                .options
                .iter()
                .find(|o| o.kind.allows() == *allowed),
        }
        .cloned()
        .ok_or_else(|| {
            let wanted = match choice {
                Choice::Option(id) => id.clone(),
                Choice::Allowed(true) => "(any allowing option)".into(),
                Choice::Allowed(false) => "(any rejecting option)".into(),
            };
            DecideError::UnknownOption(request_id.to_string(), wanted)
        })?;
        entry.approval.state = if option.kind.allows() {
            ApprovalState::Allowed
        } else {
            ApprovalState::Denied
        };
        entry.approval.decided_by = Some(by.decider);
        entry.approval.decided_by_name = by.name.clone();
        entry.approval.reason = by.reason.clone().filter(|_| !option.kind.allows());
        entry.approval.chosen = Some(option.id.clone());
        Ok((entry.approval.clone(), option))
    }

    /// Undo a client decision that could not be delivered to the program.
    pub(crate) fn undo_decision(&mut self, request_id: &str) {
        if let Some(e) = self.entries.get_mut(request_id) {
            if !e.confirmed {
                e.approval.state = ApprovalState::Pending;
                e.approval.decided_by = None;
                e.approval.decided_by_name = None;
                e.approval.reason = None;
                e.approval.chosen = None;
            }
        }
    }

    /// The program reported an outcome. Returns the approval if its visible
    /// state changed (a client's decision becoming confirmed counts).
    pub(crate) fn responded(&mut self, response: &ControlResponseBody) -> Option<Approval> {
        let reporter = self.reporter();
        let entry = self.entries.get_mut(response.request_id())?;
        if entry.confirmed {
            // E.g. the error the program answers to a late duplicate.
            return None;
        }
        match response {
            ControlResponseBody::Success { .. } => {
                entry.confirmed = true;
                entry.approval.confirmed = true;
                let allowed = response.allowed().unwrap_or(false);
                let state = if allowed {
                    ApprovalState::Allowed
                } else {
                    ApprovalState::Denied
                };
                let duet_agrees = entry.approval.decided_by.is_some_and(Decider::by_duet)
                    && entry.approval.state == state;
                if !duet_agrees {
                    entry.approval.state = state;
                    entry.approval.decided_by = reporter;
                    entry.approval.decided_by_name = None;
                    entry.approval.reason = None;
                    entry.approval.chosen = None;
                }
                // Always news: at least "sent" became confirmed.
                Some(entry.approval.clone())
            }
            ControlResponseBody::Error { .. } => {
                // The program did not take an answer for this request: if we
                // thought a client decided it, that decision did not happen.
                entry.confirmed = true;
                entry.approval.confirmed = true;
                entry.approval.state = ApprovalState::Abandoned;
                entry.approval.decided_by = None;
                entry.approval.decided_by_name = None;
                entry.approval.reason = None;
                entry.approval.chosen = None;
                Some(entry.approval.clone())
            }
        }
    }

    /// A tool result for `tool_use_id` arrived. If its approval is still
    /// pending the program went ahead without telling us how it was decided.
    pub(crate) fn tool_finished(&mut self, tool_use_id: &str, is_error: bool) -> Option<Approval> {
        let reporter = self.reporter();
        let entry = self.entries.values_mut().find(|e| {
            e.approval.tool_use_id.as_deref() == Some(tool_use_id)
                && e.approval.state == ApprovalState::Pending
        })?;
        entry.confirmed = true;
        entry.approval.confirmed = true;
        entry.approval.state = if is_error {
            ApprovalState::Abandoned
        } else {
            ApprovalState::Allowed
        };
        entry.approval.decided_by = if is_error { None } else { reporter };
        Some(entry.approval.clone())
    }

    /// The turn is over (new prompt, result, session end, exit): whatever is
    /// still pending will never be answered. Returns the changed approvals.
    pub(crate) fn abandon_pending(&mut self) -> Vec<Approval> {
        let mut changed = Vec::new();
        for id in &self.order {
            if let Some(e) = self.entries.get_mut(id) {
                if e.approval.state == ApprovalState::Pending {
                    e.approval.state = ApprovalState::Abandoned;
                    e.approval.confirmed = true;
                    changed.push(e.approval.clone());
                } else if !e.approval.confirmed {
                    // A decision the agent never confirmed, and now never
                    // will: it went on (or away) with it.
                    e.confirmed = true;
                    e.approval.confirmed = true;
                    changed.push(e.approval.clone());
                }
            }
        }
        changed
    }

    /// The agent took a decision it reports nothing for (Qwen Code says
    /// nothing about a denial): it counts as confirmed once written.
    pub(crate) fn confirm(&mut self, request_id: &str) -> Option<Approval> {
        let entry = self.entries.get_mut(request_id)?;
        if entry.confirmed || entry.approval.state == ApprovalState::Pending {
            return None;
        }
        entry.confirmed = true;
        entry.approval.confirmed = true;
        Some(entry.approval.clone())
    }

    /// The agent's dialog offers other choices than its request carried
    /// (read from its screen once drawn): a pending approval offers those
    /// from now on. Returns it when its options changed.
    pub(crate) fn reoffer(
        &mut self,
        request_id: &str,
        options: Vec<ApprovalOption>,
    ) -> Option<Approval> {
        let entry = self.entries.get_mut(request_id)?;
        if entry.approval.state != ApprovalState::Pending
            || options.is_empty()
            || entry.approval.options == options
        {
            return None;
        }
        entry.approval.options = options;
        Some(entry.approval.clone())
    }

    /// Whether the agent has yet to report the outcome of `request_id`
    /// (pending, or decided in duet and not yet confirmed).
    pub(crate) fn awaits_agent(&self, request_id: &str) -> bool {
        self.entries.get(request_id).is_some_and(|e| !e.confirmed)
    }

    /// All kept approvals, oldest first.
    pub(crate) fn list(&self) -> Vec<Approval> {
        self.order
            .iter()
            .filter_map(|id| self.entries.get(id).map(|e| e.approval.clone()))
            .collect()
    }

    /// How many are pending.
    pub(crate) fn pending(&self) -> usize {
        self.entries
            .values()
            .filter(|e| e.approval.state == ApprovalState::Pending)
            .count()
    }

    fn prune(&mut self) {
        let resolved = self.order.len() - self.pending();
        let mut excess = resolved.saturating_sub(KEEP_RESOLVED);
        self.order.retain(|id| {
            if excess == 0 {
                return true;
            }
            let pending = self
                .entries
                .get(id)
                .is_some_and(|e| e.approval.state == ApprovalState::Pending);
            if !pending {
                self.entries.remove(id);
                excess -= 1;
                return false;
            }
            true
        });
    }
}

#[cfg(test)]
mod tests;
