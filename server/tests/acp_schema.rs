//! Every message duet sends an ACP agent, checked against ACP's official
//! JSON schema (protocol version 1): `fixtures/acp-schema-v1.json`, copied
//! unchanged from `@agentclientprotocol/sdk` 2.4.0 (`schema/v1/schema.json`,
//! the SDK `claude-agent-acp` 0.101.0 uses; sha256 0d0b1ca8…bcbc1a). duet
//! writes its messages by hand (docs/agents.md says why it does not use the
//! `agent-client-protocol` crate's types); this is what keeps them honest.
//!
//! The scripted agent (`fixtures/fake_acp_agent.py`) records every line it
//! reads; a session walks duet through each kind of message it sends:
//! `initialize`, `session/new`, `session/prompt`, answers to file and
//! terminal requests (results and errors), "method not found", a
//! permission answered with an option and one answered `cancelled` after
//! `session/cancel`, and on resume `session/load`. Each line must be a valid
//! client message (the schema's `Client` branch), and its params or result
//! must match the method's own definition (`InitializeRequest`,
//! `RequestPermissionResponse`, …).

mod support;

use std::collections::BTreeSet;
use std::path::Path;

use duet_protocol::ws::{ClientMessage, ServerMessage};
use duet_server::config::{ChannelKind, Profile};
use serde_json::{json, Value};
use support::{kind, Client, TestServer};

fn schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/acp-schema-v1.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A validator for `part` (a schema fragment that may `$ref` the official
/// schema's `$defs`).
fn validator(schema: &Value, part: Value) -> jsonschema::Validator {
    let mut root = part;
    root["$schema"] = schema["$schema"].clone();
    root["$defs"] = schema["$defs"].clone();
    jsonschema::validator_for(&root).unwrap()
}

/// The `$defs` entry for what a client sends: (what, method) → definition.
fn definition(method: &str, response: bool) -> &'static str {
    match (method, response) {
        ("initialize", false) => "InitializeRequest",
        ("session/new", false) => "NewSessionRequest",
        ("session/load", false) => "LoadSessionRequest",
        ("session/prompt", false) => "PromptRequest",
        ("session/cancel", false) => "CancelNotification",
        ("session/request_permission", true) => "RequestPermissionResponse",
        ("fs/read_text_file", true) => "ReadTextFileResponse",
        ("fs/write_text_file", true) => "WriteTextFileResponse",
        ("terminal/create", true) => "CreateTerminalResponse",
        ("terminal/output", true) => "TerminalOutputResponse",
        ("terminal/wait_for_exit", true) => "WaitForTerminalExitResponse",
        ("terminal/kill", true) => "KillTerminalResponse",
        ("terminal/release", true) => "ReleaseTerminalResponse",
        (other, _) => panic!("duet sent something for {other} this test does not know"),
    }
}

