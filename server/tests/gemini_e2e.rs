//! Real Gemini CLI 0.61.0 in its TUI through duet, its chat built from its
//! hooks (`channel = "gemini"`, docs/gemini-cli.md), against the Gemini API
//! mock served here: a prompt from the browser is answered in the chat,
//! streamed; approvals read from its dialog are answered from the browser
//! (a shell call allowed runs, one denied does not, a new file written
//! with the edit dialog's own choices) or in the terminal ("1" allows,
//! "3" says no: the card flips either way); a prompt typed in the terminal
//! shows in the chat; `/exit` ends the session with status 0; an ended
//! conversation resumes with its history.
//!
//! Needs `scripts/install-gemini.sh` (under `DUET_CACHE_DIR`); without it
//! these fail, unless `DUET_SKIP_GEMINI=1`, which makes them print a skip
//! line and pass. Each test is one session (two for resume); every wait is
//! on an event or the screen, bounded by the support's deadline.

#[path = "support/mocks/mod.rs"]
mod mocks;
mod support;

use std::path::PathBuf;
use std::time::Instant;

use duet_protocol::ids::SessionId;
use duet_protocol::rest::{Approval, ApprovalOptionKind, ApprovalState, Decider};
use duet_protocol::ws::{ClientMessage, ServerMessage};
use duet_server::config::{self, ChannelKind, Profile};
use mocks::gemini::{write_settings, MockGemini, WRITE_CONTENT, WRITE_FILE, WRITE_TRIGGER};
use mocks::{reply_to, AFTER_TOOL, TOOL_COMMAND, TOOL_FILE, TOOL_TRIGGER};
use serde_json::json;
use support::{assistant_text, kind, Client, TestServer};
use tempfile::TempDir;

/// One Gemini session behind a test server, a client attached.
struct Run {
    workspace: TempDir,
    _home: TempDir,
    mock: MockGemini,
    server: TestServer,
    client: Client,
    id: SessionId,
}

impl Run {
    /// Starts Gemini in duet (the built-in profile's arguments) and waits
    /// for its handshake.
    async fn start() -> Option<Run> {
        let bin = support::installed::gemini()?;
        let home = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        write_settings(home.path());
        let mock = MockGemini::start().await;
        let mut env: std::collections::BTreeMap<String, String> = config::GEMINI_ENV
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        env.extend(mock.env(home.path()));
        let profile = Profile {
            name: "gemini".into(),
            description: None,
            command: bin.to_string_lossy().into_owned(),
            args: config::GEMINI_ARGS.map(String::from).to_vec(),
            env,
            cwd: Some(workspace.path().to_string_lossy().into_owned()),
            ready_text: Some(config::GEMINI_READY_TEXT.into()),
            channel: Some(ChannelKind::Gemini),
            resume_args: Some(config::GEMINI_RESUME_ARGS.map(String::from).to_vec()),
        };
        let server = TestServer::with_profiles(vec![profile]).await;
        let created = Instant::now();
        let session = server.create("gemini").await;
        assert_eq!(session.channel.kind, "gemini");
        let mut client = server.connect(session.id, None).await;
        client
            .until_event(|e| e["subtype"] == "session_start")
            .await;
        eprintln!("measured: start to session_start {:?}", created.elapsed());
        Some(Run {
            workspace,
            _home: home,
            mock,
            server,
            client,
            id: session.id,
        })
    }

    async fn reply(&mut self, text: &str) {
        self.client
            .until_event(|e| assistant_text(e).contains(text))
            .await;
    }

    async fn turn_over(&mut self) {
        self.client.until_event(|e| kind(e) == "result").await;
    }

    async fn choose(&mut self, a: &Approval, kind: ApprovalOptionKind) {
        let option = a
            .options
            .iter()
            .find(|o| o.kind == kind)
            .unwrap_or_else(|| panic!("no {kind:?} option in {:?}", a.options))
            .id
            .clone();
        self.client
            .send(&ClientMessage::Approve {
                request_id: a.request_id.clone(),
                allowed: None,
                option: Some(option),
                id: None,
            })
            .await;
    }

