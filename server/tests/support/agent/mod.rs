//! The one end-to-end harness for real agents behind duet: a [`Run`] is a
//! test server offering one agent's profile, a session of it, a client
//! attached, and the agent's setup (its workspace, its HOME, the mock
//! model it talks to); it waits for the handshake, for a reply, for the
//! turn to settle and for an approval to be decided, answers approvals,
//! ends and resumes the session, and on a failure reports what the agent
//! did (the chat, the screen, the model requests, its logs). The agents'
//! own setups are in `claude`, `qwen`, `gemini` and `codex`; `program` is
//! the demo agent and Qwen behind one description for `agents_e2e`;
//! `scenario` has the steps their tests share.
//!
//! Include from a test binary, after `mod support;` and the mocks, with
//! `#[path = "support/agent/mod.rs"] mod agent;`.

#![allow(dead_code)]

pub(crate) mod claude;
pub(crate) mod codex;
pub(crate) mod gemini;
pub(crate) mod program;
pub(crate) mod qwen;
pub(crate) mod scenario;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use duet_protocol::rest::{Approval, ApprovalState, SessionInfo};
use duet_protocol::ws::{ClientMessage, ServerMessage};
use duet_server::config::Profile;
use duet_server::ServerOptions;
use serde_json::Value;
use tempfile::TempDir;

use crate::mocks::anthropic::MockAnthropic;
use crate::mocks::chat_completions::MockLlm;
use crate::mocks::gemini::MockGemini;
use crate::mocks::openai_responses::MockResponses;
use crate::mocks::TOOL_FILE;
use crate::support::{assistant_text, kind, profiles_of, Client, TestServer, DEADLINE};

/// A mock model, as a test and a failure report see it.
pub(crate) trait Mock {
    /// The bodies of the agent's main-loop requests, in order.
    fn requests(&self) -> Vec<Value>;
    /// One line per request it received.
    fn summary(&self) -> String;
}

macro_rules! mocks {
    ($($mock:ty),*) => {$(
        impl Mock for $mock {
            fn requests(&self) -> Vec<Value> {
                <$mock>::requests(self)
            }

            fn summary(&self) -> String {
                <$mock>::summary(self)
            }
        }
    )*};
}
mocks!(MockLlm, MockAnthropic, MockGemini, MockResponses);

/// What a [`Run`] runs: an agent's profile and what it needs around it.
pub(crate) trait Agent {
    /// Its duet profile; the test server offers it alone.
    fn profile(&self) -> Profile;
    /// Where it runs its tools.
    fn workspace(&self) -> &Path;
    /// What a failure report adds to the chat and the screen (the model
    /// requests, logs); `session_dir` is the session's directory.
    fn report(&self, session_dir: &Path) -> String;
    /// How long its handshake may take.
    fn patience(&self) -> Duration {
        DEADLINE
    }
    /// Changes to the test server's options.
    fn adjust(&self, _options: &mut ServerOptions) {}
}

/// An agent with a workspace, a private HOME and a mock model: what every
/// real agent but `program`'s needs.
pub(crate) struct Setup<M> {
    pub profile: Profile,
    pub workspace: TempDir,
    pub home: TempDir,
    pub mock: M,
    /// How long its handshake may take.
    pub patience: Duration,
}

impl<M: Mock> Setup<M> {
    /// A setup for `profile`, whose handshake comes within [`DEADLINE`].
    pub(crate) fn new(profile: Profile, workspace: TempDir, home: TempDir, mock: M) -> Self {
        Self {
            profile,
            workspace,
            home,
            mock,
            patience: DEADLINE,
        }
    }
}

impl<M: Mock> Agent for Setup<M> {
    fn profile(&self) -> Profile {
        self.profile.clone()
    }

    fn workspace(&self) -> &Path {
        self.workspace.path()
    }

    fn report(&self, _session_dir: &Path) -> String {
        format!("--- model requests:\n{}", self.mock.summary())
    }

    fn patience(&self) -> Duration {
        self.patience
    }
}

