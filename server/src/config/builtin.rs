//! The profiles duet offers with no config file: its demo agent, a login
//! shell, Qwen Code, Claude Code, Gemini CLI and Codex when they are on the
//! PATH (Gemini and Codex in their TUI and headless over ACP), and Claude
//! Code over ACP when its adapter is.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{ChannelKind, ConfigFile, Profile, Profiles};

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

/// Qwen Code's approval mode under duet: it asks before running a tool
/// that edits or executes (`default`, "Ask permissions"). 0.24's own
/// default, `auto`, lets a classifier approve tools with no approval at
/// all (docs/qwen-code.md §8.1); 0.15.10 takes the same flag.
pub const QWEN_MODE_ARGS: [&str; 2] = ["--approval-mode", "default"];

/// What Qwen Code's status line shows once it takes prompts.
pub const QWEN_READY_TEXT: &str = "? for shortcuts";

/// Gemini CLI's TUI under duet: duet picks its session id (and resumes
/// it), its hooks come from the session's own Gemini home
/// (docs/gemini-cli.md).
pub const GEMINI_ARGS: [&str; 2] = ["--session-id", "{agent_session_id}"];

/// [`GEMINI_ARGS`], continuing the conversation `{agent_session_id}`.
pub const GEMINI_RESUME_ARGS: [&str; 2] = ["--resume", "{agent_session_id}"];

/// The placeholder of Gemini CLI's empty input box: before it shows, a
/// dialog (trust, auth) may be open, which a pasted prompt would answer.
pub const GEMINI_READY_TEXT: &str = "Type your message";

/// Codex's TUI under duet: attached to the app server duet runs for the
/// session (so it starts no daemon of its own), asking before it runs
/// what the sandbox does not allow (docs/codex.md §7).
pub const CODEX_ARGS: [&str; 6] = [
    "--remote",
    "{codex_remote}",
    "-a",
    "on-request",
    "-s",
    "workspace-write",
];

/// [`CODEX_ARGS`] continuing the thread `{agent_session_id}` (a resumed
/// remote thread keeps its own approval policy and sandbox: Codex refuses
/// them on the command line).
pub const CODEX_RESUME_ARGS: [&str; 4] =
    ["--remote", "{codex_remote}", "resume", "{agent_session_id}"];

/// What every Gemini CLI profile sets: the session's directory counts as
/// trusted (Gemini runs no hooks in a folder it does not trust, and asks
/// in a dialog first), and one Node process instead of two.
pub const GEMINI_ENV: [(&str, &str); 3] = [
    ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
    ("GEMINI_CLI_NO_RELAUNCH", "true"),
    // Gemini CLI draws no TUI when it believes it runs in CI (CI=true in
    // the environment duet was started from): its TUI is the point here.
    ("CI", "false"),
];

