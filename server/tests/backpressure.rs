//! Flow control and backpressure: a client that keeps reading gets every
//! byte (the program waits for it); a stalled client never blocks the
//! program or other clients and costs bounded memory: its terminal catches
//! up with a snapshot, its events are replayed. A program that stops reading
//! its input holds up nobody's other messages.

mod support;

use duet_protocol::ws::{ClientMessage, ErrorCode, ResyncReason, ServerMessage};
use support::*;

fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_client_blocks_nobody_and_memory_stays_bounded() {
    const FLOOD: u64 = 48 << 20;
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    // This client reads its hello and then stops reading entirely.
    let mut stalled = server.connect(s.id, None).await;
    let mut reader = server.connect(s.id, None).await;
    reader.until_event(|e| kind(e) == "system").await;
    let before = rss_bytes();

    reader.submit(&format!("flood {FLOOD}")).await;
    // The program finishes writing everything while one client is stalled...
    let (_, done) = reader.until_event(|e| kind(e) == "x-flood-done").await;
    assert!(done["bytes"].as_u64().unwrap() >= FLOOD);
    // ...and the reading client keeps up with the terminal.
    reader.keys(b"after-the-flood").await;
    reader.until_screen("after-the-flood").await;
    let grown = rss_bytes().saturating_sub(before);
    assert!(
        grown < 64 << 20,
        "memory grew by {} MiB while a client was stalled",
        grown >> 20
    );

    // The stalled client wakes up: it is resynchronised from a snapshot
    // instead of being fed the whole backlog, and sees the current screen.
    stalled
        .until(|m| matches!(m, ServerMessage::Resync { reason, .. } if *reason == ResyncReason::Lagged))
        .await;
    stalled.until_screen("after-the-flood").await;
    assert!(
        stalled.term_bytes < FLOOD / 2,
        "stalled client was sent {} MiB of backlog",
        stalled.term_bytes >> 20
    );
    // Its events were all replayed, in order.
    stalled.until_event(|e| kind(e) == "x-flood-done").await;
    let seqs = stalled.seqs();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_keeps_reading_gets_every_byte_of_a_flood() {
    const FLOOD: u64 = 24 << 20;
    // A long stall allowance: this test is about flow control, not about a
    // loaded machine pausing the test's own reader.
    let server = TestServer::start_with(|o| {
        o.limits.output.stall_after = std::time::Duration::from_secs(10);
    })
    .await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.until_event(|e| kind(e) == "system").await;
    let start = c.term_bytes;
    c.submit(&format!("flood {FLOOD}")).await;
    c.until_event(|e| kind(e) == "x-flood-done").await;
    c.keys(b"after-the-flood").await;
    c.until_screen("after-the-flood").await;
    // Far more than the 4 MiB window, yet nothing was skipped: the program
    // waited for the client instead.
    assert!(
        !c.texts.iter().any(
            |m| matches!(m, ServerMessage::Resync { reason, .. } if *reason == ResyncReason::Lagged)
        ),
        "the client was resynced"
    );
    assert!(
        c.term_bytes - start >= FLOOD,
        "got {} bytes",
        c.term_bytes - start
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_stops_reading_keys_does_not_freeze_its_clients() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.until_screen("fake-tui ready").await;
    c.keys(b"Z").await;
    c.until_screen("not reading").await;
    // 256 KiB of typing, far more than the PTY buffers.
    for _ in 0..64 {
        c.keys(&[b'x'; 4096]).await;
    }
    // This client's other messages are still served, and so are others'.
    c.send(&ClientMessage::Ping {
        id: Some("still here".into()),
    })
    .await;
    c.until(|m| matches!(m, ServerMessage::Pong { id: Some(id) } if id == "still here"))
        .await;
    let mut other = server.connect(s.id, None).await;
    other
        .send(&ClientMessage::Resize {
            cols: 90,
            rows: 25,
            id: None,
        })
        .await;
    c.until(|m| matches!(m, ServerMessage::Resize { cols: 90, rows: 25 }))
        .await;
    // Ending the session is not held up by the bytes it never read.
    let resp = server.delete(&format!("/api/sessions/{}", s.id)).await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_holds_terminal_output_and_resume_catches_up() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.until_screen("fake-tui ready").await;
    c.send(&ClientMessage::Pause {
        id: Some("p".into()),
    })
    .await;
    c.until(|m| matches!(m, ServerMessage::Ack { id, .. } if id == "p"))
        .await;
    let bytes_at_pause = c.term_bytes;
    // Events keep flowing while the terminal is paused.
    c.submit("hello there").await;
    c.until_event(|e| kind(e) == "assistant").await;
    assert_eq!(
        c.term_bytes, bytes_at_pause,
        "no terminal output while paused"
    );
    c.send(&ClientMessage::Resume { id: None }).await;
    c.until_screen("assistant: you said hello there").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_for_a_program_that_stops_reading_are_bounded_in_bytes() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.until_screen("fake-tui ready").await;
    c.keys(b"Z").await;
    c.until_screen("not reading").await;
    let before = rss_bytes();
    // 64 MiB of keys in 1 MiB frames: before the byte bound, duet queued
    // them all (4 MiB frames took it to 1.1 GiB).
    let frame = vec![b'x'; 1 << 20];
    for _ in 0..64 {
        c.keys(&frame).await;
    }
    // The sender is told, with a code, and its socket stays up.
    let refused = c
        .until(|m| {
            matches!(
                m,
                ServerMessage::Error {
                    code: ErrorCode::LimitReached,
                    ..
                }
            )
        })
        .await;
    let ServerMessage::Error { message, .. } = refused else {
        unreachable!()
    };
    assert!(message.contains("not reading its input"), "{message}");
    c.send(&ClientMessage::Ping {
        id: Some("up".into()),
    })
    .await;
    c.until(|m| matches!(m, ServerMessage::Pong { id: Some(id) } if id == "up"))
        .await;
    let grown = rss_bytes().saturating_sub(before);
    assert!(grown < 32 << 20, "duet grew by {} MiB", grown >> 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stopped_reading_still_has_its_keys_read() {
    // Both halves of a connection share one task: while the send half waits
    // for a socket the client no longer drains, the receive half must still
    // take the client's keys to the program.
    const FLOOD: u64 = 48 << 20;
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut stalled = server.connect(s.id, None).await;
    let mut reader = server.connect(s.id, None).await;
    reader.until_event(|e| kind(e) == "system").await;
    reader.submit(&format!("flood {FLOOD}")).await;
    reader.until_event(|e| kind(e) == "x-flood-done").await;
    // The stalled client's socket is full (48 MiB against a few MiB of
    // socket buffers), so duet's writes to it are waiting.
    stalled.keys(b"typed-by-the-stalled-client").await;
    reader.until_screen("typed-by-the-stalled-client").await;
}
