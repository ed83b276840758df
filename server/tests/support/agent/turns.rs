//! Turn scenarios written once for every real agent behind the harness
//! (`support/agent/`) whose mock logs what the model was asked. Turns the
//! browser acts on while the agent works: a prompt sent before the agent
//! is ready, or while a reply streams, is held (its `ack` says `queued`),
//! then delivered after the turn before it and asked of the model exactly
//! once; a cancel ends a running turn before its reply is over, and the
//! next prompt is answered. And a resume: the ended conversation goes on
//! with its history. `gemini_e2e`, `codex_e2e`, `agent_mocks` (ACP) and
//! `headless_e2e` run them, each adding what its agent shows.
//!
//! Include from a test binary, after `agent`, `mocks` and `support`, with
//! `#[path = "support/agent/turns.rs"] mod scenarios;`.

#![allow(dead_code)]

use duet_protocol::ws::{ClientMessage, ServerMessage};
use serde_json::Value;

use crate::agent::program::queued;
use crate::agent::{reply_containing, user_event, Mock, Run, Setup};
use crate::mocks::anthropic::MockAnthropic;
use crate::mocks::chat_completions::{self, MockLlm};
use crate::mocks::gemini::{self, MockGemini};
use crate::mocks::openai_responses::{self, MockResponses};
use crate::mocks::{reply_to, reply_words, SLOW_TRIGGER};
use crate::support::{kind, Client};

/// A mock that logs the requests of the agent's main loop.
pub(crate) trait Requests: Mock {
    /// The main requests so far, in order.
    fn main_requests(&self) -> Vec<Value>;
}

/// A mock that can tell which prompt each main request asks about.
pub(crate) trait Asked: Requests {
    /// How many main requests ask about exactly `prompt`.
    fn asked(&self, prompt: &str) -> usize;
}

macro_rules! requests {
    ($($mock:ty),*) => {$(
        impl Requests for $mock {
            fn main_requests(&self) -> Vec<Value> {
                self.requests()
            }
        }
    )*};
}
requests!(MockLlm, MockAnthropic, MockGemini, MockResponses);

impl Asked for MockLlm {
    fn asked(&self, prompt: &str) -> usize {
        chat_completions::times_asked(&self.requests(), prompt)
    }
}

impl Asked for MockGemini {
    fn asked(&self, prompt: &str) -> usize {
        gemini::times_asked(&self.requests(), prompt)
    }
}

impl Asked for MockResponses {
    fn asked(&self, prompt: &str) -> usize {
        openai_responses::times_asked(&self.requests(), prompt)
    }
}

/// A prompt the mock answers slowly (seconds of streaming).
pub(crate) fn slow_prompt() -> String {
    format!("tell me a {SLOW_TRIGGER} please")
}

/// Fails unless the model was asked each of `prompts` exactly once.
pub(crate) fn asked_once(mock: &impl Asked, prompts: &[&str]) {
    for prompt in prompts {
        assert_eq!(
            mock.asked(prompt),
            1,
            "{prompt:?} was not asked once: {}",
            mock.summary()
        );
    }
}

/// The seq of the `session_start` `c` has seen.
fn start_seq(c: &Client) -> u64 {
    c.texts
        .iter()
        .find_map(|m| match m {
            ServerMessage::Event { seq, event, .. } if event["subtype"] == "session_start" => {
                Some(*seq)
            }
            _ => None,
        })
        .expect("session_start")
}

/// Waits until the reply to `prompt` streams: a text delta after the
/// prompt's `user` event (an earlier turn's may still be in the mailbox).
pub(crate) async fn streaming(c: &mut Client, prompt: &str) {
    let asked = user_event(c, prompt).await;
    c.until(|m| {
        matches!(m, ServerMessage::Event { seq, event, .. }
            if *seq > asked && event["event"]["delta"]["type"] == "text_delta")
    })
    .await;
}

