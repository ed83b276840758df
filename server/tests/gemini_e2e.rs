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

#[path = "support/agent/mod.rs"]
mod agent;
#[path = "support/mocks/mod.rs"]
mod mocks;
mod support;

use agent::scenario::{REMEMBER, TYPED};
use duet_protocol::rest::{ApprovalOptionKind, ApprovalState, Decider};
use duet_server::config;
use mocks::gemini::{MockGemini, WRITE_CONTENT, WRITE_FILE, WRITE_TRIGGER};
use mocks::{AFTER_TOOL, TOOL_COMMAND};
use support::kind;

type Run = agent::Run<agent::Setup<MockGemini>>;

#[path = "support/agent/turns.rs"]
mod scenarios;
#[path = "gemini_e2e/turns.rs"]
mod turns;

/// Starts Gemini in duet (the built-in profile) and waits for its
/// handshake.
async fn start() -> Option<Run> {
    Some(Run::started(agent::gemini::tui().await?).await)
}

/// Presses Enter until Gemini takes what its input box holds. An
/// Enter read within 30 ms of the last typed key is a newline to it (a
/// person types slower than the test); then Backspace takes it back,
/// as a person would.
async fn enter_until_taken(run: &mut Run) -> serde_json::Value {
    for _ in 0..4 {
        run.client.keys(b"\r").await;
        let taken = tokio::time::timeout(
            std::time::Duration::from_secs(3),
            run.client.until_event(|e| kind(e) == "user"),
        )
        .await;
        if let Ok((_, user)) = taken {
            return user;
        }
        run.client.keys(b"\x7f").await;
    }
    panic!("Gemini took nothing after four Enter presses");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_and_approvals_from_the_browser() {
    let Some(mut run) = start().await else {
        return;
    };
    // Sent before Gemini can take it: held until its input box shows.
    run.answered("hello there").await;
    // Streamed: a delta before the whole message.
    run.client
        .until_event(|e| e["event"]["delta"]["type"] == "text_delta")
        .await;

    // A shell call, allowed once from the browser with the dialog's words.
    let a = run.tool_call_asked().await;
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
    // It runs; the next one, denied, does not, and the turn is over.
    run.allowed_then_denied(&a).await;

    // A new file: the edit dialog has four choices, the browser three
    // (the external editor is the terminal's).
    run.client.submit(WRITE_TRIGGER).await;
    let c = run.client.pending_approval().await;
    assert_eq!(c.tool_name, "write_file");
    assert_eq!(c.options.len(), 3, "{:?}", c.options);
    assert_eq!(c.options[2].id, "4", "{:?}", c.options);
    run.answer(&c, ApprovalOptionKind::AllowOnce).await;
    run.reply(AFTER_TOOL).await;
    let written = std::fs::read_to_string(run.program.workspace.path().join(WRITE_FILE)).unwrap();
    assert_eq!(written, WRITE_CONTENT);
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_answers_too_and_typed_prompts_show_in_the_chat() {
    let Some(mut run) = start().await else {
        return;
    };
    // Typed in the terminal, as a person would: shown in the chat.
    run.client.until_screen(config::GEMINI_READY_TEXT).await;
    run.client.keys(TYPED.as_bytes()).await;
    run.client.until_screen(TYPED).await;
    let user = enter_until_taken(&mut run).await;
    run.typed_answered(&user).await;

    // "1. Allow once" in the terminal: the card flips to allowed there.
    let a = run.tool_call_asked().await;
    run.client.until_screen("Allow once").await;
    run.client.keys(b"1").await;
    run.settled_as(&a, ApprovalState::Allowed, Decider::Terminal)
        .await;
    run.tool_ran().await;

    // "3. No" in the terminal fires no hook: the transcript tells.
    let b = run.tool_call_asked().await;
    run.client.until_screen("No, suggest changes").await;
    run.client.keys(b"3").await;
    run.settled_as(&b, ApprovalState::Denied, Decider::Terminal)
        .await;
    let (_, end) = run.client.until_event(|e| kind(e) == "result").await;
    assert_eq!(end["subtype"], "interrupted");
    assert!(!run.tool_file().exists());

    // Held until the turn is over, then answered; /exit ends it all.
    run.answered("still there?").await;
    run.client.submit("/exit").await;
    run.client
        .until_event(|e| e["subtype"] == "session_end")
        .await;
    let exit = run.client.exited().await;
    assert_eq!(exit.code, Some(0), "{exit:?}");
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
    let mut c = run.server().resume_ended(run.id()).await;
    run.asks_back(&mut c).await;
    run.finish().await;
}
