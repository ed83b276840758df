//! Real Claude Code under test, offline against the mock Anthropic API
//! (docs/claude-code.md §2, §6): where it is installed, the private HOME a
//! person would have after answering its first-run questions, and its
//! three profiles: the TUI with hooks (`channel = "claude"`), SDK mode
//! headless (`stream_json`), and its ACP adapter (`acp`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use duet_server::config::{self, ChannelKind, Profile};
use serde_json::json;
use tempfile::TempDir;

use super::Setup;
use crate::mocks::anthropic::MockAnthropic;
use crate::support::installed::{cache_dir, node24_and};

/// The Claude Code the TUI and headless tests run.
pub(crate) const VERSION: &str = "2.1.330";
/// The ACP adapter `acp` runs (with the Claude Code its SDK ships).
pub(crate) const ADAPTER_VERSION: &str = "0.101.0";
/// A key of the real format (Claude Code checks its shape); the mock
/// accepts any.
const API_KEY: &str = "sk-ant-api03-mock-0123456789abcdefghijKLMNOPQRST";

/// Claude Code's executable: `DUET_CLAUDE_BIN`, or where
/// scripts/install-claude.sh puts it. `None`: skip (`DUET_SKIP_CLAUDE=1`);
/// missing otherwise fails.
pub(crate) fn executable() -> Option<PathBuf> {
    let path = match std::env::var_os("DUET_CLAUDE_BIN").filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => cache_dir().join(format!("claude-code-{VERSION}/node_modules/.bin/claude")),
    };
    if path.is_file() {
        return Some(path);
    }
    if std::env::var("DUET_SKIP_CLAUDE").as_deref() == Ok("1") {
        eprintln!(
            "SKIPPED: Claude Code not found at {}; this test ran nothing",
            path.display()
        );
        return None;
    }
    panic!(
        "Claude Code {VERSION} not found at {}. Install it with scripts/install-claude.sh, \
         or set DUET_SKIP_CLAUDE=1 to skip these tests.",
        path.display()
    );
}

/// A HOME, a workspace (canonical: Claude Code keys its trust by the real
/// path) and the mock, with what a person answers once written to
/// `~/.claude.json`: onboarding, the API key, trusting the folder.
struct Offline {
    home: TempDir,
    workspace: TempDir,
    cwd: PathBuf,
    mock: MockAnthropic,
}

impl Offline {
    async fn new() -> Self {
        let home = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let cwd = workspace.path().canonicalize().unwrap();
        let seed = json!({
            "hasCompletedOnboarding": true,
            "customApiKeyResponses": {"approved": [&API_KEY[API_KEY.len() - 20..]], "rejected": []},
            "projects": {cwd.to_string_lossy(): {"hasTrustDialogAccepted": true}},
        });
        std::fs::write(home.path().join(".claude.json"), seed.to_string()).unwrap();
        let mock = MockAnthropic::start().await;
        Self {
            home,
            workspace,
            cwd,
            mock,
        }
    }

    /// The environment pointing Claude Code at the mock, with no update
    /// check and no traffic beyond the model calls.
    fn env(&self) -> BTreeMap<String, String> {
        [
            ("HOME", self.home.path().to_string_lossy().into_owned()),
            ("ANTHROPIC_BASE_URL", self.mock.base_url.clone()),
            ("ANTHROPIC_API_KEY", API_KEY.into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// A profile of `name` running `command args` here on `channel`.
    fn profile(
        &self,
        name: &str,
        command: &Path,
        args: Vec<String>,
        channel: ChannelKind,
    ) -> Profile {
        Profile {
            extra_args: false,
            name: name.into(),
            description: None,
            command: command.to_string_lossy().into_owned(),
            args,
            env: self.env(),
            cwd: Some(self.cwd.to_string_lossy().into_owned()),
            ready_text: None,
            channel: Some(channel),
            resume_args: None,
        }
    }

    fn setup(self, profile: Profile) -> Setup<MockAnthropic> {
        Setup::new(profile, self.workspace, self.home, self.mock)
    }
}

/// Claude Code's TUI with the built-in profile's arguments, its chat from
/// its hooks.
pub(crate) async fn tui() -> Option<Setup<MockAnthropic>> {
    let bin = executable()?;
    let offline = Offline::new().await;
    let args = config::CLAUDE_ARGS.map(String::from).to_vec();
    let mut profile = offline.profile("claude", &bin, args, ChannelKind::Claude);
    profile.ready_text = Some(config::CLAUDE_READY_TEXT.into());
    profile.resume_args = Some(config::CLAUDE_RESUME_ARGS.map(String::from).to_vec());
    Some(offline.setup(profile))
}

/// Claude Code in its SDK mode (`-p`, stream-json both ways, tool
/// permission asked over stdio).
pub(crate) async fn headless() -> Option<Setup<MockAnthropic>> {
    let bin = executable()?;
    let offline = Offline::new().await;
    let args = [
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--permission-prompt-tool",
        "stdio",
        "--permission-mode",
        "default",
    ]
    .map(String::from)
    .to_vec();
    let profile = offline.profile("claude", &bin, args, ChannelKind::StreamJson);
    Some(offline.setup(profile))
}

/// Claude Code through its ACP adapter on Node 24
/// (`scripts/install-claude-acp.sh`), with `permissions.defaultMode =
/// "default"` in `~/.claude/settings.json`: the adapter's own default is
/// `auto`, where Claude decides without asking. Its handshake may take
/// 90 s: the adapter starts Claude Code for `session/new` (4-5 s idle, more
/// on 2 busy cores). `None`: skip (`DUET_SKIP_CLAUDE=1`).
pub(crate) async fn acp() -> Option<Setup<MockAnthropic>> {
    let entry = cache_dir().join(format!(
        "claude-agent-acp-{ADAPTER_VERSION}/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"
    ));
    let (node, entry) = node24_and(
        &entry,
        &format!("the Claude ACP adapter {ADAPTER_VERSION}"),
        "DUET_SKIP_CLAUDE",
        "scripts/install-claude-acp.sh",
    )?;
    let offline = Offline::new().await;
    let home = offline.home.path();
    std::fs::create_dir(home.join(".claude")).unwrap();
    std::fs::write(
        home.join(".claude/settings.json"),
        json!({"permissions": {"defaultMode": "default"}}).to_string(),
    )
    .unwrap();
    let args = vec![entry.to_string_lossy().into_owned()];
    let mut profile = offline.profile("claude-acp", &node, args.clone(), ChannelKind::Acp);
    // Empty: the adapter then offers no bypass mode to root, and Claude
    // Code refuses to start as root with it unless IS_SANDBOX is exactly
    // "1" (a container may set "yes").
    profile.env.insert("IS_SANDBOX".into(), String::new());
    // The same command: duet resumes with `session/load`.
    profile.resume_args = Some(args);
    let mut setup = offline.setup(profile);
    setup.patience = Duration::from_secs(90);
    Some(setup)
}
