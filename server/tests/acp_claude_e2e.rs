//! Real Claude Code through its ACP adapter (`@agentclientprotocol/claude-agent-acp`
//! 0.101.0, which runs the Claude Code 2.1.318 its Claude Agent SDK ships),
//! duet its ACP client (`channel = "acp"`), against the mock Anthropic API
//! served here: the handshake names the adapter; a prompt is answered with
//! a streamed reply; a Bash call approved from the browser with the
//! adapter's own option runs and its output shows in the chat; one denied
//! does not run; a cancel while it waits ends the turn `cancelled`; a
//! conversation resumed after the agent was stopped is loaded with
//! `session/load`, history included.
//!
//! Needs the adapter and Node 24 under `DUET_CACHE_DIR` (default
//! `<repo>/.cache`; `scripts/install-claude-acp.sh`). Without them these
//! fail, unless `DUET_SKIP_CLAUDE=1`, which makes them print a skip line and
//! pass.
//!
//! Offline settings (docs/agents.md): the Claude Code variables of
//! `claude_e2e.rs`, a seeded `~/.claude.json`, and `~/.claude/settings.json`
//! with `permissions.defaultMode = "default"`: the adapter's own default is
//! `auto`, where Claude decides without asking.

#[allow(dead_code)]
#[path = "agents/mock_anthropic.rs"]
mod mock_anthropic;
mod support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use duet_protocol::ids::SessionId;
use duet_protocol::rest::{Approval, ApprovalState, Decider, SessionInfo};
use duet_protocol::ws::{ClientMessage, ServerMessage};
use duet_server::config::{ChannelKind, Profile};
use mock_anthropic::MockAnthropic;
use serde_json::{json, Value};
use support::installed::{cache_dir, node24_and};
use support::{assistant_text, kind, Client, TestServer};
use tempfile::TempDir;

const ADAPTER_VERSION: &str = "0.101.0";
const API_KEY: &str = "sk-ant-api03-mock-0123456789abcdefghijKLMNOPQRST";
const TOOL_FILE: &str = "made_by_tool.txt";

/// Node 24 and the adapter's entry point; `None`: skip (`DUET_SKIP_CLAUDE=1`).
fn adapter() -> Option<(PathBuf, PathBuf)> {
    let entry = cache_dir().join(format!(
        "claude-agent-acp-{ADAPTER_VERSION}/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"
    ));
    node24_and(
        &entry,
        &format!("the Claude ACP adapter {ADAPTER_VERSION}"),
        "DUET_SKIP_CLAUDE",
        "scripts/install-claude-acp.sh",
    )
}

/// One adapter session behind a test server, a client attached.
struct Run {
    workspace: TempDir,
    _home: TempDir,
    mock: MockAnthropic,
    server: TestServer,
    client: Client,
    id: SessionId,
}

impl Run {
    async fn start() -> Option<Run> {
        let (node, entry) = adapter()?;
        let home = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let cwd = workspace.path().canonicalize().unwrap();
        let seed = json!({
            "hasCompletedOnboarding": true,
            "customApiKeyResponses": {"approved": [&API_KEY[API_KEY.len() - 20..]], "rejected": []},
            "projects": {cwd.to_string_lossy(): {"hasTrustDialogAccepted": true}},
        });
        std::fs::write(home.path().join(".claude.json"), seed.to_string()).unwrap();
        std::fs::create_dir(home.path().join(".claude")).unwrap();
        std::fs::write(
            home.path().join(".claude/settings.json"),
            json!({"permissions": {"defaultMode": "default"}}).to_string(),
        )
        .unwrap();
        let mock = MockAnthropic::start().await;
        let args = vec![entry.to_string_lossy().into_owned()];
        let profile = Profile {
            extra_args: false,
            name: "claude-acp".into(),
            description: None,
            command: node.to_string_lossy().into_owned(),
            args: args.clone(),
            env: [
                ("HOME", home.path().to_string_lossy().into_owned()),
                ("ANTHROPIC_BASE_URL", mock.base_url.clone()),
                ("ANTHROPIC_API_KEY", API_KEY.into()),
                ("DISABLE_AUTOUPDATER", "1".into()),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
                // Empty: the adapter then offers no bypass mode to root,
                // and Claude Code refuses to start as root with it unless
                // IS_SANDBOX is exactly "1" (a container may set "yes").
                ("IS_SANDBOX", String::new()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
            cwd: Some(cwd.to_string_lossy().into_owned()),
            ready_text: None,
            channel: Some(ChannelKind::Acp),
            // The same command: duet resumes with `session/load`.
            resume_args: Some(args),
        };
        let server = TestServer::with_profiles(vec![profile]).await;
        let created = Instant::now();
        let session = server.create("claude-acp").await;
        assert_eq!(session.channel.kind, "acp");
        let mut client = server.connect(session.id, None).await;
        started(&mut client).await;
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

    async fn choose(&mut self, request_id: &str, option: &str) {
        self.client
            .send(&ClientMessage::Approve {
                request_id: request_id.into(),
                allowed: None,
                option: Some(option.into()),
                id: None,
            })
            .await;
    }

    async fn reply(&mut self, fragment: &str) {
        self.client
            .until_event(|e| assistant_text(e).contains(fragment))
            .await;
    }

    async fn result(&mut self) -> Value {
        self.client.until_event(|e| kind(e) == "result").await.1
    }

    fn tool_file(&self) -> PathBuf {
        self.workspace.path().join(TOOL_FILE)
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "--- model requests:\n{}\n--- terminal pane:\n{}",
                self.mock.summary(),
                self.client.screen.screen().contents()
            );
        }
    }
}

/// Waits for `session_start`: the adapter starts Claude Code for
/// `session/new` (4-5 s idle, more on 2 busy cores).
async fn started(c: &mut Client) -> Value {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if let Ok((_, e)) = tokio::time::timeout(
            Duration::from_secs(15),
            c.until_event(|e| e["subtype"] == "session_start"),
        )
        .await
        {
            return e;
        }
        assert!(Instant::now() < deadline, "no session_start");
    }
}