async fn reply(c: &mut Client, fragment: &str) {
    c.until_event(|e| {
        kind(e) == "assistant"
            && e["message"]["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains(fragment))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_message_duet_sends_matches_the_official_schema() {
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().canonicalize().unwrap();
    let record = tempfile::NamedTempFile::new().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fake_acp_agent.py")
        .to_string_lossy()
        .into_owned();
    let profile = Profile {
        extra_args: false,
        name: "acp".into(),
        description: None,
        command: "python3".into(),
        args: vec![script.clone()],
        env: [(
            "ACP_RECORD".to_string(),
            record.path().to_string_lossy().into_owned(),
        )]
        .into(),
        cwd: Some(root.to_string_lossy().into_owned()),
        ready_text: None,
        channel: Some(ChannelKind::Acp),
        resume_args: Some(vec![script]),
    };
    let server = TestServer::with_profiles(vec![profile]).await;
    let session = server.create("acp").await;
    let mut c = server.connect(session.id, None).await;
    c.until_event(|e| e["subtype"] == "session_start").await;

    std::fs::write(root.join("in.txt"), "inside").unwrap();
    for (prompt, answer) in [
        (format!("read {}", root.join("in.txt").display()), "read:"),
        ("read /etc/hostname".to_string(), "refused:"),
        (
            format!("write {}", root.join("new.txt").display()),
            "wrote it",
        ),
        ("unknown".to_string(), "unknown: -32601"),
        ("terminal".to_string(), "terminal: exit 3"),
        ("terminal kill".to_string(), "killed:"),
    ] {
        c.submit(&prompt).await;
        reply(&mut c, answer).await;
        c.until_event(|e| kind(e) == "result").await;
    }
    c.submit("permission").await;
    let a = match c.until(|m| matches!(m, ServerMessage::Approval(_))).await {
        ServerMessage::Approval(a) => a,
        _ => unreachable!(),
    };
    c.send(&ClientMessage::Approve {
        request_id: a.request_id,
        allowed: None,
        option: Some("yes".into()),
        id: None,
    })
    .await;
    reply(&mut c, "permission: yes").await;
    c.until_event(|e| kind(e) == "result").await;
    c.submit("permission").await;
    // The pending one (the first approval's late updates come first).
    c.until(|m| {
        matches!(m, ServerMessage::Approval(a)
            if a.options.len() == 2 && a.state == duet_protocol::rest::ApprovalState::Pending)
    })
    .await;
    c.send(&ClientMessage::Cancel {
        id: Some("cancel".into()),
    })
    .await;
    let (_, r) = c
        .until_event(|e| kind(e) == "result" && e["stop_reason"] == "cancelled")
        .await;
    assert_eq!(r["is_error"], true);

    // Resumed: session/load.
    server
        .delete(&format!("/api/sessions/{}", session.id))
        .await;
    c.until(|m| matches!(m, ServerMessage::Exit(_))).await;
    let resp = server
        .post_json(&format!("/api/sessions/{}/resume", session.id), json!({}))
        .await;
    assert_eq!(resp.status(), 201);
    let resumed: duet_protocol::rest::SessionInfo = resp.json().await.unwrap();
    let mut c = server.connect(resumed.id, None).await;
    c.until_event(|e| e["subtype"] == "session_start").await;
    server.shutdown().await;

    let schema = schema();
    let client = validator(&schema, schema["anyOf"][1].clone());
    assert_eq!(schema["anyOf"][1]["title"], "Client");
    let mut seen = BTreeSet::new();
    let lines = std::fs::read_to_string(record.path()).unwrap();
    for line in lines.lines() {
        let rec: Value = serde_json::from_str(line).unwrap();
        let msg = &rec["message"];
        let errors: Vec<String> = client.iter_errors(msg).map(|e| e.to_string()).collect();
        assert!(
            errors.is_empty(),
            "not a client message: {msg}\n{errors:#?}"
        );
        let (method, response) = match (msg["method"].as_str(), rec["answers"].as_str()) {
            (Some(m), _) => (m, false),
            (None, Some(m)) => (m, true),
            (None, None) => panic!("a response to nothing the agent asked: {msg}"),
        };
        let part = if msg.get("error").is_some() {
            seen.insert(format!("{method} error"));
            (&msg["error"], "Error")
        } else {
            seen.insert(method.to_string());
            if let Some(outcome) = msg["result"]["outcome"]["outcome"].as_str() {
                seen.insert(format!("{method} {outcome}"));
            }
            let body = if response {
                &msg["result"]
            } else {
                &msg["params"]
            };
            (body, definition(method, response))
        };
        let v = validator(&schema, json!({"$ref": format!("#/$defs/{}", part.1)}));
        let errors: Vec<String> = v.iter_errors(part.0).map(|e| e.to_string()).collect();
        assert!(
            errors.is_empty(),
            "{method}: {} does not match {}: {errors:#?}",
            part.0,
            part.1
        );
    }
    // Each kind was sent (so the checks above checked something).
    for expected in [
        "initialize",
        "session/new",
        "session/load",
        "session/prompt",
        "session/cancel",
        "session/request_permission selected",
        "session/request_permission cancelled",
        "fs/read_text_file",
        "fs/read_text_file error",
        "fs/write_text_file",
        "x/frobnicate error",
        "terminal/create",
        "terminal/output",
        "terminal/output error",
        "terminal/wait_for_exit",
        "terminal/kill",
        "terminal/release",
    ] {
        assert!(seen.contains(expected), "{expected} not sent: {seen:?}");
    }
}
