//! Terminal path: keystrokes in, output out, late attach sees the screen,
//! resize reaches the program and every client (which redraw the same
//! cells), cancel sends Escape.

mod support;

use duet_protocol::ws::{ClientMessage, ResyncReason, ServerMessage};
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
            assert_eq!(reason, ResyncReason::Attach);
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

/// The size policy: one PTY size; after a resize every client redraws from
/// the server's screen at the new size, so live clients and a client that
/// attaches later show the same cells (a client that resized its own
/// terminal would keep other rows than the server's screen on a shrink).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_resize_every_client_redraws_the_same_cells() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut a = server.connect(s.id, None).await;
    let mut b = server.connect(s.id, None).await;
    a.until_screen("fake-tui ready").await;
    // Fill the 30-row screen so that the cursor sits on its last row.
    let lines: String = (0..40).map(|i| format!("row-{i} ")).collect();
    a.keys(lines.as_bytes()).await;
    a.until_screen("row-39").await;
    a.send(&ClientMessage::Resize {
        cols: 60,
        rows: 10,
        id: None,
    })
    .await;
    for c in [&mut a, &mut b] {
        let m = c
            .until(|m| matches!(m, ServerMessage::Resync { reason, .. } if *reason == ResyncReason::Resize))
            .await;
        assert!(
            matches!(
                m,
                ServerMessage::Resync {
                    cols: 60,
                    rows: 10,
                    ..
                }
            ),
            "{m:?}"
        );
    }
    a.keys(b" marker-after").await;
    for c in [&mut a, &mut b] {
        c.until_screen("marker-after").await;
    }
    let mut late = server.connect(s.id, None).await;
    late.until_screen("marker-after").await;
    assert_eq!(late.screen.screen().size(), (10, 60));
    let cells = |c: &Client| c.screen.screen().contents_formatted();
    assert_eq!(
        cells(&a),
        cells(&late),
        "a live client and a late one agree"
    );
    assert_eq!(cells(&b), cells(&late), "both live clients agree");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_is_recorded_as_asciicast() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.until_screen("fake-tui ready").await;
    c.send(&duet_protocol::ws::ClientMessage::Resize {
        cols: 90,
        rows: 20,
        id: None,
    })
    .await;
    c.keys(b"recorded keys\r").await;
    c.until_screen("recorded keys").await;
    let resp = server
        .get(&format!("/api/sessions/{}/recording", s.id))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "application/x-asciicast"
    );
    let cast = resp.text().await.unwrap();
    let lines: Vec<serde_json::Value> = cast
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["version"], 2);
    let output: String = lines[1..]
        .iter()
        .filter(|l| l[1] == "o")
        .map(|l| l[2].as_str().unwrap())
        .collect();
    assert!(output.contains("fake-tui ready"), "{output}");
    assert!(output.contains("recorded keys"));
    assert!(lines.iter().any(|l| l[1] == "r" && l[2] == "90x20"));
    // Times only go forward.
    let times: Vec<f64> = lines[1..].iter().map(|l| l[0].as_f64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
}
