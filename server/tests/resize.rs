//! Issue 27: a shorter terminal lost its newest output, for every viewer,
//! for good. The server's screen now resizes as the browser's xterm does:
//! the rows above the cursor scroll into the scrollback, the cursor's row
//! and the newest output stay, and a taller terminal brings them back.

mod support;

use duet_protocol::rest::SessionInfo;
use duet_protocol::ws::{ClientMessage, ResyncReason, ServerMessage};
use duet_server::config::Profile;
use support::*;

/// `sh` with a known prompt (dash draws nothing again on SIGWINCH, so the
/// screen is what the resize made of it).
fn shell() -> Profile {
    Profile {
        name: "sh".into(),
        description: None,
        command: "sh".into(),
        args: Vec::new(),
        env: [("PS1".to_string(), "$ ".to_string())].into(),
        cwd: None,
        ready_text: None,
        channel: None,
        resume_args: None,
        extra_args: false,
    }
}

/// A shell session at `cols`×`rows`, and a client that has seen its prompt.
async fn start(server: &TestServer, cols: u16, rows: u16) -> (SessionInfo, Client) {
    let resp = server
        .post("/api/sessions")
        .json(&serde_json::json!({"profile": "sh", "cols": cols, "rows": rows}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let s: SessionInfo = resp.json().await.unwrap();
    let mut c = server.connect(s.id, None).await;
    c.until_screen("$").await;
    (s, c)
}

/// The rows of a client's screen, trimmed.
fn rows(c: &Client) -> Vec<String> {
    let screen = c.screen.screen();
    let (_, cols) = screen.size();
    screen
        .rows(0, cols)
        .map(|r| r.trim_end().to_string())
        .collect()
}

/// Asks for `cols`×`rows` and waits for `c`'s redraw at that size.
async fn resize(c: &mut Client, cols: u16, rows: u16) {
    c.send(&ClientMessage::Resize {
        cols,
        rows,
        id: None,
    })
    .await;
    c.until(|m| matches!(m, ServerMessage::Resync { reason, cols: c2, rows: r2 } if *reason == ResyncReason::Resize && (*c2, *r2) == (cols, rows)))
        .await;
    c.until_screen("LAST-LINE-MARKER").await;
}

/// `numbers` followed by the marker and the prompt: what a screen that
/// kept the newest output shows.
fn expected(numbers: std::ops::RangeInclusive<u32>) -> Vec<String> {
    numbers
        .map(|n| n.to_string())
        .chain(["LAST-LINE-MARKER".into(), "$".into()])
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shorter_terminal_keeps_the_newest_output_for_every_viewer() {
    let server = TestServer::with_profiles(vec![shell()]).await;
    let (s, mut a) = start(&server, 100, 40).await;
    a.keys(b"clear; seq 1 80; echo LAST-LINE-MARKER\r").await;
    a.until_screen("80\nLAST-LINE-MARKER\n$").await;
    assert_eq!(rows(&a), expected(43..=80));

    // Shorter: the top rows scroll away, the newest stay.
    resize(&mut a, 100, 20).await;
    assert_eq!(
        rows(&a),
        expected(63..=80),
        "the client redrawn after the resize"
    );
    let screen = server.text(&format!("/api/sessions/{}/screen", s.id)).await;
    let screen: Vec<&str> = screen.lines().map(str::trim_end).collect();
    assert_eq!(screen, expected(63..=80), "GET /screen");
    // A client that attaches now sees the same, and the rows that scrolled
    // away are in its scrollback.
    let mut late = server.connect(s.id, None).await;
    late.until_screen("LAST-LINE-MARKER").await;
    assert_eq!(
        rows(&late),
        expected(63..=80),
        "a client that attached later"
    );
    late.screen.screen_mut().set_scrollback(1);
    assert_eq!(rows(&late)[0], "62", "the newest scrollback line");

    // Taller again: the rows come back from the scrollback.
    resize(&mut a, 100, 40).await;
    assert_eq!(rows(&a), expected(43..=80));
    let screen = server.text(&format!("/api/sessions/{}/screen", s.id)).await;
    assert!(screen.starts_with("43\n44\n"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_narrower_terminal_rewraps_long_lines_and_a_wider_one_joins_them() {
    let server = TestServer::with_profiles(vec![shell()]).await;
    let (s, mut a) = start(&server, 100, 20).await;
    // A 150-character line: wrapped once at 100 columns.
    a.keys(b"clear; printf '%050d%050d%050d\\n' 1 2 3; echo LAST-LINE-MARKER\r")
        .await;
    a.until_screen("LAST-LINE-MARKER\n$").await;
    let long = format!("{:050}{:050}{:050}", 1, 2, 3);
    assert_eq!(
        rows(&a)[..2],
        [long[..100].to_string(), long[100..].to_string()]
    );

    resize(&mut a, 60, 20).await;
    assert_eq!(
        rows(&a)[..3],
        [&long[..60], &long[60..120], &long[120..]].map(String::from),
        "rewrapped at 60 columns"
    );
    resize(&mut a, 160, 20).await;
    assert_eq!(
        rows(&a)[..2],
        [long.clone(), "LAST-LINE-MARKER".into()],
        "joined at 160"
    );
    let mut late = server.connect(s.id, None).await;
    late.until_screen("LAST-LINE-MARKER").await;
    assert_eq!(rows(&late), rows(&a), "a client that attached later");
}
