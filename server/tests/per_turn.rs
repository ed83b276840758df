//! Print-mode agents (`channel = "stream_json_per_turn"`, seed 004): one
//! process per prompt, chained into one session by the chat id the agent
//! reports (`resume_args`), its `tool_call` events shown as tool cards,
//! failed turns (non-zero exit without a `result`, stderr) ending with an
//! error, cancel and DELETE. Against `fixtures/fake_print_agent.py`,
//! written from the seed's documented shapes (that CLI is not installable).

mod support;

use duet_protocol::ws::{ClientMessage, ServerMessage};
use duet_server::config::{ChannelKind, Profile};
use serde_json::Value;
use support::{kind, Client, TestServer};
use tempfile::TempDir;

fn profile(cwd: &std::path::Path) -> Profile {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fake_print_agent.py")
        .to_string_lossy()
        .into_owned();
    Profile {
        extra_args: false,
        name: "print".into(),
        description: None,
        command: "python3".into(),
        args: vec![script.clone(), "-p".into(), "{prompt}".into()],
        env: Default::default(),
        cwd: Some(cwd.to_string_lossy().into_owned()),
        ready_text: None,
        channel: Some(ChannelKind::StreamJsonPerTurn),
        resume_args: Some(vec![
            script,
            "--resume".into(),
            "{agent_session_id}".into(),
            "-p".into(),
            "{prompt}".into(),
        ]),
    }
}

async fn start() -> (TestServer, Client, duet_protocol::ids::SessionId, TempDir) {
    let workspace = tempfile::tempdir().unwrap();
    let server = TestServer::with_profiles(vec![profile(workspace.path())]).await;
    let session = server.create("print").await;
    assert_eq!(session.channel.kind, "stream_json_per_turn");
    assert_eq!(session.pid, None, "no process between turns");
    let mut client = server.connect(session.id, None).await;
    client
        .until_event(|e| e["subtype"] == "session_start")
        .await;
    (server, client, session.id, workspace)
}

fn text(e: &Value) -> String {
    if kind(e) != "assistant" {
        return String::new();
    }
    e["message"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect()
}

async fn reply(c: &mut Client, fragment: &str) -> String {
    text(&c.until_event(|e| text(e).contains(fragment)).await.1)
}

async fn result(c: &mut Client) -> Value {
    c.until_event(|e| kind(e) == "result").await.1
}

fn block(e: &Value) -> &Value {
    &e["message"]["content"][0]
}

async fn warning(c: &mut Client, code: &str) -> String {
    match c
        .until(|m| matches!(m, ServerMessage::Warning { code: k, .. } if k == code))
        .await
    {
        ServerMessage::Warning { message, .. } => message,
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_prompt_runs_a_process_resumed_by_the_reported_chat_id() {
    let (server, mut c, id, _ws) = start().await;
    c.submit("hello").await;
    // One `user` event: duet's (the agent's own echo is dropped).
    c.until_event(|e| kind(e) == "user").await;
    c.until_event(|e| e["event"]["delta"]["text"] == "You ")
        .await;
    let first = reply(&mut c, "You said: hello (turn 1 of chat-").await;
    result(&mut c).await;
    let chat = first
        .split(" of ")
        .nth(1)
        .unwrap()
        .trim()
        .trim_end_matches(')')
        .to_string();
    // Held while the first turn ran? Either way, the second continues the chat.
    c.submit("again").await;
    reply(&mut c, &format!("You said: again (turn 2 of {chat})")).await;
    result(&mut c).await;
    let users = c
        .texts
        .iter()
        .filter(|m| matches!(m, ServerMessage::Event { event, .. } if kind(event) == "user"))
        .count();
    assert_eq!(users, 2, "the agent's echoes are not relayed");
    let info = server.info(id).await;
    assert_eq!(info.agent_session_id.as_deref(), Some(chat.as_str()));
    assert_eq!(info.pid, None);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_calls_become_tool_cards() {
    let (server, mut c, _id, ws) = start().await;
    std::fs::write(ws.path().join("notes.txt"), "twelve chars").unwrap();
    c.submit("read notes.txt").await;
    let (_, use_) = c
        .until_event(|e| kind(e) == "assistant" && block(e)["type"] == "tool_use")
        .await;
    assert_eq!(block(&use_)["name"], "Read");
    assert_eq!(block(&use_)["input"]["path"], "notes.txt");
    let tool_id = block(&use_)["id"].clone();
    let (_, res) = c
        .until_event(|e| kind(e) == "user" && block(e)["type"] == "tool_result")
        .await;
    assert_eq!(block(&res)["tool_use_id"], tool_id);
    assert_eq!(block(&res)["content"], "twelve chars");
    assert_eq!(block(&res)["is_error"], false);
    reply(&mut c, "It has 12 characters.").await;
    result(&mut c).await;
    c.until_screen("● Read").await;

    c.submit("write out.txt").await;
    let (_, use_) = c
        .until_event(|e| kind(e) == "assistant" && block(e)["name"] == "Write")
        .await;
    assert_eq!(block(&use_)["input"]["fileText"], "hello\n");
    result(&mut c).await;
    assert!(ws.path().join("out.txt").exists());

    c.submit("grep").await;
    c.until_event(|e| kind(e) == "assistant" && block(e)["name"] == "grep")
        .await;
    let (_, res) = c
        .until_event(|e| kind(e) == "user" && block(e)["is_error"] == true)
        .await;
    assert_eq!(block(&res)["content"], "grep: no such directory");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_turn_ends_with_its_stderr_and_the_next_prompt_runs() {
    let (server, mut c, _id, _ws) = start().await;
    c.submit("fail").await;
    let why = warning(&mut c, "agent_exited").await;
    assert!(why.contains("exited with code 2"), "{why}");
    assert!(why.contains("rate limited"), "{why}");
    let r = result(&mut c).await;
    assert_eq!(r["is_error"], true);
    c.until_screen("Error: rate limited").await;

    // Text before the crash is kept as a message.
    c.submit("crash").await;
    reply(&mut c, "Starting").await;
    let why = warning(&mut c, "agent_exited").await;
    assert!(why.contains("RuntimeError: model stream broke"), "{why}");
    result(&mut c).await;

    // A prompt that would read as an option never reaches the command line.
    c.submit("--help").await;
    let why = warning(&mut c, "prompt_refused").await;
    assert!(why.contains("read as an option"), "{why}");

    c.submit("hello").await;
    reply(&mut c, "You said: hello").await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_ends_the_running_turn_and_delete_ends_the_session() {
    let (server, mut c, id, _ws) = start().await;
    c.submit("sleep").await;
    c.until_event(|e| e["event"]["delta"]["text"] == "Sleeping ")
        .await;
    c.send(&ClientMessage::Cancel { id: None }).await;
    let r = result(&mut c).await;
    assert_eq!(r["is_error"], true);
    assert_eq!(r["result"], "interrupted");
    c.submit("sleep").await;
    c.until_event(|e| e["event"]["delta"]["text"] == "Sleeping ")
        .await;
    let started = std::time::Instant::now();
    let resp = server.delete(&format!("/api/sessions/{id}")).await;
    assert!(resp.status().is_success());
    let exit = match c.until(|m| matches!(m, ServerMessage::Exit(_))).await {
        ServerMessage::Exit(e) => e,
        _ => unreachable!(),
    };
    assert!(exit.success, "{exit:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    server.shutdown().await;
}
