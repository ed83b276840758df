//! The typed sidecar models against the real stream recorded from Qwen Code
//! 0.15.10 (`tests/fixtures/qwen-code-0.15.10`, a copy of the project's
//! shared fixture) and the examples in the dual-output docs.

use std::path::PathBuf;

use duet_protocol::command::InputCommand;
use duet_protocol::sidecar::{
    ControlRequestBody, KnownEvent, KnownStreamEvent, SidecarEvent, StreamEvent,
};
use serde_json::Value;

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/qwen-code-0.15.10")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_recorded_event_is_modelled_and_round_trips() {
    let text = fixture("events.jsonl");
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for (i, line) in text.lines().enumerate() {
        let ev = SidecarEvent::from_line(line).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        let SidecarEvent::Known(known) = &ev else {
            panic!("line {} fell back to Unknown: {line}", i + 1)
        };
        if let KnownEvent::StreamEvent(s) = known {
            assert!(
                matches!(s.event, StreamEvent::Known(_)),
                "line {}: stream event not modelled",
                i + 1
            );
        }
        *kinds.entry(known.type_name().to_string()).or_default() += 1;
        let original: Value = serde_json::from_str(line).unwrap();
        assert_eq!(
            serde_json::to_value(&ev).unwrap(),
            original,
            "line {}",
            i + 1
        );
    }
    assert_eq!(kinds["system"], 2);
    assert_eq!(kinds["control_request"], 1);
    assert_eq!(kinds["control_response"], 1);
    assert!(
        !kinds.contains_key("result"),
        "Qwen Code 0.15.10's TUI emits no result event"
    );
}

#[test]
fn handshake_and_control_plane_read_as_documented() {
    let text = fixture("events.jsonl");
    let events: Vec<SidecarEvent> = text
        .lines()
        .map(|l| SidecarEvent::from_line(l).unwrap())
        .collect();

    let SidecarEvent::Known(KnownEvent::System(start)) = &events[0] else {
        panic!("first event is not system")
    };
    let hs = start.session_start().expect("session_start handshake");
    assert_eq!(hs.protocol_version, Some(1));
    assert_eq!(hs.version.as_deref(), Some("0.15.10"));
    assert!(hs
        .supported_events
        .unwrap()
        .contains(&"control_request".to_string()));

    let request = events
        .iter()
        .find_map(|e| match e {
            SidecarEvent::Known(KnownEvent::ControlRequest(r)) => Some(r),
            _ => None,
        })
        .unwrap();
    let ControlRequestBody::CanUseTool(tool) = &request.request else {
        panic!("not can_use_tool")
    };
    assert_eq!(tool.tool_name, "run_shell_command");
    assert_eq!(tool.input["command"], "touch made_by_tool.txt && ls");

    let response = events
        .iter()
        .find_map(|e| match e {
            SidecarEvent::Known(KnownEvent::ControlResponse(r)) => Some(r),
            _ => None,
        })
        .unwrap();
    assert_eq!(response.response.request_id(), request.request_id);
    assert_eq!(response.response.allowed(), Some(true));

    // Real ordering differs from the docs: the full `assistant` message comes
    // before the `message_stop` stream event that closes it.
    let pos = |pred: &dyn Fn(&SidecarEvent) -> bool| events.iter().position(pred).unwrap();
    let first_assistant = pos(&|e| matches!(e, SidecarEvent::Known(KnownEvent::Assistant(_))));
    let first_stop = pos(&|e| {
        matches!(e, SidecarEvent::Known(KnownEvent::StreamEvent(s))
            if matches!(s.event, StreamEvent::Known(KnownStreamEvent::MessageStop { .. })))
    });
    assert!(first_assistant < first_stop);

    let SidecarEvent::Known(KnownEvent::System(end)) = events.last().unwrap() else {
        panic!("last event is not system")
    };
    assert_eq!(end.subtype, "session_end");
}

#[test]
fn recorded_input_commands_parse() {
    let text = fixture("input.jsonl");
    let cmds: Vec<InputCommand> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(cmds.len(), 5);
    assert!(matches!(
        &cmds[2],
        InputCommand::ConfirmationResponse { allowed: true, .. }
    ));
    for (cmd, line) in cmds.iter().zip(text.lines()) {
        assert_eq!(cmd.to_line().trim_end(), line);
    }
}

#[test]
fn seed_doc_examples_parse() {
    // From the dual-output docs: session_start without the handshake fields
    // (older versions), and the error response to an unknown request_id.
    let old_start = r#"{"type":"system","subtype":"session_start","uuid":"u","session_id":"s","data":{"session_id":"s","cwd":"/p"}}"#;
    let SidecarEvent::Known(KnownEvent::System(s)) = SidecarEvent::from_line(old_start).unwrap()
    else {
        panic!()
    };
    assert_eq!(s.session_start().unwrap().protocol_version, None);

    let err = r#"{"type":"control_response","response":{"subtype":"error","request_id":"x","error":"unknown request_id (already resolved, cancelled, or never issued)"}}"#;
    let SidecarEvent::Known(KnownEvent::ControlResponse(r)) = SidecarEvent::from_line(err).unwrap()
    else {
        panic!()
    };
    assert_eq!(r.response.request_id(), "x");
}
