//! A profile that cannot start as configured (its working directory or its
//! program is missing): the answer names the cause and says
//! `profile_misconfigured`, and the server's audit trail names the profile
//! that was used, also when the request named none.

mod support;

use duet_server::config::{ChannelKind, Profile};
use serde_json::{json, Value};
use support::*;

const MISSING_DIR: &str = "/nonexistent/duet-test-cwd";
const MISSING_PROGRAM: &str = "/nonexistent/duet-test-program";

/// The error of a create that should fail as misconfigured; its message.
async fn misconfigured(server: &TestServer, body: Value) -> String {
    let resp = server.post_json("/api/sessions", body.clone()).await;
    let status = resp.status();
    let v: Value = resp.json().await.unwrap();
    assert_eq!(status, 500, "{body}: {v}");
    assert_eq!(v["error"]["code"], "profile_misconfigured", "{body}: {v}");
    v["error"]["message"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_directory_or_program_is_named_as_the_cause() {
    let no_dir = demo_profile("no-dir", Some(MISSING_DIR.into()));
    let no_program = Profile {
        command: MISSING_PROGRAM.into(),
        ..demo_profile("no-program", None)
    };
    let not_on_path = Profile {
        command: "duet-test-no-such-program".into(),
        ..demo_profile("not-on-path", None)
    };
    // One process per prompt: checked at the start all the same, not left
    // to fail the first prompt.
    let per_turn = Profile {
        command: MISSING_PROGRAM.into(),
        args: vec!["-p".into(), "{prompt}".into()],
        channel: Some(ChannelKind::StreamJsonPerTurn),
        ..demo_profile("per-turn", None)
    };
    // The first profile is the default.
    let server = TestServer::with_profiles(vec![
        no_dir,
        no_program,
        not_on_path,
        per_turn,
        demo_profile("ok", None),
    ])
    .await;

    // The program exists; the directory does not, and the message says so.
    let message = misconfigured(&server, json!({})).await;
    assert!(
        message.contains("\"no-dir\"")
            && message.contains("working directory")
            && message.contains(MISSING_DIR),
        "{message}"
    );
    assert!(!message.contains("No such file"), "{message}");
    let message = misconfigured(&server, json!({"profile": "no-program"})).await;
    assert!(
        message.contains("program") && message.contains(MISSING_PROGRAM),
        "{message}"
    );
    let message = misconfigured(&server, json!({"profile": "not-on-path"})).await;
    assert!(message.contains("not found on PATH"), "{message}");
    let message = misconfigured(&server, json!({"profile": "per-turn"})).await;
    assert!(message.contains(MISSING_PROGRAM), "{message}");

    // The server's trail names the profile each start used. Reading a
    // session's audit trail flushes every audit line queued before it.
    let ok = server.create("ok").await;
    server.text(&format!("/api/sessions/{}/audit", ok.id)).await;
    let trail = std::fs::read_to_string(server.state_dir.path().join("state/audit.jsonl")).unwrap();
    let failed: Vec<Value> = trail
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["kind"] == "session_start_failed")
        .collect();
    let profiles: Vec<&Value> = failed.iter().map(|l| &l["profile"]).collect();
    assert_eq!(
        profiles,
        [
            &json!("no-dir"),
            &json!("no-program"),
            &json!("not-on-path"),
            &json!("per-turn")
        ],
        "{trail}"
    );
    assert!(
        failed[0]["error"].as_str().unwrap().contains(MISSING_DIR),
        "{trail}"
    );
}
