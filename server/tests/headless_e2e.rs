//! Real agents headless through duet, on pipes, against the mock model
//! APIs served here:
//!
//! - `qwen_0_24` (`channel = "stream_json"`): Qwen Code 0.24.4 with
//!   `--input-format stream-json --output-format stream-json
//!   --include-partial-messages` (the `initialize` duet sends first is what
//!   makes it ask for tool permission over the control channel) answers a
//!   prompt with a streamed reply, runs a tool approved from the browser,
//!   does not run one denied, and ends a turn interrupted mid-approval;
//! - `claude_2_1` (`stream_json`): Claude Code 2.1.330 in its SDK mode
//!   (`-p`, `--permission-prompt-tool stdio`), the same;
//! - `qwen_0_24_acp` (`channel = "acp"`): Qwen Code 0.24.4 with `--acp`,
//!   duet its ACP client: the same, with Qwen's own permission options.
//!
//! Needs Qwen Code 0.24.4 and Node 24 under `DUET_CACHE_DIR` (default
//! `<repo>/.cache`; `scripts/install-qwen.sh 0.24.4`). Without them these
//! fail, unless `DUET_SKIP_QWEN=1`.

#[allow(dead_code)]
#[path = "agents/mock_anthropic.rs"]
mod mock_anthropic;
#[allow(dead_code)]
#[path = "agents/mock_llm.rs"]
mod mock_llm;
mod support;

use std::path::PathBuf;

use duet_protocol::ids::SessionId;
use duet_protocol::rest::{Approval, ApprovalState, Decider};
use duet_protocol::ws::{ClientMessage, ErrorCode, ServerMessage};
use duet_server::config::{ChannelKind, Profile};
use mock_llm::MockLlm;
use serde_json::{json, Value};
use support::installed::{cache_dir, node24_and};
use support::{assistant_text, kind, Client, TestServer};
use tempfile::TempDir;

const QWEN_VERSION: &str = "0.24.4";

/// Node 24 and Qwen Code's `cli.js`; `None`: skip (`DUET_SKIP_QWEN=1`).
fn qwen() -> Option<(PathBuf, PathBuf)> {
    let cli = cache_dir().join(format!(
        "qwen-code-{QWEN_VERSION}/node_modules/@qwen-code/qwen-code/cli.js"
    ));
    node24_and(
        &cli,
        &format!("Qwen Code {QWEN_VERSION}"),
        "DUET_SKIP_QWEN",
        &format!("scripts/install-qwen.sh {QWEN_VERSION}"),
    )
}

/// One headless Qwen session behind a test server, a client attached.
struct Run {
    workspace: TempDir,
    _home: TempDir,
    mock: MockLlm,
    server: TestServer,
    client: Client,
    id: SessionId,
}

impl Run {
    async fn qwen() -> Option<Run> {
        Self::qwen_with(
            ChannelKind::StreamJson,
            &[
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--include-partial-messages",
            ],
        )
        .await
    }

