//! One duet per state directory (issue 27, point 2): a second `duet serve`
//! on the directory of a running one is refused, naming the directory, the
//! first one's pid and URL and `--state-dir`, and the first one's sessions
//! go on untouched (before, the second took them for a crash's leftovers
//! and ended them: 143). The lock of a duet killed with SIGKILL is taken
//! over by the next, which recovers the sessions and says where it is.

mod support;

use duet_protocol::rest::{SessionInfo, SessionStatus};
use duet_server::instance::{Holder, ServerFile, LOCK_FILE};
use support::killable::{Duet, TOKEN};
use support::Client;
use support::DEADLINE;

fn config(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("duet.toml");
    std::fs::write(
        &path,
        format!(
            "[[profile]]\nname = \"fake\"\ncommand = \"python3\"\nargs = [{:?}, \"--json-file\", \"{{events_file}}\", \"--input-file\", \"{{input_file}}\"]\n",
            support::fake_tui()
        ),
    )
    .unwrap();
    path
}

/// `duet serve` on `state` to its end: its status and what it said.
async fn serve_to_the_end(state: &std::path::Path, config: &std::path::Path) -> (i32, String) {
    let out = tokio::time::timeout(
        DEADLINE,
        tokio::process::Command::new(env!("CARGO_BIN_EXE_duet"))
            .args(["serve", "--listen", "127.0.0.1:0", "--token", TOKEN])
            .arg("--state-dir")
            .arg(state)
            .arg("--config")
            .arg(config)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the second duet stops by itself")
    .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

/// A duet of its own on `dir/state`, with a session a client is attached to.
async fn first_duet(dir: &std::path::Path) -> (Duet, SessionInfo, Client) {
    let first = Duet::start(&dir.join("state"), &config(dir));
    let session = first.create().await;
    let mut client = first.ws(session.id).await;
    client.until_screen("fake-tui ready").await;
    (first, session, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_duet_on_the_same_state_dir_is_refused_and_the_first_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, config) = (tmp.path().join("state"), tmp.path().join("duet.toml"));
    let (first, session, mut client) = first_duet(tmp.path()).await;

    let (code, said) = serve_to_the_end(&state, &config).await;
    assert_eq!(code, 1, "{said}");
    let pid = first.child.id().to_string();
    for part in [
        state.to_str().unwrap(),
        pid.as_str(),
        first.url.as_str(),
        "--state-dir",
    ] {
        assert!(said.contains(part), "{part:?} missing from: {said}");
    }
    assert!(!said.contains("duet is ready"), "{said}");

    // The first one's session still runs, and still answers.
    let info: SessionInfo = first.get(&format!("/api/sessions/{}", session.id)).await;
    assert_eq!(info.status, SessionStatus::Running);
    assert_eq!(info.exit, None);
    client.keys(b"still here").await;
    client.until_screen("still here").await;
    // And clients still find it where it said it is.
    let found = ServerFile::read(&state).unwrap();
    assert_eq!((found.pid.to_string(), found.url), (pid, first.url.clone()));
    first.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lock_of_a_killed_duet_is_taken_over_and_its_sessions_recovered() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, config) = (tmp.path().join("state"), tmp.path().join("duet.toml"));
    let (first, session, _client) = first_duet(tmp.path()).await;
    let old_pid = first.child.id();
    first.kill();
    // What the killed one wrote is still there: it had no chance to clean up.
    assert_eq!(ServerFile::read(&state).map(|s| s.pid), Some(old_pid));

    let second = Duet::start(&state, &config);
    let new_pid = second.child.id();
    let holder: Holder =
        serde_json::from_slice(&std::fs::read(state.join(LOCK_FILE)).unwrap()).unwrap();
    assert_eq!(
        holder,
        Holder {
            pid: new_pid,
            url: Some(second.url.clone())
        }
    );
    let found = ServerFile::read(&state).unwrap();
    assert_eq!((found.pid, found.url), (new_pid, second.url.clone()));
    assert_eq!(found.token.as_deref(), Some(TOKEN));
    // The earlier session is listed, ended by the crash (recovered before
    // the new duet said it was ready).
    let info: SessionInfo = second.get(&format!("/api/sessions/{}", session.id)).await;
    assert_eq!(info.status, SessionStatus::Exited);
    assert!(info.exit.unwrap().server_stopped);
    // A stop in order takes server.json away: nobody is sent to a closed port.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(new_pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let mut child = second.child;
    tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(ServerFile::read(&state).is_none());
}
