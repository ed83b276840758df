//! A session's budget: whether what its agent spent (`usage.rs`) leaves
//! room for another prompt. Limits come from the profile's `[[budget]]`
//! and are raised (or set) by an owner (`PUT /api/sessions/{id}/budget`).
//! Pure: the conversation asks after each change of the usage and each
//! second (working time grows by itself), holds prompts while a limit is
//! reached, and interrupts the running turn when the budget says so.

use duet_protocol::usage::{Budget, BudgetStatus, UsageTotals};

/// A limit that was reached.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spent {
    /// For people: what was spent.
    pub(crate) why: String,
    /// Whether going on with the running turn would spend more of it (a
    /// turns limit is reached by starting the last turn, which may finish).
    pub(crate) mid_turn: bool,
}

/// The first limit of `limits` that `used` reached.
pub(crate) fn spent(limits: &Budget, used: &UsageTotals) -> Option<Spent> {
    if let Some(max) = limits.turns {
        if used.turns >= max {
            return Some(Spent {
                why: format!(
                    "the budget of {max} turn{} is spent",
                    if max == 1 { "" } else { "s" }
                ),
                mid_turn: false,
            });
        }
    }
    if let Some(max) = limits.tokens {
        let n = used.tokens.billed();
        if n >= max {
            return Some(Spent {
                why: format!("{n} tokens used of a budget of {max}"),
                mid_turn: true,
            });
        }
    }
    if let (Some(max), Some(cost)) = (limits.cost, used.cost) {
        if cost >= max {
            let unit = used.currency.as_deref().unwrap_or("USD");
            return Some(Spent {
                why: format!("{cost:.4} {unit} spent of a budget of {max} {unit}"),
                mid_turn: true,
            });
        }
    }
    if let Some(max) = limits.wall_secs {
        let secs = used.busy_ms / 1000;
        if secs >= max {
            return Some(Spent {
                why: format!("the agent worked {secs} s of a budget of {max} s"),
                mid_turn: true,
            });
        }
    }
    None
}

/// A session's limits and whether they are reached.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    limits: Option<Budget>,
    spent: Option<Spent>,
}

/// What changed when the gate looked again.
#[derive(Debug, PartialEq)]
pub(crate) enum Change {
    /// A limit was reached just now.
    Closed(Spent),
    /// Nothing is held any more (a limit was raised).
    Opened,
}

impl Gate {
    /// A gate with `limits` (none: always open).
    pub(crate) fn new(limits: Option<Budget>) -> Self {
        Self {
            limits: limits.filter(|l| !l.is_empty()),
            spent: None,
        }
    }

    /// Replaces the limits (an owner raised them).
    pub(crate) fn set(&mut self, limits: Budget) {
        self.limits = (!limits.is_empty()).then_some(limits);
    }

    /// Whether prompts may go.
    pub(crate) fn open(&self) -> bool {
        self.spent.is_none()
    }

    /// Whether a reached limit should stop the running turn.
    pub(crate) fn interrupts(&self) -> bool {
        self.limits.as_ref().is_some_and(|l| l.interrupt)
    }

    /// Looks again at `used`; says what changed.
    pub(crate) fn check(&mut self, used: &UsageTotals) -> Option<Change> {
        let now = self.limits.as_ref().and_then(|l| spent(l, used));
        match (&self.spent, now) {
            (None, Some(s)) => {
                self.spent = Some(s.clone());
                Some(Change::Closed(s))
            }
            (Some(_), None) => {
                self.spent = None;
                Some(Change::Opened)
            }
            (Some(_), Some(s)) => {
                self.spent = Some(s);
                None
            }
            (None, None) => None,
        }
    }

    /// What clients see.
    pub(crate) fn status(&self) -> Option<BudgetStatus> {
        Some(BudgetStatus {
            limits: self.limits.clone()?,
            exhausted: self.spent.as_ref().map(|s| s.why.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use duet_protocol::usage::TokenCounts;

    #[test]
    fn each_limit_closes_the_gate_and_raising_it_opens_it() {
        let used = |turns, input, output, cost: Option<f64>, busy_ms| UsageTotals {
            turns,
            tokens: TokenCounts {
                input,
                output,
                ..Default::default()
            },
            cost,
            busy_ms,
            ..Default::default()
        };
        let table: &[(Budget, UsageTotals, Option<&str>)] = &[
            (
                Budget {
                    turns: Some(2),
                    ..Default::default()
                },
                used(1, 0, 0, None, 0),
                None,
            ),
            (
                Budget {
                    turns: Some(2),
                    ..Default::default()
                },
                used(2, 0, 0, None, 0),
                Some("the budget of 2 turns is spent"),
            ),
            (
                Budget {
                    tokens: Some(100),
                    ..Default::default()
                },
                used(1, 60, 39, None, 0),
                None,
            ),
            (
                Budget {
                    tokens: Some(100),
                    ..Default::default()
                },
                used(1, 60, 40, None, 0),
                Some("100 tokens used of a budget of 100"),
            ),
            (
                Budget {
                    cost: Some(0.5),
                    ..Default::default()
                },
                used(1, 0, 0, None, 0),
                None,
            ),
            (
                Budget {
                    cost: Some(0.5),
                    ..Default::default()
                },
                used(1, 0, 0, Some(0.51), 0),
                Some("0.5100 USD spent of a budget of 0.5 USD"),
            ),
            (
                Budget {
                    wall_secs: Some(60),
                    ..Default::default()
                },
                used(1, 0, 0, None, 59_999),
                None,
            ),
            (
                Budget {
                    wall_secs: Some(60),
                    ..Default::default()
                },
                used(1, 0, 0, None, 60_000),
                Some("the agent worked 60 s of a budget of 60 s"),
            ),
        ];
        for (limits, used, want) in table {
            assert_eq!(
                spent(limits, used).map(|s| s.why).as_deref(),
                *want,
                "{limits:?}"
            );
        }
        let mut gate = Gate::new(Some(Budget {
            turns: Some(1),
            interrupt: true,
            ..Default::default()
        }));
        assert!(gate.open());
        assert_eq!(gate.check(&used(0, 0, 0, None, 0)), None);
        let Some(Change::Closed(s)) = gate.check(&used(1, 0, 0, None, 0)) else {
            panic!()
        };
        assert!(!s.mid_turn, "the last turn may finish");
        assert!(!gate.open() && gate.interrupts());
        assert_eq!(gate.check(&used(1, 0, 0, None, 0)), None);
        assert_eq!(
            gate.status().unwrap().exhausted.as_deref(),
            Some("the budget of 1 turn is spent")
        );
        gate.set(Budget {
            turns: Some(3),
            ..Default::default()
        });
        assert_eq!(gate.check(&used(1, 0, 0, None, 0)), Some(Change::Opened));
        assert!(gate.open() && !gate.interrupts());
        assert_eq!(Gate::new(Some(Budget::default())).status(), None);
    }
}
