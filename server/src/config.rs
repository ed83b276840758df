//! Agent profiles: what duet may run. Profiles come from a TOML file chosen by
//! the operator; a client only ever picks one by name (and a size), so no
//! command line is ever taken from a client.
//!
//! ```toml
//! default_profile = "demo"
//!
//! [[profile]]
//! name = "qwen"
//! description = "Qwen Code with dual output"
//! command = "qwen"
//! args = ["--json-file", "{events_file}", "--input-file", "{input_file}"]
//! env = { HOME = "/var/lib/duet/qwen-home" }
//! cwd = "/srv/project"          # default: a fresh private directory per session
//! ```
//!
//! Placeholders in `command`, `args`, `env` values and `cwd`: `{events_file}`,
//! `{input_file}`, `{session_dir}`, `{work_dir}`, `{session_id}`, `{cols}`,
//! `{rows}`, and `{duet}` (this duet executable). A profile has the sidecar
//! (chat view) when it mentions `{events_file}`, and takes submits and
//! approvals when it mentions `{input_file}`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use duet_protocol::ids::SessionId;
use duet_protocol::rest::ProfileInfo;
use serde::Deserialize;

use duet_protocol::rest::ChannelInfo;

use crate::session::terminal::pty::SpawnOptions;

/// The config file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Profile used when a client names none; the first profile otherwise.
    pub default_profile: Option<String>,
    #[serde(default, rename = "profile")]
    pub profiles: Vec<Profile>,
    /// Named tokens with roles (`duet token` mints one).
    #[serde(default, rename = "token")]
    pub tokens: Vec<TokenEntry>,
}

/// One `[[token]]`: a name, a role and the SHA-256 (hex) of the token. The
/// token itself is never written to the config (an unknown field such as
/// `token = "..."` is an error).
///
/// ```toml
/// [[token]]
/// name = "ci"
/// role = "driver"
/// sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenEntry {
    pub name: String,
    pub role: duet_protocol::rest::Role,
    pub sha256: String,
}

/// A checked `[[token]]`.
#[derive(Debug, Clone)]
pub struct NamedToken {
    pub name: String,
    pub role: duet_protocol::rest::Role,
    pub sha256: [u8; 32],
}

impl ConfigFile {
    /// Reads a TOML config file.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading config {}", path.display()))?;
        toml::from_str(&text).with_context(|| format!("parsing config {}", path.display()))
    }

    /// The checked `[[token]]`s: names unique, `owner` reserved for the
    /// main token, hashes 64 hex digits.
    pub fn named_tokens(&self) -> Result<Vec<NamedToken>> {
        let mut out: Vec<NamedToken> = Vec::new();
        for t in &self.tokens {
            if t.name.is_empty()
                || t.name == "owner"
                || t.name.starts_with("share:")
                || !t
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            {
                bail!(
                    "token name {:?} must be non-empty, not \"owner\", and use only letters, digits, '-', '_' and '.'",
                    t.name
                );
            }
            if out.iter().any(|o| o.name == t.name) {
                bail!("token {:?} is defined twice", t.name);
            }
            let Some(sha256) = crate::auth::parse_sha256_hex(&t.sha256) else {
                bail!(
                    "token {:?}: sha256 must be the 64 hex digits of the token's SHA-256 (`duet token` prints it)",
                    t.name
                );
            };
            out.push(NamedToken {
                name: t.name.clone(),
                role: t.role,
                sha256,
            });
        }
        Ok(out)
    }
}

/// A new random token for `[[token]]` `name` with `role`: the token (to
/// hand out once) and the config snippet (with its hash only).
pub fn mint_token(name: &str, role: duet_protocol::rest::Role) -> Result<(String, String)> {
    let token = crate::auth::random_token()?;
    let hash = crate::auth::hex(&crate::auth::sha256(token.as_bytes()));
    let snippet = format!(
        "[[token]]\nname = {}\nrole = \"{}\"\nsha256 = \"{hash}\"\n",
        toml::Value::String(name.to_string()),
        role.as_str()
    );
    Ok((token, snippet))
}

