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

use duet_protocol::rest::{ApprovalOptionKind, ApprovalState, Decider};
use duet_server::config;
use mocks::gemini::{MockGemini, WRITE_CONTENT, WRITE_FILE, WRITE_TRIGGER};
use mocks::{reply_to, AFTER_TOOL, TOOL_COMMAND, TOOL_TRIGGER};
use support::{assistant_text, kind};

type Run = agent::Run<agent::Setup<MockGemini>>;

#[path = "scenarios/mod.rs"]
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
    run.client.submit("hello there").await;
    let (_, user) = run.client.until_event(|e| kind(e) == "user").await;
    assert_eq!(user["message"]["content"][0]["text"], "hello there");
    // Streamed: a delta before the whole message.
    run.client
        .until_event(|e| e["event"]["delta"]["type"] == "text_delta")
        .await;
    run.reply(&reply_to("hello there")).await;
    run.result().await;

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
    run.client.choose(&a, ApprovalOptionKind::AllowOnce).await;
    let done = run.client.settled(&a.request_id).await;
    assert_eq!(done.state, ApprovalState::Allowed);
    assert_eq!(done.decided_by, Some(Decider::Client));
    run.reply(AFTER_TOOL).await;
    run.result().await;
    assert!(run.tool_file().exists(), "{}", run.program.mock.summary());

    // Denied from the browser: it does not run, the turn is over, the
    // next prompt is answered.
    std::fs::remove_file(run.tool_file()).unwrap();
    run.client.submit(TOOL_TRIGGER).await;
    let b = run.client.pending_approval().await;
    run.client.choose(&b, ApprovalOptionKind::RejectOnce).await;
    let done = run.client.settled(&b.request_id).await;
    assert_eq!(done.state, ApprovalState::Denied);
    run.client.submit("after the denial").await;
    run.reply(&reply_to("after the denial")).await;
    assert!(!run.tool_file().exists());

    // A new file: the edit dialog has four choices, the browser three
    // (the external editor is the terminal's).
    run.result().await;
    run.client.submit(WRITE_TRIGGER).await;
    let c = run.client.pending_approval().await;
    assert_eq!(c.tool_name, "write_file");
    assert_eq!(c.options.len(), 3, "{:?}", c.options);
    assert_eq!(c.options[2].id, "4", "{:?}", c.options);
    run.client.choose(&c, ApprovalOptionKind::AllowOnce).await;
    assert_eq!(
        run.client.settled(&c.request_id).await.state,
        ApprovalState::Allowed
    );
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
    run.client.keys(b"typed in the terminal").await;
    run.client.until_screen("typed in the terminal").await;
    let user = enter_until_taken(&mut run).await;
    assert_eq!(
        user["message"]["content"][0]["text"],
        "typed in the terminal"
    );
    run.reply(&reply_to("typed in the terminal")).await;
    run.result().await;

    // "1. Allow once" in the terminal: the card flips to allowed there.
    run.client.submit(TOOL_TRIGGER).await;
    let a = run.client.pending_approval().await;
    run.client.until_screen("Allow once").await;
    run.client.keys(b"1").await;
    let done = run.client.settled(&a.request_id).await;
    assert_eq!(done.state, ApprovalState::Allowed);
    assert_eq!(done.decided_by, Some(Decider::Terminal));
    run.reply(AFTER_TOOL).await;
    run.result().await;
    assert!(run.tool_file().exists());

    // "3. No" in the terminal fires no hook: the transcript tells.
    std::fs::remove_file(run.tool_file()).unwrap();
    run.client.submit(TOOL_TRIGGER).await;
    let b = run.client.pending_approval().await;
    run.client.until_screen("No, suggest changes").await;
    run.client.keys(b"3").await;
    let done = run.client.settled(&b.request_id).await;
    assert_eq!(done.state, ApprovalState::Denied);
    assert_eq!(done.decided_by, Some(Decider::Terminal));
    let (_, end) = run.client.until_event(|e| kind(e) == "result").await;
    assert_eq!(end["subtype"], "interrupted");
    assert!(!run.tool_file().exists());

    // Held until the turn is over, then answered; /exit ends it all.
    run.client.submit("still there?").await;
    run.reply(&reply_to("still there?")).await;
    run.result().await;
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
    run.client.submit("remember the word kiwi").await;
    run.reply(&reply_to("remember the word kiwi")).await;
    run.result().await;
    run.client.submit("/exit").await;
    run.client.exited().await;
    let mut c = run.server().resume_ended(run.id()).await;
    c.submit("what was the word?").await;
    c.until_event(|e| assistant_text(e).contains("what was the word?"))
        .await;
    // Gemini sent the earlier conversation with the new prompt.
    let last = run.program.mock.requests().last().cloned().unwrap();
    assert!(
        last.to_string().contains("remember the word kiwi"),
        "the resumed request carries the history: {}",
        run.program.mock.summary()
    );
    run.finish().await;
}
