//! The programs `agents_e2e` runs every scenario against, behind one
//! description: duet's demo agent and real Qwen Code (with the mock LLM).
//! A scenario asks a [`Program`] for the prompt that leads to a tool call,
//! or for the text a reply must contain, and is otherwise the same for
//! both: that is the point, duet makes them interchangeable for its
//! clients.

use std::path::Path;
use std::time::Duration;

use duet_protocol::ws::{ClientMessage, ServerMessage};
use duet_server::config::Profile;
use duet_server::ServerOptions;
use tempfile::TempDir;

use super::qwen::{self, QwenVersion};
use super::Agent;
use crate::mocks::chat_completions::MockLlm;
use crate::mocks::{reply_to, AFTER_TOOL, TOOL_COMMAND, TOOL_TRIGGER};
use crate::support::{demo_profile, Client};

/// A run of a [`Program`].
pub(crate) type Run = super::Run<Program>;

/// Which program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `duet demo-agent`, the embedded default agent.
    Demo,
    /// Real Qwen Code of one version talking to [`MockLlm`].
    Qwen(QwenVersion),
}

impl Kind {
    /// Whether this is real Qwen Code (any version).
    pub(crate) fn is_qwen(self) -> bool {
        matches!(self, Kind::Qwen(_))
    }
}

/// A program under test: its duet profile, its workspace, and how its
/// scripted model answers.
pub(crate) struct Program {
    pub kind: Kind,
    /// The program's cwd, where tools run.
    pub workspace: TempDir,
    /// Qwen's private HOME (settings, debug log).
    home: Option<TempDir>,
    /// The model Qwen talks to.
    pub mock: Option<MockLlm>,
    profile: Profile,
}

impl Program {
    /// Sets the program up. `None` when it is Qwen, Qwen is not installed
    /// and `DUET_SKIP_QWEN=1` (the skip has been printed).
    pub(crate) async fn new(kind: Kind) -> Option<Self> {
        let workspace = tempfile::tempdir().unwrap();
        match kind {
            Kind::Demo => {
                let profile = demo_profile(
                    "agent",
                    Some(workspace.path().to_string_lossy().into_owned()),
                );
                Some(Self {
                    kind,
                    workspace,
                    home: None,
                    mock: None,
                    profile,
                })
            }
            Kind::Qwen(version) => {
                let launch = qwen::launch(version)?;
                let home = tempfile::tempdir().unwrap();
                qwen::write_settings(home.path(), version);
                let mock = MockLlm::start().await;
                let mut profile = qwen::profile(&launch, home.path(), workspace.path(), &mock);
                profile.name = "agent".into();
                Some(Self {
                    kind,
                    workspace,
                    home: Some(home),
                    mock: Some(mock),
                    profile,
                })
            }
        }
    }

    /// Qwen with the profile and settings file of docs/qwen-profile.md
    /// (see [`qwen::documented_profile`]). `None` as for [`Program::new`].
    pub(crate) async fn documented_qwen(version: QwenVersion) -> Option<Self> {
        let launch = qwen::launch(version)?;
        let workspace = tempfile::tempdir().unwrap();
        let mock = MockLlm::start().await;
        let profile = qwen::documented_profile(&launch, &mock, workspace.path());
        Some(Self {
            kind: Kind::Qwen(version),
            workspace,
            home: None,
            mock: Some(mock),
            profile,
        })
    }