/// `prompt`, submitted by a run started without waiting for the handshake
/// (`Run::start`), is held until `session_start`, then answered, and asked
/// once.
pub(crate) async fn held_until_ready<M: Asked>(run: &mut Run<Setup<M>>, prompt: &str) {
    assert!(
        queued(&run.client.submit(prompt).await),
        "sent before the handshake, so it must be held"
    );
    run.handshake().await;
    let started = start_seq(&run.client);
    assert!(user_event(&mut run.client, prompt).await > started);
    run.reply(&reply_to(prompt)).await;
    run.result().await;
    asked_once(&run.program.mock, &[prompt]);
}

/// `second`, submitted while the reply to a slow prompt streams, is held
/// until that turn's `result` (which is not a cancel), then delivered as a
/// turn of its own and answered; each prompt asked once.
pub(crate) async fn held_until_the_turn_ends<M: Asked>(run: &mut Run<Setup<M>>, second: &str) {
    let first = slow_prompt();
    run.client.submit(&first).await;
    streaming(&mut run.client, &first).await;
    assert!(
        queued(&run.client.submit(second).await),
        "the agent is busy"
    );
    let (first_end, end) = run.client.until_event(|e| kind(e) == "result").await;
    assert_ne!(end["subtype"], "interrupted", "{end}");
    let second_user = user_event(&mut run.client, second).await;
    assert!(
        second_user > first_end,
        "delivered before the turn was over"
    );
    run.reply(&reply_to(second)).await;
    run.result().await;
    asked_once(&run.program.mock, &[&first, second]);
}

/// A client's `cancel` while the reply to a slow prompt streams: the
/// turn's `result`.
pub(crate) async fn cancelled<M: Asked>(run: &mut Run<Setup<M>>) -> Value {
    let slow = slow_prompt();
    run.client.submit(&slow).await;
    streaming(&mut run.client, &slow).await;
    run.client
        .send(&ClientMessage::Cancel {
            id: Some("cancel".into()),
        })
        .await;
    run.result().await
}

/// After [`cancelled`]: `next` is answered; the cancelled reply never
/// reached its last word; the model was asked each prompt once.
pub(crate) async fn answered_after_the_cancel<M: Asked>(run: &mut Run<Setup<M>>, next: &str) {
    run.client.submit(next).await;
    user_event(&mut run.client, next).await;
    run.reply(&reply_to(next)).await;
    let slow = slow_prompt();
    let last_word = reply_words(&slow).pop().unwrap();
    let finished = run.client.texts.iter().any(|m| {
        matches!(m, ServerMessage::Event { event, .. }
            if event.to_string().contains(last_word.trim()))
    });
    assert!(!finished, "the cancelled reply went on to its end");
    asked_once(&run.program.mock, &[&slow, next]);
}

/// A prompt answered, the agent ended (DELETE); the session resumed
/// (`POST …/resume`) is the same conversation of the agent's, and its next
/// prompt goes to the model with the earlier one. Returns a client of the
/// resumed session.
pub(crate) async fn resumed_with_history<M: Requests>(run: &mut Run<Setup<M>>) -> Client {
    run.client.submit("remember the apples").await;
    run.reply(&reply_to("remember the apples")).await;
    run.result().await;
    run.delete().await;
    let ended = run.server().info(run.id()).await;
    assert!(ended.resumable, "{ended:?}");
    let (resumed, mut c, _) = run.resume().await;
    c.submit("what was it").await;
    reply_containing(&mut c, &reply_to("what was it")).await;
    let mock = &run.program.mock;
    let last = mock.main_requests().pop().unwrap();
    assert!(
        last.to_string().contains("remember the apples"),
        "the resumed request carries the history: {}",
        mock.summary()
    );
    assert_eq!(
        run.server().info(resumed.id).await.agent_session_id,
        ended.agent_session_id,
        "not the same conversation"
    );
    c
}
