//! Gemini CLI 0.61.0 (`gemini --acp`) and Codex through codex-acp 2.6.0,
//! each scenario written once and run against each (`gemini::NAME`,
//! `codex::NAME`; the turns are `scenarios/mod.rs`): a prompt sent
//! before the agent has a session is held until `session_start`, one sent
//! mid-turn until the running `session/prompt` is answered, and the model
//! is asked each exactly once; a call rejected from the browser with the
//! agent's own option does not run; a cancel (`session/cancel`) ends a
//! running turn `cancelled` and the reply stops; an ended codex-acp
//! session resumed is loaded (`session/load`) and the model gets the
//! earlier conversation.

use duet_protocol::rest::{ApprovalOptionKind, ApprovalState};
use duet_protocol::ws::ServerMessage;

use crate::agent::{Run, Setup};
use crate::mocks::TOOL_TRIGGER;
use crate::scenarios::{self, Asked};

/// Declares each agent's scenarios as its tests (`gemini::NAME`,
/// `codex::NAME`).
macro_rules! scenarios {
    ($($module:ident($setup:path): $($name:ident),*;)*) => {$(
        mod $module {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    if let Some(setup) = $setup().await {
                        super::$name(setup).await
                    }
                }
            )*
        }
    )*};
}

// Gemini CLI 0.61.0 cannot load a session in the clock minute its
// conversation started (`session/load` fails with "Invalid session
// identifier" and empties the saved conversation; a minute later it loads,
// docs/gemini-cli.md §6): a test of it would wait for the minute to turn.
scenarios! {
    gemini(crate::agent::gemini::acp):
        prompts_before_ready_and_mid_turn_are_held_and_asked_once,
        a_rejected_call_does_not_run_and_a_cancel_ends_a_running_turn;
    codex(crate::agent::codex::acp):
        prompts_before_ready_and_mid_turn_are_held_and_asked_once,
        a_rejected_call_does_not_run_and_a_cancel_ends_a_running_turn,
        an_ended_session_is_loaded_with_its_history;
}

async fn prompts_before_ready_and_mid_turn_are_held_and_asked_once<M: Asked>(setup: Setup<M>) {
    let mut run = Run::start(setup).await;
    scenarios::held_until_ready(&mut run, "are you there yet").await;
    scenarios::held_until_the_turn_ends(&mut run, "and then a second question").await;
    run.finish().await;
}

async fn a_rejected_call_does_not_run_and_a_cancel_ends_a_running_turn<M: Asked>(setup: Setup<M>) {
    let mut run = Run::started(setup).await;
    run.client.submit(TOOL_TRIGGER).await;
    let a = run.client.pending_approval().await;
    run.client.choose(&a, ApprovalOptionKind::RejectOnce).await;
    assert_eq!(
        run.client.settled(&a.request_id).await.state,
        ApprovalState::Denied
    );
    run.result().await;
    assert!(!run.tool_file().exists(), "the rejected call ran");

    let end = scenarios::cancelled(&mut run).await;
    assert_eq!(end["stop_reason"], "cancelled", "{end}");
    scenarios::answered_after_the_cancel(&mut run, "after the cancel").await;
    assert!(!run.tool_file().exists(), "the rejected call ran");
    scenarios::asked_once(&run.program.mock, &[TOOL_TRIGGER]);
    run.finish().await;
}

async fn an_ended_session_is_loaded_with_its_history<M: Asked>(setup: Setup<M>) {
    let mut run = Run::started(setup).await;
    let c = scenarios::resumed_with_history(&mut run).await;
    // The agent's replay of the conversation is not told as new chat.
    let replayed = c.texts.iter().any(|m| {
        matches!(m, ServerMessage::Event { event, .. }
            if crate::support::assistant_text(event).contains("apples"))
    });
    assert!(!replayed, "the loaded conversation came back as new chat");
    run.finish().await;
}