/// The first `tool_result` block of a `user` event.
fn tool_result(e: &Value) -> Option<&Value> {
    (kind(e) == "user").then_some(())?;
    e["message"]["content"]
        .as_array()?
        .iter()
        .find(|b| b["type"] == "tool_result")
}

/// The text of a `session_start` already received.
fn session_start(c: &Client) -> Value {
    c.texts
        .iter()
        .find_map(|m| match m {
            ServerMessage::Event { event, .. } if event["subtype"] == "session_start" => {
                Some(event.clone())
            }
            _ => None,
        })
        .expect("session_start")
}

/// The handshake names the adapter; a prompt streams its reply; a Bash call
/// approved with the adapter's "allow once" runs and its output shows in
/// the chat; one denied does not run and the next prompt is answered;
/// DELETE ends the agent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_reply_and_tools_approved_and_denied_with_the_adapters_options() {
    let Some(mut run) = Run::start().await else {
        return;
    };
    let start = session_start(&run.client);
    assert_eq!(start["data"]["protocol"], "acp", "{start}");
    assert_eq!(
        start["data"]["agent"]["name"], "@agentclientprotocol/claude-agent-acp",
        "{start}"
    );
    assert_eq!(start["data"]["agent"]["version"], ADAPTER_VERSION);
    assert_eq!(start["data"]["capabilities"]["loadSession"], true);
    assert_eq!(
        start["data"]["modes"]["currentModeId"], "default",
        "{start}"
    );
    let agent_session = start["session_id"].as_str().unwrap().to_string();

    let sent = Instant::now();
    run.client.submit("hello there").await;
    run.client
        .until_event(|e| e["event"]["delta"]["type"] == "text_delta")
        .await;
    let first = sent.elapsed();
    run.reply(&mock_anthropic::reply_to("hello there")).await;
    assert_eq!(run.result().await["is_error"], false);
    eprintln!(
        "measured: submit to first delta {first:?}, to result {:?}",
        sent.elapsed()
    );

    // Approved from the browser with the adapter's own option.
    run.client.submit(mock_anthropic::OUTPUT_TRIGGER).await;
    let a = run.client.pending_approval().await;
    assert_eq!(a.tool_name, "Bash", "{a:?}");
    assert_eq!(a.input["command"], mock_anthropic::OUTPUT_COMMAND, "{a:?}");
    let options: Vec<_> = a.options.iter().map(|o| (o.id.as_str(), o.kind)).collect();
    eprintln!("claude-agent-acp options: {options:?}");
    let allow = a
        .options
        .iter()
        .find(|o| o.kind.allows())
        .unwrap_or_else(|| panic!("no allow option: {options:?}"))
        .id
        .clone();
    run.choose(&a.request_id, &allow).await;
    let done = run.settled(&a.request_id).await;
    assert_eq!(done.state, ApprovalState::Allowed);
    assert_eq!(done.decided_by, Some(Decider::Client));
    let (_, e) = run.client.until_event(|e| tool_result(e).is_some()).await;
    let result = tool_result(&e).unwrap();
    assert_eq!(result["is_error"], false, "{e}");
    assert!(
        result["content"]
            .as_str()
            .unwrap_or_default()
            .contains(mock_anthropic::OUTPUT_TEXT),
        "the command's output is shown: {e}"
    );
    run.reply(mock_anthropic::AFTER_TOOL).await;
    run.result().await;
    assert!(run.tool_file().exists());
    std::fs::remove_file(run.tool_file()).unwrap();

    // Denied from the browser: the tool does not run; the turn goes on
    // and ends, and the next prompt is answered.
    run.client
        .submit(&format!("{} again", mock_anthropic::TOOL_TRIGGER))
        .await;
    let a = run.client.pending_approval().await;
    assert_eq!(a.input["command"], mock_anthropic::TOOL_COMMAND);
    run.client
        .send(&ClientMessage::Approve {
            request_id: a.request_id.clone(),
            allowed: Some(false),
            option: None,
            id: None,
        })
        .await;
    assert_eq!(
        run.settled(&a.request_id).await.state,
        ApprovalState::Denied
    );
    let r = run.result().await;
    eprintln!("result after a denial: {r}");
    assert!(!run.tool_file().exists());
    run.client.submit("after the denial").await;
    run.reply(&mock_anthropic::reply_to("after the denial"))
        .await;
    assert_eq!(
        run.server.info(run.id).await.agent_session_id.as_deref(),
        Some(agent_session.as_str())
    );

    let resp = run
        .server
        .delete(&format!("/api/sessions/{}", run.id))
        .await;
    assert!(resp.status().is_success());
    run.client
        .until(|m| matches!(m, ServerMessage::Exit(_)))
        .await;
}

