//! One `[[policy]]` as written in the config file, and as checked and
//! compiled: every mistake is refused at start with the rule's name, its
//! line and the reason, so a rule that is trusted is one that was read as
//! meant.

use anyhow::{bail, Result};
use regex::{Regex, RegexBuilder};
use serde::Deserialize;

use super::facts::Facts;
use super::glob::Glob;

/// Longest compiled regex (bytes of the automaton): a rule is a line of
/// text, not a program.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Longest rule name.
const MAX_NAME: usize = 64;

/// A string or a list of strings (globs).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One glob, e.g. `profile = "qwen*"`.
    One(String),
    /// Several; any of them matches, e.g. `tool = ["Bash", "run_shell_command"]`.
    Many(Vec<String>),
}

impl OneOrMany {
    fn globs(&self) -> Vec<Glob> {
        match self {
            OneOrMany::One(s) => vec![Glob::new(s)],
            OneOrMany::Many(v) => v.iter().map(|s| Glob::new(s)).collect(),
        }
    }
}

/// Where the paths a tool touches lie, relative to the session's work dir.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Where {
    /// Every path it names is inside the work dir.
    Inside,
    /// At least one is outside.
    Outside,
}

/// What a matching rule does.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The tool runs; nobody is asked.
    Allow,
    /// The tool does not run; the agent is told `message`.
    Deny,
    /// A person decides, as without policies (stops the search: a
    /// narrower `ask` before a broad `allow` carves out an exception).
    Ask,
}

impl Decision {
    /// The config's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
            Decision::Ask => "ask",
        }
    }
}

/// One `[[policy]]`. Every matcher given must match; at least one must be
/// given (`tool = "*"` matches every call).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyRule {
    /// Shown on the approval card ("allowed by policy NAME") and in the
    /// audit trail.
    pub name: String,
    /// The tool's name, as the agent calls it (`run_shell_command`,
    /// `Bash`, `edit`, ...): a glob or a list of globs.
    #[serde(default)]
    pub tool: Option<OneOrMany>,
    /// The command the tool runs: a glob or a list of globs, matching the
    /// whole command line.
    #[serde(default)]
    pub command: Option<OneOrMany>,
    /// The command, by a regular expression (searched: anchor it with
    /// `^…$` to match the whole line).
    #[serde(default)]
    pub command_regex: Option<String>,
    /// Where the paths the tool names lie: `inside` or `outside` the
    /// session's work dir. A call that names no path matches neither.
    #[serde(default)]
    pub paths: Option<Where>,
    /// The sessions' profile: a glob or a list (without it: every profile).
    #[serde(default)]
    pub profile: Option<OneOrMany>,
    /// What the rule decides when every matcher given matches: `allow`,
    /// `deny` or `ask`.
    pub decision: Decision,
    /// What the agent is told of a denial.
    #[serde(default)]
    pub message: Option<String>,
    /// Let an `allow` on a command match a compound one too (`;`, `&&`,
    /// `|`, redirections, substitutions). Off: `git status*` must not allow
    /// `git status; rm -rf ~`.
    #[serde(default)]
    pub compound: bool,
}

/// A checked rule.
#[derive(Debug)]
pub(crate) struct Rule {
    pub(crate) name: String,
    tools: Option<Vec<Glob>>,
    commands: Option<Vec<Glob>>,
    regex: Option<Regex>,
    paths: Option<Where>,
    profiles: Option<Vec<Glob>>,
    pub(crate) decision: Decision,
    pub(crate) message: Option<String>,
    compound: bool,
}

/// Whether a command line does more than one thing, or more than run: a
/// list, a pipe, a redirection, a substitution. Quoting is not parsed, so a
/// quoted `|` counts too (it is then asked about, the safe way to be wrong).
pub(crate) fn compound(command: &str) -> bool {
    command.contains(['\n', ';', '&', '|', '`', '>', '<']) || command.contains("$(")
}

