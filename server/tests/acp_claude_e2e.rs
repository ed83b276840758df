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

#[path = "support/agent/mod.rs"]
mod agent;
#[path = "support/mocks/mod.rs"]
mod mocks;
mod support;

use agent::claude::ADAPTER_VERSION;
use agent::scenario::REMEMBER;
use duet_protocol::rest::{ApprovalState, Decider};
use mocks::anthropic::{MockAnthropic, OUTPUT_COMMAND, OUTPUT_TEXT, OUTPUT_TRIGGER};
use mocks::{TOOL_COMMAND, TOOL_TRIGGER};

type Run = agent::Run<agent::Setup<MockAnthropic>>;

/// Starts the adapter in duet and waits for its handshake.
async fn start() -> Option<Run> {
    Some(Run::started(agent::claude::acp().await?).await)
}

/// The handshake names the adapter; a prompt streams its reply; a Bash call
/// approved with the adapter's "allow once" runs and its output shows in
/// the chat; one denied does not run and the next prompt is answered;
/// DELETE ends the agent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_reply_and_tools_approved_and_denied_with_the_adapters_options() {
    let Some(mut run) = start().await else {
        return;
    };
    let start = run.session_start();
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

    run.streamed("hello there").await;

    // Approved from the browser with the adapter's own option.
    run.client.submit(OUTPUT_TRIGGER).await;
    let a = run.client.pending_approval().await;
    assert_eq!(a.tool_name, "Bash", "{a:?}");
    assert_eq!(a.input["command"], OUTPUT_COMMAND, "{a:?}");
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
    let done = run.decided(&a.request_id).await;
    assert_eq!(done.state, ApprovalState::Allowed);
    assert_eq!(done.decided_by, Some(Decider::Client));
    let e = run.tool_ran().await;
    let result = &agent::tool_results(&e)[0];
    assert_eq!(result["is_error"], false, "{e}");
    assert!(
        result["content"]
            .as_str()
            .unwrap_or_default()
            .contains(OUTPUT_TEXT),
        "the command's output is shown: {e}"
    );
    std::fs::remove_file(run.tool_file()).unwrap();

    // Denied from the browser: the tool does not run; the turn goes on
    // and ends, and the next prompt is answered.
    run.client.submit(&format!("{TOOL_TRIGGER} again")).await;
    let a = run.client.pending_approval().await;
    assert_eq!(a.input["command"], TOOL_COMMAND);
    run.denied(&a).await;
    assert_eq!(
        run.server()
            .info(run.id())
            .await
            .agent_session_id
            .as_deref(),
        Some(agent_session.as_str())
    );

    run.delete().await;
}

/// Cancel while the adapter waits for a permission: duet sends
/// `session/cancel` and answers the request `cancelled`; the card is
/// abandoned, the prompt ends `cancelled`, the tool never ran, and the next
/// prompt is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_while_a_permission_waits_ends_the_turn() {
    let Some(mut run) = start().await else {
        return;
    };
    let r = run.cancelled_while_asked().await;
    assert_eq!(r["stop_reason"], "cancelled", "{r}");
}

/// A conversation whose agent was stopped (DELETE) and resumed
/// (`POST …/resume`): a new adapter process loads it with `session/load`
/// (the adapter advertises `loadSession`), the earlier chat is in duet's history
/// for the new session (GET …/history), and the next request to the model carries it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_agent_loads_the_conversation_with_its_history() {
    let Some(mut run) = start().await else {
        return;
    };
    run.answered(REMEMBER).await;
    run.delete().await;
    let ended = run.server().info(run.id()).await;
    assert!(ended.resumable, "{ended:?}");
    assert!(ended.agent_session_id.is_some(), "{ended:?}");

    let (resumed, mut c, start) = run.resume().await;
    assert_eq!(
        start["session_id"].as_str(),
        ended.agent_session_id.as_deref()
    );
    // The earlier chat is the new session's history (duet keeps a copy;
    // the adapter's own replay of it on `session/load` is not shown twice).
    let history = run
        .server()
        .text(&format!("/api/sessions/{}/history", resumed.id))
        .await;
    assert!(
        history.contains(REMEMBER),
        "the earlier prompt is in the history: {history}"
    );
    run.asks_back(&mut c).await;
    assert_eq!(
        run.server().info(resumed.id).await.agent_session_id,
        ended.agent_session_id
    );
}
