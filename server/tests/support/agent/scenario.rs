//! The steps the real agents' end-to-end tests take the same way, whatever
//! the agent: a prompt from the browser answered (streamed, and timed), the
//! scripted shell call asked for and run (or not) once the browser decided
//! or cancelled, a word remembered across a resume. What is an agent's own
//! (its dialog's words, how it is told to exit, how its resumed session
//! starts) stays in its test.

use std::time::Instant;

use duet_protocol::rest::{Approval, ApprovalOptionKind, ApprovalState, Decider};
use duet_protocol::ws::ClientMessage;
use serde_json::Value;

use super::{tool_results, user_event, user_text, Agent, Mock, Run, Setup};
use crate::mocks::{reply_to, AFTER_TOOL, TOOL_TRIGGER};
use crate::support::{assistant_text, Client};

/// What the first half of a resume test tells the agent, and the second
/// half asks back.
pub(crate) const REMEMBER: &str = "remember the word kiwi";
/// What a test types into an agent's terminal as a person would.
pub(crate) const TYPED: &str = "typed in the terminal";
const ASK_BACK: &str = "what was the word?";

impl<A: Agent> Run<A> {
    /// Submits `prompt` from the browser, then waits for the chat to show
    /// it, for the reply to it (the mock's names its prompt) and for the
    /// turn's `result`, which it returns.
    pub(crate) async fn answered(&mut self, prompt: &str) -> Value {
        self.client.submit(prompt).await;
        user_event(&mut self.client, prompt).await;
        self.reply(&reply_to(prompt)).await;
        self.result().await
    }

    /// Submits `prompt`; waits for its reply to stream (a text delta), for
    /// the whole reply and for a `result` that is no error. Prints how long
    /// the first delta and the result took.
    pub(crate) async fn streamed(&mut self, prompt: &str) {
        let sent = Instant::now();
        self.client.submit(prompt).await;
        self.client
            .until_event(|e| e["event"]["delta"]["type"] == "text_delta")
            .await;
        let first = sent.elapsed();
        self.reply(&reply_to(prompt)).await;
        assert_eq!(self.result().await["is_error"], false);
        eprintln!(
            "measured: {} submit to first delta {first:?}, to result {:?}",
            self.session.profile,
            sent.elapsed()
        );
    }

    /// Asks for the scripted shell call (its file removed first, should an
    /// earlier call have made it) and waits for its approval.
    pub(crate) async fn tool_call_asked(&mut self) -> Approval {
        let _ = std::fs::remove_file(self.tool_file());
        self.client.submit(TOOL_TRIGGER).await;
        self.client.pending_approval().await
    }

    /// Answers approval `a` from the browser with its option of `kind` (in
    /// the agent's own words); waits until the agent confirmed it.
    pub(crate) async fn answer(&mut self, a: &Approval, kind: ApprovalOptionKind) -> Approval {
        self.client.choose(a, kind).await;
        let state = if kind.allows() {
            ApprovalState::Allowed
        } else {
            ApprovalState::Denied
        };
        self.settled_as(a, state, Decider::Client).await
    }

    /// Approval `a` settled as `state` by `by` (the agent confirmed it).
    pub(crate) async fn settled_as(
        &mut self,
        a: &Approval,
        state: ApprovalState,
        by: Decider,
    ) -> Approval {
        let done = self.client.settled(&a.request_id).await;
        assert_eq!((done.state, done.decided_by), (state, Some(by)), "{done:?}");
        done
    }

    /// The allowed shell call ran: its result shows in the chat (the
    /// `user` event returned), the model answered it and the turn ended,
    /// and its file is there.
    pub(crate) async fn tool_ran(&mut self) -> Value {
        let (_, results) = self
            .client
            .until_event(|e| !tool_results(e).is_empty())
            .await;
        self.reply(AFTER_TOOL).await;
        self.result().await;
        assert!(self.tool_file().exists(), "the allowed call made no file");
        results
    }

    /// `user`, the event of the prompt typed in the agent's terminal
    /// ([`TYPED`]), shows it in the chat, and the agent answers it.
    pub(crate) async fn typed_answered(&mut self, user: &Value) {
        assert_eq!(user_text(user).as_deref(), Some(TYPED), "{user}");
        self.reply(&reply_to(TYPED)).await;
        self.result().await;
    }

    /// The browser allows the scripted shell call `a` once, with the
    /// agent's own words for it: it runs. Then it denies the next one: that
    /// does not run, and the turn is over.
    pub(crate) async fn allowed_then_denied(&mut self, a: &Approval) {
        self.answer(a, ApprovalOptionKind::AllowOnce).await;
        self.tool_ran().await;
        let b = self.tool_call_asked().await;
        self.answer(&b, ApprovalOptionKind::RejectOnce).await;
        self.denial_ended_the_turn().await;
    }

    /// The browser denies the shell call `a` (duet picks the agent's option
    /// that rejects): the agent ends the turn (its `result` is printed), the
    /// call did not run, and the next prompt is answered.
    pub(crate) async fn denied(&mut self, a: &Approval) {
        self.decide(&a.request_id, false).await;
        assert_eq!(
            self.decided(&a.request_id).await.state,
            ApprovalState::Denied
        );
        let r = self.result().await;
        eprintln!("{} result after a denial: {r}", self.session.profile);
        self.denial_ended_the_turn().await;
    }

    /// A cancel from the browser while the scripted shell call waits for
    /// its approval: the card is abandoned, the turn ends (its `result`,
    /// returned), the call never ran, and the next prompt is answered.
    pub(crate) async fn cancelled_while_asked(&mut self) -> Value {
        let a = self.tool_call_asked().await;
        self.client.send(&ClientMessage::Cancel { id: None }).await;
        assert_eq!(
            self.decided(&a.request_id).await.state,
            ApprovalState::Abandoned
        );
        let r = self.result().await;
        eprintln!("{} result after a cancel: {r}", self.session.profile);
        assert!(!self.tool_file().exists(), "the cancelled call ran");
        self.answered("after the cancel").await;
        r
    }

    /// The denied shell call did not run, and the next prompt (held until
    /// the denial ended the turn) is answered.
    pub(crate) async fn denial_ended_the_turn(&mut self) {
        self.answered("after the denial").await;
        assert!(!self.tool_file().exists(), "the denied call ran");
    }
}

impl<M: Mock> Run<Setup<M>> {
    /// The second half of a resume test: `c`, a client of the session that
    /// resumed this one (told [`REMEMBER`] before it ended), asks for the
    /// word; the agent sends the model the earlier conversation with it.
    pub(crate) async fn asks_back(&self, c: &mut Client) {
        c.submit(ASK_BACK).await;
        c.until_event(|e| assistant_text(e).contains(ASK_BACK))
            .await;
        let asked = self
            .program
            .mock
            .requests()
            .into_iter()
            .rev()
            .find(|r| r.to_string().contains(ASK_BACK))
            .expect("a request with the question");
        assert!(
            asked.to_string().contains(REMEMBER),
            "the resumed request carries the history: {}",
            self.program.mock.summary()
        );
    }
}
