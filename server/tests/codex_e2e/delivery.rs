//! `codex_e2e`'s prompts from the browser at awkward moments
//! (`scenarios/mod.rs`): one sent before Codex is ready is held until
//! its `session_start` (duet cannot start a turn before it follows the
//! thread), one sent mid-turn is held until the turn is over (a
//! `turn/start` then would steer the running turn: docs/codex.md §5.2);
//! each is a turn of its own the TUI shows, and the model is asked each
//! exactly once.

use super::*;
use crate::scenarios;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_before_ready_is_held_and_asked_once() {
    let Some(setup) = agent::codex::tui().await else {
        return;
    };
    let mut run = Run::start(setup).await;
    scenarios::held_until_ready(&mut run, "are you there yet").await;
    run.client
        .until_screen(&reply_to("are you there yet"))
        .await;
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_mid_turn_is_held_until_the_turn_ends_and_asked_once() {
    let Some(mut run) = start().await else {
        return;
    };
    let second = "and then a second question";
    scenarios::held_until_the_turn_ends(&mut run, second).await;
    run.client.until_screen(&reply_to(second)).await;
    run.finish().await;
}
