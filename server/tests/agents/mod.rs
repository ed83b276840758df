//! The programs the end-to-end checks run against, behind one description:
//! duet's demo agent and real Qwen Code (with a mock LLM). A scenario asks a
//! [`Program`] for the prompt that leads to a tool call, or for the text a
//! reply must contain, and is otherwise the same for both: that is the point,
//! duet makes them interchangeable for its clients.

pub mod mock_anthropic;
pub mod mock_llm;
pub mod qwen;

use duet_protocol::rest::{Approval, ApprovalState, ExitInfo, SessionInfo};
use duet_protocol::ws::{ClientMessage, ServerMessage};
use duet_server::config::{ConfigFile, Profile, Profiles};
use serde_json::Value;
use tempfile::TempDir;

use crate::support::{demo_profile, kind, Client, TestServer};
use mock_llm::MockLlm;
pub use qwen::QwenVersion;

/// The file the tool scenario's command creates in the workspace.
pub const TOOL_FILE: &str = "made_by_tool.txt";
/// The command the tool scenario asks approval for (not read-only, so Qwen
/// asks; see docs/qwen-code.md §3.15).
pub const TOOL_COMMAND: &str = mock_llm::TOOL_COMMAND;

/// Which program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `duet demo-agent`, the embedded default agent.
    Demo,
    /// Real Qwen Code of one version talking to [`MockLlm`].
    Qwen(QwenVersion),
}

impl Kind {
    /// Whether this is real Qwen Code (any version).
    pub fn is_qwen(self) -> bool {
        matches!(self, Kind::Qwen(_))
    }
}

/// A program under test: its duet profile, its workspace, and how its
/// scripted model answers.
pub struct Program {
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
    pub async fn new(kind: Kind) -> Option<Self> {
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

    /// `session_start.data.version`.
    pub fn version(&self) -> &'static str {
        match self.kind {
            Kind::Demo => env!("CARGO_PKG_VERSION"),
            Kind::Qwen(v) => v.version(),
        }
    }

    /// `session_start.data.protocol_version`.
    pub fn protocol_version(&self) -> u64 {
        match self.kind {
            Kind::Demo => 1,
            Kind::Qwen(v) => v.protocol_version(),
        }
    }

    /// A prompt whose answer is a `run_shell_command` call of [`TOOL_COMMAND`].
    pub fn tool_prompt(&self) -> &'static str {
        match self.kind {
            Kind::Demo => "run touch made_by_tool.txt",
            Kind::Qwen(_) => mock_llm::TOOL_TRIGGER,
        }
    }

    /// Text the reply to an ordinary `prompt` contains.
    pub fn reply_to(&self, prompt: &str) -> String {
        match self.kind {
            Kind::Demo => format!("You said \u{201c}{prompt}\u{201d}"),
            Kind::Qwen(_) => mock_llm::reply_to(prompt),
        }
    }

    /// Text the reply after the approved tool ran contains.
    pub fn after_tool(&self) -> String {
        match self.kind {
            Kind::Demo => format!("Done: `{TOOL_COMMAND}` exited with code 0"),
            Kind::Qwen(_) => format!("{} Command: {TOOL_COMMAND}", mock_llm::AFTER_TOOL),
        }
    }

    /// Whether `/help` opens a modal box that holds every prompt until a
    /// key closes it (Qwen 0.24; docs/qwen-code.md §8.3).
    pub fn help_is_a_dialog(&self) -> bool {
        self.kind == Kind::Qwen(QwenVersion::V0_24)
    }

    /// Whether `session_start` takes long enough (seconds) that a submit sent
    /// right after the session is created certainly arrives before it.
    pub fn slow_start(&self) -> bool {
        self.kind.is_qwen()
    }

    /// Waits until the program can really take a prompt, as a person looking
    /// at the terminal would. Qwen writes `session_start` before it has
    /// initialised (~1 s later, longer under load); a prompt it reads in
    /// between fails on screen with "[API Error: Chat not initialized]" and
    /// `/quit` with "Unknown command", after a `user` event or nothing
    /// (docs/qwen-code.md §3.18). Its status line says "Initializing..."
    /// until then and "? for shortcuts" after. duet does not wait for this
    /// yet; `a_submit_before_session_start_is_held_and_delivered` shows it.
    /// (Slash commands arrive a moment later still; see the quit scenario.)
    pub async fn wait_ready(&self, _c: &mut Client) {
        // Nothing beyond session_start: duet itself holds submits until the
        // program is ready (the profile's ready_text for Qwen).
    }

    /// Qwen with the profile and settings file of docs/qwen-profile.md
    /// (see [`qwen::documented_profile`]). `None` as for [`Program::new`].
    pub async fn documented_qwen(version: QwenVersion) -> Option<Self> {
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

    /// A test server offering only this program. Real Qwen gets the grace
    /// period of a real duet and more: after its `session_end` it took over
    /// 2 s (the test servers' grace) to exit at a load of 14 on 2 cores, and
    /// was then killed; the DELETE scenario checks the exit it chose.
    pub async fn server(&self) -> TestServer {
        let profiles = self.profiles();
        let qwen = self.kind.is_qwen();
        TestServer::start_with(|o| {
            o.profiles = profiles;
            if qwen {
                o.limits.kill_grace = std::time::Duration::from_secs(10);
            }
        })
        .await
    }

    pub fn profiles(&self) -> Profiles {
        Profiles::from_config(
            ConfigFile {
                default_profile: None,
                profiles: vec![self.profile.clone()],
                tokens: Vec::new(),
                ..Default::default()
            },
            env!("CARGO_BIN_EXE_duet").into(),
        )
        .expect("agent profile")
    }
}