    /// The approval once the agent has confirmed its outcome.
    async fn settled(&mut self, request_id: &str) -> Approval {
        match self
            .client
            .until(|m| {
                matches!(m, ServerMessage::Approval(a)
                    if a.request_id == request_id && a.state != ApprovalState::Pending && a.confirmed)
            })
            .await
        {
            ServerMessage::Approval(a) => a,
            _ => unreachable!(),
        }
    }

    /// Presses Enter until Gemini takes what its input box holds. An
    /// Enter read within 30 ms of the last typed key is a newline to it (a
    /// person types slower than the test); then Backspace takes it back,
    /// as a person would.
    async fn enter_until_taken(&mut self) -> serde_json::Value {
        for _ in 0..4 {
            self.client.keys(b"\r").await;
            let taken = tokio::time::timeout(
                std::time::Duration::from_secs(3),
                self.client.until_event(|e| kind(e) == "user"),
            )
            .await;
            if let Ok((_, user)) = taken {
                return user;
            }
            self.client.keys(b"\x7f").await;
        }
        panic!("Gemini took nothing after four Enter presses");
    }

    fn tool_file(&self) -> PathBuf {
        self.workspace.path().join(TOOL_FILE)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_and_approvals_from_the_browser() {
    let Some(mut run) = Run::start().await else {
        return;
    };
    // Sent before Gemini can take it: held until its input box shows.
    run.client.submit("hello there").await;
    let (_, user) = run.client.until_event(|e| kind(e) == "user").await;
    assert_eq!(user["message"]["content"][0]["text"], "hello there");
    // Streamed: a delta before the whole message.
    run.client
        .until_event(|e| e["event"]["delta"]["type"] == "text_delta")
        .await;
    run.reply(&reply_to("hello there")).await;
    run.turn_over().await;

    // A shell call, allowed once from the browser with the dialog's words.
    run.client.submit(TOOL_TRIGGER).await;
    let a = run.client.pending_approval().await;
    assert_eq!(a.tool_name, "run_shell_command");
    assert_eq!(a.input["command"], TOOL_COMMAND);
    assert!(a.tool_use_id.is_some(), "bound to its tool card");
    let labels: Vec<&str> = a.options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "Allow once",
            "Allow for this session",
            "No, suggest changes"
        ]
    );
    run.choose(&a, ApprovalOptionKind::AllowOnce).await;
    let done = run.settled(&a.request_id).await;
    assert_eq!(done.state, ApprovalState::Allowed);
    assert_eq!(done.decided_by, Some(Decider::Client));
    run.reply(AFTER_TOOL).await;
    run.turn_over().await;
    assert!(run.tool_file().exists(), "{}", run.mock.summary());

    // Denied from the browser: it does not run, the turn is over, the
    // next prompt is answered.
    std::fs::remove_file(run.tool_file()).unwrap();
    run.client.submit(TOOL_TRIGGER).await;
    let b = run.client.pending_approval().await;
    run.choose(&b, ApprovalOptionKind::RejectOnce).await;
    let done = run.settled(&b.request_id).await;
    assert_eq!(done.state, ApprovalState::Denied);
    run.client.submit("after the denial").await;
    run.reply(&reply_to("after the denial")).await;
    assert!(!run.tool_file().exists());

