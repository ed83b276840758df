//! The Claude Code hook normaliser: any payload for any hook, in any
//! order, never panics and only ever yields events that parse as the
//! stream-json events they claim to be (an event that falls back to
//! `Unknown` would be relayed, but the conversation would never see it:
//! a `result` lost that way leaves the turn running for ever).

use duet_protocol::sidecar::{KnownEvent, SidecarEvent};
use proptest::prelude::*;
use serde_json::Value;

use crate::session::channel::claude::hooks::Normalizer;

const HOOKS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "MessageDisplay",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SessionEnd",
    "Notification",
    "SubagentStop",
    "",
];

const KEYS: &[&str] = &[
    "session_id",
    "cwd",
    "model",
    "source",
    "transcript_path",
    "prompt",
    "prompt_id",
    "message_id",
    "delta",
    "final",
    "tool_name",
    "tool_use_id",
    "tool_input",
    "tool_response",
    "error",
    "stdout",
    "stderr",
    "last_assistant_message",
    "reason",
    "message",
    "notification_type",
    "permission_suggestions",
    "hook_event_name",
];

/// Payloads: objects with the hook fields (of any JSON type), and now and
/// then something that is not an object at all.
fn payload() -> impl Strategy<Value = Value> {
    let field = prop_oneof![
        3 => prop::sample::select(&["s1", "m1", "Bash", "t1", ""][..]).prop_map(Value::from),
        3 => super::json_value(KEYS),
        1 => any::<bool>().prop_map(Value::Bool),
    ];
    prop_oneof![
        6 => prop::collection::btree_map(prop::sample::select(KEYS), field, 0..8)
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        1 => super::json_value(KEYS),
    ]
}

/// Checks that `event` parses as the known event its `type` names.
fn well_formed(event: &Value) -> Result<(), TestCaseError> {
    let line = event.to_string();
    let parsed = SidecarEvent::from_line(&line);
    prop_assert!(parsed.is_ok(), "not parseable: {}", line);
    let kind = event["type"].as_str().unwrap_or_default();
    match parsed.unwrap() {
        SidecarEvent::Known(k) => {
            prop_assert_eq!(k.type_name(), kind);
            if let KnownEvent::System(s) = &k {
                if s.subtype == "session_start" {
                    prop_assert!(s.session_start().is_some(), "no handshake in {}", line);
                }
            }
        }
        SidecarEvent::Unknown(_) => {
            return Err(TestCaseError::fail(format!(
                "not a well-formed {kind:?}: {line}"
            )))
        }
    }
    Ok(())
}

#[test]
fn any_hook_payload_becomes_well_formed_events() {
    let calls = prop::collection::vec((prop::sample::select(HOOKS), payload()), 1..8);
    proptest!(super::config(), |(calls in calls)| {
        let mut n = Normalizer::default();
        for (i, (hook, payload)) in calls.iter().enumerate() {
            let events = if *hook == "PermissionRequest" {
                vec![n.permission_request(&format!("r{i}"), payload)]
            } else {
                n.events(hook, payload)
            };
            for e in &events {
                well_formed(&e.to_value())?;
            }
        }
    });
}
