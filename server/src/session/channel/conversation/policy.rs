//! `[[policy]]` rules at the one place an approval is born: a new
//! `can_use_tool` request is put to the session's rules before anyone is
//! told of it, and a rule that allows or denies decides it through the same
//! path as a client's answer (the channel's `decide`, the decisions file,
//! the turn), so every channel kind that has approvals is covered. Clients
//! see the request and its outcome together; no notification goes out.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use duet_protocol::rest::{Approval, ApprovalState, Decider};

use super::{Conversation, State};
use crate::policy::{Decision, PolicySet};
use crate::session::channel::approvals::{Choice, DecidedBy};
use crate::session::WarningCode;

/// A session's rules and where its work dir is (resolved).
pub(crate) struct Rules {
    set: Arc<PolicySet>,
    work_dir: PathBuf,
}

impl Conversation {
    /// Puts new tool requests to `set`, their paths placed against
    /// `work_dir` (the program's working directory). Without rules,
    /// nothing is looked at.
    pub(crate) fn set_policy(&self, set: Arc<PolicySet>, work_dir: &Path) {
        if set.is_empty() {
            return;
        }
        let work_dir = std::fs::canonicalize(work_dir).unwrap_or_else(|_| work_dir.to_path_buf());
        let _ = self.policy.set(Rules { set, work_dir });
    }

    /// A request just became `approval` (pending): what the rules make of
    /// it, when one of them decides.
    pub(super) fn apply_policy(&self, st: &mut State, approval: &Approval) -> Option<Approval> {
        let rules = self.policy.get()?;
        if approval.state != ApprovalState::Pending {
            return None;
        }
        let verdict = rules
            .set
            .decide_call(&approval.tool_name, &approval.input, &rules.work_dir);
        let allowed = match verdict.decision {
            Decision::Allow => true,
            Decision::Deny => false,
            Decision::Ask => return None,
        };
        let by = DecidedBy {
            decider: Decider::Policy,
            reason: (!allowed).then(|| verdict.message_for_agent()),
            name: verdict.rule,
        };
        match self.decide_locked(st, &approval.request_id, &Choice::Allowed(allowed), &by) {
            // The audit line follows the request's (`observe`).
            Ok(decided) => Some(decided),
            Err(e) => {
                // E.g. the agent offered no option that allows: a person
                // decides, as without the rule.
                self.warn_locked(
                    st,
                    WarningCode::PolicyFailed,
                    format!(
                        "policy {:?} could not decide {}: {e}; it waits for a person",
                        by.name.as_deref().unwrap_or(""),
                        approval.tool_name
                    ),
                    Some(approval.seq),
                );
                None
            }
        }
    }
}