/// A test server offering `program` alone.
pub(crate) async fn serve<A: Agent>(program: &A) -> TestServer {
    let profiles = profiles_of(vec![program.profile()]);
    TestServer::start_with(|o| {
        o.profiles = profiles;
        program.adjust(o);
    })
    .await
}

/// One session of an agent behind a test server, with one client attached.
pub(crate) struct Run<A: Agent> {
    pub program: A,
    pub session: SessionInfo,
    pub client: Client,
    server: Option<TestServer>,
}

impl<A: Agent> Run<A> {
    /// Starts a server offering only `program`, creates a session of it and
    /// attaches. Does not wait for the agent's handshake.
    pub(crate) async fn start(program: A) -> Self {
        let profile = program.profile();
        let server = serve(&program).await;
        let session = server.create(&profile.name).await;
        if let Some(channel) = profile.channel {
            assert_eq!(session.channel.kind, channel.as_str());
        }
        let client = server.connect(session.id, None).await;
        Self::attached(program, server, session, client)
    }

    /// A run of a session the caller created and attached to.
    pub(crate) fn attached(
        program: A,
        server: TestServer,
        session: SessionInfo,
        client: Client,
    ) -> Self {
        Self {
            program,
            session,
            client,
            server: Some(server),
        }
    }

    /// [`Run::start`], then waits for the agent's handshake
    /// (`session_start`); prints how long it took.
    pub(crate) async fn started(program: A) -> Self {
        let created = Instant::now();
        let mut run = Self::start(program).await;
        run.handshake().await;
        eprintln!(
            "measured: {} start to session_start {:?}",
            run.session.profile,
            created.elapsed()
        );
        run
    }

    /// Waits for `session_start`, as long as the agent's patience.
    pub(crate) async fn handshake(&mut self) -> Value {
        handshake(&mut self.client, self.program.patience()).await
    }

    /// The session's id.
    pub(crate) fn id(&self) -> duet_protocol::ids::SessionId {
        self.session.id
    }

    pub(crate) fn server(&self) -> &TestServer {
        self.server.as_ref().expect("the server runs")
    }

    /// The session's directory (events, input, work dir).
    pub(crate) fn session_dir(&self) -> PathBuf {
        self.server()
            .state_dir
            .path()
            .join("state")
            .join(self.session.id.to_string())
    }

    /// The `session_start` this client has received.
    pub(crate) fn session_start(&self) -> Value {
        self.client
            .texts
            .iter()
            .find_map(|m| match m {
                ServerMessage::Event { event, .. } if event["subtype"] == "session_start" => {
                    Some(event.clone())
                }
                _ => None,
            })
            .expect("session_start")
    }

    /// Waits for an `assistant` message containing `fragment`; its seq.
    pub(crate) async fn reply(&mut self, fragment: &str) -> u64 {
        reply_containing(&mut self.client, fragment).await
    }

    /// Waits for the turn's `result`.
    pub(crate) async fn result(&mut self) -> Value {
        self.client.until_event(|e| kind(e) == "result").await.1
    }

    /// Approval `request_id` once it is no longer pending (whether or not
    /// the agent confirmed it yet).
    pub(crate) async fn decided(&mut self, request_id: &str) -> Approval {
        decided(&mut self.client, request_id).await
    }

    /// Allows or denies approval `request_id` (no answer awaited).
    pub(crate) async fn decide(&mut self, request_id: &str, allowed: bool) {
        self.approve(request_id, Some(allowed), None).await;
    }

    /// Answers approval `request_id` with the agent's option `option`.
    pub(crate) async fn choose(&mut self, request_id: &str, option: &str) {
        self.approve(request_id, None, Some(option.into())).await;
    }

    async fn approve(&mut self, request_id: &str, allowed: Option<bool>, option: Option<String>) {
        self.client
            .send(&ClientMessage::Approve {
                request_id: request_id.into(),
                allowed,
                option,
                id: None,
            })
            .await;
    }

    /// The file the scripted tool call makes, in the workspace.
    pub(crate) fn tool_file(&self) -> PathBuf {
        self.program.workspace().join(TOOL_FILE)
    }

