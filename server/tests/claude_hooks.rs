//! The Claude channel's hook socket, without Claude: hooks are raw
//! connections to `<session>/hook.sock`, as `duet hook` makes them. A
//! connection that sends nothing holds up no other hook.

mod support;

use std::path::PathBuf;

use duet_protocol::ids::SessionId;
use duet_server::config::{ChannelKind, Profile};
use serde_json::json;
use support::*;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

/// A session of the Claude channel whose program only waits: the test
/// plays Claude's hooks itself.
async fn session(server: &TestServer) -> (SessionId, PathBuf) {
    let s = server.create("hooked").await;
    let socket = server
        .state_dir
        .path()
        .join("state")
        .join(s.id.to_string())
        .join("hook.sock");
    (s.id, socket)
}

async fn server() -> TestServer {
    TestServer::with_profiles(vec![Profile {
        name: "hooked".into(),
        description: None,
        command: "sh".into(),
        // Takes `--settings {claude_settings}` as Claude does, and ignores it.
        args: [
            "-c",
            "echo waiting; exec cat",
            "sh",
            "--settings",
            "{claude_settings}",
        ]
        .map(String::from)
        .to_vec(),
        env: Default::default(),
        cwd: None,
        ready_text: None,
        channel: Some(ChannelKind::Claude),
        resume_args: None,
        extra_args: false,
    }])
    .await
}

/// Runs one hook as `duet hook` does; returns the session's answer line.
async fn hook(socket: &std::path::Path, event: &str, payload: serde_json::Value) -> String {
    let mut stream = UnixStream::connect(socket).await.unwrap();
    let mut line = json!({"event": event, "payload": payload}).to_string();
    line.push('\n');
    stream.write_all(line.as_bytes()).await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(DEADLINE, BufReader::new(stream).read_line(&mut answer))
        .await
        .expect("the hook is answered")
        .unwrap();
    answer
}

/// Issue 27: hook connections were served one at a time, each given 10 s
/// to send its message, so one connection that sent nothing stalled every
/// hook of its session for 10 s (Claude waits for each hook). Now each
/// connection is read on its own; the hook is answered while the idle
/// connection is still open and still waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_connection_holds_up_no_hook() {
    let server = server().await;
    let (id, socket) = session(&server).await;
    let mut c = server.connect(id, None).await;
    c.until_screen("waiting").await;
    // Accepted before the hook below: served first, as connections were.
    let idle = UnixStream::connect(&socket).await.unwrap();
    let answer = hook(
        &socket,
        "SessionStart",
        json!({"session_id": "s-1", "cwd": ".", "hook_event_name": "SessionStart", "source": "startup", "model": "m"}),
    )
    .await;
    assert_eq!(answer.trim(), r#"{"stdout":""}"#);
    // The session took it in...
    c.until_event(|e| kind(e) == "system" && e["subtype"] == "session_start")
        .await;
    // ...and the idle connection was not given up on to get there: the
    // server neither closed it nor answered it.
    let mut probe = [0u8; 1];
    match idle.try_read(&mut probe) {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the idle connection was closed or answered: {other:?}"),
    }
}
