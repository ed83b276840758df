//! Receive times on events (for replay): every event carries `at`, ms on
//! the session clock, non-decreasing in seq order, the same over the
//! WebSocket and `GET .../events?times=true`, and the same again from a
//! duet started afresh on the same state dir. The plain events route stays
//! verbatim.

mod support;

use duet_protocol::ws::ServerMessage;
use support::*;

/// `(seq, at)` of every event in `GET .../events?times=true`.
async fn rest_times(server: &TestServer, id: impl std::fmt::Display) -> Vec<(u64, u64)> {
    let text = server
        .text(&format!("/api/sessions/{id}/events?times=true"))
        .await;
    text.lines()
        .map(
            |l| match serde_json::from_str::<ServerMessage>(l).unwrap() {
                ServerMessage::Event { seq, at, .. } => (seq, at.expect("every event has a time")),
                other => panic!("not an event: {other:?}"),
            },
        )
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receive_times_are_monotonic_served_and_survive_a_restart() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("state");
    let d = dir.clone();
    let server = TestServer::start_with(move |o| o.state_dir = d).await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.submit("events 40").await;
    c.until_event(|e| kind(e) == "x-test-done").await;
    let ws: Vec<(u64, u64)> = c
        .texts
        .iter()
        .filter_map(|m| match m {
            ServerMessage::Event { seq, at, .. } => Some((*seq, at.expect("a time on the wire"))),
            _ => None,
        })
        .collect();
    assert!(ws.len() > 40, "{}", ws.len());
    let rises = |ws: &[(u64, u64)]| ws.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1);
    assert!(rises(&ws), "seq and time both rise: {ws:?}");
    // The prompt went in after the program started: its events are later
    // than time 0 of the session clock.
    assert!(ws.last().unwrap().1 > 0);

    let rest = rest_times(&server, s.id).await;
    // (The turn's last events may have come in since.)
    assert_eq!(rest[..ws.len()], ws[..], "REST and WebSocket agree");
    // The plain route is the events file, byte for byte (no times in it).
    let plain = server.text(&format!("/api/sessions/{}/events", s.id)).await;
    let file = std::fs::read_to_string(dir.join(s.id.to_string()).join("events.jsonl")).unwrap();
    assert!(file.starts_with(&plain) && plain.lines().count() >= rest.len());
    assert!(!plain.contains("\"at\":"));

    drop(c);
    server.shutdown().await;
    let d = dir.clone();
    let again = TestServer::start_with(move |o| o.state_dir = d).await;
    let after = rest_times(&again, s.id).await;
    assert_eq!(after[..rest.len()], rest[..], "the times survive a restart");
    assert!(rises(&after));
}