    /// Ends the agent with DELETE and waits for its `exit`.
    pub(crate) async fn delete(&mut self) {
        let resp = self
            .server()
            .delete(&format!("/api/sessions/{}", self.session.id))
            .await;
        assert!(resp.status().is_success(), "{}", resp.status());
        self.client.exited().await;
    }

    /// Resumes the ended session: the new session's info, a client of it
    /// and its `session_start` (awaited as long as the agent's patience).
    pub(crate) async fn resume(&self) -> (SessionInfo, Client, Value) {
        let resp = self
            .server()
            .post_json(
                &format!("/api/sessions/{}/resume", self.session.id),
                serde_json::json!({}),
            )
            .await;
        assert_eq!(resp.status(), 201);
        let resumed: SessionInfo = resp.json().await.unwrap();
        assert_eq!(resumed.resumed_from, Some(self.session.id));
        let mut client = self.server().connect(resumed.id, None).await;
        let start = handshake(&mut client, self.program.patience()).await;
        (resumed, client, start)
    }

    /// Stops the server, which ends the agent and waits for it.
    pub(crate) async fn finish(mut self) {
        if let Some(server) = self.server.take() {
            server.shutdown().await;
        }
    }
}

impl<A: Agent> Drop for Run<A> {
    /// On a failure, says what the agent did: the events and approvals
    /// seen, the screen, and what its setup adds (model requests, logs).
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
            "--- {} failed; events and approvals seen:\n{}\n--- screen:\n{}",
            self.session.profile,
            events.join("\n"),
            self.client.screen.screen().contents()
        );
        if let Some(server) = &self.server {
            let dir = server
                .state_dir
                .path()
                .join("state")
                .join(self.session.id.to_string());
            eprintln!("{}", self.program.report(&dir));
        }
    }
}

/// Waits for `session_start` up to `patience`: in slices shorter than the
/// client's own deadline, as an agent may say nothing for longer while it
/// starts (Qwen 7-10 s, the Claude ACP adapter more on 2 busy cores).
pub(crate) async fn handshake(c: &mut Client, patience: Duration) -> Value {
    let deadline = Instant::now() + patience;
    loop {
        if let Ok((_, e)) = tokio::time::timeout(
            Duration::from_secs(15).min(patience),
            c.until_event(|e| e["subtype"] == "session_start"),
        )
        .await
        {
            return e;
        }
        assert!(
            Instant::now() < deadline,
            "no session_start in {patience:?}"
        );
    }
}

/// The typed text of a `user` event (`None` for tool results).
pub(crate) fn user_text(ev: &Value) -> Option<String> {
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

/// The `tool_result` blocks of a `user` event.
pub(crate) fn tool_results(ev: &Value) -> Vec<Value> {
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
pub(crate) async fn user_event(c: &mut Client, text: &str) -> u64 {
    c.until_event(|e| user_text(e).as_deref() == Some(text))
        .await
        .0
}

/// Waits for an `assistant` message containing `fragment`; returns its seq.
pub(crate) async fn reply_containing(c: &mut Client, fragment: &str) -> u64 {
    c.until_event(|e| assistant_text(e).contains(fragment))
        .await
        .0
}

/// The approval `request_id` once it is no longer pending.
pub(crate) async fn decided(c: &mut Client, request_id: &str) -> Approval {
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

/// An ACP profile of `name` running `command args` in `cwd` with `env`,
/// resumed with the same command (duet loads the conversation).
pub(crate) fn acp_profile(
    name: &str,
    command: &Path,
    args: Vec<String>,
    cwd: &Path,
    env: std::collections::BTreeMap<String, String>,
) -> Profile {
    Profile {
        name: name.into(),
        description: None,
        command: command.to_string_lossy().into_owned(),
        args: args.clone(),
        env,
        cwd: Some(cwd.to_string_lossy().into_owned()),
        ready_text: None,
        channel: Some(duet_server::config::ChannelKind::Acp),
        resume_args: Some(args),
        extra_args: false,
    }
}
