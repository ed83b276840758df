//! What a session's agent spends and what policies decide, as the metrics
//! count them (tokens and cost by profile, tool calls by tool and outcome,
//! turn durations) and the audit trail records them (a policy's decision
//! with its rule, a budget changed by an owner).

use duet_protocol::rest::{Approval, Decider};
use duet_protocol::usage::{BudgetStatus, TokenCounts};
use serde_json::json;

use super::record::{self, Record};
use super::{outcome_name, Actor, SessionObserver};

impl SessionObserver {
    /// The agent reported spending `tokens` and `cost` (in its currency,
    /// USD for the agents that report one).
    pub(crate) fn spent(&self, tokens: &TokenCounts, cost: f64) {
        let t = tokens;
        for (direction, n) in [
            ("input", t.input),
            ("output", t.output),
            ("cache_read", t.cache_read),
            ("cache_write", t.cache_write),
        ] {
            if n > 0 {
                self.metrics.tokens(&self.profile, direction, n);
            }
        }
        if cost > 0.0 {
            self.metrics.cost(&self.profile, cost);
        }
    }

    /// A tool call finished.
    pub(crate) fn tool_call(&self, tool: &str, is_error: bool) {
        self.metrics
            .tool_call(tool, if is_error { "error" } else { "ok" });
    }

    /// A turn ended after `secs`.
    pub(crate) fn turn_finished(&self, secs: f64) {
        self.metrics.turn_seconds.observe(secs);
    }

    /// A `[[policy]]` rule decided `a` (its name in `decided_by_name`);
    /// called by `approvals_changed`, after the request's line.
    pub(super) fn policy_decided(&self, a: &Approval) {
        debug_assert_eq!(a.decided_by, Some(Decider::Policy));
        self.record(Record::Approval(record::Approval {
            request_id: &a.request_id,
            tool: Some(&a.tool_name),
            option: json!(a.chosen),
            outcome: outcome_name(a.state),
            decided_by: Some("policy"),
            policy: a.decided_by_name.as_deref(),
            message: a.reason.as_deref(),
            ..Default::default()
        }));
    }

    /// `who` set the session's budget to `status`.
    pub(crate) fn budget_set(&self, status: Option<&BudgetStatus>, who: &Actor) {
        self.record(Record::Budget {
            budget: status.map(|s| &s.limits),
            exhausted: status.and_then(|s| s.exhausted.as_deref()),
            who: who.json(),
        });
    }
}
