//! `duet attach` in a terminal the test holds (issue 29): the session's
//! screen at attach, then live output; keys; the browser's size rule;
//! the detach key, which leaves the session running (and a key of it that
//! is no detach reaches the program); attaching again; the program's exit
//! status as the client's; and both surfaces at once: a prompt typed here
//! is in the browser's chat, an approval answered there shows here, and
//! the browser lists this client as "terminal on HOST".

mod support;

use duet_protocol::rest::SessionStatus;
use duet_protocol::ws::{ClientMessage, ServerMessage};
use support::pty::{self, Term};
use support::{kind, TestServer};

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// `duet attach ARGS` on a `cols`×`rows` terminal, finding the test's duet
/// in its state directory.
fn attach(server: &TestServer, args: &[&str], cols: u16, rows: u16) -> Term {
    let state = server.state_dir.path().join("state");
    let mut all = vec!["attach", "--state-dir", state.to_str().unwrap()];
    all.extend_from_slice(args);
    pty::duet(&all, &[], cols, rows)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_screen_at_attach_then_keys_and_live_output_and_a_detach() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut browser = server.connect(s.id, None).await;
    browser.until_screen("fake-tui ready").await;
    browser.keys(b"typed before").await;
    browser.until_screen("typed before").await;

    let mut term = attach(&server, &[], 100, 30);
    term.shows("typed before").await;
    term.shows("fake-tui ready").await;
    // The browser lists this client by what it calls itself.
    let label = format!("terminal on {}", host());
    browser
        .until(|m| {
            matches!(m, ServerMessage::Clients { clients }
                if clients.iter().any(|c| c.device.as_deref() == Some(label.as_str()) && c.name == "owner"))
        })
        .await;
    term.keys(b" from the terminal");
    term.shows("from the terminal").await;
    browser.until_screen("from the terminal").await;
    browser.keys(b" and from the browser").await;
    term.shows("and from the browser").await;

    // Ctrl-\ then another key is no detach: both reach the program, which
    // echoes them.
    term.keys(b"\x1c");
    term.keys(b"q");
    term.wrote("\x1cq").await;
    term.keys(b"\x1c\x1c");
    assert_eq!(term.exit().await.code(), Some(0));
    term.shows("detached").await;
    term.shows(&format!("duet attach {}", &s.id.to_string()[..8]))
        .await;
    let info = server.info(s.id).await;
    assert_eq!(info.status, SessionStatus::Running);
    assert_eq!(info.clients, 1, "the browser only");

    // Again, by the start of its id: the screen is there, with all of it.
    let mut again = attach(&server, &[&s.id.to_string()[..6]], 100, 30);
    again.shows("and from the browser").await;
    again.shows("typed before").await;
    // The program ends (Ctrl-D): its status is the client's.
    again.keys(b"\x04");
    assert_eq!(again.exit().await.code(), Some(0));
    again.shows("exited with status 0").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_size_follows_the_latest_active_client() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut browser = server.connect(s.id, None).await;
    browser.until_screen("fake-tui ready").await;
    // Attached at another size, it draws at the PTY's and asks nothing.
    let mut term = attach(&server, &[], 80, 24);
    term.shows("fake-tui ready").await;
    assert_eq!(
        (server.info(s.id).await.cols, server.info(s.id).await.rows),
        (100, 30)
    );
    // Its window changes: it takes the size (the program hears of it).
    term.resize(90, 20);
    term.shows("size 90x20").await;
    let info = server.info(s.id).await;
    assert_eq!((info.cols, info.rows), (90, 20));
    // A browser takes it back; then a key here takes it again.
    browser
        .send(&ClientMessage::Resize {
            cols: 100,
            rows: 30,
            id: None,
        })
        .await;
    term.until("the browser's size", |s| {
        s.contents().contains("size 100x30")
    })
    .await;
    assert_eq!(server.info(s.id).await.cols, 100);
    // The program says so once more when the key has taken the size back.
    let before = term.text().matches("size 90x20").count();
    term.keys(b"k");
    term.until("the size taken back", |s| {
        s.contents().matches("size 90x20").count() > before
    })
    .await;
    let info = server.info(s.id).await;
    assert_eq!((info.cols, info.rows), (90, 20));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_program_s_status_is_the_client_s() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut term = attach(&server, &[], 100, 30);
    term.shows("fake-tui ready").await;
    term.keys(b"K");
    assert_eq!(term.exit().await.code(), Some(137));
    term.shows("was ended by SIGKILL").await;
    let info = server.info(s.id).await;
    assert_eq!(info.status, SessionStatus::Exited);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_typed_here_is_in_the_chat_and_an_approval_there_shows_here() {
    let server = TestServer::start().await;
    let s = server.create("demo").await;
    let mut browser = server.connect(s.id, None).await;
    let mut term = attach(&server, &[], 100, 30);
    term.shows("Type a message").await;
    term.keys(b"hello from the terminal\r");
    let (_, prompt) = browser
        .until_event(|e| kind(e) == "user" && e.to_string().contains("hello from the terminal"))
        .await;
    assert_eq!(kind(&prompt), "user");
    term.keys(b"run ls\r");
    term.shows("Allow run_shell_command").await;
    let approval = browser.pending_approval().await;
    browser
        .send(&ClientMessage::Approve {
            request_id: approval.request_id,
            allowed: Some(true),
            option: None,
            id: None,
        })
        .await;
    term.shows("allowed in the browser").await;
    term.until("the dialog is gone", |s| {
        !s.contents().contains("Allow run_shell_command")
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_is_given_back_on_a_signal_and_the_session_runs_on() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    for (signal, status) in [
        (nix::sys::signal::Signal::SIGTERM, 143),
        (nix::sys::signal::Signal::SIGHUP, 129),
    ] {
        let mut term = attach(&server, &[], 100, 30);
        term.shows("fake-tui ready").await;
        assert!(term.raw(), "raw while attached");
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(term.pid() as i32), signal).unwrap();
        assert_eq!(term.exit().await.code(), Some(status), "{signal}");
        assert!(
            !term.raw(),
            "{signal}: the terminal is back in its own mode"
        );
        term.shows("stopped by a signal").await;
        // What a program may have switched on is switched off.
        term.wrote("\x1b[?25h").await;
    }
    assert_eq!(server.info(s.id).await.status, SessionStatus::Running);
}
