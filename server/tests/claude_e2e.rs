//! Real Claude Code 2.1.330 through duet, its chat built from its hooks
//! (docs/claude-code.md), against a mock Anthropic API served here: a
//! prompt from the browser is answered in the chat; a Bash call approved
//! from the browser runs, one denied does not; one answered in the terminal
//! flips the card; a prompt typed in the terminal shows in the chat; `/exit`
//! ends the session with status 0; the permission mode is shown and
//! switched from the browser.
//!
//! Needs Claude Code installed: `scripts/install-claude.sh` (or
//! `DUET_CLAUDE_BIN`). Without it these fail, unless `DUET_SKIP_CLAUDE=1`,
//! which makes them print a skip line and pass.

#[allow(dead_code)]
#[path = "agents/mock_anthropic.rs"]
mod mock_anthropic;
mod support;

use std::path::{Path, PathBuf};

use duet_protocol::rest::{ApprovalState, Decider};
use duet_protocol::ws::{ClientMessage, ServerMessage};
use duet_server::config::{ChannelKind, Profile};
use mock_anthropic::MockAnthropic;
use serde_json::json;
use support::{kind, Client, TestServer};
use tempfile::TempDir;

const VERSION: &str = "2.1.330";
const API_KEY: &str = "sk-ant-api03-mock-0123456789abcdefghijKLMNOPQRST";

