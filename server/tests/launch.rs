//! Where a session's program runs and what it is given besides its
//! profile (`duet run` sends both): `cwd` must be an absolute path of an
//! existing directory duet can use, outside its state directory; `args`
//! are appended to the profile's own, verbatim, only for a profile with
//! `extra_args = true`; only the owner may send either; both are audited
//! and kept for a resume.

mod support;

use duet_protocol::rest::SessionInfo;
use duet_server::config::Profile;
use serde_json::{json, Value};
use support::{Client, TestServer};

/// The demo agent, taking extra arguments (`open`), and again, not taking
/// them (`closed`, the default for a profile of a config file).
async fn server() -> TestServer {
    // Its own arguments without the delay at their end, which the tests add.
    let demo = support::demo_profile("open", None);
    let open = Profile {
        extra_args: true,
        args: demo.args[..demo.args.len() - 2].to_vec(),
        ..demo
    };
    let closed = Profile {
        name: "closed".into(),
        ..support::demo_profile("closed", None)
    };
    TestServer::with_profiles(vec![open, closed]).await
}

/// The command line of program `pid`, once it has its own: a program just
/// spawned may not have reached its exec yet (its command line is still
/// empty, or the test's, which runs the server).
async fn cmdline(pid: u32) -> Vec<String> {
    let read_of = |who: &str| -> Vec<String> {
        std::fs::read(format!("/proc/{who}/cmdline"))
            .unwrap_or_default()
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect()
    };
    let ours = read_of("self");
    let read = || read_of(&pid.to_string());
    support::poll::eventually("the program's exec", || async {
        let args = read();
        !args.is_empty() && args != ours
    })
    .await;
    read()
}

async fn create(server: &TestServer, body: Value) -> (u16, Value) {
    let resp = server.post_json("/api/sessions", body).await;
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_program_runs_in_the_owners_directory_with_the_owners_arguments() {
    let server = server().await;
    let project = tempfile::tempdir().unwrap();
    let dir = project.path().to_str().unwrap();
    let (status, body) = create(
        &server,
        json!({"profile": "open", "cwd": dir, "args": ["--token-delay-ms", "2"]}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let info: SessionInfo = serde_json::from_value(body).unwrap();
    assert_eq!(info.work_dir.as_deref(), Some(dir));
    let pid = info.pid.unwrap();
    assert_eq!(
        std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap(),
        project.path().canonicalize().unwrap()
    );
    let args = cmdline(pid).await;
    assert_eq!(
        args[args.len() - 2..],
        ["--token-delay-ms", "2"],
        "{args:?}"
    );
    // The profile's own come first, untouched.
    let own = args.iter().position(|a| a == "demo-agent").unwrap();
    assert_eq!(
        args[own..own + 2],
        ["demo-agent", "--json-file"],
        "{args:?}"
    );
    // The audit trail says what the owner chose.
    let trail = server
        .text(&format!("/api/sessions/{}/audit", info.id))
        .await;
    let create_line: Value = trail
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["kind"] == "session_create")
        .unwrap();
    assert_eq!(create_line["cwd"], dir);
    assert_eq!(create_line["args"], json!(["--token-delay-ms", "2"]));
    // The program's files stay in its session directory, not the project.
    assert_eq!(std::fs::read_dir(project.path()).unwrap().count(), 0);
    let mut c: Client = server.connect(info.id, None).await;
    c.until_screen("demo").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_cwd_or_unwanted_arguments_are_refused_with_the_reason() {
    let server = server().await;
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    // Once the server has made its state directory (private).
    let none: Vec<SessionInfo> = server.json("/api/sessions").await;
    assert!(none.is_empty());
    let state = server.state_dir.path().join("state");
    let inside = state.join("mine");
    std::fs::create_dir_all(&inside).unwrap();
    let cases = [
        (
            json!({"profile": "open", "cwd": "relative/dir"}),
            "not an absolute path",
        ),
        (
            json!({"profile": "open", "cwd": "/no/such/dir"}),
            "no such directory",
        ),
        (json!({"profile": "open", "cwd": file}), "not a directory"),
        (json!({"profile": "open", "cwd": state}), "state directory"),
        (json!({"profile": "open", "cwd": inside}), "state directory"),
        (
            json!({"profile": "closed", "args": ["--x"]}),
            "takes no extra arguments",
        ),
        (
            json!({"profile": "open", "args": vec!["a"; 65]}),
            "at most 64",
        ),
        (json!({"profile": "open", "args": ["a\u{0}b"]}), "NUL"),
    ];
    for (body, why) in cases {
        let (status, answer) = create(&server, body.clone()).await;
        assert_eq!(status, 400, "{body}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(why), "{body}: {message}");
    }
    // Nothing was started for any of them.
    let all: Vec<SessionInfo> = server.json("/api/sessions").await;
    assert!(all.is_empty(), "{all:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_owner_chooses_and_a_resume_runs_the_same_way() {
    let (server, tokens) = support::servers::server_with_roles().await;
    let tmp = tempfile::tempdir().unwrap();
    for (role, token) in &tokens[1..] {
        let resp = server
            .http
            .post(server.url("/api/sessions"))
            .bearer_auth(token)
            .json(&json!({"cwd": tmp.path()}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 403, "{role:?}");
    }
    drop(server);

    let resumable = Profile {
        extra_args: true,
        ..support::servers::resumable_profile()
    };
    let server = TestServer::with_profiles(vec![resumable]).await;
    let dir = tmp.path().to_str().unwrap();
    let (status, body) = create(
        &server,
        json!({"profile": "fake", "cwd": dir, "args": ["--extra", "x"]}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let first: SessionInfo = serde_json::from_value(body).unwrap();
    let mut c = server.connect(first.id, None).await;
    c.until_event(|e| e["subtype"] == "session_start").await;
    c.submit("hello").await;
    c.until_event(|e| e["type"] == "result").await;
    let resp = server.delete(&format!("/api/sessions/{}", first.id)).await;
    assert!(resp.status().is_success());
    let resp = server
        .post_json(&format!("/api/sessions/{}/resume", first.id), json!({}))
        .await;
    assert_eq!(resp.status(), 201);
    let next: SessionInfo = resp.json().await.unwrap();
    assert_eq!(next.work_dir.as_deref(), Some(dir));
    let args = cmdline(next.pid.unwrap()).await;
    assert_eq!(args[args.len() - 2..], ["--extra", "x"], "{args:?}");
}
