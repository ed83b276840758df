//! Agent profiles: what duet may run. Profiles come from a TOML file chosen by
//! the operator; a client only ever picks one by name (and a size), so no
//! command line is ever taken from a client. This header is the file's
//! reference; `deploy/duet.example.toml` shows each field in use.
//!
//! ```toml
//! default_profile = "qwen"      # default: the first profile
//!
//! [[profile]]
//! name = "qwen"
//! description = "Qwen Code with dual output"
//! command = "qwen"
//! args = ["--json-file", "{events_file}", "--input-file", "{input_file}"]
//! resume_args = ["--json-file", "{events_file}", "--input-file", "{input_file}",
//!                "--resume", "{agent_session_id}"]
//! env = { QWEN_CODE_NO_RELAUNCH = "1" }
//! cwd = "/srv/project"          # default: a fresh private directory per session
//! ready_text = "? for shortcuts"
//! channel = "dual_output"       # the default for a profile with {events_file}
//!
//! [[token]]                     # `duet token --name ci --role driver` prints one
//! name = "ci"
//! role = "driver"
//! sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
//! ```
//!
//! A `[[profile]]`'s fields (`name` and `command` required):
//! - `name`: what clients pick; letters, digits, `-`, `_` and `.`.
//! - `description`: shown to clients with the name.
//! - `command`: the program, a path or a name looked up on the PATH it will
//!   have (its `env`'s `PATH`, else duet's).
//! - `args`: its arguments.
//! - `resume_args`: the arguments, instead of `args`, that continue an
//!   ended session's conversation (`POST /api/sessions/{id}/resume`, in the
//!   ended session's work directory); without them a profile's sessions
//!   cannot be resumed.
//! - `env`: added to what the program inherits from duet (never duet's own
//!   `DUET_*` settings).
//! - `cwd`: its working directory, which must exist; default `{work_dir}`.
//! - `ready_text`: prompts wait until the screen shows this text.
//! - `channel`: how duet learns what the agent does and tells it what the
//!   user wants: `dual_output`, `claude`, `gemini`, `codex`, `stream_json`,
//!   `stream_json_per_turn`, `acp` or `none` (docs/agents.md). Default:
//!   `dual_output` for a profile that mentions `{events_file}`, else `none`.
//! - `extra_args`: `true` lets the owner append arguments when starting a
//!   session (`duet run PROFILE -- ARGS`); default `false`.
//!
//! A `[[token]]` gives a named credential a role (`owner`, `driver`,
//! `approver` or `viewer`); only the token's SHA-256 is written here.
//!
//! `[[policy]]` rules decide tool approvals before anyone is asked
//! (docs/policies.md, `policy/`); `[[budget]]` limits the sessions of a
//! profile (`budgets.rs`).
//!
//! Placeholders in `command`, `args`, `resume_args`, `env` values and `cwd`:
//! - `{events_file}`, `{input_file}`: the dual-output sidecar files. A
//!   profile that mentions `{events_file}` has the chat view; one that
//!   mentions `{input_file}` takes submits and approvals.
//! - `{session_dir}`: the session's private directory; `{work_dir}`: the
//!   default working directory inside it (the ended session's, on resume).
//! - `{session_id}`, `{cols}`, `{rows}`: the session's id and initial
//!   terminal size.
//! - `{duet}`: this duet executable.
//! - `{agent_session_id}`: the agent's own conversation id: a fresh one
//!   duet picks at start (Claude Code takes it with `--session-id`); in
//!   `resume_args`, the one the agent reported for the ended session (for
//!   `stream_json_per_turn`, the one it reported in the last prompt's
//!   process, which the next one continues).
//! - `{claude_settings}`: for `channel = "claude"`, which needs it: the
//!   `--settings` JSON that leads Claude Code's hooks to duet.
//! - `{codex_remote}`: for `channel = "codex"`, which needs it after
//!   `--remote`: the app server (`unix://…`) duet runs for the session.
//! - `{prompt}`: for `channel = "stream_json_per_turn"` only, the prompt of
//!   the turn, in `args` and `resume_args` (without it, the prompt goes to
//!   the program's stdin).

mod budgets;
mod builtin;
mod launch;
mod profile;
mod tokens;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use duet_protocol::rest::ProfileInfo;
use serde::Deserialize;

pub use budgets::BudgetRule;
pub use builtin::{
    CLAUDE_ARGS, CLAUDE_READY_TEXT, CLAUDE_RESUME_ARGS, CODEX_ARGS, CODEX_RESUME_ARGS, GEMINI_ARGS,
    GEMINI_ENV, GEMINI_READY_TEXT, GEMINI_RESUME_ARGS, QWEN_MODE_ARGS, QWEN_READY_TEXT,
};
pub(crate) use launch::Launch;
use profile::check_placeholders;
pub use profile::{ChannelKind, Profile};
pub(crate) use profile::{Placeholders, SpawnOptions};
pub use tokens::{mint_token, NamedToken, TokenEntry};