impl Profiles {
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
                extra_args: true,
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
                extra_args: true,
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
                extra_args: true,
                name: "qwen".into(),
                description: Some("Qwen Code with dual output".into()),
                command: "qwen".into(),
                args: QWEN_MODE_ARGS
                    .into_iter()
                    .chain(sidecar_args)
                    .map(String::from)
                    .collect(),
                env: BTreeMap::from([("QWEN_CODE_NO_RELAUNCH".into(), "1".into())]),
                cwd: None,
                ready_text: old.then(|| QWEN_READY_TEXT.into()),
                channel: None,
                resume_args: Some(
                    QWEN_MODE_ARGS
                        .into_iter()
                        .chain(sidecar_args)
                        .chain(["--resume", "{agent_session_id}"])
                        .map(String::from)
                        .collect(),
                ),
            });
        }
        if which("claude").is_some() {
            profiles.push(Profile {
                extra_args: true,
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
        profiles.extend(gemini_builtin(which));
        profiles.extend(codex_builtin(which));
        Self::from_config(
            ConfigFile {
                default_profile: None,
                profiles,
                tokens: Vec::new(),
                ..Default::default()
            },
            duet_exe,
        )
        .unwrap_or_else(|e| unreachable!("built-in profiles are valid: {e}"))
    }
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
        extra_args: true,
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

/// Gemini CLI in its TUI (`gemini`, the chat from its hooks) and headless
/// (`gemini-acp`, over ACP, resumed with `session/load`), when `find`
/// finds `gemini`.
fn gemini_builtin(find: impl Fn(&str) -> Option<PathBuf>) -> Vec<Profile> {
    if find("gemini").is_none() {
        return Vec::new();
    }
    let env: BTreeMap<String, String> = GEMINI_ENV
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    vec![
        Profile {
            name: "gemini".into(),
            description: Some("Gemini CLI, its chat from its hooks".into()),
            command: "gemini".into(),
            args: GEMINI_ARGS.map(String::from).to_vec(),
            env: env.clone(),
            cwd: None,
            ready_text: Some(GEMINI_READY_TEXT.into()),
            channel: Some(ChannelKind::Gemini),
            resume_args: Some(GEMINI_RESUME_ARGS.map(String::from).to_vec()),
            extra_args: true,
        },
        Profile {
            name: "gemini-acp".into(),
            description: Some("Gemini CLI over the Agent Client Protocol".into()),
            command: "gemini".into(),
            args: vec!["--acp".into()],
            env,
            cwd: None,
            ready_text: None,
            channel: Some(ChannelKind::Acp),
            resume_args: Some(vec!["--acp".into()]),
            extra_args: true,
        },
    ]
}

/// Codex in its TUI (`codex`, the chat from the app server it is attached
/// to, when `find` finds `codex`) and over ACP (`codex-acp`, when it finds
/// the adapter), the latter in the mode that asks before it writes outside
/// the workspace or runs a command needing more: its default, "Auto
/// review", has a model approve instead of the user (docs/codex.md §6).
fn codex_builtin(find: impl Fn(&str) -> Option<PathBuf>) -> Vec<Profile> {
    let mut profiles = Vec::new();
    if find("codex").is_some() {
        profiles.push(Profile {
            name: "codex".into(),
            description: Some("Codex, its chat from the app server its TUI runs on".into()),
            command: "codex".into(),
            args: CODEX_ARGS.map(String::from).to_vec(),
            env: BTreeMap::new(),
            cwd: None,
            ready_text: None,
            channel: Some(ChannelKind::Codex),
            resume_args: Some(CODEX_RESUME_ARGS.map(String::from).to_vec()),
            extra_args: true,
        });
    }
    if find("codex-acp").is_some() {
        profiles.push(Profile {
            name: "codex-acp".into(),
            description: Some("Codex over the Agent Client Protocol (codex-acp)".into()),
            command: "codex-acp".into(),
            args: Vec::new(),
            env: BTreeMap::from([("INITIAL_AGENT_MODE".into(), "workspace-write".into())]),
            cwd: None,
            ready_text: None,
            channel: Some(ChannelKind::Acp),
            resume_args: Some(Vec::new()),
            extra_args: true,
        });
    }
    profiles
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

    fn valid(profiles: Vec<Profile>) -> Profiles {
        Profiles::from_config(
            ConfigFile {
                default_profile: None,
                profiles,
                ..Default::default()
            },
            "/usr/bin/duet".into(),
        )
        .unwrap()
    }

    #[test]
    fn gemini_and_codex_are_built_in_when_found() {
        assert!(gemini_builtin(|_| None).is_empty());
        assert!(codex_builtin(|_| None).is_empty());
        let all = |_: &str| Some(PathBuf::from("/bin/x"));
        let mut found = gemini_builtin(all);
        found.extend(codex_builtin(all));
        let profiles = valid(found);
        let kinds: Vec<(String, String, bool)> = profiles
            .infos()
            .into_iter()
            .map(|i| (i.name, i.channel.kind, i.resume))
            .collect();
        let expected = [
            ("gemini", "gemini", true),
            ("gemini-acp", "acp", true),
            ("codex", "codex", true),
            ("codex-acp", "acp", true),
        ];
        let expected: Vec<(String, String, bool)> = expected
            .iter()
            .map(|(n, k, r)| (n.to_string(), k.to_string(), *r))
            .collect();
        assert_eq!(kinds, expected);
        let codex = codex_builtin(all);
        assert_eq!(codex[1].env["INITIAL_AGENT_MODE"], "workspace-write");
    }

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
                ..Default::default()
            },
            "/usr/bin/duet".into(),
        )
        .unwrap();
        let info = &profiles.infos()[0];
        assert_eq!(info.channel.kind, "acp");
        assert!(info.resume, "resumed with session/load");
    }
}