    /// `session_start.data.version`.
    pub(crate) fn version(&self) -> &'static str {
        match self.kind {
            Kind::Demo => env!("CARGO_PKG_VERSION"),
            Kind::Qwen(v) => v.version(),
        }
    }

    /// `session_start.data.protocol_version`.
    pub(crate) fn protocol_version(&self) -> u64 {
        match self.kind {
            Kind::Demo => 1,
            Kind::Qwen(v) => v.protocol_version(),
        }
    }

    /// A prompt whose answer is a `run_shell_command` call of [`TOOL_COMMAND`].
    pub(crate) fn tool_prompt(&self) -> &'static str {
        match self.kind {
            Kind::Demo => "run touch made_by_tool.txt",
            Kind::Qwen(_) => TOOL_TRIGGER,
        }
    }

    /// Text the reply to an ordinary `prompt` contains.
    pub(crate) fn reply_to(&self, prompt: &str) -> String {
        match self.kind {
            Kind::Demo => format!("You said \u{201c}{prompt}\u{201d}"),
            Kind::Qwen(_) => reply_to(prompt),
        }
    }

    /// Text the reply after the approved tool ran contains.
    pub(crate) fn after_tool(&self) -> String {
        match self.kind {
            Kind::Demo => format!("Done: `{TOOL_COMMAND}` exited with code 0"),
            Kind::Qwen(_) => format!("{AFTER_TOOL} Command: {TOOL_COMMAND}"),
        }
    }

    /// Whether `/help` opens a modal box that holds every prompt until a
    /// key closes it (Qwen 0.24; docs/qwen-code.md §8.3).
    pub(crate) fn help_is_a_dialog(&self) -> bool {
        self.kind == Kind::Qwen(QwenVersion::V0_24)
    }

    /// Whether `session_start` takes long enough (seconds) that a submit sent
    /// right after the session is created certainly arrives before it.
    /// (Qwen writes `session_start` before it can take a prompt; duet holds
    /// submits until it can: the profile's `ready_text`, docs/qwen-code.md
    /// §3.18.)
    pub(crate) fn slow_start(&self) -> bool {
        self.kind.is_qwen()
    }
}

impl Agent for Program {
    fn profile(&self) -> Profile {
        self.profile.clone()
    }

    fn workspace(&self) -> &Path {
        self.workspace.path()
    }

    /// The model requests and Qwen's debug log (where dropped input shows
    /// up): in its own HOME, or in the session's directory with the
    /// documented profile.
    fn report(&self, session_dir: &Path) -> String {
        let mut out = format!("--- program: {:?}", self.kind);
        if let Some(mock) = &self.mock {
            out += &format!("\n--- model requests:\n{}", mock.summary());
        }
        if self.kind.is_qwen() {
            let home = self.home.as_ref().map_or(session_dir, |h| h.path());
            out += &format!(
                "\n--- qwen debug log (remote input, startup, errors):\n{}",
                qwen::debug_log_summary(home)
            );
        }
        out
    }

    /// Real Qwen gets the grace period of a real duet and more: after its
    /// `session_end` it took over 2 s (the test servers' grace) to exit at
    /// a load of 14 on 2 cores, and was then killed; the DELETE scenario
    /// checks the exit it chose.
    fn adjust(&self, options: &mut ServerOptions) {
        if self.kind.is_qwen() {
            options.limits.kill_grace = Duration::from_secs(10);
        }
    }
}

/// Starts a server offering only `kind`, creates a session and attaches.
/// Does not wait for the program's handshake. `None` as for
/// [`Program::new`].
pub(crate) async fn start(kind: Kind) -> Option<Run> {
    Some(Run::start(Program::new(kind).await?).await)
}

/// [`start`], then waits for `session_start`.
pub(crate) async fn started(kind: Kind) -> Option<Run> {
    let mut run = start(kind).await?;
    run.handshake().await;
    Some(run)
}

/// Sends `approve` and returns the server's `ack` or `error` for it.
pub(crate) async fn approve(c: &mut Client, request_id: &str, allowed: bool) -> ServerMessage {
    let id = format!("approve-{}", uuid::Uuid::new_v4());
    c.send(&ClientMessage::Approve {
        request_id: request_id.into(),
        allowed: Some(allowed),
        option: None,
        id: Some(id.clone()),
    })
    .await;
    c.until(|m| {
        matches!(m, ServerMessage::Ack { id: i, .. } | ServerMessage::Error { id: Some(i), .. }
            if *i == id)
    })
    .await
}

/// Whether a submit's answer says it was held (not written yet).
pub(crate) fn queued(ack: &ServerMessage) -> bool {
    match ack {
        ServerMessage::Ack { queued, .. } => *queued,
        other => panic!("submit was refused: {other:?}"),
    }
}