    async fn qwen_with(channel: ChannelKind, qwen_args: &[&str]) -> Option<Run> {
        let (node, cli) = qwen()?;
        let home = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".qwen")).unwrap();
        let settings = json!({
            "general": {"enableAutoUpdate": false},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "security": {"auth": {"selectedType": "openai"}},
            "model": {"name": mock_llm::MODEL},
            "ide": {"enabled": false, "hasSeenNudge": true},
            "memory": {"enableManagedAutoMemory": false},
            "ui": {"enableUserFeedback": false},
        });
        std::fs::write(
            home.path().join(".qwen/settings.json"),
            settings.to_string(),
        )
        .unwrap();
        let mock = MockLlm::start().await;
        let profile = Profile {
            extra_args: false,
            name: "qwen".into(),
            description: None,
            command: node.to_string_lossy().into_owned(),
            args: [
                "--expose-gc".to_string(),
                cli.to_string_lossy().into_owned(),
            ]
            .into_iter()
            .chain(qwen_args.iter().map(|a| a.to_string()))
            .collect(),
            env: [
                ("HOME", home.path().to_string_lossy().into_owned()),
                ("OPENAI_API_KEY", "sk-mock".into()),
                ("OPENAI_BASE_URL", mock.base_url.clone()),
                ("OPENAI_MODEL", mock_llm::MODEL.into()),
                ("QWEN_CODE_NO_RELAUNCH", "1".into()),
                ("QWEN_CODE_DISABLE_PRECONNECT", "1".into()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
            cwd: Some(workspace.path().to_string_lossy().into_owned()),
            ready_text: None,
            channel: Some(channel),
            resume_args: None,
        };
        let mut profile = profile;
        // Continues the conversation Qwen reported (ACP: duet loads it).
        let mut resume = profile.args.clone();
        if channel == ChannelKind::StreamJson {
            resume.extend(["--resume".into(), "{agent_session_id}".into()]);
        }
        profile.resume_args = Some(resume);
        let server = TestServer::with_profiles(vec![profile]).await;
        let created = std::time::Instant::now();
        let session = server.create("qwen").await;
        assert_eq!(session.channel.kind, channel.as_str());
        let mut client = server.connect(session.id, None).await;
        // Qwen takes 7-10 s to start on 2 busy cores; `session_start` is
        // duet's, once Qwen answered `initialize`.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let found = tokio::time::timeout(
                std::time::Duration::from_secs(15),
                client.until_event(|e| e["subtype"] == "session_start"),
            )
            .await;
            if found.is_ok() || std::time::Instant::now() > deadline {
                break;
            }
        }
        eprintln!(
            "measured: {} start to session_start {:?}",
            channel.as_str(),
            created.elapsed()
        );
        Some(Run {
            workspace,
            _home: home,
            mock,
            server,
            client,
            id: session.id,
        })
    }

    async fn settled(&mut self, id: &str) -> Approval {
        match self
            .client
            .until(|m| matches!(m, ServerMessage::Approval(a) if a.request_id == id && a.state != ApprovalState::Pending))
            .await
        {
            ServerMessage::Approval(a) => a,
            _ => unreachable!(),
        }
    }

    async fn decide(&mut self, request_id: &str, allowed: bool) {
        self.client
            .send(&ClientMessage::Approve {
                request_id: request_id.into(),
                allowed: Some(allowed),
                option: None,
                id: None,
            })
            .await;
    }

    async fn reply(&mut self, fragment: &str) -> u64 {
        self.client
            .until_event(|e| assistant_text(e).contains(fragment))
            .await
            .0
    }

    async fn result(&mut self) -> Value {
        self.client.until_event(|e| kind(e) == "result").await.1
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "--- model requests:\n{}\n--- screen:\n{}",
                self.mock.summary(),
                self.client.screen.screen().contents()
            );
        }
    }
}

mod qwen_0_24 {
    use super::*;

    /// A prompt, a streamed reply; a tool approved in the browser runs,
    /// one denied does not, and the prompt after it is answered; keys are
    /// refused; DELETE ends Qwen.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn prompt_reply_and_tools_approved_and_denied_over_the_control_channel() {
        let Some(mut run) = Run::qwen().await else {
            return;
        };
        let c = &mut run.client;
        let sent = std::time::Instant::now();
        c.submit("hello there").await;
        c.until_event(|e| kind(e) == "stream_event" && e["event"]["delta"]["type"] == "text_delta")
            .await;
        let first = sent.elapsed();
        run.reply(&mock_llm::reply_to("hello there")).await;
        assert_eq!(run.result().await["is_error"], false);
        eprintln!(
            "measured: stream_json submit to first delta {first:?}, to result {:?}",
            sent.elapsed()
        );

        // Allowed from the browser.
        run.client.submit(mock_llm::TOOL_TRIGGER).await;
        let a = run.client.pending_approval().await;
        assert_eq!(a.tool_name, "run_shell_command");
        assert_eq!(a.input["command"], mock_llm::TOOL_COMMAND);
        run.decide(&a.request_id, true).await;
        let done = run.settled(&a.request_id).await;
        assert_eq!(done.state, ApprovalState::Allowed);
        assert_eq!(done.decided_by, Some(Decider::Client));
        run.reply(mock_llm::AFTER_TOOL).await;
        run.result().await;
        assert!(run.workspace.path().join("made_by_tool.txt").exists());
        std::fs::remove_file(run.workspace.path().join("made_by_tool.txt")).unwrap();