    // A new file: the edit dialog has four choices, the browser three
    // (the external editor is the terminal's).
    run.turn_over().await;
    run.client.submit(WRITE_TRIGGER).await;
    let c = run.client.pending_approval().await;
    assert_eq!(c.tool_name, "write_file");
    assert_eq!(c.options.len(), 3, "{:?}", c.options);
    assert_eq!(c.options[2].id, "4", "{:?}", c.options);
    run.choose(&c, ApprovalOptionKind::AllowOnce).await;
    assert_eq!(
        run.settled(&c.request_id).await.state,
        ApprovalState::Allowed
    );
    run.reply(AFTER_TOOL).await;
    let written = std::fs::read_to_string(run.workspace.path().join(WRITE_FILE)).unwrap();
    assert_eq!(written, WRITE_CONTENT);
    run.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_answers_too_and_typed_prompts_show_in_the_chat() {
    let Some(mut run) = Run::start().await else {
        return;
    };
    // Typed in the terminal, as a person would: shown in the chat.
    run.client.until_screen(config::GEMINI_READY_TEXT).await;
    run.client.keys(b"typed in the terminal").await;
    run.client.until_screen("typed in the terminal").await;
    let user = run.enter_until_taken().await;
    assert_eq!(
        user["message"]["content"][0]["text"],
        "typed in the terminal"
    );
    run.reply(&reply_to("typed in the terminal")).await;
    run.turn_over().await;

    // "1. Allow once" in the terminal: the card flips to allowed there.
    run.client.submit(TOOL_TRIGGER).await;
    let a = run.client.pending_approval().await;
    run.client.until_screen("Allow once").await;
    run.client.keys(b"1").await;
    let done = run.settled(&a.request_id).await;
    assert_eq!(done.state, ApprovalState::Allowed);
    assert_eq!(done.decided_by, Some(Decider::Terminal));
    run.reply(AFTER_TOOL).await;
    run.turn_over().await;
    assert!(run.tool_file().exists());

    // "3. No" in the terminal fires no hook: the transcript tells.
    std::fs::remove_file(run.tool_file()).unwrap();
    run.client.submit(TOOL_TRIGGER).await;
    let b = run.client.pending_approval().await;
    run.client.until_screen("No, suggest changes").await;
    run.client.keys(b"3").await;
    let done = run.settled(&b.request_id).await;
    assert_eq!(done.state, ApprovalState::Denied);
    assert_eq!(done.decided_by, Some(Decider::Terminal));
    let (_, end) = run.client.until_event(|e| kind(e) == "result").await;
    assert_eq!(end["subtype"], "interrupted");
    assert!(!run.tool_file().exists());

    // Held until the turn is over, then answered; /exit ends it all.
    run.client.submit("still there?").await;
    run.reply(&reply_to("still there?")).await;
    run.turn_over().await;
    run.client.submit("/exit").await;
    run.client
        .until_event(|e| e["subtype"] == "session_end")
        .await;
    let exit = match run
        .client
        .until(|m| matches!(m, ServerMessage::Exit(_)))
        .await
    {
        ServerMessage::Exit(e) => e,
        _ => unreachable!(),
    };
    assert_eq!(exit.code, Some(0), "{exit:?}");
    run.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_conversation_is_resumed_with_its_history() {
    let Some(mut run) = Run::start().await else {
        return;
    };
    run.client.submit("remember the word kiwi").await;
    run.reply(&reply_to("remember the word kiwi")).await;
    run.turn_over().await;
    run.client.submit("/exit").await;
    run.client
        .until(|m| matches!(m, ServerMessage::Exit(_)))
        .await;
    let ended = run.server.info(run.id).await;
    assert!(ended.resumable, "{ended:?}");
    let agent_id = ended.agent_session_id.clone().unwrap();

    let resp = run
        .server
        .post_json(&format!("/api/sessions/{}/resume", run.id), json!({}))
        .await;
    assert_eq!(resp.status(), 201);
    let resumed: duet_protocol::rest::SessionInfo = resp.json().await.unwrap();
    let mut c = run.server.connect(resumed.id, None).await;
    let (_, start) = c.until_event(|e| e["subtype"] == "session_start").await;
    assert_eq!(start["data"]["source"], "resume", "{start}");
    assert_eq!(start["data"]["session_id"], agent_id.as_str());
    c.submit("what was the word?").await;
    c.until_event(|e| assistant_text(e).contains("what was the word?"))
        .await;
    // Gemini sent the earlier conversation with the new prompt.
    let last = run.mock.requests().last().cloned().unwrap();
    assert!(
        last.to_string().contains("remember the word kiwi"),
        "the resumed request carries the history: {}",
        run.mock.summary()
    );
    run.server.shutdown().await;
}
