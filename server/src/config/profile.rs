//! One `[[profile]]` as written, its channel kinds, and how a resolved
//! profile becomes a command line (placeholders expanded) and a channel.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use duet_protocol::ids::SessionId;
use duet_protocol::rest::ChannelInfo;
use serde::Deserialize;

use super::{Launch, ResolvedProfile};
use crate::policy::PolicySet;
use duet_protocol::usage::Budget;
use std::sync::Arc;

/// One `[[profile]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// What clients name it by: letters, digits, `-`, `_` and `.` (e.g.
    /// `qwen`, `nightly-claude`).
    pub name: String,
    /// One line about it for profile pickers (e.g. "Qwen Code with dual
    /// output").
    #[serde(default)]
    pub description: Option<String>,
    /// The program: a path, or a name looked up on the PATH it will have
    /// (`{duet}` is this duet binary).
    pub command: String,
    /// Its arguments; placeholders such as `{events_file}`,
    /// `{input_file}`, `{work_dir}` and `{session_id}` are filled in.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set in its environment (placeholders filled in), over
    /// what it inherits.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Where it runs (placeholders filled in), unless the owner names a
    /// directory for the session. Default: a fresh private one per session.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Text the program's screen shows once it can take prompts. Submits
    /// are held until then (after `session_start`). Qwen Code announces
    /// `session_start` about a second before it can answer a prompt; its
    /// status line then reads "? for shortcuts".
    #[serde(default)]
    pub ready_text: Option<String>,
    /// The side channel: `dual_output` (the default when the profile
    /// mentions `{events_file}`), `claude`, `gemini`, `codex`, `stream_json`,
    /// `stream_json_per_turn`, `acp` or `none`.
    #[serde(default)]
    pub channel: Option<ChannelKind>,
    /// The arguments that continue an ended conversation instead of `args`
    /// (e.g. `--resume {agent_session_id}`): with them, an ended session can
    /// be resumed (`POST /api/sessions/{id}/resume`), in the same work dir.
    #[serde(default)]
    pub resume_args: Option<Vec<String>>,
    /// Whether the owner may append arguments to `args` (and
    /// `resume_args`) when starting a session (`duet run PROFILE -- ARGS`).
    /// Off by default: an operator who offers only some programs need not
    /// offer their every flag. The built-in profiles allow it (they include
    /// a login shell, so an owner can run anything already); a share link
    /// never can, as it cannot start sessions at all.
    #[serde(default)]
    pub extra_args: bool,
}

/// Which structured side channel a profile's agent has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelKind {
    /// Terminal only.
    None,
    /// JSONL events in `{events_file}`, commands in `{input_file}`.
    DualOutput,
    /// Claude Code's hooks: the profile passes `{claude_settings}` to
    /// `--settings` (and `{agent_session_id}` to `--session-id`).
    Claude,
    /// Gemini CLI's hooks (duet writes them into the session's own Gemini
    /// home) and its approval dialog answered with keys.
    Gemini,
    /// Codex's TUI attached (`--remote {codex_remote}`) to an app server
    /// duet runs for the session and is a client of too.
    Codex,
    /// A headless agent speaking stream-json on its stdin and stdout (no
    /// PTY; its stderr shows in the terminal pane).
    StreamJson,
    /// A print-mode agent: one process per prompt (`{prompt}` in its
    /// arguments, or on its stdin), later ones continuing the conversation
    /// with `resume_args` (`{agent_session_id}`). A kind of channel rather
    /// than a profile flag, so that `Profile` keeps its fields.
    StreamJsonPerTurn,
    /// A headless agent speaking the Agent Client Protocol on its stdin
    /// and stdout, duet its client.
    Acp,
}

impl ChannelKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelKind::None => "none",
            ChannelKind::DualOutput => "dual_output",
            ChannelKind::Claude => "claude",
            ChannelKind::Gemini => "gemini",
            ChannelKind::Codex => "codex",
            ChannelKind::StreamJson => "stream_json",
            ChannelKind::StreamJsonPerTurn => "stream_json_per_turn",
            ChannelKind::Acp => "acp",
        }
    }
}

/// Values for the placeholders of one session.
#[derive(Clone, Copy)]
pub(crate) struct Placeholders<'a> {
    pub events_file: &'a Path,
    pub input_file: &'a Path,
    pub session_dir: &'a Path,
    pub work_dir: &'a Path,
    pub session_id: SessionId,
    pub cols: u16,
    pub rows: u16,
    /// The `--settings` JSON of a Claude Code session (empty otherwise).
    pub claude_settings: &'a str,
    /// The app server a Codex TUI attaches to (`unix://…`; empty
    /// otherwise).
    pub codex_remote: &'a str,
    /// The agent's own conversation id, when duet picks it (Claude's
    /// `--session-id`) or resumes it.
    pub agent_session_id: &'a str,
}

