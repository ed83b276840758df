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

use agent::scenario::{REMEMBER, TYPED};
use duet_protocol::rest::{Approval, ApprovalState, Decider};
use duet_protocol::ws::ServerMessage;
use mocks::anthropic::MockAnthropic;
use mocks::{AFTER_TOOL, TOOL_COMMAND, TOOL_TRIGGER};
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
    run.answered("hello there").await;
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
    let a = run.tool_call_asked().await;
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
    run.settled_as(&a, ApprovalState::Allowed, Decider::Client)
        .await;
    run.tool_ran().await;
    run.finish().await;
}

/// The dialog's third choice, which no hook suggestion carries, is read
/// from the screen and offered in its words; chosen in the browser, the
/// tool runs and Claude is in auto mode, as with the terminal's choice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switch_to_auto_mode_is_offered_from_its_dialog_and_switches() {
    let Some(mut run) = start().await else {
        return;
    };
    run.client.submit(TOOL_TRIGGER).await;
    let a = match run
        .client
        .until(|m| {
            matches!(m, ServerMessage::Approval(a)
                if a.state == ApprovalState::Pending
                    && a.options.iter().any(|o| o.id == "switch:auto"))
        })
        .await
    {
        ServerMessage::Approval(a) => a,
        _ => unreachable!(),
    };
    let labels: Vec<&str> = a.options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(labels.len(), 4, "{labels:?}");
    assert_eq!(labels[2], "Yes, and switch to auto mode");
    assert_eq!(labels[3], "No");
    run.choose(&a.request_id, "switch:auto").await;
    let done = run.client.settled(&a.request_id).await;
    assert_eq!(done.state, ApprovalState::Allowed);
    assert_eq!(done.chosen.as_deref(), Some("switch:auto"));
    run.reply(AFTER_TOOL).await;
    assert!(run.tool_file().exists());
    let modes = run
        .client
        .until_modes(|m| m.current.as_deref() == Some("auto"))
        .await;
    assert_eq!(modes.current.as_deref(), Some("auto"));
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_denied_in_the_browser_does_not_run_and_the_next_prompt_is_answered() {
    let Some(mut run) = start().await else {
        return;
    };
    let a = run.tool_call_asked().await;
    run.decide(&a.request_id, false).await;
    run.settled_as(&a, ApprovalState::Denied, Decider::Client)
        .await;
    // Held until the denial has ended the turn, then answered.
    run.denial_ended_the_turn().await;
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_answered_in_the_terminal_flips_the_card() {
    let Some(mut run) = start().await else {
        return;
    };
    let a = run.tool_call_asked().await;
    // "1. Yes", as a person would type it.
    let done = answer_in_terminal(&mut run, &a.request_id, b"1").await;
    assert_eq!(done.state, ApprovalState::Allowed);
    assert_eq!(done.decided_by, Some(Decider::Terminal));
    run.tool_ran().await;

    // And "No" (Escape) in the terminal: denied there, the turn is over.
    let b = run.tool_call_asked().await;
    let done = answer_in_terminal(&mut run, &b.request_id, b"\x1b").await;
    assert_ne!(done.state, ApprovalState::Allowed);
    assert!(!run.tool_file().exists());
    run.answered("still there?").await;
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_typed_in_the_terminal_shows_in_the_chat_and_exit_ends_the_session() {
    let Some(mut run) = start().await else {
        return;
    };
    run.client.until_screen("? for shortcuts").await;
    let paste = format!("\x1b[200~{TYPED}\x1b[201~");
    run.client.keys(paste.as_bytes()).await;
    run.client.keys(b"\r").await;
    let (_, user) = run.client.until_event(|e| kind(e) == "user").await;
    run.typed_answered(&user).await;
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
    run.answered(REMEMBER).await;
    run.client.submit("/exit").await;
    run.client.exited().await;
    let ended = run.server().info(run.id()).await;
    assert!(ended.resumable, "{ended:?}");
    let agent_id = ended.agent_session_id.clone().unwrap();

    let (resumed, mut c, start) = run.resume().await;
    assert_eq!(start["data"]["source"], "resume", "{start}");
    assert_eq!(start["data"]["session_id"], agent_id.as_str());
    run.asks_back(&mut c).await;
    // The resumed session's chat shows the earlier one above it: its
    // history holds the ended session's events, that prompt among them.
    let history = run
        .server()
        .text(&format!("/api/sessions/{}/history", resumed.id))
        .await;
    let earlier = format!("\"session\":\"{}\"", run.id());
    assert!(
        history
            .lines()
            .any(|l| l.contains(&earlier) && l.contains(REMEMBER)),
        "{history}"
    );
    // The earlier chat stays readable beside the new one.
    let old = run
        .server()
        .text(&format!("/api/sessions/{}/events", run.id()))
        .await;
    assert!(old.contains(REMEMBER));
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
