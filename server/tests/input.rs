//! The input file: one line per command, and submits held until the program
//! can read them.

mod support;

use duet_protocol::command::InputCommand;
use duet_protocol::ws::ServerMessage;
use support::*;

fn input_lines(server: &TestServer, id: impl std::fmt::Display) -> Vec<InputCommand> {
    let path = server
        .state_dir
        .path()
        .join("state")
        .join(id.to_string())
        .join("input.jsonl");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submit_becomes_one_input_line_and_a_user_event() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.until_event(|e| kind(e) == "system").await;
    let text = "multi\nline \"quoted\" ✓";
    match c.submit(text).await {
        ServerMessage::Ack { queued, .. } => assert!(!queued),
        other => panic!("{other:?}"),
    }
    // Written by the time it is acknowledged.
    assert_eq!(
        input_lines(&server, s.id),
        [InputCommand::Submit { text: text.into() }]
    );
    let (_, ev) = c.until_event(|e| kind(e) == "user").await;
    assert_eq!(ev["message"]["content"][0]["text"], text);
    c.until_event(|e| kind(e) == "assistant").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submit_before_the_program_is_ready_is_held_not_lost() {
    let server = TestServer::start().await;
    let s = server.create("late-start").await;
    let mut c = server.connect(s.id, None).await;
    c.until_screen("fake-tui ready").await;
    for text in ["early one", "early two"] {
        match c.submit(text).await {
            ServerMessage::Ack { queued, .. } => assert!(queued, "held until session_start"),
            other => panic!("{other:?}"),
        }
    }
    assert!(input_lines(&server, s.id).is_empty());
    // The program announces itself; the held submits go out in order.
    c.keys(b"S").await;
    let (start, _) = c.until_event(|e| kind(e) == "system").await;
    let (first, ev) = c.until_event(|e| kind(e) == "user").await;
    assert_eq!(ev["message"]["content"][0]["text"], "early one");
    let (second, ev) = c.until_event(|e| kind(e) == "user").await;
    assert_eq!(ev["message"]["content"][0]["text"], "early two");
    assert!(start < first && first < second);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_submits_are_refused() {
    let server = TestServer::start_with(|o| o.limits.max_submit_bytes = 1000).await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    match c.submit(&"x".repeat(1001)).await {
        ServerMessage::Error { code, .. } => {
            assert_eq!(code, duet_protocol::ws::ErrorCode::TooLarge)
        }
        other => panic!("{other:?}"),
    }
    let resp = server
        .post_json(
            &format!("/api/sessions/{}/submit", s.id),
            serde_json::json!({"text": "y".repeat(1001)}),
        )
        .await;
    assert_eq!(resp.status(), 413);
    assert!(input_lines(&server, s.id).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blank_submits_are_refused_not_sent() {
    // An agent ignores a blank prompt, so duet could never see it taken: it
    // was written twice and then reported as dropped.
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.until_event(|e| kind(e) == "system").await;
    match c.submit("  \n ").await {
        ServerMessage::Error { code, message, .. } => {
            assert_eq!(code, duet_protocol::ws::ErrorCode::BadMessage);
            assert!(message.contains("empty"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let resp = server
        .post_json(
            &format!("/api/sessions/{}/submit", s.id),
            serde_json::json!({"text": ""}),
        )
        .await;
    assert_eq!(resp.status(), 400);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "bad_message", "{body}");
    // A real prompt after them is the only line written.
    match c.submit("after").await {
        ServerMessage::Ack { queued, .. } => assert!(!queued),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        input_lines(&server, s.id),
        [InputCommand::Submit {
            text: "after".into()
        }]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_after_stopping_a_running_command_is_answered() {
    // The demo agent, like an agent may, writes only the stopped command's
    // tool_result after Escape; the turn must not stay open for good.
    let server = TestServer::start().await;
    let s = server.create("demo").await;
    let mut c = server.connect(s.id, None).await;
    c.submit("run sleep 30").await;
    let a = c.pending_approval().await;
    c.send(&duet_protocol::ws::ClientMessage::Approve {
        request_id: a.request_id,
        allowed: Some(true),
        option: None,
        id: None,
    })
    .await;
    c.until_screen("running · esc to cancel").await;
    c.send(&duet_protocol::ws::ClientMessage::Cancel { id: None })
        .await;
    c.until_event(|e| kind(e) == "user" && e.to_string().contains("tool_result"))
        .await;
    c.submit("hello after the stop").await;
    let (_, reply) = c
        .until_event(|e| {
            kind(e) == "assistant" && assistant_text(e).contains("hello after the stop")
        })
        .await;
    assert!(assistant_text(&reply).starts_with("Hello"), "{reply}");
}

/// A mode switch goes to the program as its own command (Qwen Code's
/// `/approval-mode`); one the program answers "Unknown command" (Qwen
/// before it has loaded its commands, a moment after its prompt shows) is
/// sent again, and the mode the program then shows is the chat's. (It was
/// lost: the chat stayed in the old mode, and warned 30 s later.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mode_switch_the_program_did_not_know_yet_is_sent_again() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.submit("status").await;
    c.until_modes(|m| m.current.as_deref() == Some("default"))
        .await;
    let resp = server
        .post_json(
            &format!("/api/sessions/{}/mode", s.id),
            serde_json::json!({"mode": "yolo"}),
        )
        .await;
    assert_eq!(resp.status(), 204);
    c.until_modes(|m| m.current.as_deref() == Some("yolo"))
        .await;
    assert!(c
        .screen_text()
        .contains("Unknown command: /approval-mode yolo"));
    let switch = InputCommand::Submit {
        text: "/approval-mode yolo".into(),
    };
    let sent = input_lines(&server, s.id);
    assert_eq!(sent.iter().filter(|l| **l == switch).count(), 2, "{sent:?}");
}
