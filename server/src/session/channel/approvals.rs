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

/// Resolved approvals kept for clients that attach later.
const KEEP_RESOLVED: usize = 100;

/// Why a client's decision was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DecideError {
    #[error("no approval request {0:?} was seen in this session")]
    Unknown(String),
    #[error("approval request {0:?} was already decided ({1})")]
    AlreadyResolved(String, &'static str),
    #[error("approval request {0:?} has no option {1:?}")]
    UnknownOption(String, String),
}

/// Who decides inside duet, as the approval records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DecidedBy {
    /// A client, a notification's button or a policy (never the terminal:
    /// the agent reports those).
    pub decider: Decider,
    /// The credential (a client, a notification) or the rule (a policy).
    pub name: Option<String>,
    /// What the agent is told of a denial, when duet says why.
    pub reason: Option<String>,
}

impl DecidedBy {
    /// A client holding credential `name`.
    pub(crate) fn client(name: Option<&str>) -> Self {
        Self {
            decider: Decider::Client,
            name: name.map(str::to_string),
            reason: None,
        }
    }
}

/// What a client chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Choice {
    /// The first option that allows (true) or rejects (false).
    Allowed(bool),
    /// One of the approval's options, by id.
    Option(String),
}

impl Choice {
    /// The choice of a request's `option` and `allowed` fields (REST body,
    /// WebSocket `approve`): exactly one of them. Both is refused rather
    /// than one of them picked: `{"option": "allow", "allowed": false}`
    /// contradicts itself, and which option ids allow is the agent's to say.
    pub(crate) fn from_fields(
        option: Option<String>,
        allowed: Option<bool>,
    ) -> Result<Self, &'static str> {
        match (option, allowed) {
            (Some(option), None) => Ok(Choice::Option(option)),
            (None, Some(allowed)) => Ok(Choice::Allowed(allowed)),
            (None, None) => Err("send \"option\" (one of the approval's options) or \"allowed\""),
            (Some(_), Some(_)) => Err("send \"option\" or \"allowed\", not both"),
        }
    }
}

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
mod tests {
    use super::*;
    use serde_json::json;

    fn tool() -> CanUseTool {
        serde_json::from_value(json!({"subtype":"can_use_tool","tool_name":"run_shell_command","tool_use_id":"t1","input":{"command":"ls"}})).unwrap()
    }

    fn success(id: &str, allowed: bool) -> ControlResponseBody {
        serde_json::from_value(
            json!({"subtype":"success","request_id":id,"response":{"allowed":allowed}}),
        )
        .unwrap()
    }

    #[test]
    fn first_answer_wins_and_the_program_confirms() {
        let mut a = Approvals::default();
        a.requested("r1", &tool(), 5, super::super::allow_deny());
        assert_eq!(a.pending(), 1);
        let (d, option) = a
            .decide("r1", &Choice::Allowed(true), &DecidedBy::client(Some("ci")))
            .unwrap();
        assert_eq!(d.decided_by_name.as_deref(), Some("ci"));
        assert_eq!(d.decided_by, Some(Decider::Client));
        assert_eq!(option.id, "allow");
        assert!(!d.confirmed, "sent, waiting for the agent");
        assert!(matches!(
            a.decide("r1", &Choice::Allowed(false), &DecidedBy::client(None)),
            Err(DecideError::AlreadyResolved(_, "allowed"))
        ));
        assert!(matches!(
            a.decide("nope", &Choice::Allowed(true), &DecidedBy::client(None)),
            Err(DecideError::Unknown(_))
        ));
        // Confirmation that agrees keeps the decision and marks it confirmed.
        let confirmed = a.responded(&success("r1", true)).unwrap();
        assert!(confirmed.confirmed);
        assert_eq!(confirmed.state, ApprovalState::Allowed);
        assert_eq!(confirmed.decided_by, Some(Decider::Client));
        assert_eq!(a.responded(&success("r1", true)), None);
    }

    #[test]
    fn the_terminal_answering_first_overrides_a_client() {
        let mut a = Approvals::default();
        a.requested("r1", &tool(), 5, super::super::allow_deny());
        a.decide(
            "r1",
            &Choice::Option("allow".into()),
            &DecidedBy::client(None),
        )
        .unwrap();
        assert!(matches!(
            a.decide(
                "r1",
                &Choice::Option("nope".into()),
                &DecidedBy::client(None)
            ),
            Err(DecideError::AlreadyResolved(..))
        ));
        let changed = a.responded(&success("r1", false)).unwrap();
        assert_eq!(changed.state, ApprovalState::Denied);
        assert_eq!(changed.decided_by, Some(Decider::Terminal));
    }