/// One `[[profile]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// Text the program's screen shows once it can take prompts. Submits
    /// are held until then (after `session_start`). Qwen Code announces
    /// `session_start` about a second before it can answer a prompt; its
    /// status line then reads "? for shortcuts".
    #[serde(default)]
    pub ready_text: Option<String>,
    /// The side channel: `dual_output` (the default when the profile
    /// mentions `{events_file}`), `claude`, `stream_json`,
    /// `stream_json_per_turn`, `acp` or `none`.
    #[serde(default)]
    pub channel: Option<ChannelKind>,
    /// The arguments that continue an ended conversation instead of `args`
    /// (e.g. `--resume {agent_session_id}`): with them, an ended session can
    /// be resumed (`POST /api/sessions/{id}/resume`), in the same work dir.
    #[serde(default)]
    pub resume_args: Option<Vec<String>>,
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
            ChannelKind::StreamJson => "stream_json",
            ChannelKind::StreamJsonPerTurn => "stream_json_per_turn",
            ChannelKind::Acp => "acp",
        }
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
    pub name: String,
    pub description: Option<String>,
    pub has_events: bool,
    pub has_input: bool,
    /// See [`Profile::ready_text`].
    pub ready_text: Option<String>,
    pub channel: ChannelKind,
    profile: Profile,
    duet_exe: PathBuf,
}

/// Values for the placeholders of one session.
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
    /// The agent's own conversation id, when duet picks it (Claude's
    /// `--session-id`) or resumes it.
    pub agent_session_id: &'a str,
}

/// Claude Code's arguments under duet: it asks before running tools
/// (`manual`; its default, `auto`, asks nothing), duet picks its session
/// id, and its hooks lead to duet (docs/claude-code.md).
pub const CLAUDE_ARGS: [&str; 6] = [
    "--permission-mode",
    "manual",
    "--session-id",
    "{agent_session_id}",
    "--settings",
    "{claude_settings}",
];

/// [`CLAUDE_ARGS`], continuing the conversation `{agent_session_id}`.
pub const CLAUDE_RESUME_ARGS: [&str; 6] = [
    "--permission-mode",
    "manual",
    "--resume",
    "{agent_session_id}",
    "--settings",
    "{claude_settings}",
];

/// What Claude Code's footer shows once it takes prompts.
pub const CLAUDE_READY_TEXT: &str = "? for shortcuts";

