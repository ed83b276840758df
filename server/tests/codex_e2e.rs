//! Real Codex 0.171.0 in its TUI through duet, attached to the app server
//! duet runs for the session and follows as a second client
//! (`channel = "codex"`, docs/codex.md §7), against the OpenAI Responses
//! API mock served here: a prompt from the browser is a turn the TUI shows,
//! answered in the chat, streamed; a shell call approved from the browser
//! with the dialog's own words runs, one refused does not and ends the
//! turn; a cancel interrupts a turn; a prompt typed in the TUI (its first
//! turn, which duet can follow only once it started) shows in the chat; the
//! terminal answers an approval first and the card flips; `/exit` ends the
//! session with status 0 and takes the app server with it; an ended
//! conversation resumes with its history.
//!
//! Needs `scripts/install-codex.sh` (under `DUET_CACHE_DIR`); without it
//! these fail, unless `DUET_SKIP_CODEX=1`, which makes them print a skip
//! line and pass. One session per test (two for resume).

#[path = "support/agent/mod.rs"]
mod agent;
#[path = "support/mocks/mod.rs"]
mod mocks;
mod support;

use agent::scenario::{REMEMBER, TYPED};
use std::time::Instant;

use duet_protocol::rest::{Approval, ApprovalState, Decider};
use duet_protocol::ws::{ClientMessage, ServerMessage};
use mocks::openai_responses::MockResponses;
use mocks::{reply_to, SLOW_TRIGGER};
use support::kind;

type Run = agent::Run<agent::Setup<MockResponses>>;

#[path = "codex_e2e/delivery.rs"]
mod delivery;
#[path = "support/agent/turns.rs"]
mod scenarios;

/// Starts Codex in duet (the built-in profile) and waits for its
/// handshake.
async fn start() -> Option<Run> {
    Some(Run::started(agent::codex::tui().await?).await)
}

/// Answers the TUI's dialog as a person would: presses `key` while the
/// dialog is on screen, until the approval reaches `state` (a dialog is
/// drawn a moment before it listens to keys, and a key before that is
/// lost).
async fn answer_in_terminal(
    run: &mut Run,
    request_id: &str,
    key: &[u8],
    state: ApprovalState,
) -> Approval {
    let reached = |m: &ServerMessage| {
        matches!(m, ServerMessage::Approval(a)
            if a.request_id == request_id && a.state == state && a.confirmed)
    };
    run.client.until_screen("Yes, proceed").await;
    for _ in 0..10 {
        if !run.client.screen_text().contains("Yes, proceed") {
            break;
        }
        run.client.keys(key).await;
        let wait = std::time::Duration::from_secs(2);
        if let Ok(ServerMessage::Approval(a)) =
            tokio::time::timeout(wait, run.client.until(reached)).await
        {
            return a;
        }
    }
    match run.client.until(reached).await {
        ServerMessage::Approval(a) => a,
        _ => unreachable!(),
    }
}

/// Types `text` into the TUI and submits it (Codex takes a paste and
/// Enter in one write).
async fn type_in(run: &mut Run, text: &str) {
    let keys = format!("\x1b[200~{text}\x1b[201~\r");
    run.client.keys(keys.as_bytes()).await;
}

/// The command lines of the processes whose working directory is `dir`.
fn processes_in(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|p| std::fs::read_link(p.path().join("cwd")).is_ok_and(|c| c == dir))
        .filter_map(|p| std::fs::read(p.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_approvals_and_cancel_from_the_browser() {
    let Some(mut run) = start().await else {
        return;
    };
    run.answered("hello there").await;
    // The TUI shows the browser's prompt as its own turn.
    run.client.until_screen(&reply_to("hello there")).await;

    // Allowed from the browser, with the TUI's own words.
    let a = run.tool_call_asked().await;
    assert_eq!(a.tool_name, "exec_command");
    assert!(a.tool_use_id.is_some(), "bound to its tool card");
    let labels: Vec<&str> = a.options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(labels[0], "Yes, proceed", "{labels:?}");
    assert_eq!(
        labels.last(),
        Some(&"No, and tell Codex what to do differently")
    );
    // It runs; the next one, refused, does not, and the turn ends.
    run.allowed_then_denied(&a).await;

    // A cancel from the browser interrupts a running turn.
    run.client.submit(SLOW_TRIGGER).await;
    run.client
        .until_event(|e| e["event"]["delta"]["type"] == "text_delta")
        .await;
    run.client.send(&ClientMessage::Cancel { id: None }).await;
    let end = run.result().await;
    assert_eq!(end["subtype"], "interrupted", "{end}");
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_answers_too_and_typed_prompts_show_in_the_chat() {
    let Some(mut run) = start().await else {
        return;
    };
    // The thread's first turn, typed in the TUI: duet can follow the thread
    // only once that turn is under way (thread/resume fails before), and
    // still shows the prompt.
    run.client.until_screen("Ask Codex to do anything").await;
    type_in(&mut run, TYPED).await;
    let (_, user) = run.client.until_event(|e| kind(e) == "user").await;
    run.typed_answered(&user).await;

    // The TUI's dialog answered there first ("y"): the card flips.
    let a = run.tool_call_asked().await;
    let done = answer_in_terminal(&mut run, &a.request_id, b"y", ApprovalState::Allowed).await;
    assert_eq!(done.state, ApprovalState::Allowed);
    assert_eq!(done.decided_by, Some(Decider::Terminal));
    run.tool_ran().await;

    // Esc in the TUI's dialog: refused there, the turn interrupted; the
    // card ends denied by the terminal (the app server said the request
    // was resolved, and the turn ended without running it).
    let b = run.tool_call_asked().await;
    let denied = answer_in_terminal(&mut run, &b.request_id, b"\x1b", ApprovalState::Denied).await;
    assert_eq!(denied.decided_by, Some(Decider::Terminal));
    assert!(!run.tool_file().exists());

    // /exit in the TUI ends the session, and its app server.
    type_in(&mut run, "/exit").await;
    let exit = run.client.exited().await;
    assert_eq!(exit.code, Some(0), "{exit:?}");
    let info = run.server().info(run.id()).await;
    assert_eq!(info.agent_session_id.as_deref().map(str::len), Some(36));
    // Nothing of Codex outlives its session: no app server, no daemon.
    let work = run.program.workspace.path().canonicalize().unwrap();
    let deadline = Instant::now() + support::DEADLINE;
    while !processes_in(&work).is_empty() {
        assert!(
            Instant::now() < deadline,
            "still running in the workspace: {:?}",
            processes_in(&work)
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_conversation_is_resumed_with_its_history() {
    let Some(mut run) = start().await else {
        return;
    };
    run.answered(REMEMBER).await;
    run.client.until_screen(&reply_to(REMEMBER)).await;
    type_in(&mut run, "/exit").await;
    run.client.exited().await;
    let mut c = run.server().resume_ended(run.id()).await;
    run.asks_back(&mut c).await;
    run.finish().await;
}