use crate::policy::{Policies, PolicyRule, PolicySet};
use duet_protocol::usage::Budget;
use std::sync::Arc;

/// The config file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Profile used when a client names none; the first profile otherwise.
    pub default_profile: Option<String>,
    /// The `[[profile]]`s, in the file's order: all the profiles the server
    /// offers (a config file replaces the built-in ones).
    #[serde(default, rename = "profile")]
    pub profiles: Vec<Profile>,
    /// Named tokens with roles (`duet token` mints one).
    #[serde(default, rename = "token")]
    pub tokens: Vec<TokenEntry>,
    /// Approval policies, in the order they are tried.
    #[serde(default, rename = "policy")]
    pub policies: Vec<toml::Spanned<PolicyRule>>,
    /// Budgets of profiles' sessions.
    #[serde(default, rename = "budget")]
    pub budgets: Vec<toml::Spanned<BudgetRule>>,
    /// The file's text, when read from one: errors then name lines.
    #[serde(skip)]
    pub source: Option<String>,
}

impl ConfigFile {
    /// Reads a TOML config file.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading config {}", path.display()))?;
        let mut file: Self =
            toml::from_str(&text).with_context(|| format!("parsing config {}", path.display()))?;
        file.source = Some(text);
        Ok(file)
    }
}

/// The profiles a server offers.
#[derive(Debug, Clone)]
pub struct Profiles {
    list: Vec<ResolvedProfile>,
    default: usize,
}

/// A profile ready to spawn.
#[derive(Debug, Clone)]
pub struct ResolvedProfile {
    /// What clients name it by (`POST /api/sessions` `profile`).
    pub name: String,
    /// The config's one line about it, shown in profile pickers.
    pub description: Option<String>,
    /// Its command line mentions `{events_file}`: the program writes
    /// sidecar events there.
    pub has_events: bool,
    /// Its command line mentions `{input_file}`: duet can send it prompts
    /// and approval answers there.
    pub has_input: bool,
    /// See [`Profile::ready_text`].
    pub ready_text: Option<String>,
    /// Its side channel: the one it names, else `dual_output` when it has
    /// an events file, else `none`.
    pub channel: ChannelKind,
    profile: Profile,
    duet_exe: PathBuf,
    /// What the owner chose for one session (none in the server's list).
    launch: Launch,
    /// The `[[policy]]` rules for this profile's sessions.
    policies: Arc<PolicySet>,
    /// The `[[budget]]` of this profile's sessions.
    budget: Option<Budget>,
}

impl Profiles {
    /// Validates `file`'s profiles. `duet_exe` fills `{duet}`.
    pub fn from_config(file: ConfigFile, duet_exe: PathBuf) -> Result<Self> {
        if file.profiles.is_empty() {
            bail!("the config file defines no [[profile]]");
        }
        let names: Vec<&str> = file.profiles.iter().map(|p| p.name.as_str()).collect();
        let policies = Policies::compile(&file.policies, file.source.as_deref(), &names)?;
        let budgets = names
            .iter()
            .map(|name| budgets::budget_for(&file.budgets, file.source.as_deref(), name, &names))
            .collect::<Result<Vec<_>>>()?;
        let mut list = Vec::new();
        for (profile, budget) in file.profiles.into_iter().zip(budgets) {
            if profile.name.is_empty()
                || !profile
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            {
                bail!(
                    "profile name {:?} must be non-empty and use only letters, digits, '-', '_' and '.'",
                    profile.name
                );
            }
            if list
                .iter()
                .any(|p: &ResolvedProfile| p.name == profile.name)
            {
                bail!("profile {:?} is defined twice", profile.name);
            }
            if profile.command.trim().is_empty() {
                bail!("profile {:?} has an empty command", profile.name);
            }
            for s in std::iter::once(&profile.command)
                .chain(&profile.args)
                .chain(profile.resume_args.iter().flatten())
                .chain(profile.env.values())
                .chain(profile.cwd.iter())
            {
                check_placeholders(&profile.name, s)?;
            }
            let mut resolved = ResolvedProfile {
                name: profile.name.clone(),
                description: profile.description.clone(),
                has_events: false,
                has_input: false,
                ready_text: profile.ready_text.clone().filter(|t| !t.is_empty()),
                channel: ChannelKind::None,
                policies: Arc::new(policies.for_profile(&profile.name)),
                budget,
                profile,
                duet_exe: duet_exe.clone(),
                launch: Default::default(),
            };
            resolved.has_events = resolved.mentions("{events_file}");
            resolved.has_input = resolved.mentions("{input_file}");
            resolved.channel = match resolved.profile.channel {
                Some(ChannelKind::DualOutput) if !resolved.has_events => bail!(
                    "profile {:?}: channel \"dual_output\" needs {{events_file}} in its arguments",
                    resolved.name
                ),
                Some(ChannelKind::Claude) if !resolved.mentions("{claude_settings}") => bail!(
                    "profile {:?}: channel \"claude\" needs \"--settings\", \"{{claude_settings}}\" in its arguments (that is how its hooks reach duet)",
                    resolved.name
                ),
                Some(ChannelKind::Codex) if !resolved.mentions("{codex_remote}") => bail!(
                    "profile {:?}: channel \"codex\" needs \"--remote\", \"{{codex_remote}}\" in its arguments (that is how its TUI reaches the app server duet runs)",
                    resolved.name
                ),
                Some(kind) if kind != ChannelKind::StreamJsonPerTurn && resolved.mentions("{prompt}") => bail!(
                    "profile {:?}: {{prompt}} is only for channel \"stream_json_per_turn\"",
                    resolved.name
                ),
                Some(kind) => kind,
                None if resolved.mentions("{prompt}") => bail!(
                    "profile {:?}: {{prompt}} is only for channel \"stream_json_per_turn\"",
                    resolved.name
                ),
                None if resolved.has_events => ChannelKind::DualOutput,
                None => ChannelKind::None,
            };
            list.push(resolved);
        }
        let default = match &file.default_profile {
            Some(name) => list
                .iter()
                .position(|p| &p.name == name)
                .with_context(|| format!("default_profile {name:?} is not defined"))?,
            None => 0,
        };
        Ok(Self { list, default })
    }