/// What Qwen Code's status line shows once it takes prompts.
pub const QWEN_READY_TEXT: &str = "? for shortcuts";

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
            .collect(),
            env: self
                .profile
                .env
                .iter()
                .map(|(k, v)| (k.clone(), expand(v)))
                .collect(),
            cwd: self
                .profile
                .cwd
                .as_deref()
                .map(|c| PathBuf::from(expand(c)))
                .unwrap_or_else(|| p.work_dir.to_path_buf()),
            cols: p.cols,
            rows: p.rows,
        }
    }

    /// What the profile's side channel can do.
    pub fn channel_info(&self) -> ChannelInfo {
        let (events, input) = match self.channel {
            ChannelKind::None => (false, false),
            ChannelKind::DualOutput => (self.has_events, self.has_input),
            ChannelKind::Claude
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

    /// This duet executable.
    pub(crate) fn duet_exe(&self) -> &Path {
        &self.duet_exe
    }

    fn mentions(&self, placeholder: &str) -> bool {
        let p = &self.profile;
        std::iter::once(&p.command)
            .chain(&p.args)
            .chain(p.resume_args.iter().flatten())
            .chain(p.env.values())
            .any(|s| s.contains(placeholder))
    }
}

impl Profiles {
    /// Validates `file`'s profiles. `duet_exe` fills `{duet}`.
    pub fn from_config(file: ConfigFile, duet_exe: PathBuf) -> Result<Self> {
        if file.profiles.is_empty() {
            bail!("the config file defines no [[profile]]");
        }
        let mut list = Vec::new();
        for profile in file.profiles {
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
                profile,
                duet_exe: duet_exe.clone(),
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

    /// The profiles used with no config file: the demo agent (default), a
    /// login shell, Qwen Code and Claude Code when `qwen` and `claude` are
    /// on the PATH, and Claude Code over ACP when its adapter is.
    pub fn builtin(duet_exe: PathBuf) -> Self {
        let sidecar_args = [
            "--json-file",
            "{events_file}",
            "--input-file",
            "{input_file}",
        ];
        let mut profiles = vec![
            Profile {
                name: "demo".into(),
                description: Some(
                    "duet's demo agent: an offline scripted assistant with tools and approvals"
                        .into(),
                ),
                command: "{duet}".into(),
                args: std::iter::once("demo-agent")
                    .chain(sidecar_args)
                    .map(String::from)
                    .collect(),
                env: BTreeMap::new(),
                cwd: None,
                ready_text: None,
                channel: None,
                resume_args: None,
            },
            Profile {
                name: "shell".into(),
                description: Some("A login shell (terminal only, no chat view)".into()),
                command: std::env::var("SHELL")
                    .ok()
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "/bin/sh".into()),
                args: vec!["-l".into()],
                env: BTreeMap::new(),
                cwd: None,
                ready_text: None,
                channel: None,
                resume_args: None,
            },
        ];
        if let Some(qwen) = which("qwen") {
            // 0.15 shows a prompt read right after session_start as taken,
            // then fails it; later versions keep it until they are ready
            // (docs/qwen-code.md §8) and never show this text.
            let old = package_version(&qwen, "@qwen-code/qwen-code").is_some_and(|v| v < (0, 16));
            profiles.push(Profile {
                name: "qwen".into(),
                description: Some("Qwen Code with dual output".into()),
                command: "qwen".into(),
                args: sidecar_args.map(String::from).to_vec(),
                env: BTreeMap::from([("QWEN_CODE_NO_RELAUNCH".into(), "1".into())]),
                cwd: None,
                ready_text: old.then(|| QWEN_READY_TEXT.into()),
                channel: None,
                resume_args: Some(
                    sidecar_args
                        .into_iter()
                        .chain(["--resume", "{agent_session_id}"])
                        .map(String::from)
                        .collect(),
                ),
            });
        }
        if which("claude").is_some() {
            profiles.push(Profile {
                name: "claude".into(),
                description: Some("Claude Code, its chat from its hooks".into()),
                command: "claude".into(),
                args: CLAUDE_ARGS.map(String::from).to_vec(),
                env: BTreeMap::new(),
                cwd: None,
                // Its prompt line; before it, a trust or login dialog may be
                // up, which a pasted prompt would answer.
                ready_text: Some(CLAUDE_READY_TEXT.into()),
                channel: Some(ChannelKind::Claude),
                resume_args: Some(CLAUDE_RESUME_ARGS.map(String::from).to_vec()),
            });
        }
        profiles.extend(claude_acp_builtin(which));
        Self::from_config(
            ConfigFile {
                default_profile: None,
                profiles,
                tokens: Vec::new(),
            },
            duet_exe,
        )
        .unwrap_or_else(|e| unreachable!("built-in profiles are valid: {e}"))
    }

    /// The profile called `name`, or the default one.
    pub fn get(&self, name: Option<&str>) -> Option<&ResolvedProfile> {
        match name {
            Some(n) => self.list.iter().find(|p| p.name == n),
            None => self.list.get(self.default),
        }
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

fn check_placeholders(profile: &str, s: &str) -> Result<()> {
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

/// The `(major, minor)` version of the npm package `name` that the
/// executable `bin` (usually a symlink into it) belongs to.
fn package_version(bin: &Path, name: &str) -> Option<(u32, u32)> {
    let real = std::fs::canonicalize(bin).ok()?;
    for dir in real.ancestors().skip(1).take(5) {
        let Ok(text) = std::fs::read_to_string(dir.join("package.json")) else {
            continue;
        };
        let Ok(pkg) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        if pkg["name"] != name {
            continue;
        }
        let mut parts = pkg["version"].as_str()?.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        return Some((major, minor));
    }
    None
}

/// Claude Code over ACP, when `find` finds its adapter: the executable of
/// `@agentclientprotocol/claude-agent-acp` or of its predecessor
/// `@zed-industries/claude-code-acp` (docs/agents.md). Resumed with
/// `session/load`, so `resume_args` are the same (none).
fn claude_acp_builtin(find: impl Fn(&str) -> Option<PathBuf>) -> Option<Profile> {
    let command = ["claude-agent-acp", "claude-code-acp"]
        .into_iter()
        .find(|c| find(c).is_some())?;
    Some(Profile {
        name: "claude-acp".into(),
        description: Some(format!(
            "Claude Code over the Agent Client Protocol ({command})"
        )),
        command: command.into(),
        args: Vec::new(),
        env: BTreeMap::new(),
        cwd: None,
        ready_text: None,
        channel: Some(ChannelKind::Acp),
        resume_args: Some(Vec::new()),
    })
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_over_acp_is_built_in_when_its_adapter_is_found() {
        assert!(claude_acp_builtin(|_| None).is_none());
        let found = |name: &str| (name == "claude-code-acp").then(|| PathBuf::from("/bin/x"));
        let p = claude_acp_builtin(found).unwrap();
        assert_eq!(
            (p.name.as_str(), p.command.as_str()),
            ("claude-acp", "claude-code-acp")
        );
        assert_eq!(p.channel, Some(ChannelKind::Acp));
        let both = |_: &str| Some(PathBuf::from("/bin/x"));
        assert_eq!(
            claude_acp_builtin(both).unwrap().command,
            "claude-agent-acp"
        );
        let profiles = Profiles::from_config(
            ConfigFile {
                default_profile: None,
                profiles: vec![claude_acp_builtin(both).unwrap()],
                tokens: Vec::new(),
            },
            "/usr/bin/duet".into(),
        )
        .unwrap();
        let info = &profiles.infos()[0];
        assert_eq!(info.channel.kind, "acp");
        assert!(info.resume, "resumed with session/load");
    }

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
