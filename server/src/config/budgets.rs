//! `[[budget]]` in the config file: limits on every session of the
//! profiles it names (the first entry that names a profile is its
//! budget). A session over its budget has its next prompt held until an
//! owner raises the limit (`PUT /api/sessions/{id}/budget`); see
//! `session/channel/budget.rs`.
//!
//! ```toml
//! [[budget]]
//! profile = "qwen"        # a glob or a list; without it, every profile
//! turns = 50              # turns begun
//! tokens = 2_000_000      # tokens in and out
//! cost = 5.0              # in the agent's currency, where it reports one
//! wall = "2h"             # the agent's working time
//! interrupt = true        # also stop the running turn when one is passed
//! ```

use anyhow::{bail, Context, Result};
use duet_protocol::usage::Budget;
use serde::Deserialize;

use crate::policy::{line_of, Glob, OneOrMany};

/// One `[[budget]]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetRule {
    /// The profiles it covers: a glob or a list of them (`"qwen"`,
    /// `["claude*", "demo"]`); absent, every profile.
    #[serde(default)]
    pub profile: Option<OneOrMany>,
    /// Turns a session may begin.
    #[serde(default)]
    pub turns: Option<u32>,
    /// Tokens in and out a session may spend, as the agent reports them.
    #[serde(default)]
    pub tokens: Option<u64>,
    /// Cost a session may run up, in the agent's currency (USD for Claude
    /// Code); agents that report no cost are not held by it.
    #[serde(default)]
    pub cost: Option<f64>,
    /// A duration: `90s`, `30m`, `2h`.
    #[serde(default)]
    pub wall: Option<String>,
    /// Also stop the running turn once a limit is passed (else it finishes
    /// and the next prompt waits).
    #[serde(default)]
    pub interrupt: bool,
}

impl BudgetRule {
    /// The globs of `profile` (none: every profile).
    fn globs(&self) -> Option<Vec<Glob>> {
        let written = match &self.profile {
            None => return None,
            Some(OneOrMany::One(g)) => std::slice::from_ref(g),
            Some(OneOrMany::Many(v)) => v.as_slice(),
        };
        Some(written.iter().map(|g| Glob::new(g)).collect())
    }

    /// Whether this entry is for sessions of `profile`.
    fn names(&self, profile: &str) -> bool {
        self.globs()
            .is_none_or(|globs| globs.iter().any(|g| g.matches(profile)))
    }

    /// The limits, checked; `profiles`: the names that exist (a plain
    /// name that is none of them is a typo that would leave its sessions
    /// without the budget meant for them).
    fn budget(&self, profiles: &[&str]) -> Result<Budget> {
        for g in self.globs().iter().flatten() {
            if g.is_literal() && !profiles.iter().any(|p| g.matches(p)) {
                bail!(
                    "`profile` names a profile that does not exist (profiles: {})",
                    profiles.join(", ")
                );
            }
        }
        let wall_secs = self
            .wall
            .as_deref()
            .map(|w| crate::clock::parse_duration(w).map_err(anyhow::Error::msg))
            .transpose()
            .context("`wall`")?
            .map(|d| d.as_secs());
        let budget = Budget {
            turns: self.turns,
            tokens: self.tokens,
            cost: self.cost,
            wall_secs,
            interrupt: self.interrupt,
        };
        if budget.is_empty() {
            bail!("a budget needs at least one of turns, tokens, cost or wall");
        }
        if budget.turns == Some(0)
            || budget.tokens == Some(0)
            || budget.wall_secs == Some(0)
            || budget.cost.is_some_and(|c| !(c > 0.0 && c.is_finite()))
        {
            bail!("a budget's limits must be above zero");
        }
        Ok(budget)
    }
}

/// The budget of `profile`'s sessions: the first entry that names it.
/// Every entry is checked, whichever profile it names, against the
/// `profiles` that exist; an error names the entry's line in `source`
/// (the config's text, when known).
pub(crate) fn budget_for(
    rules: &[toml::Spanned<BudgetRule>],
    source: Option<&str>,
    profile: &str,
    profiles: &[&str],
) -> Result<Option<Budget>> {
    let mut found = None;
    for (i, spanned) in rules.iter().enumerate() {
        let rule = spanned.get_ref();
        let at = match source {
            Some(src) => format!(" (line {})", line_of(src, spanned.span().start)),
            None => String::new(),
        };
        let budget = rule
            .budget(profiles)
            .with_context(|| format!("[[budget]] number {}{at}", i + 1))?;
        if found.is_none() && rule.names(profile) {
            found = Some(budget);
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_entry_that_names_a_profile_is_its_budget() {
        #[derive(Deserialize)]
        struct F {
            budget: Vec<toml::Spanned<BudgetRule>>,
        }
        let f: F = toml::from_str(
            "[[budget]]\nprofile = \"q*\"\nturns = 3\nwall = \"2m\"\n[[budget]]\ncost = 1.5\ninterrupt = true\n",
        )
        .unwrap();
        let profiles = ["qwen", "demo"];
        let q = budget_for(&f.budget, None, "qwen", &profiles)
            .unwrap()
            .unwrap();
        assert_eq!((q.turns, q.wall_secs, q.cost), (Some(3), Some(120), None));
        let other = budget_for(&f.budget, None, "demo", &profiles)
            .unwrap()
            .unwrap();
        assert_eq!((other.cost, other.interrupt), (Some(1.5), true));
        for bad in [
            "[[budget]]\nprofile = \"x\"\n",
            "[[budget]]\nturns = 0\n",
            "[[budget]]\ncost = -1.0\n",
            "[[budget]]\nwall = \"soon\"\n",
            // A typo in a profile's name, even for another profile's session.
            "[[budget]]\nprofile = \"qwne\"\nturns = 3\n",
            "[[budget]]\nprofile = [\"x\", \"qwne\"]\nturns = 3\n",
        ] {
            let f: F = toml::from_str(bad).unwrap();
            let err = budget_for(&f.budget, None, "x", &["x", "qwen"]).unwrap_err();
            assert!(
                format!("{err:#}").starts_with("[[budget]] number 1: "),
                "{bad}: {err:#}"
            );
        }
        // With the config's text, the entry's line.
        let text = "[[budget]]\nturns = 3\n\n[[budget]]\nprofile = \"qwne\"\nturns = 3\n";
        let f: F = toml::from_str(text).unwrap();
        let err = budget_for(&f.budget, Some(text), "x", &["x", "qwen"]).unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            "[[budget]] number 2 (line 4): `profile` names a profile that does not exist (profiles: x, qwen)"
        );
        // A glob may match no profile (yet).
        let f: F = toml::from_str("[[budget]]\nprofile = \"claude*\"\nturns = 3\n").unwrap();
        assert_eq!(budget_for(&f.budget, None, "x", &["x"]).unwrap(), None);
    }
}