/// What to run and where.
#[derive(Debug, Clone)]
pub(crate) struct SpawnOptions {
    pub(crate) program: String,
    pub(crate) args: Vec<String>,
    /// Added to (and overriding) duet's own environment, minus `DUET_*`.
    pub(crate) env: Vec<(String, String)>,
    pub(crate) cwd: PathBuf,
    pub(crate) cols: u16,
    pub(crate) rows: u16,
}

const PLACEHOLDERS: &[&str] = &[
    "events_file",
    "input_file",
    "session_dir",
    "work_dir",
    "session_id",
    "cols",
    "rows",
    "duet",
    "claude_settings",
    "codex_remote",
    "agent_session_id",
    "prompt",
];

impl ResolvedProfile {
    /// Whether ended sessions of this profile can be resumed.
    pub(crate) fn can_resume(&self) -> bool {
        self.profile.resume_args.is_some()
    }

    /// The command line and environment for one session; `resume` takes
    /// the profile's `resume_args`.
    pub(crate) fn spawn_options(&self, p: &Placeholders<'_>, resume: bool) -> SpawnOptions {
        let expand = |s: &str| -> String {
            s.replace("{events_file}", &p.events_file.to_string_lossy())
                .replace("{input_file}", &p.input_file.to_string_lossy())
                .replace("{session_dir}", &p.session_dir.to_string_lossy())
                .replace("{work_dir}", &p.work_dir.to_string_lossy())
                .replace("{session_id}", &p.session_id.to_string())
                .replace("{cols}", &p.cols.to_string())
                .replace("{rows}", &p.rows.to_string())
                .replace("{duet}", &self.duet_exe.to_string_lossy())
                .replace("{agent_session_id}", p.agent_session_id)
                .replace("{codex_remote}", p.codex_remote)
                // Last: the JSON holds paths, never placeholders.
                .replace("{claude_settings}", p.claude_settings)
        };
        SpawnOptions {
            program: expand(&self.profile.command),
            args: match (&self.profile.resume_args, resume) {
                (Some(args), true) => args,
                _ => &self.profile.args,
            }
            .iter()
            .map(|a| expand(a))
            // The owner's own, after the profile's, and as given.
            .chain(self.launch.args.iter().cloned())
            .collect(),
            env: self
                .profile
                .env
                .iter()
                .map(|(k, v)| (k.clone(), expand(v)))
                .collect(),
            cwd: match (&self.launch.cwd, &self.profile.cwd) {
                (Some(chosen), _) => chosen.clone(),
                (None, Some(c)) => PathBuf::from(expand(c)),
                (None, None) => p.work_dir.to_path_buf(),
            },
            cols: p.cols,
            rows: p.rows,
        }
    }

    /// Whether the owner may append arguments (see [`Profile::extra_args`]).
    pub(crate) fn allows_extra_args(&self) -> bool {
        self.profile.extra_args
    }

    /// This profile for one session, with what the owner chose for it.
    pub(crate) fn launched(&self, launch: &Launch) -> ResolvedProfile {
        ResolvedProfile {
            launch: launch.clone(),
            ..self.clone()
        }
    }

    /// What the profile's side channel can do.
    pub fn channel_info(&self) -> ChannelInfo {
        let (events, input) = match self.channel {
            ChannelKind::None => (false, false),
            ChannelKind::DualOutput => (self.has_events, self.has_input),
            ChannelKind::Claude
            | ChannelKind::Gemini
            | ChannelKind::Codex
            | ChannelKind::StreamJson
            | ChannelKind::StreamJsonPerTurn
            | ChannelKind::Acp => (true, true),
        };
        ChannelInfo {
            kind: self.channel.as_str().into(),
            events,
            submit: input,
            approve: input,
        }
    }

    /// The `[[policy]]` rules for this profile's sessions.
    pub fn policies(&self) -> &Arc<PolicySet> {
        &self.policies
    }

    /// The `[[budget]]` of this profile's sessions.
    pub fn budget(&self) -> Option<&Budget> {
        self.budget.as_ref()
    }

    /// This duet executable.
    pub(crate) fn duet_exe(&self) -> &Path {
        &self.duet_exe
    }

    pub(super) fn mentions(&self, placeholder: &str) -> bool {
        let p = &self.profile;
        std::iter::once(&p.command)
            .chain(&p.args)
            .chain(p.resume_args.iter().flatten())
            .chain(p.env.values())
            .any(|s| s.contains(placeholder))
    }
}

pub(super) fn check_placeholders(profile: &str, s: &str) -> Result<()> {
    let mut rest = s;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let name = &rest[start + 1..start + len];
        if !name.is_empty()
            && name.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            && !PLACEHOLDERS.contains(&name)
        {
            bail!(
                "profile {profile:?}: unknown placeholder {{{name}}} (known: {})",
                PLACEHOLDERS
                    .iter()
                    .map(|p| format!("{{{p}}}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        rest = &rest[start + len..];
    }
    Ok(())
}
