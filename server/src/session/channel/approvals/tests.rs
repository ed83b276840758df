//! Approvals as a state machine: first answer wins, the agent's word is
//! final, nothing stays pending past its turn.

use super::*;
use serde_json::json;

fn tool() -> CanUseTool {
    serde_json::from_value(json!({"subtype":"can_use_tool","tool_name":"run_shell_command","tool_use_id":"t1","input":{"command":"ls"}})).unwrap()
}

fn success(id: &str, allowed: bool) -> ControlResponseBody {
    serde_json::from_value(
        json!({"subtype":"success","request_id":id,"response":{"allowed":allowed}}),
    )
    .unwrap()
}

#[test]
fn first_answer_wins_and_the_program_confirms() {
    let mut a = Approvals::default();
    a.requested("r1", &tool(), 5, super::super::allow_deny());
    assert_eq!(a.pending(), 1);
    let (d, option) = a
        .decide("r1", &Choice::Allowed(true), &DecidedBy::client(Some("ci")))
        .unwrap();
    assert_eq!(d.decided_by_name.as_deref(), Some("ci"));
    assert_eq!(d.decided_by, Some(Decider::Client));
    assert_eq!(option.id, "allow");
    assert!(!d.confirmed, "sent, waiting for the agent");
    assert!(matches!(
        a.decide("r1", &Choice::Allowed(false), &DecidedBy::client(None)),
        Err(DecideError::AlreadyResolved(_, "allowed"))
    ));
    assert!(matches!(
        a.decide("nope", &Choice::Allowed(true), &DecidedBy::client(None)),
        Err(DecideError::Unknown(_))
    ));
    // Confirmation that agrees keeps the decision and marks it confirmed.
    let confirmed = a.responded(&success("r1", true)).unwrap();
    assert!(confirmed.confirmed);
    assert_eq!(confirmed.state, ApprovalState::Allowed);
    assert_eq!(confirmed.decided_by, Some(Decider::Client));
    assert_eq!(a.responded(&success("r1", true)), None);
}

#[test]
fn the_terminal_answering_first_overrides_a_client() {
    let mut a = Approvals::default();
    a.requested("r1", &tool(), 5, super::super::allow_deny());
    a.decide(
        "r1",
        &Choice::Option("allow".into()),
        &DecidedBy::client(None),
    )
    .unwrap();
    assert!(matches!(
        a.decide(
            "r1",
            &Choice::Option("nope".into()),
            &DecidedBy::client(None)
        ),
        Err(DecideError::AlreadyResolved(..))
    ));
    let changed = a.responded(&success("r1", false)).unwrap();
    assert_eq!(changed.state, ApprovalState::Denied);
    assert_eq!(changed.decided_by, Some(Decider::Terminal));
}

#[test]
fn unconfirmed_decisions_are_settled_at_turn_end() {
    let mut a = Approvals::default();
    a.requested("r1", &tool(), 5, super::super::allow_deny());
    a.decide("r1", &Choice::Allowed(false), &DecidedBy::client(None))
        .unwrap();
    let changed = a.abandon_pending();
    assert_eq!(changed.len(), 1);
    assert!(changed[0].confirmed);
    assert_eq!(changed[0].state, ApprovalState::Denied);
    assert!(a.abandon_pending().is_empty());
}

#[test]
fn pending_requests_are_abandoned_at_turn_end() {
    let mut a = Approvals::default();
    a.requested("r1", &tool(), 5, super::super::allow_deny());
    assert!(matches!(
        a.decide(
            "r1",
            &Choice::Option("maybe".into()),
            &DecidedBy::client(None)
        ),
        Err(DecideError::UnknownOption(..))
    ));
    let changed = a.abandon_pending();
    assert_eq!(changed.len(), 1);
    assert_eq!(a.pending(), 0);
    assert!(matches!(
        a.decide("r1", &Choice::Allowed(true), &DecidedBy::client(None)),
        Err(DecideError::AlreadyResolved(_, "abandoned"))
    ));
}