impl Rule {
    /// Checks `raw` (`profiles`: the names that exist); the error says why
    /// (the caller adds where).
    pub(crate) fn compile(raw: &PolicyRule, profiles: &[&str]) -> Result<Self> {
        let name = raw.name.trim();
        if name.is_empty() || name.chars().count() > MAX_NAME || name.chars().any(char::is_control)
        {
            bail!("a policy needs a name of 1 to {MAX_NAME} printable characters");
        }
        let list = |field: &str, v: &Option<OneOrMany>| -> Result<Option<Vec<Glob>>> {
            match v {
                Some(OneOrMany::Many(items)) if items.is_empty() => {
                    bail!("`{field}` is an empty list: it would match nothing")
                }
                Some(v) => Ok(Some(v.globs())),
                None => Ok(None),
            }
        };
        let tools = list("tool", &raw.tool)?;
        let commands = list("command", &raw.command)?;
        let profiles_globs = list("profile", &raw.profile)?;
        if raw.command.is_some() && raw.command_regex.is_some() {
            bail!("give `command` or `command_regex`, not both");
        }
        let regex = raw
            .command_regex
            .as_deref()
            .map(|r| {
                RegexBuilder::new(r)
                    .size_limit(REGEX_SIZE_LIMIT)
                    .build()
                    .map_err(|e| {
                        anyhow::anyhow!("`command_regex` is not a regular expression: {e}")
                    })
            })
            .transpose()?;
        if tools.is_none()
            && commands.is_none()
            && regex.is_none()
            && raw.paths.is_none()
            && profiles_globs.is_none()
        {
            bail!("a policy must match on at least one of tool, command, command_regex, paths or profile (`tool = \"*\"` for every call)");
        }
        for g in profiles_globs.iter().flatten() {
            if g.is_literal() && !profiles.iter().any(|p| g.matches(p)) {
                bail!(
                    "`profile` names a profile that does not exist (profiles: {})",
                    profiles.join(", ")
                );
            }
        }
        match (raw.decision, &raw.message) {
            (Decision::Deny, Some(m)) if m.trim().is_empty() => {
                bail!("`message` is empty: say what the agent should know")
            }
            (Decision::Allow | Decision::Ask, Some(_)) => {
                bail!("`message` is what the agent is told of a denial: only for `decision = \"deny\"`")
            }
            _ => {}
        }
        if raw.compound && raw.decision != Decision::Allow {
            bail!("`compound` only matters to `decision = \"allow\"`");
        }
        Ok(Self {
            name: name.to_string(),
            tools,
            commands,
            regex,
            paths: raw.paths,
            profiles: profiles_globs,
            decision: raw.decision,
            message: raw.message.clone(),
            compound: raw.compound,
        })
    }

    /// Whether the rule may apply to sessions of `profile`.
    pub(crate) fn applies_to(&self, profile: &str) -> bool {
        self.profiles
            .as_ref()
            .is_none_or(|globs| globs.iter().any(|g| g.matches(profile)))
    }

    /// Whether the rule matches a call (of a session its profile matches).
    pub(crate) fn matches(&self, f: &Facts) -> bool {
        let any = |globs: &Option<Vec<Glob>>, text: &str| {
            globs
                .as_ref()
                .is_none_or(|gs| gs.iter().any(|g| g.matches(text)))
        };
        if !any(&self.tools, &f.tool) {
            return false;
        }
        if self.commands.is_some() || self.regex.is_some() {
            let Some(cmd) = f.command.as_deref() else {
                return false;
            };
            if !any(&self.commands, cmd) || self.regex.as_ref().is_some_and(|r| !r.is_match(cmd)) {
                return false;
            }
            if self.decision == Decision::Allow && !self.compound && compound(cmd) {
                return false;
            }
        }
        match self.paths {
            None => true,
            Some(Where::Inside) => f.inside == Some(true),
            Some(Where::Outside) => f.inside == Some(false),
        }
    }
}
