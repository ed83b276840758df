//! The steps the real agents' end-to-end tests take the same way, whatever
//! the agent: a prompt from the browser answered, the scripted shell call
//! asked for and run (or not) once the browser decided, a word remembered
//! across a resume. What is an agent's own (its dialog's words, how it is
//! told to exit, how its resumed session starts) stays in its test.

use duet_protocol::rest::{Approval, ApprovalOptionKind, ApprovalState, Decider};
use serde_json::Value;

use super::{tool_results, user_event, Agent, Mock, Run, Setup};
use crate::mocks::{reply_to, AFTER_TOOL, TOOL_TRIGGER};
use crate::support::{assistant_text, Client};

/// What the first half of a resume test tells the agent, and the second
/// half asks back.
pub(crate) const REMEMBER: &str = "remember the word kiwi";
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

    /// The allowed shell call ran: its result shows in the chat, the model
    /// answered it and the turn ended, and its file is there.
    pub(crate) async fn tool_ran(&mut self) {
        self.client
            .until_event(|e| !tool_results(e).is_empty())
            .await;
        self.reply(AFTER_TOOL).await;
        self.result().await;
        assert!(self.tool_file().exists(), "the allowed call made no file");
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
        let last = self.program.mock.requests().last().cloned().unwrap();
        assert!(
            last.to_string().contains(REMEMBER),
            "the resumed request carries the history: {}",
            self.program.mock.summary()
        );
    }
}
