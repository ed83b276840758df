//! Every way the terminal client cannot do what it was asked says so, and
//! how to go on: no duet running, a bad token (401), an unknown session
//! (with the `duet ls` hint), several sessions and none named, standard
//! input that is no terminal; and `duet ls`, as a table and as JSON.

mod support;

use duet_protocol::rest::SessionInfo;
use support::pty;
use support::{TestServer, TOKEN};

/// `duet ARGS` without a terminal: its status and what it said.
async fn run_plain(args: &[&str]) -> (i32, String, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_duet"))
        .args(args)
        .env_remove("DUET_SERVER")
        .env_remove("DUET_TOKEN")
        .env_remove("DUET_STATE_DIR")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn state_of(server: &TestServer) -> String {
    server
        .state_dir
        .path()
        .join("state")
        .to_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_duet_or_a_terminal_it_says_what_to_do() {
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().to_str().unwrap();
    let (code, _, err) = run_plain(&["ls", "--state-dir", dir]).await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("no duet is running") && err.contains("duet run"),
        "{err}"
    );
    // attach and run need a terminal, and say so before anything else.
    for cmd in ["attach", "run"] {
        let (code, _, err) = run_plain(&[cmd, "--state-dir", dir]).await;
        assert_eq!(code, 255, "{cmd}: {err}");
        assert!(err.contains("needs a terminal"), "{cmd}: {err}");
    }
    assert!(
        std::fs::read_dir(empty.path()).unwrap().next().is_none(),
        "no duet was started"
    );
    let mut term = pty::duet(&["attach", "--state-dir", dir], &[], 80, 24);
    assert_eq!(term.exit().await.code(), Some(255));
    term.shows("no duet is running").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_token_an_unknown_session_and_several_sessions() {
    let server = TestServer::start().await;
    let state = state_of(&server);
    let url = server.url("");
    let (code, _, err) = run_plain(&[
        "ls",
        "--server",
        &url,
        "--token",
        "not-the-token-0123456789",
    ])
    .await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("refused the token (401)") && err.contains("--token"),
        "{err}"
    );
    let mut term = pty::duet(
        &[
            "attach",
            "--server",
            &url,
            "--token",
            "not-the-token-0123456789",
        ],
        &[],
        80,
        24,
    );
    assert_eq!(term.exit().await.code(), Some(255));
    term.shows("refused the token (401)").await;

    let mut term = pty::duet(&["attach", "--state-dir", &state], &[], 80, 24);
    assert_eq!(term.exit().await.code(), Some(255));
    term.shows("no session is running; `duet run [PROFILE]` starts one")
        .await;

    let a = server.create("fake").await;
    let b = server.create("fake").await;
    let mut term = pty::duet(&["attach", "--state-dir", &state, "zzzz"], &[], 80, 24);
    assert_eq!(term.exit().await.code(), Some(255));
    term.shows("no session \"zzzz\"; `duet ls` lists them")
        .await;
    // With the token in the environment, as an alias would have it.
    let mut term = pty::duet(
        &["attach", "--server", &url],
        &[("DUET_TOKEN", TOKEN)],
        100,
        30,
    );
    assert_eq!(term.exit().await.code(), Some(255));
    term.shows("2 sessions are running; name one").await;
    term.shows(&a.id.to_string()[..8]).await;
    term.shows(&b.id.to_string()[..8]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ls_lists_the_sessions_as_a_table_or_json() {
    let server = TestServer::start().await;
    let state = state_of(&server);
    // Once it answers, its server.json is written.
    let none: Vec<SessionInfo> = server.json("/api/sessions").await;
    assert!(none.is_empty());
    let (code, out, _) = run_plain(&["ls", "--state-dir", &state]).await;
    assert_eq!(code, 0);
    assert!(out.contains("no sessions"), "{out}");
    let a = server.create("fake").await;
    let resp = server
        .http
        .patch(server.url(&format!("/api/sessions/{}", a.id)))
        .bearer_auth(TOKEN)
        .json(&serde_json::json!({"name": "my-api"}))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success());
    let (code, out, _) = run_plain(&["ls", "--state-dir", &state]).await;
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("ID") && lines[0].contains("DIRECTORY"),
        "{out}"
    );
    assert!(
        lines[1].starts_with(&a.id.to_string()[..8])
            && lines[1].contains("my-api")
            && lines[1].contains("fake")
            && lines[1].contains("running"),
        "{out}"
    );
    let (code, out, _) = run_plain(&["ls", "--json", "--state-dir", &state]).await;
    assert_eq!(code, 0);
    let listed: Vec<SessionInfo> = serde_json::from_str(&out).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].name.as_deref(), Some("my-api"));
    assert!(listed[0].work_dir.is_some());
}