    #[test]
    fn unconfirmed_decisions_are_settled_at_turn_end() {
        let mut a = Approvals::default();
        a.requested("r1", &tool(), 5, super::super::allow_deny());
        a.decide("r1", &Choice::Allowed(false), &DecidedBy::client(None))
            .unwrap();
        let changed = a.abandon_pending();
        assert_eq!(changed.len(), 1);
        assert!(changed[0].confirmed);
        assert_eq!(changed[0].state, ApprovalState::Denied);
        assert!(a.abandon_pending().is_empty());
    }

    #[test]
    fn pending_requests_are_abandoned_at_turn_end() {
        let mut a = Approvals::default();
        a.requested("r1", &tool(), 5, super::super::allow_deny());
        assert!(matches!(
            a.decide(
                "r1",
                &Choice::Option("maybe".into()),
                &DecidedBy::client(None)
            ),
            Err(DecideError::UnknownOption(..))
        ));
        let changed = a.abandon_pending();
        assert_eq!(changed.len(), 1);
        assert_eq!(a.pending(), 0);
        assert!(matches!(
            a.decide("r1", &Choice::Allowed(true), &DecidedBy::client(None)),
            Err(DecideError::AlreadyResolved(_, "abandoned"))
        ));
    }

    #[test]
    fn a_replay_restores_who_decided_and_the_program_still_has_the_last_word() {
        let mut a = Approvals::default();
        a.requested("r1", &tool(), 5, super::super::allow_deny());
        a.requested("r2", &tool(), 6, super::super::allow_deny());
        let decision = |id: &str, seq, state| Decision {
            request_id: id.into(),
            seq,
            state,
            by: Some("ci".into()),
            chosen: Some("allow".into()),
            decider: None,
            reason: None,
        };
        let r1 = a
            .restore(decision("r1", 5, ApprovalState::Allowed))
            .unwrap();
        assert_eq!(
            (r1.state, r1.decided_by, r1.decided_by_name.as_deref()),
            (ApprovalState::Allowed, Some(Decider::Client), Some("ci"))
        );
        // The program confirms it: still the client's.
        let r1 = a.responded(&success("r1", true)).unwrap();
        assert_eq!(r1.decided_by, Some(Decider::Client));
        // The terminal answered first: the program's word stands.
        a.restore(decision("r2", 6, ApprovalState::Allowed));
        let r2 = a.responded(&success("r2", false)).unwrap();
        assert_eq!(
            (r2.state, r2.decided_by),
            (ApprovalState::Denied, Some(Decider::Terminal))
        );
        // Only a pending request takes a decision, and only a decision.
        assert_eq!(a.restore(decision("r2", 6, ApprovalState::Allowed)), None);
        a.requested("r3", &tool(), 7, super::super::allow_deny());
        assert_eq!(a.restore(decision("r3", 7, ApprovalState::Pending)), None);
        assert_eq!(a.pending(), 1);
    }

    #[test]
    fn without_the_record_the_decider_is_unknown_not_the_terminal() {
        let mut a = Approvals::default();
        a.deciders_unknown();
        a.requested("r1", &tool(), 5, super::super::allow_deny());
        let r1 = a.responded(&success("r1", true)).unwrap();
        assert_eq!((r1.state, r1.decided_by), (ApprovalState::Allowed, None));
        a.requested("r2", &tool(), 6, super::super::allow_deny());
        let r2 = a.tool_finished("t1", false).unwrap();
        assert_eq!((r2.state, r2.decided_by), (ApprovalState::Allowed, None));
    }

    #[test]
    fn resolved_history_is_bounded() {
        let mut a = Approvals::default();
        for i in 0..(KEEP_RESOLVED + 50) {
            let id = format!("r{i}");
            a.requested(&id, &tool(), i as u64, super::super::allow_deny());
            a.decide(&id, &Choice::Allowed(true), &DecidedBy::client(None))
                .unwrap();
        }
        a.requested("last", &tool(), 999, super::super::allow_deny());
        assert!(a.list().len() <= KEEP_RESOLVED + 1);
        assert_eq!(a.pending(), 1);
    }
}
