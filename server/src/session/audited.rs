//! What clients do to a session on their own behalf, recorded in its
//! audit trail with who did it (`observe`); refused requests too: a late
//! or unknown answer is worth knowing about.

use duet_protocol::rest::Approval;
use serde_json::json;

use super::channel::approvals::Choice;
use super::channel::delivery::Accepted;
use super::{Session, SessionError};
use crate::observe::{Actor, Outcome, Switch};

/// The outcome of `result`: `ok`'s name, or a refusal and its code.
fn outcome<T>(
    result: &Result<T, SessionError>,
    ok: impl FnOnce(&T) -> &'static str,
) -> Outcome<'static> {
    match result {
        Ok(v) => Outcome {
            outcome: ok(v),
            error: None,
        },
        Err(e) => Outcome {
            outcome: "refused",
            error: Some(e.code().as_str()),
        },
    }
}

impl Session {
    /// [`Session::submit`] by `who`.
    pub(crate) fn submit_as(&self, text: String, who: &Actor) -> Result<Accepted, SessionError> {
        let result = self.submit(text.clone());
        let how = outcome(&result, |a| match a {
            Accepted::Queued => "queued",
            Accepted::Written => "written",
        });
        self.observe.submitted(who, &text, how);
        result
    }

    /// Lets go of unsent prompt `n` for `who` (recorded when it was there:
    /// a second client's discard finds it gone).
    pub(crate) fn discard_as(&self, n: u64, who: &Actor) {
        if let Some(p) = self.conversation.discard(n) {
            self.observe.discarded(who, &p.text);
        }
    }

    /// [`Session::switch`] by `who`.
    pub(crate) fn switch_as(
        &self,
        what: Switch,
        value: &str,
        who: &Actor,
    ) -> Result<(), SessionError> {
        let result = self.switch(what, value);
        self.observe
            .switch_asked(who, what, value, outcome(&result, |_| "sent"));
        result
    }

    /// [`Session::approve`] by `who`.
    pub(crate) fn approve_as(
        &self,
        request_id: &str,
        choice: &Choice,
        who: &Actor,
    ) -> Result<Approval, SessionError> {
        let result = self.approve(request_id, choice, who.name());
        let option = || match choice {
            Choice::Option(id) => json!(id),
            Choice::Allowed(allowed) => json!({"allowed": allowed}),
        };
        let decided = match &result {
            Ok(a) => Ok(a),
            Err(e) => Err((option(), e.code().as_str())),
        };
        self.observe.decided(who, request_id, decided);
        result
    }
}