/// One session of a program behind a test server, with one client attached.
pub struct Run {
    pub program: Program,
    pub server: Option<TestServer>,
    pub session: SessionInfo,
    pub client: Client,
}

impl Run {
    /// Starts a server offering only `kind`, creates a session and attaches.
    /// Does not wait for the program's handshake.
    pub async fn start(kind: Kind) -> Option<Self> {
        Some(Self::start_program(Program::new(kind).await?).await)
    }

    /// [`Run::start`] for a program set up by the caller.
    pub async fn start_program(program: Program) -> Self {
        let server = program.server().await;
        let session = server.create("agent").await;
        let client = server.connect(session.id, None).await;
        Self {
            program,
            server: Some(server),
            session,
            client,
        }
    }

    /// [`Run::start`], then waits for `session_start` and for the program to
    /// be ready (see [`Program::wait_ready`]).
    pub async fn started(kind: Kind) -> Option<Self> {
        let mut run = Self::start(kind).await?;
        run.wait_ready().await;
        Some(run)
    }

    /// Waits for `session_start`, then for the program to be ready.
    pub async fn wait_ready(&mut self) {
        self.client
            .until_event(|e| e["subtype"] == "session_start")
            .await;
        self.program.wait_ready(&mut self.client).await;
    }

    /// The session's directory (events, input, work dir; Qwen's HOME in
    /// the documented profile).
    pub fn session_dir(&self) -> Option<std::path::PathBuf> {
        let server = self.server.as_ref()?;
        Some(
            server
                .state_dir
                .path()
                .join("state")
                .join(self.session.id.to_string()),
        )
    }

    pub fn server(&self) -> &TestServer {
        self.server.as_ref().unwrap()
    }

    /// Stops the server, which ends the program and waits for it.
    pub async fn finish(mut self) {
        if let Some(server) = self.server.take() {
            server.shutdown().await;
        }
    }
}

impl Drop for Run {
    /// On a failure, says what the program did: the events seen, the screen,
    /// and for Qwen the model requests and its debug log (where dropped
    /// input shows up).
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let events: Vec<String> = self
            .client
            .texts
            .iter()
            .filter_map(|m| match m {
                ServerMessage::Event { seq, event, .. } => Some(format!(
                    "  {seq}: {} {}",
                    kind(event),
                    event["subtype"]
                        .as_str()
                        .or(event["event"]["type"].as_str())
                        .unwrap_or_default()
                )),
                ServerMessage::Approval(a) => Some(format!(
                    "  approval {} {:?} by {:?}",
                    a.request_id, a.state, a.decided_by
                )),
                _ => None,
            })
            .collect();
        eprintln!(
            "--- {:?} failed; events and approvals seen:\n{}\n--- screen:\n{}",
            self.program.kind,
            events.join("\n"),
            self.client.screen.screen().contents()
        );
        if let Some(mock) = &self.program.mock {
            eprintln!("--- model requests:\n{}", mock.summary());
        }
        let home = match &self.program.home {
            Some(home) => Some(home.path().to_path_buf()),
            None if self.program.kind.is_qwen() => self.session_dir(),
            None => None,
        };
        if let Some(home) = home {
            eprintln!(
                "--- qwen debug log (remote input, startup, errors):\n{}",
                qwen::debug_log_summary(&home)
            );
        }
    }
}

/// The typed text of a `user` event (`None` for tool results).
pub fn user_text(ev: &Value) -> Option<String> {
    if kind(ev) != "user" {
        return None;
    }
    let content = &ev["message"]["content"];
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) if blocks.iter().all(|b| b["type"] == "text") => Some(
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<String>(),
        ),
        _ => None,
    }
}

pub use crate::support::assistant_text;

/// The `tool_result` blocks of a `user` event.
pub fn tool_results(ev: &Value) -> Vec<Value> {
    if kind(ev) != "user" {
        return Vec::new();
    }
    ev["message"]["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b["type"] == "tool_result")
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// Waits for the `user` event carrying `text`; returns its seq.
pub async fn user_event(c: &mut Client, text: &str) -> u64 {
    c.until_event(|e| user_text(e).as_deref() == Some(text))
        .await
        .0
}

/// Waits for an `assistant` message containing `fragment`; returns its seq.
pub async fn reply_containing(c: &mut Client, fragment: &str) -> u64 {
    c.until_event(|e| assistant_text(e).contains(fragment))
        .await
        .0
}

/// The next approval that is pending.
pub async fn pending_approval(c: &mut Client) -> Approval {
    match c
        .until(|m| matches!(m, ServerMessage::Approval(a) if a.state == ApprovalState::Pending))
        .await
    {
        ServerMessage::Approval(a) => a,
        _ => unreachable!(),
    }
}

/// The approval `request_id` once it is no longer pending.
pub async fn decided(c: &mut Client, request_id: &str) -> Approval {
    match c
        .until(|m| {
            matches!(m, ServerMessage::Approval(a)
                if a.request_id == request_id && a.state != ApprovalState::Pending)
        })
        .await
    {
        ServerMessage::Approval(a) => a,
        _ => unreachable!(),
    }
}

/// Sends `approve` and returns the server's `ack` or `error` for it.
pub async fn approve(c: &mut Client, request_id: &str, allowed: bool) -> ServerMessage {
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

/// Waits for the `exit` message.
pub async fn exit(c: &mut Client) -> ExitInfo {
    match c.until(|m| matches!(m, ServerMessage::Exit(_))).await {
        ServerMessage::Exit(e) => e,
        _ => unreachable!(),
    }
}

/// Whether a submit's answer says it was held (not written yet).
pub fn queued(ack: &ServerMessage) -> bool {
    match ack {
        ServerMessage::Ack { queued, .. } => *queued,
        other => panic!("submit was refused: {other:?}"),
    }
}
