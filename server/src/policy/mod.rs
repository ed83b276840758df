//! Approval policies: `[[policy]]` rules in the config file that decide a
//! tool call before anyone is asked. The first rule that matches decides
//! (`allow`, `deny` with a message for the agent, or `ask` a person); none
//! matching is `ask`. Rules are checked at start (`rule.rs`), matched on
//! the facts of a call (`facts.rs`: tool, command, where its paths lie;
//! globs in `glob.rs`) purely, and tried out from the command line with
//! `duet policy check` (`cli/policy_check.rs`). Where a decision is applied:
//! `session/channel/conversation/policy.rs`; docs/policies.md.

mod facts;
mod glob;
mod rule;
#[cfg(test)]
mod tests;

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use serde_json::Value;

pub(crate) use facts::{Facts, OnDisk};
/// For the config's other profile filters (`[[budget]]`).
pub(crate) use glob::Glob;
use rule::Rule;
pub use rule::{Decision, OneOrMany, PolicyRule, Where};

/// What the rules say about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// What happens to the call: it runs (`allow`), it does not (`deny`),
    /// or a person decides (`ask`, also when no rule matched).
    pub decision: Decision,
    /// The rule that decided; `None`: no rule matched (ask).
    pub rule: Option<String>,
    /// For a denial: what the agent is told.
    pub message: Option<String>,
}

impl Verdict {
    /// What a denial tells the agent: the rule's message, else a sentence
    /// naming the rule.
    pub fn message_for_agent(&self) -> String {
        self.message.clone().unwrap_or_else(|| {
            format!(
                "Denied by duet's policy {:?}.",
                self.rule.as_deref().unwrap_or("")
            )
        })
    }
}

/// The rules that apply to one profile's sessions, in the config's order.
#[derive(Debug, Default, Clone)]
pub struct PolicySet {
    rules: Vec<Arc<Rule>>,
}

/// Every `[[policy]]` of a config, checked.
#[derive(Debug, Default, Clone)]
pub(crate) struct Policies {
    rules: Vec<Arc<Rule>>,
}

/// The 1-based line of byte `offset` in `source`.
pub(crate) fn line_of(source: &str, offset: usize) -> usize {
    source
        .get(..offset)
        .unwrap_or(source)
        .bytes()
        .filter(|b| *b == b'\n')
        .count()
        + 1
}

impl Policies {
    /// Checks `rules` (as read from `source`, the config's text, when
    /// known: errors then name the line); `profiles` are the names a
    /// rule's `profile` may name.
    pub(crate) fn compile(
        rules: &[toml::Spanned<PolicyRule>],
        source: Option<&str>,
        profiles: &[&str],
    ) -> Result<Self> {
        let mut out: Vec<Arc<Rule>> = Vec::new();
        for spanned in rules {
            let raw = spanned.get_ref();
            let at = match source {
                Some(src) => format!(" (line {})", line_of(src, spanned.span().start)),
                None => String::new(),
            };
            let rule = Rule::compile(raw, profiles)
                .with_context(|| format!("policy {:?}{at}", raw.name))?;
            if out.iter().any(|r| r.name == rule.name) {
                anyhow::bail!(
                    "policy {:?}{at}: a policy of that name comes earlier; names must be unique",
                    raw.name
                );
            }
            out.push(Arc::new(rule));
        }
        Ok(Self { rules: out })
    }

    /// The rules for sessions of `profile`.
    pub(crate) fn for_profile(&self, profile: &str) -> PolicySet {
        PolicySet {
            rules: self
                .rules
                .iter()
                .filter(|r| r.applies_to(profile))
                .cloned()
                .collect(),
        }
    }
}

impl PolicySet {
    /// Whether there are no rules (then nothing is looked at).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// What the rules say about `facts`.
    pub(crate) fn decide(&self, facts: &Facts) -> Verdict {
        match self.rules.iter().find(|r| r.matches(facts)) {
            Some(r) => Verdict {
                decision: r.decision,
                rule: Some(r.name.clone()),
                message: r.message.clone(),
            },
            None => Verdict {
                decision: Decision::Ask,
                rule: None,
                message: None,
            },
        }
    }

    /// [`PolicySet::decide`] for a call of `tool` with `input` in a session
    /// whose work dir is `work_dir` (resolved), placing paths on disk.
    pub(crate) fn decide_call(&self, tool: &str, input: &Value, work_dir: &Path) -> Verdict {
        self.decide(&Facts::of(tool, input, work_dir, &OnDisk))
    }
}