        // Denied from the browser: the tool does not run.
        run.client
            .submit(&format!("{} again", mock_llm::TOOL_TRIGGER))
            .await;
        let a = run.client.pending_approval().await;
        run.decide(&a.request_id, false).await;
        assert_eq!(
            run.settled(&a.request_id).await.state,
            ApprovalState::Denied
        );
        let r = run.result().await;
        eprintln!("result after a denial: {r}");
        assert!(!run.workspace.path().join("made_by_tool.txt").exists());
        run.client.submit("after the denial").await;
        run.reply(&mock_llm::reply_to("after the denial")).await;

        // No terminal to type into.
        run.client.keys(b"x").await;
        match run
            .client
            .until(|m| matches!(m, ServerMessage::Error { .. }))
            .await
        {
            ServerMessage::Error { code, .. } => assert_eq!(code, ErrorCode::BadMessage),
            _ => unreachable!(),
        }
        let resp = run
            .server
            .delete(&format!("/api/sessions/{}", run.id))
            .await;
        assert!(resp.status().is_success());
        run.client
            .until(|m| matches!(m, ServerMessage::Exit(_)))
            .await;
    }

    /// An interrupt while Qwen waits for an approval ends the turn (the card
    /// is abandoned, Qwen writes its `result`), and the next prompt is
    /// answered.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_interrupt_mid_turn_ends_the_turn() {
        let Some(mut run) = Run::qwen().await else {
            return;
        };
        run.client.submit(mock_llm::TOOL_TRIGGER).await;
        let a = run.client.pending_approval().await;
        run.client.send(&ClientMessage::Cancel { id: None }).await;
        assert_eq!(
            run.settled(&a.request_id).await.state,
            ApprovalState::Abandoned
        );
        let r = run.result().await;
        eprintln!("result after an interrupt: {r}");
        assert!(!run.workspace.path().join("made_by_tool.txt").exists());
        run.client.submit("after the interrupt").await;
        run.reply(&mock_llm::reply_to("after the interrupt")).await;
    }
}

mod claude_2_1 {
    use super::*;

    use super::mock_anthropic;

    const VERSION: &str = "2.1.330";
    const API_KEY: &str = "sk-ant-api03-mock-0123456789abcdefghijKLMNOPQRST";

    fn executable() -> Option<PathBuf> {
        let path = cache_dir().join(format!("claude-code-{VERSION}/node_modules/.bin/claude"));
        if path.is_file() {
            return Some(path);
        }
        if std::env::var("DUET_SKIP_CLAUDE").as_deref() == Ok("1") {
            eprintln!("SKIPPED: Claude Code not found at {}", path.display());
            return None;
        }
        panic!(
            "Claude Code {VERSION} not found at {}; scripts/install-claude.sh, or DUET_SKIP_CLAUDE=1",
            path.display()
        );
    }