fn executable() -> Option<PathBuf> {
    let path = match std::env::var_os("DUET_CLAUDE_BIN").filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => std::env::var_os("DUET_CACHE_DIR")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.cache"))
            .join(format!("claude-code-{VERSION}/node_modules/.bin/claude")),
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

/// One Claude session behind a test server, a client attached.
struct Run {
    workspace: TempDir,
    _home: TempDir,
    mock: MockAnthropic,
    server: TestServer,
    client: Client,
    id: duet_protocol::ids::SessionId,
}

impl Run {
    /// Starts Claude in duet and waits for its handshake.
    async fn start() -> Option<Run> {
        let bin = executable()?;
        let home = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let cwd = workspace.path().canonicalize().unwrap();
        // What a person answers once: onboarding, the API key, trusting
        // the folder (docs/claude-code.md §2).
        let seed = json!({
            "hasCompletedOnboarding": true,
            "customApiKeyResponses": {"approved": [&API_KEY[API_KEY.len() - 20..]], "rejected": []},
            "projects": {cwd.to_string_lossy(): {"hasTrustDialogAccepted": true}},
        });
        std::fs::write(home.path().join(".claude.json"), seed.to_string()).unwrap();
        let mock = MockAnthropic::start().await;
        let profile = Profile {
            extra_args: false,
            name: "claude".into(),
            description: None,
            command: bin.to_string_lossy().into_owned(),
            args: duet_server::config::CLAUDE_ARGS.map(String::from).to_vec(),
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
            ready_text: Some(duet_server::config::CLAUDE_READY_TEXT.into()),
            channel: Some(ChannelKind::Claude),
            resume_args: Some(
                duet_server::config::CLAUDE_RESUME_ARGS
                    .map(String::from)
                    .to_vec(),
            ),
        };
        let server = TestServer::with_profiles(vec![profile]).await;
        let session = server.create("claude").await;
        assert_eq!(session.channel.kind, "claude");
        let mut client = server.connect(session.id, None).await;
        client
            .until_event(|e| e["subtype"] == "session_start")
            .await;
        Some(Run {
            workspace,
            _home: home,
            mock,
            server,
            client,
            id: session.id,
        })
    }

    async fn settled(&mut self, request_id: &str) -> duet_protocol::rest::Approval {
        self.client.settled(request_id).await
    }

    /// Answers Claude's dialog in the terminal, as a person would: presses
    /// `key` until the approval settles. Under load the dialog is drawn a
    /// moment before it listens to keys, and a key before that is lost.
    async fn answer_in_terminal(
        &mut self,
        request_id: &str,
        key: &[u8],
    ) -> duet_protocol::rest::Approval {
        self.client.until_screen("Esc to cancel").await;
        for _ in 0..10 {
            self.client.keys(key).await;
            let settled =
                tokio::time::timeout(std::time::Duration::from_secs(2), self.settled(request_id))
                    .await;
            if let Ok(a) = settled {
                return a;
            }
        }
        panic!("the approval did not settle after 10 key presses");
    }

    async fn reply(&mut self, text: &str) {
        self.client
            .until_event(|e| {
                kind(e) == "assistant"
                    && e["message"]["content"][0]["text"]
                        .as_str()
                        .is_some_and(|t| t.contains(text))
            })
            .await;
    }

    fn tool_file(&self) -> PathBuf {
        self.workspace.path().join("made_by_tool.txt")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_from_the_browser_is_answered_in_the_chat() {
    let Some(mut run) = Run::start().await else {
        return;
    };
    // Sent before Claude can take it: held until its prompt is on screen.
    run.client.submit("hello there").await;
    let (_, user) = run.client.until_event(|e| kind(e) == "user").await;
    assert_eq!(user["message"]["content"][0]["text"], "hello there");
    run.reply("Mock reply to: hello there").await;
    run.client.until_event(|e| kind(e) == "result").await;
    assert_eq!(run.mock.requests().len(), 1, "{}", run.mock.summary());
    run.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_approved_in_the_browser_runs() {
    let Some(mut run) = Run::start().await else {
        return;
    };
    run.client.submit(mock_anthropic::TOOL_TRIGGER).await;
    let a = run.client.pending_approval().await;
    assert_eq!(a.tool_name, "Bash");
    assert_eq!(a.input["command"], mock_anthropic::TOOL_COMMAND);
    assert!(a.tool_use_id.is_some(), "bound to its PreToolUse");
    let labels: Vec<&str> = a.options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(labels.first(), Some(&"Yes"));
    assert_eq!(labels.last(), Some(&"No"));
    // Claude's own words for its second choice (its dialog's scope: the
    // directory it suggests).
    let cwd = run.workspace.path().canonicalize().unwrap();
    assert_eq!(
        labels[1],
        format!(
            "Yes, and always allow access to {} from this project",
            cwd.display()
        )
    );
    run.client
        .send(&ClientMessage::Approve {
            request_id: a.request_id.clone(),
            allowed: None,
            option: Some("allow".into()),
            id: None,
        })
        .await;
    let done = run.settled(&a.request_id).await;
    assert_eq!(done.state, ApprovalState::Allowed);
    assert_eq!(done.decided_by, Some(Decider::Client));
    run.client
        .until_event(|e| e["message"]["content"][0]["type"] == "tool_result")
        .await;
    run.reply(mock_anthropic::AFTER_TOOL).await;
    assert!(run.tool_file().exists());
    run.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_denied_in_the_browser_does_not_run_and_the_next_prompt_is_answered() {
    let Some(mut run) = Run::start().await else {
        return;
    };
    run.client.submit(mock_anthropic::TOOL_TRIGGER).await;
    let a = run.client.pending_approval().await;
    run.client
        .send(&ClientMessage::Approve {
            request_id: a.request_id.clone(),
            allowed: Some(false),
            option: None,
            id: None,
        })
        .await;
    let done = run.settled(&a.request_id).await;
    assert_eq!(done.state, ApprovalState::Denied);
    // Held until the denial has ended the turn, then answered.
    run.client.submit("after the denial").await;
    run.reply("Mock reply to: after the denial").await;
    assert!(!run.tool_file().exists());
    run.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_answered_in_the_terminal_flips_the_card() {
    let Some(mut run) = Run::start().await else {
        return;
    };
    run.client.submit(mock_anthropic::TOOL_TRIGGER).await;
    let a = run.client.pending_approval().await;
    // "1. Yes", as a person would type it.
    let done = run.answer_in_terminal(&a.request_id, b"1").await;
    assert_eq!(done.state, ApprovalState::Allowed);
    assert_eq!(done.decided_by, Some(Decider::Terminal));
    run.reply(mock_anthropic::AFTER_TOOL).await;
    assert!(run.tool_file().exists());

    // And "No" (Escape) in the terminal: denied there, the turn is over.
    std::fs::remove_file(run.tool_file()).unwrap();
    run.client.until_event(|e| kind(e) == "result").await;
    run.client.submit(mock_anthropic::TOOL_TRIGGER).await;
    let b = run.client.pending_approval().await;
    let done = run.answer_in_terminal(&b.request_id, b"\x1b").await;
    assert_ne!(done.state, ApprovalState::Allowed);
    assert!(!run.tool_file().exists());
    run.client.submit("still there?").await;
    run.reply("Mock reply to: still there?").await;
    run.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_typed_in_the_terminal_shows_in_the_chat_and_exit_ends_the_session() {
    let Some(mut run) = Run::start().await else {
        return;
    };
    run.client.until_screen("? for shortcuts").await;
    run.client
        .keys(b"\x1b[200~typed in the terminal\x1b[201~")
        .await;
    run.client.keys(b"\r").await;
    let (_, user) = run.client.until_event(|e| kind(e) == "user").await;
    assert_eq!(
        user["message"]["content"][0]["text"],
        "typed in the terminal"
    );
    run.reply("Mock reply to: typed in the terminal").await;
    run.client.until_event(|e| kind(e) == "result").await;
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
    let info = run.server.info(run.id).await;
    assert_eq!(info.agent_session_id.as_deref().map(str::len), Some(36));
    run.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_conversation_is_resumed_with_its_history() {
    let Some(mut run) = Run::start().await else {
        return;
    };
    run.client.submit("remember the word kiwi").await;
    run.reply("Mock reply to: remember the word kiwi").await;
    run.client.until_event(|e| kind(e) == "result").await;
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
    assert_eq!(resumed.resumed_from, Some(run.id));
    let mut c = run.server.connect(resumed.id, None).await;
    let (_, start) = c.until_event(|e| e["subtype"] == "session_start").await;
    assert_eq!(start["data"]["source"], "resume", "{start}");
    assert_eq!(start["data"]["session_id"], agent_id.as_str());
    c.submit("what was the word?").await;
    c.until_event(|e| {
        kind(e) == "assistant"
            && e["message"]["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("what was the word?"))
    })
    .await;
    // Claude sent the earlier conversation with the new prompt.
    let last = run.mock.requests().last().cloned().unwrap();
    assert!(
        last.to_string().contains("remember the word kiwi"),
        "the resumed request carries the history"
    );
    // The earlier chat stays readable beside the new one.
    let old = run
        .server
        .get(&format!("/api/sessions/{}/events", run.id))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(old.contains("remember the word kiwi"));
    // Only one live copy at a time.
    let again = run
        .server
        .post_json(&format!("/api/sessions/{}/resume", run.id), json!({}))
        .await;
    assert_eq!(again.status(), 409);
    run.server.shutdown().await;
}

/// Claude's permission mode in the chat (issue 31 point 4): read from its
/// footer and its hooks' `permission_mode`, switched from the browser with
/// Shift+Tab (a mode it has not is a 400), and the agent works in it: in
/// "Accept edits" the `touch` that asked before runs without a dialog,
/// and the prompt's hook says `acceptEdits`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mode_is_shown_and_switched_with_its_keys() {
    let Some(mut run) = Run::start().await else {
        return;
    };
    let modes = run.client.until_modes(|m| m.current.is_some()).await;
    assert_eq!(modes.current.as_deref(), Some("default"), "{modes:?}");
    let ids: Vec<&str> = modes.available.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["default", "acceptEdits", "plan", "auto"]);

    let path = format!("/api/sessions/{}/mode", run.id);
    let resp = run.server.post_json(&path, json!({"mode": "warp"})).await;
    assert_eq!(resp.status(), 400);
    let resp = run
        .server
        .post_json(&path, json!({"mode": "acceptEdits"}))
        .await;
    assert_eq!(resp.status(), 204);
    run.client
        .until_modes(|m| m.current.as_deref() == Some("acceptEdits"))
        .await;
    run.client.until_screen("accept edits on").await;

    run.client.submit(mock_anthropic::TOOL_TRIGGER).await;
    run.reply(mock_anthropic::AFTER_TOOL).await;
    assert!(run.tool_file().exists());
    assert!(
        !run.client
            .texts
            .iter()
            .any(|m| matches!(m, ServerMessage::Approval(_))),
        "asked in acceptEdits mode"
    );
    // Claude's own word for it, which the chat also follows.
    let hooks = run
        .server
        .state_dir
        .path()
        .join("state")
        .join(run.id.to_string())
        .join("hooks.jsonl");
    let hooks = std::fs::read_to_string(hooks).unwrap();
    let prompt = hooks
        .lines()
        .find(|l| l.contains("\"UserPromptSubmit\""))
        .unwrap();
    assert!(
        prompt.contains("\"permission_mode\":\"acceptEdits\""),
        "{prompt}"
    );
    run.server.shutdown().await;
}
