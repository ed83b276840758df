//! `gemini_e2e`'s turns the browser acts on while Gemini works
//! (`scenarios/mod.rs`): a prompt sent mid-turn is held until the turn
//! is over (typed then, Gemini would queue it itself: docs/gemini-cli.md
//! §5.2) and the model is asked it once; a cancel from the browser (Esc in
//! its terminal) ends a running turn: Gemini says "Request cancelled.",
//! the reply stops, the next prompt is answered.

use super::*;
use crate::scenarios;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_mid_turn_is_held_until_the_turn_ends_and_asked_once() {
    let Some(mut run) = start().await else {
        return;
    };
    scenarios::held_until_the_turn_ends(&mut run, "and then a second question").await;
    run.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_from_the_browser_ends_a_running_turn() {
    let Some(mut run) = start().await else {
        return;
    };
    let end = scenarios::cancelled(&mut run).await;
    assert_eq!(end["subtype"], "interrupted", "{end}");
    // Gemini itself stopped the turn (the Esc reached it).
    run.client.until_screen("Request cancelled").await;
    scenarios::answered_after_the_cancel(&mut run, "after the cancel").await;
    run.finish().await;
}