    /// Reads and validates a TOML config file.
    pub fn load(path: &Path, duet_exe: PathBuf) -> Result<Self> {
        Self::from_config(ConfigFile::read(path)?, duet_exe)
    }

    /// The profile called `name`, or the default one.
    pub fn get(&self, name: Option<&str>) -> Option<&ResolvedProfile> {
        match name {
            Some(n) => self.list.iter().find(|p| p.name == n),
            None => self.list.get(self.default),
        }
    }

    /// The names of the profiles, in the config's order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.list.iter().map(|p| p.name.as_str())
    }

    /// The list as clients see it.
    pub fn infos(&self) -> Vec<ProfileInfo> {
        self.list
            .iter()
            .enumerate()
            .map(|(i, p)| ProfileInfo {
                name: p.name.clone(),
                description: p.description.clone(),
                sidecar: p.channel_info().events,
                channel: p.channel_info(),
                resume: p.can_resume(),
                default: i == self.default,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use duet_protocol::ids::SessionId;

    #[test]
    fn parses_expands_and_detects_the_sidecar() {
        let file: ConfigFile = toml::from_str(
            r#"
            default_profile = "b"
            [[profile]]
            name = "a"
            command = "sh"
            [[profile]]
            name = "b"
            command = "{duet}"
            args = ["demo-agent", "--json-file", "{events_file}", "--input-file", "{input_file}", "{cols}x{rows}"]
            env = { X = "{session_id}" }
            "#,
        )
        .unwrap();
        let profiles = Profiles::from_config(file, "/usr/bin/duet".into()).unwrap();
        let b = profiles.get(None).unwrap();
        assert_eq!(b.name, "b");
        assert!(b.has_events && b.has_input);
        assert!(!profiles.get(Some("a")).unwrap().has_events);
        let id = SessionId::new();
        let spawn = b.spawn_options(
            &Placeholders {
                events_file: Path::new("/s/events.jsonl"),
                input_file: Path::new("/s/input.jsonl"),
                session_dir: Path::new("/s"),
                work_dir: Path::new("/s/work"),
                session_id: id,
                cols: 80,
                rows: 24,
                claude_settings: "",
                codex_remote: "",
                agent_session_id: "",
            },
            false,
        );
        assert_eq!(spawn.program, "/usr/bin/duet");
        assert_eq!(spawn.args[2], "/s/events.jsonl");
        assert_eq!(spawn.args[5], "80x24");
        assert_eq!(spawn.env, vec![("X".to_string(), id.to_string())]);
        assert_eq!(spawn.cwd, PathBuf::from("/s/work"));
    }

    #[test]
    fn rejects_bad_configs() {
        let bad = [
            "[[profile]]\nname = \"a\"\ncommand = \"x\"\nshell = true",
            "[[profile]]\nname = \"a b\"\ncommand = \"x\"",
            "[[profile]]\nname = \"a\"\ncommand = \"x {evnts_file}\"",
            "default_profile = \"z\"\n[[profile]]\nname = \"a\"\ncommand = \"x\"",
            // `{prompt}` only means something to a per-turn agent.
            "[[profile]]\nname = \"a\"\ncommand = \"x\"\nargs = [\"{prompt}\"]",
            "[[profile]]\nname = \"a\"\ncommand = \"x\"\nargs = [\"{prompt}\"]\nchannel = \"stream_json\"",
            // A Codex TUI not attached to duet's app server: no chat.
            "[[profile]]\nname = \"a\"\ncommand = \"codex\"\nchannel = \"codex\"",
            "",
        ];
        for text in bad {
            let parsed = toml::from_str::<ConfigFile>(text);
            let result = parsed
                .map_err(anyhow::Error::from)
                .and_then(|f| Profiles::from_config(f, "duet".into()));
            assert!(result.is_err(), "accepted: {text}");
        }
    }
}
