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

#[path = "support/agent/mod.rs"]
mod agent;
#[path = "support/mocks/mod.rs"]
mod mocks;
mod support;

use duet_protocol::rest::{Approval, ApprovalState, Decider};
use mocks::anthropic::MockAnthropic;
use mocks::{reply_to, AFTER_TOOL, TOOL_COMMAND, TOOL_TRIGGER};
use serde_json::json;
use support::kind;

type Run = agent::Run<agent::Setup<MockAnthropic>>;

#[path = "claude_e2e/ending.rs"]
mod ending;

/// Starts Claude's TUI in duet and waits for its handshake.
async fn start() -> Option<Run> {
    Some(Run::started(agent::claude::tui().await?).await)
}

/// Answers Claude's dialog in the terminal, as a person would: presses
/// `key` until the approval settles. Under load the dialog is drawn a
/// moment before it listens to keys, and a key before that is lost.
async fn answer_in_terminal(run: &mut Run, request_id: &str, key: &[u8]) -> Approval {
    run.client.until_screen("Esc to cancel").await;
    for _ in 0..10 {
        run.client.keys(key).await;
        let settled = tokio::time::timeout(
            std::time::Duration::from_secs(2),
            run.client.settled(request_id),
        )
        .await;
        if let Ok(a) = settled {
            return a;
        }
    }
    panic!("the approval did not settle after 10 key presses");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_from_the_browser_is_answered_in_the_chat() {
    let Some(mut run) = start().await else {
        return;
    };
    // Sent before Claude can take it: held until its prompt is on screen.
    run.client.submit("hello there").await;
    let (_, user) = run.client.until_event(|e| kind(e) == "user").await;
    assert_eq!(user["message"]["content"][0]["text"], "hello there");
    run.reply(&reply_to("hello there")).await;
    run.result().await;
    assert_eq!(
        run.program.mock.requests().len(),
        1,
        "{}",
        run.program.mock.summary()
    );
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_approved_in_the_browser_runs() {
    let Some(mut run) = start().await else {
        return;
    };
    run.client.submit(TOOL_TRIGGER).await;
    let a = run.client.pending_approval().await;
    assert_eq!(a.tool_name, "Bash");
    assert_eq!(a.input["command"], TOOL_COMMAND);
    assert!(a.tool_use_id.is_some(), "bound to its PreToolUse");
    let labels: Vec<&str> = a.options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(labels.first(), Some(&"Yes"));
    assert_eq!(labels.last(), Some(&"No"));
    // Claude's own words for its second choice (its dialog's scope: the
    // directory it suggests).
    let cwd = run.program.workspace.path().canonicalize().unwrap();
    assert_eq!(
        labels[1],
        format!(
            "Yes, and always allow access to {} from this project",
            cwd.display()
        )
    );
    run.choose(&a.request_id, "allow").await;
    let done = run.client.settled(&a.request_id).await;
    assert_eq!(done.state, ApprovalState::Allowed);
    assert_eq!(done.decided_by, Some(Decider::Client));
    run.client
        .until_event(|e| e["message"]["content"][0]["type"] == "tool_result")
        .await;
    run.reply(AFTER_TOOL).await;
    assert!(run.tool_file().exists());
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_denied_in_the_browser_does_not_run_and_the_next_prompt_is_answered() {
    let Some(mut run) = start().await else {
        return;
    };
    run.client.submit(TOOL_TRIGGER).await;
    let a = run.client.pending_approval().await;
    run.decide(&a.request_id, false).await;
    let done = run.client.settled(&a.request_id).await;
    assert_eq!(done.state, ApprovalState::Denied);
    // Held until the denial has ended the turn, then answered.
    run.client.submit("after the denial").await;
    run.reply(&reply_to("after the denial")).await;
    assert!(!run.tool_file().exists());
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_answered_in_the_terminal_flips_the_card() {
    let Some(mut run) = start().await else {
        return;
    };
    run.client.submit(TOOL_TRIGGER).await;
    let a = run.client.pending_approval().await;
    // "1. Yes", as a person would type it.
    let done = answer_in_terminal(&mut run, &a.request_id, b"1").await;
    assert_eq!(done.state, ApprovalState::Allowed);
    assert_eq!(done.decided_by, Some(Decider::Terminal));
    run.reply(AFTER_TOOL).await;
    assert!(run.tool_file().exists());

    // And "No" (Escape) in the terminal: denied there, the turn is over.
    std::fs::remove_file(run.tool_file()).unwrap();
    run.result().await;
    run.client.submit(TOOL_TRIGGER).await;
    let b = run.client.pending_approval().await;
    let done = answer_in_terminal(&mut run, &b.request_id, b"\x1b").await;
    assert_ne!(done.state, ApprovalState::Allowed);
    assert!(!run.tool_file().exists());
    run.client.submit("still there?").await;
    run.reply(&reply_to("still there?")).await;
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_typed_in_the_terminal_shows_in_the_chat_and_exit_ends_the_session() {
    let Some(mut run) = start().await else {
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
    run.reply(&reply_to("typed in the terminal")).await;
    run.result().await;
    run.client.submit("/exit").await;
    run.client
        .until_event(|e| e["subtype"] == "session_end")
        .await;
    let exit = run.client.exited().await;
    assert_eq!(exit.code, Some(0), "{exit:?}");
    let info = run.server().info(run.id()).await;
    assert_eq!(info.agent_session_id.as_deref().map(str::len), Some(36));
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_conversation_is_resumed_with_its_history() {
    let Some(mut run) = start().await else {
        return;
    };
    run.client.submit("remember the word kiwi").await;
    run.reply(&reply_to("remember the word kiwi")).await;
    run.result().await;
    run.client.submit("/exit").await;
    run.client.exited().await;
    let ended = run.server().info(run.id()).await;
    assert!(ended.resumable, "{ended:?}");
    let agent_id = ended.agent_session_id.clone().unwrap();

    let (_, mut c, start) = run.resume().await;
    assert_eq!(start["data"]["source"], "resume", "{start}");
    assert_eq!(start["data"]["session_id"], agent_id.as_str());
    c.submit("what was the word?").await;
    agent::reply_containing(&mut c, "what was the word?").await;
    // Claude sent the earlier conversation with the new prompt.
    let last = run.program.mock.requests().last().cloned().unwrap();
    assert!(
        last.to_string().contains("remember the word kiwi"),
        "the resumed request carries the history"
    );
    // The earlier chat stays readable beside the new one.
    let old = run
        .server()
        .get(&format!("/api/sessions/{}/events", run.id()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(old.contains("remember the word kiwi"));
    // Only one live copy at a time.
    let again = run
        .server()
        .post_json(&format!("/api/sessions/{}/resume", run.id()), json!({}))
        .await;
    assert_eq!(again.status(), 409);
    run.finish().await;
}

/// Claude's permission mode in the chat (issue 31 point 4): read from its
/// footer and its hooks' `permission_mode`, switched from the browser with
/// Shift+Tab (a mode it has not is a 400), and the agent works in it: in
/// "Accept edits" the `touch` that asked before runs without a dialog,
/// and the prompt's hook says `acceptEdits`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mode_is_shown_and_switched_with_its_keys() {
    let Some(mut run) = start().await else {
        return;
    };
    let modes = run.client.until_modes(|m| m.current.is_some()).await;
    assert_eq!(modes.current.as_deref(), Some("default"), "{modes:?}");
    let ids: Vec<&str> = modes.available.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["default", "acceptEdits", "plan", "auto"]);

    let path = format!("/api/sessions/{}/mode", run.id());
    let resp = run.server().post_json(&path, json!({"mode": "warp"})).await;
    assert_eq!(resp.status(), 400);
    let resp = run
        .server()
        .post_json(&path, json!({"mode": "acceptEdits"}))
        .await;
    assert_eq!(resp.status(), 204);
    run.client
        .until_modes(|m| m.current.as_deref() == Some("acceptEdits"))
        .await;
    run.client.until_screen("accept edits on").await;

    run.client.submit(TOOL_TRIGGER).await;
    run.reply(AFTER_TOOL).await;
    assert!(run.tool_file().exists());
    assert!(
        !run.client
            .texts
            .iter()
            .any(|m| matches!(m, duet_protocol::ws::ServerMessage::Approval(_))),
        "asked in acceptEdits mode"
    );
    // Claude's own word for it, which the chat also follows.
    let hooks = run.session_dir().join("hooks.jsonl");
    let hooks = std::fs::read_to_string(hooks).unwrap();
    let prompt = hooks
        .lines()
        .find(|l| l.contains("\"UserPromptSubmit\""))
        .unwrap();
    assert!(
        prompt.contains("\"permission_mode\":\"acceptEdits\""),
        "{prompt}"
    );
    run.finish().await;
}
