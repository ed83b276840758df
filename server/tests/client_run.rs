//! `duet run` in a terminal the test holds (issue 29): with no duet
//! running it starts one in the background and says so, starts the
//! profile in this directory with the extra arguments, prints the
//! session's address, and ends with the program's exit status; a QR code
//! on request; a profile that takes no extra arguments is refused.

mod support;

use duet_protocol::rest::SessionInfo;
use duet_server::config::Profile;
use duet_server::instance::ServerFile;
use support::pty;
use support::TestServer;

/// Stops the duet `duet run` started in the background, however the test
/// ends.
struct Background(u32);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.0 as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_starts_a_duet_and_the_profile_here_and_passes_its_status_on() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let project = tmp.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let (state_s, project_s) = (state.to_str().unwrap(), project.to_str().unwrap());
    let mut term = pty::duet(
        &[
            "run",
            "demo",
            "--cwd",
            project_s,
            "--",
            "--token-delay-ms",
            "1",
        ],
        &[("DUET_STATE_DIR", state_s), ("DUET_LISTEN", "127.0.0.1:0")],
        100,
        30,
    );
    term.shows("started a duet in the background").await;
    let found = ServerFile::read(&state).expect("the new duet says where it is");
    let _stop = Background(found.pid);
    term.shows("demo in session").await;
    term.shows(&format!("{}/#/session/", found.url)).await;
    // The demo agent says where it runs: the directory given.
    term.shows(&format!("cwd {project_s}")).await;
    let sessions: Vec<SessionInfo> = reqwest::Client::new()
        .get(format!("{}/api/sessions", found.url))
        .bearer_auth(found.token.as_deref().unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].work_dir.as_deref(), Some(project_s));
    // This terminal drives the size it started the session at.
    assert_eq!((sessions[0].cols, sessions[0].rows), (100, 30));
    term.keys(b"/quit\r");
    assert_eq!(term.exit().await.code(), Some(0));
    term.shows("demo exited with status 0").await;
    // No QR code for a duet on loopback unless asked: a phone cannot reach it.
    assert!(!term.output().contains('\u{2580}'));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_programs_exit_status_is_runs_own_and_unwanted_arguments_are_refused() {
    let sh = Profile {
        name: "sh".into(),
        command: "sh".into(),
        args: vec!["-c".into()],
        extra_args: true,
        ..support::demo_profile("sh", None)
    };
    let closed = support::demo_profile("closed", None);
    let server = TestServer::with_profiles(vec![sh, closed]).await;
    // Once it answers, its server.json is written.
    let none: Vec<SessionInfo> = server.json("/api/sessions").await;
    assert!(none.is_empty());
    let state = server.state_dir.path().join("state");
    let state = state.to_str().unwrap();
    let mut term = pty::duet(
        &[
            "run",
            "sh",
            "--state-dir",
            state,
            "--qr",
            "--",
            "echo bye; exit 7",
        ],
        &[],
        100,
        30,
    );
    assert_eq!(term.exit().await.code(), Some(7));
    term.shows("bye").await;
    term.shows("sh exited with status 7").await;
    assert!(term.output().contains("scan to go on from a phone"));
    assert!(term.output().contains('\u{2580}'));

    let mut term = pty::duet(
        &["run", "closed", "--state-dir", state, "--", "--anything"],
        &[],
        100,
        30,
    );
    assert_eq!(term.exit().await.code(), Some(255));
    term.shows("takes no extra arguments").await;
}
