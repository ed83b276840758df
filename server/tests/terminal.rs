//! Terminal path: keystrokes in, output out, late attach sees the screen,
//! resize reaches the program and every client, cancel sends Escape.

mod support;

use duet_protocol::ws::{ClientMessage, ServerMessage};
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keystrokes_round_trip_through_the_pty() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.until_screen("fake-tui ready").await;
    c.keys(b"hello duet").await;
    c.until_screen("hello duet").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_client_sees_the_current_screen_at_once() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut first = server.connect(s.id, None).await;
    first.keys(b"typed before you came").await;
    first.until_screen("typed before you came").await;

    let mut late = server.connect(s.id, None).await;
    // The snapshot is the first thing after hello: a resync and its frame.
    match late.next().await {
        ServerMessage::Resync { reason, cols, rows } => {
            assert_eq!(reason, "attach");
            assert_eq!((cols, rows), (100, 30));
        }
        other => panic!("expected resync, got {other:?}"),
    }
    late.until_screen("typed before you came").await;

    let screen = server
        .get(&format!("/api/sessions/{}/screen", s.id))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(screen.contains("typed before you came"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resize_reaches_the_program_and_all_clients() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut a = server.connect(s.id, None).await;
    let mut b = server.connect(s.id, None).await;
    a.until_screen("fake-tui ready").await;
    a.send(&ClientMessage::Resize {
        cols: 77,
        rows: 21,
        id: None,
    })
    .await;
    for c in [&mut a, &mut b] {
        let m = c.until(|m| matches!(m, ServerMessage::Resize { .. })).await;
        assert!(matches!(m, ServerMessage::Resize { cols: 77, rows: 21 }));
    }
    // The program got SIGWINCH and printed the size it sees.
    b.until_screen("size 77x21").await;
    let info = server.info(s.id).await;
    assert_eq!((info.cols, info.rows), (77, 21));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_sends_escape() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.until_screen("fake-tui ready").await;
    c.send(&ClientMessage::Cancel {
        id: Some("c1".into()),
    })
    .await;
    c.until(|m| matches!(m, ServerMessage::Ack { id, .. } if id == "c1"))
        .await;
    c.until_screen("<ESC>").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_terminal_profile_has_no_sidecar() {
    let server = TestServer::start().await;
    let s = server.create("plain").await;
    let mut c = server.connect(s.id, None).await;
    c.keys(b"abc").await;
    c.until_screen("abc").await;
    match c.submit("hi").await {
        ServerMessage::Error { code, .. } => {
            assert_eq!(code, duet_protocol::ws::ErrorCode::NoSidecar)
        }
        other => panic!("expected an error, got {other:?}"),
    }
}
