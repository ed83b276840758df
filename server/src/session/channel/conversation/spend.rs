//! What the agent spends, as the conversation follows it: turns begin and
//! end with the agent's busy periods, its usage reports add up
//! (`usage.rs`), the metrics count them (by profile, tool and outcome), and
//! the budget (`budget.rs`) holds prompts once a limit is reached, says so
//! to clients (a `budget_exhausted` warning, and `budget_raised` when an
//! owner raises it), and stops the running turn when it is set to.

use duet_protocol::usage::{Budget, BudgetStatus, SessionUsage, UsageTotals};

use super::{Conversation, State};
use crate::clock::now_ms;
use crate::session::channel::budget::{Change, Gate};
use crate::session::channel::usage::Spent;
use crate::session::WarningCode;
use crate::sync::lock;

impl Conversation {
    /// Starts with `limits` (the profile's `[[budget]]`).
    pub(crate) fn with_budget(self, limits: Option<Budget>) -> Self {
        lock(&self.state).budget = Gate::new(limits);
        self
    }

    /// What stops the running turn when a budget that interrupts is
    /// reached (the session's cancel).
    pub(crate) fn on_budget_interrupt(&self, interrupt: Box<dyn Fn() + Send + Sync>) {
        let _ = self.interrupter.set(interrupt);
    }

    /// The busy period changed from `was` (when the turn began, if one
    /// ran) to the state's.
    pub(super) fn turn_changed(&self, st: &mut State, was: Option<u64>) {
        match (was, st.busy_since) {
            (None, Some(began)) => st.usage.begin(began),
            (Some(_), None) => {
                if let Some(turn) = st.usage.end(now_ms()) {
                    let secs = turn.duration_ms.unwrap_or(0) as f64 / 1000.0;
                    self.observer.get().inspect(|o| o.turn_finished(secs));
                }
            }
            _ => {}
        }
    }

    /// The agent reported spending `spent`.
    pub(super) fn spent(&self, spent: &Spent) {
        self.observer
            .get()
            .inspect(|o| o.spent(&spent.tokens, spent.cost));
    }

    /// A tool call finished (`tool`: its name, when its call was seen).
    pub(super) fn tool_finished(&self, tool: Option<&str>, is_error: bool) {
        self.observer
            .get()
            .inspect(|o| o.tool_call(tool.unwrap_or("unknown"), is_error));
    }

    /// Looks at the budget again; tells clients when it closes or opens.
    pub(super) fn check_budget(&self, st: &mut State) {
        let used = st.usage.totals(now_ms());
        match st.budget.check(&used) {
            Some(Change::Closed(spent)) => {
                let stop = spent.mid_turn && st.budget.interrupts() && st.busy_since.is_some();
                self.warn_locked(
                    st,
                    WarningCode::BudgetExhausted,
                    format!(
                        "{}: prompts are held until an owner raises the budget{}",
                        spent.why,
                        if stop {
                            " (the running turn is stopped)"
                        } else {
                            ""
                        }
                    ),
                    None,
                );
                if stop {
                    if let Some(interrupt) = self.interrupter.get() {
                        interrupt();
                    }
                }
            }
            Some(Change::Opened) => self.warn_locked(
                st,
                WarningCode::BudgetRaised,
                "the budget was raised: held prompts go again".into(),
                None,
            ),
            None => {}
        }
    }

    /// What the agent spent so far (`None` before its first turn).
    pub(crate) fn usage_totals(&self) -> Option<UsageTotals> {
        let st = lock(&self.state);
        (!st.usage.is_empty()).then(|| st.usage.totals(now_ms()))
    }

    /// `GET /api/sessions/{id}/usage`.
    pub(crate) fn usage(&self) -> SessionUsage {
        let st = lock(&self.state);
        let mut report = st.usage.report(now_ms());
        report.budget = st.budget.status();
        report
    }

    /// The budget and whether it is spent.
    pub(crate) fn budget(&self) -> Option<BudgetStatus> {
        lock(&self.state).budget.status()
    }

    /// Replaces the budget's limits (an owner raised them); held prompts
    /// go if nothing is reached any more.
    pub(crate) fn set_budget(&self, limits: Budget) -> Option<BudgetStatus> {
        let mut st = lock(&self.state);
        st.budget.set(limits);
        self.pump(&mut st);
        st.budget.status()
    }
}