    /// Claude Code in its SDK mode (`-p`, stream-json both ways, tool
    /// permission asked over stdio): a prompt is answered, a Bash call
    /// approved from the browser runs, one denied does not.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn prompt_reply_and_tools_approved_and_denied_over_the_control_channel() {
        let Some(bin) = executable() else {
            return;
        };
        let home = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let cwd = workspace.path().canonicalize().unwrap();
        let seed = json!({
            "hasCompletedOnboarding": true,
            "customApiKeyResponses": {"approved": [&API_KEY[API_KEY.len() - 20..]], "rejected": []},
            "projects": {cwd.to_string_lossy(): {"hasTrustDialogAccepted": true}},
        });
        std::fs::write(home.path().join(".claude.json"), seed.to_string()).unwrap();
        let mock = mock_anthropic::MockAnthropic::start().await;
        let profile = Profile {
            extra_args: false,
            name: "claude".into(),
            description: None,
            command: bin.to_string_lossy().into_owned(),
            args: [
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
            .to_vec(),
            env: [
                ("HOME", home.path().to_string_lossy().into_owned()),
                ("ANTHROPIC_BASE_URL", mock.base_url.clone()),
                ("ANTHROPIC_API_KEY", API_KEY.into()),
                ("DISABLE_AUTOUPDATER", "1".into()),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
            cwd: Some(cwd.to_string_lossy().into_owned()),
            ready_text: None,
            channel: Some(ChannelKind::StreamJson),
            resume_args: None,
        };
        let server = TestServer::with_profiles(vec![profile]).await;
        let session = server.create("claude").await;
        let mut c = server.connect(session.id, None).await;
        let report = |c: &Client| {
            format!(
                "--- model requests:\n{}\n--- screen:\n{}",
                mock.summary(),
                c.screen.screen().contents()
            )
        };
        let (_, start) = c.until_event(|e| e["subtype"] == "session_start").await;
        eprintln!("claude session_start: {start}");
        c.submit("hello there").await;
        c.until_event(|e| assistant_text(e).contains(&mock_anthropic::reply_to("hello there")))
            .await;
        c.until_event(|e| kind(e) == "result").await;

        c.submit(mock_anthropic::TOOL_TRIGGER).await;
        let a = match c
            .until(|m| matches!(m, ServerMessage::Approval(a) if a.state == ApprovalState::Pending))
            .await
        {
            ServerMessage::Approval(a) => a,
            _ => unreachable!(),
        };
        assert_eq!(a.tool_name, "Bash", "{}", report(&c));
        c.send(&ClientMessage::Approve {
            request_id: a.request_id.clone(),
            allowed: Some(true),
            option: None,
            id: None,
        })
        .await;
        c.until_event(|e| assistant_text(e).contains(mock_anthropic::AFTER_TOOL))
            .await;
        c.until_event(|e| kind(e) == "result").await;
        assert!(cwd.join("made_by_tool.txt").exists(), "{}", report(&c));
        std::fs::remove_file(cwd.join("made_by_tool.txt")).unwrap();

        c.submit(&format!("{} again", mock_anthropic::TOOL_TRIGGER))
            .await;
        let a = match c
            .until(|m| matches!(m, ServerMessage::Approval(a) if a.state == ApprovalState::Pending))
            .await
        {
            ServerMessage::Approval(a) => a,
            _ => unreachable!(),
        };
        c.send(&ClientMessage::Approve {
            request_id: a.request_id.clone(),
            allowed: Some(false),
            option: None,
            id: None,
        })
        .await;
        let (_, r) = c.until_event(|e| kind(e) == "result").await;
        eprintln!("claude result after a denial: {r}");
        assert!(!cwd.join("made_by_tool.txt").exists());
        // Its conversation id (for resume) comes from its `system/init`.
        let info = server.info(session.id).await;
        assert!(info.agent_session_id.is_some(), "{info:?}");

        // Interrupted while it waits for an approval: the card is
        // abandoned and the turn ends.
        c.submit(&format!("{} once more", mock_anthropic::TOOL_TRIGGER))
            .await;
        let a = match c
            .until(|m| matches!(m, ServerMessage::Approval(a) if a.state == ApprovalState::Pending))
            .await
        {
            ServerMessage::Approval(a) => a,
            _ => unreachable!(),
        };
        c.send(&ClientMessage::Cancel { id: None }).await;
        c.until(|m| {
            matches!(m, ServerMessage::Approval(x)
                if x.request_id == a.request_id && x.state == ApprovalState::Abandoned)
        })
        .await;
        let (_, r) = c.until_event(|e| kind(e) == "result").await;
        eprintln!("claude result after an interrupt: {r}");
        assert!(!cwd.join("made_by_tool.txt").exists());
        c.submit("after the interrupt").await;
        c.until_event(|e| {
            assistant_text(e).contains(&mock_anthropic::reply_to("after the interrupt"))
        })
        .await;
        server.shutdown().await;
    }
}

#[path = "headless_e2e/qwen_acp.rs"]
mod qwen_0_24_acp;

#[path = "headless_e2e/qwen_resume.rs"]
mod qwen_0_24_resume;
