//! What clients do to a session on their own behalf, recorded in its
//! audit trail with who did it (`observe`); refused requests too: a late
//! or unknown answer is worth knowing about.

use duet_protocol::rest::{Approval, Decider};
use serde_json::json;

use super::channel::approvals::{Choice, DecidedBy};
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

    /// [`Session::approve`] by `who`, in a client (a browser, the API).
    pub(crate) fn approve_as(
        &self,
        request_id: &str,
        choice: &Choice,
        who: &Actor,
    ) -> Result<Approval, SessionError> {
        self.approve_via(request_id, choice, who, DecidedBy::client(who.name()))
    }

    /// [`Session::approve`] by `who`, with a button of a notification.
    pub(crate) fn approve_from_notification(
        &self,
        request_id: &str,
        allowed: bool,
        who: &Actor,
    ) -> Result<Approval, SessionError> {
        let by = DecidedBy {
            decider: Decider::Notification,
            name: who.name().map(str::to_string),
            reason: Some("Denied from a notification".into()),
        };
        self.approve_via(request_id, &Choice::Allowed(allowed), who, by)
    }

    fn approve_via(
        &self,
        request_id: &str,
        choice: &Choice,
        who: &Actor,
        by: DecidedBy,
    ) -> Result<Approval, SessionError> {
        let via = by.decider;
        let result = self.approve(request_id, choice, &by);
        let option = || match choice {
            Choice::Option(id) => json!(id),
            Choice::Allowed(allowed) => json!({"allowed": allowed}),
        };
        let decided = match &result {
            Ok(a) => Ok(a),
            Err(e) => Err((option(), e.code().as_str())),
        };
        self.observe.decided(who, request_id, via, decided);
        result
    }
}