/// Cancel while the adapter waits for a permission: duet sends
/// `session/cancel` and answers the request `cancelled`; the card is
/// abandoned, the prompt ends `cancelled`, the tool never ran, and the next
/// prompt is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_while_a_permission_waits_ends_the_turn() {
    let Some(mut run) = Run::start().await else {
        return;
    };
    run.client.submit(mock_anthropic::TOOL_TRIGGER).await;
    let a = run.client.pending_approval().await;
    run.client.send(&ClientMessage::Cancel { id: None }).await;
    assert_eq!(
        run.settled(&a.request_id).await.state,
        ApprovalState::Abandoned
    );
    let r = run.result().await;
    assert_eq!(r["stop_reason"], "cancelled", "{r}");
    assert!(!run.tool_file().exists());
    run.client.submit("after the cancel").await;
    run.reply(&mock_anthropic::reply_to("after the cancel"))
        .await;
}

/// A conversation whose agent was stopped (DELETE) and resumed
/// (`POST …/resume`): a new adapter process loads it with `session/load`
/// (the adapter advertises `loadSession`), the earlier chat is in duet's history
/// for the new session (GET …/history), and the next request to the model carries it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_agent_loads_the_conversation_with_its_history() {
    let Some(mut run) = Run::start().await else {
        return;
    };
    run.client.submit("remember the apples").await;
    run.reply(&mock_anthropic::reply_to("remember the apples"))
        .await;
    run.result().await;
    let resp = run
        .server
        .delete(&format!("/api/sessions/{}", run.id))
        .await;
    assert!(resp.status().is_success());
    run.client
        .until(|m| matches!(m, ServerMessage::Exit(_)))
        .await;
    let ended = run.server.info(run.id).await;
    assert!(ended.resumable, "{ended:?}");
    assert!(ended.agent_session_id.is_some(), "{ended:?}");

    let resp = run
        .server
        .post_json(&format!("/api/sessions/{}/resume", run.id), json!({}))
        .await;
    assert_eq!(resp.status(), 201);
    let resumed: SessionInfo = resp.json().await.unwrap();
    assert_eq!(resumed.resumed_from, Some(run.id));
    let mut c = run.server.connect(resumed.id, None).await;
    let start = started(&mut c).await;
    assert_eq!(
        start["session_id"].as_str(),
        ended.agent_session_id.as_deref()
    );
    // The earlier chat is the new session's history (duet keeps a copy;
    // the adapter's own replay of it on `session/load` is not shown twice).
    let history = run
        .server
        .get(&format!("/api/sessions/{}/history", resumed.id))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        history.contains("remember the apples"),
        "the earlier prompt is in the history: {history}"
    );
    c.submit("what was it").await;
    c.until_event(|e| assistant_text(e).contains(&mock_anthropic::reply_to("what was it")))
        .await;
    let request = run
        .mock
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.to_string().contains("what was it"))
        .expect("a request with the new prompt");
    assert!(
        request.to_string().contains("remember the apples"),
        "the resumed request carries the history: {}",
        run.mock.summary()
    );
    assert_eq!(
        run.server.info(resumed.id).await.agent_session_id,
        ended.agent_session_id
    );
}
