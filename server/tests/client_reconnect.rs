//! `duet attach` when its connection drops (issue 29): it says so on the
//! screen while it waits, connects again, and redraws the session's
//! screen, so what the program wrote meanwhile is there, once; and when
//! the local duet was killed and started again (on another port), it
//! finds the new one in the state directory and shows the session as the
//! crash left it, then how it ended.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

mod support;

use support::killable::Duet;
use support::pty;
use support::{TestServer, DEADLINE, TOKEN};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// A TCP proxy in front of a server that can cut every connection and
/// refuse new ones for a while, as a network that goes away does.
struct Proxy {
    url: String,
    open: Arc<AtomicBool>,
    cut: watch::Sender<u64>,
}

impl Proxy {
    async fn start(upstream: std::net::SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let open = Arc::new(AtomicBool::new(true));
        let cut = watch::channel(0u64).0;
        let (is_open, cuts) = (open.clone(), cut.clone());
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if !is_open.load(Ordering::SeqCst) {
                    continue; // dropped: the connection is reset
                }
                let mut cut = cuts.subscribe();
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Proxy { url, open, cut }
    }

    fn cut(&self) {
        self.open.store(false, Ordering::SeqCst);
        self.cut.send_modify(|n| *n += 1);
    }

    fn reopen(&self) {
        self.open.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_is_resumed_with_nothing_lost_or_doubled() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut browser = server.connect(s.id, None).await;
    browser.until_screen("fake-tui ready").await;
    let proxy = Proxy::start(server.addr).await;
    let mut term = pty::duet(
        &["attach", "--server", &proxy.url],
        &[("DUET_TOKEN", TOKEN)],
        100,
        30,
    );
    term.shows("fake-tui ready").await;
    term.keys(b"before ");
    term.shows("before").await;

    proxy.cut();
    term.shows("reconnecting").await;
    browser.keys(b"while away ").await;
    browser.until_screen("while away").await;
    proxy.reopen();
    term.until("redrawn after the reconnect", |s| {
        let text = s.contents();
        text.contains("while away") && !text.contains("reconnecting")
    })
    .await;
    let text = term.text();
    assert_eq!(text.matches("while away").count(), 1, "{text}");
    assert_eq!(text.matches("before").count(), 1, "{text}");
    // And it goes on as before.
    term.keys(b"after");
    browser.until_screen("before while away after").await;
    term.shows("before while away after").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_duet_is_found_again_and_the_session_shown_as_it_ended() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let config = tmp.path().join("duet.toml");
    std::fs::write(
        &config,
        format!(
            "[[profile]]\nname = \"fake\"\ncommand = \"python3\"\nargs = [{:?}]\n",
            support::fake_tui()
        ),
    )
    .unwrap();
    let first = Duet::start(&state, &config);
    let session = first.create().await;
    let mut term = pty::duet(
        &["attach", "--state-dir", state.to_str().unwrap()],
        &[],
        100,
        30,
    );
    term.shows("fake-tui ready").await;
    term.keys(b"written before the crash");
    term.shows("written before the crash").await;
    // In the recording on disk, which a restarted duet replays.
    let cast = state.join(session.id.to_string()).join("recording.cast");
    let deadline = tokio::time::Instant::now() + DEADLINE;
    // The output as recorded: the echo may come in several events when
    // the machine is busy, so their data is joined before looking.
    let recorded = |text: &str| -> String {
        text.lines()
            .skip(1)
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|e| e[1] == "o")
            .filter_map(|e| e[2].as_str().map(String::from))
            .collect()
    };
    while !recorded(&std::fs::read_to_string(&cast).unwrap_or_default())
        .contains("written before the crash")
    {
        assert!(tokio::time::Instant::now() < deadline, "not recorded");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    first.kill();
    term.shows("reconnecting").await;
    let second = Duet::start(&state, &config);
    let status = term.exit().await;
    term.shows("ended when duet stopped").await;
    term.until("the session's last screen", |s| {
        let text = s.contents();
        text.contains("written before the crash") && !text.contains("reconnecting")
    })
    .await;
    assert_ne!(status.code(), Some(0));
    second.kill();
}