#[test]
fn a_replay_restores_who_decided_and_the_program_still_has_the_last_word() {
    let mut a = Approvals::default();
    a.requested("r1", &tool(), 5, super::super::allow_deny());
    a.requested("r2", &tool(), 6, super::super::allow_deny());
    let decision = |id: &str, seq, state| Decision {
        request_id: id.into(),
        seq,
        state,
        by: Some("ci".into()),
        chosen: Some("allow".into()),
        decider: None,
        reason: None,
    };
    let r1 = a
        .restore(decision("r1", 5, ApprovalState::Allowed))
        .unwrap();
    assert_eq!(
        (r1.state, r1.decided_by, r1.decided_by_name.as_deref()),
        (ApprovalState::Allowed, Some(Decider::Client), Some("ci"))
    );
    // The program confirms it: still the client's.
    let r1 = a.responded(&success("r1", true)).unwrap();
    assert_eq!(r1.decided_by, Some(Decider::Client));
    // The terminal answered first: the program's word stands.
    a.restore(decision("r2", 6, ApprovalState::Allowed));
    let r2 = a.responded(&success("r2", false)).unwrap();
    assert_eq!(
        (r2.state, r2.decided_by),
        (ApprovalState::Denied, Some(Decider::Terminal))
    );
    // Only a pending request takes a decision, and only a decision.
    assert_eq!(a.restore(decision("r2", 6, ApprovalState::Allowed)), None);
    a.requested("r3", &tool(), 7, super::super::allow_deny());
    assert_eq!(a.restore(decision("r3", 7, ApprovalState::Pending)), None);
    assert_eq!(a.pending(), 1);
}

#[test]
fn without_the_record_the_decider_is_unknown_not_the_terminal() {
    let mut a = Approvals::default();
    a.deciders_unknown();
    a.requested("r1", &tool(), 5, super::super::allow_deny());
    let r1 = a.responded(&success("r1", true)).unwrap();
    assert_eq!((r1.state, r1.decided_by), (ApprovalState::Allowed, None));
    a.requested("r2", &tool(), 6, super::super::allow_deny());
    let r2 = a.tool_finished("t1", false).unwrap();
    assert_eq!((r2.state, r2.decided_by), (ApprovalState::Allowed, None));
}

#[test]
fn resolved_history_is_bounded() {
    let mut a = Approvals::default();
    for i in 0..(KEEP_RESOLVED + 50) {
        let id = format!("r{i}");
        a.requested(&id, &tool(), i as u64, super::super::allow_deny());
        a.decide(&id, &Choice::Allowed(true), &DecidedBy::client(None))
            .unwrap();
    }
    a.requested("last", &tool(), 999, super::super::allow_deny());
    assert!(a.list().len() <= KEEP_RESOLVED + 1);
    assert_eq!(a.pending(), 1);
}

#[test]
fn a_pending_approval_takes_the_dialogs_choices_a_decided_one_keeps_its_own() {
    use duet_protocol::rest::ApprovalOptionKind;
    let mut a = Approvals::default();
    a.requested("r1", &tool(), 5, super::super::allow_deny());
    let mut dialog = super::super::allow_deny();
    dialog.insert(
        1,
        super::super::option("2", "Always allow ls", ApprovalOptionKind::AllowAlways),
    );
    let reoffered = a.reoffer("r1", dialog.clone()).unwrap();
    assert_eq!(reoffered.options, dialog);
    // The same again is no news; an unknown request none.
    assert_eq!(a.reoffer("r1", dialog.clone()), None);
    assert_eq!(a.reoffer("r9", dialog.clone()), None);
    // Chosen by its id; the agent still to confirm it.
    let (_, chosen) = a
        .decide("r1", &Choice::Option("2".into()), &DecidedBy::client(None))
        .unwrap();
    assert_eq!(chosen.label, "Always allow ls");
    assert!(a.awaits_agent("r1"));
    assert_eq!(a.reoffer("r1", super::super::allow_deny()), None);
    a.responded(&success("r1", true));
    assert!(!a.awaits_agent("r1"));
    assert_eq!(a.list()[0].chosen.as_deref(), Some("2"));
}
