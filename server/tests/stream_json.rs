//! The stream-json channel (`channel = "stream_json"`) against a scripted
//! headless agent (`fixtures/fake_stream_json.py`, Qwen's shapes): the
//! handshake, a streamed reply, a tool approved and one denied over the
//! control channel, an interrupt, requests duet does not implement, bad
//! and oversized lines, an agent that dies mid-turn, and a terminal that
//! shows stderr and refuses keys; the RFC's heartbeats (answered, probed,
//! their absence reported once, and no report for an agent that does not
//! implement them), its version announcement and its error semantics.
//! Real agents: `headless_e2e.rs`.

mod support;

use duet_protocol::rest::{ApprovalState, Decider};
use duet_protocol::ws::{ClientMessage, ErrorCode, ServerMessage};
use duet_server::config::{ChannelKind, ConfigFile, Profile, Profiles};
use serde_json::Value;
use support::{assistant_text, kind, Client, TestServer};

fn fake_profile() -> Profile {
    Profile {
        extra_args: false,
        name: "fake".into(),
        description: None,
        command: "python3".into(),
        args: vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/fake_stream_json.py")
            .to_string_lossy()
            .into_owned()],
        env: Default::default(),
        cwd: None,
        ready_text: None,
        channel: Some(ChannelKind::StreamJson),
        resume_args: None,
    }
}

async fn start() -> (TestServer, Client, duet_protocol::ids::SessionId) {
    start_with(false, std::time::Duration::from_secs(10)).await
}

/// [`start`] with the fake's RFC heartbeats on or off, and duet's
/// heartbeat interval.
async fn start_with(
    heartbeats: bool,
    interval: std::time::Duration,
) -> (TestServer, Client, duet_protocol::ids::SessionId) {
    let mut profile = fake_profile();
    if heartbeats {
        profile.env.insert("FAKE_HEARTBEAT".into(), "1".into());
    }
    let profiles = Profiles::from_config(
        ConfigFile {
            default_profile: None,
            profiles: vec![profile],
            tokens: Vec::new(),
            ..Default::default()
        },
        env!("CARGO_BIN_EXE_duet").into(),
    )
    .unwrap();
    let server = TestServer::start_with(|o| {
        o.profiles = profiles;
        o.limits.max_sidecar_line = 64 << 10;
        o.limits.heartbeat = interval;
    })
    .await;
    let session = server.create("fake").await;
    assert_eq!(session.channel.kind, "stream_json");
    assert!(session.channel.submit && session.channel.approve);
    let mut client = server.connect(session.id, None).await;
    let (_, start) = client
        .until_event(|e| e["subtype"] == "session_start")
        .await;
    assert_eq!(start["data"]["session_id"], "fake-session-1");
    (server, client, session.id)
}

async fn reply(c: &mut Client, fragment: &str) {
    c.until_event(|e| assistant_text(e).contains(fragment))
        .await;
}

async fn result(c: &mut Client) -> Value {
    c.until_event(|e| kind(e) == "result").await.1
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

async fn settled(c: &mut Client, id: &str) -> duet_protocol::rest::Approval {
    match c
        .until(|m| matches!(m, ServerMessage::Approval(a) if a.request_id == id && a.confirmed))
        .await
    {
        ServerMessage::Approval(a) => a,
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_replies_and_tool_decisions_travel_over_stdin_and_stdout() {
    let (server, mut c, id) = start().await;
    // The terminal pane shows the agent's stderr.
    c.until_screen("fake agent starting").await;

    assert!(matches!(
        c.submit("hello there").await,
        ServerMessage::Ack { .. }
    ));
    // duet records the prompt (the agent does not echo it), then the reply
    // streams.
    c.until_event(|e| kind(e) == "user" && e["message"]["content"][0]["text"] == "hello there")
        .await;
    c.until_event(|e| e["event"]["delta"]["text"] == "Echo: ")
        .await;
    reply(&mut c, "Echo: hello there").await;
    assert_eq!(result(&mut c).await["is_error"], false);
    c.until_screen("> hello there").await;

    // Allowed from the browser: the agent gets `behavior: allow`.
    c.submit("tool one").await;
    let a = c.pending_approval().await;
    assert_eq!(a.tool_name, "Bash");
    c.until_screen("● Bash").await;
    c.send(&ClientMessage::Approve {
        request_id: a.request_id.clone(),
        allowed: Some(true),
        option: None,
        id: None,
    })
    .await;
    let done = settled(&mut c, &a.request_id).await;
    assert_eq!(done.state, ApprovalState::Allowed);
    assert_eq!(done.decided_by, Some(Decider::Client));
    reply(&mut c, "Tool said ran touch x").await;
    result(&mut c).await;

    // Denied: the agent gets `behavior: deny` and its message.
    c.submit("tool two").await;
    let a = c.pending_approval().await;
    c.send(&ClientMessage::Approve {
        request_id: a.request_id.clone(),
        allowed: Some(false),
        option: None,
        id: None,
    })
    .await;
    assert_eq!(
        settled(&mut c, &a.request_id).await.state,
        ApprovalState::Denied
    );
    reply(&mut c, "denied: Denied from the browser").await;

    // A control request duet does not implement is answered with an error.
    c.submit("hook").await;
    reply(
        &mut c,
        "Hook answer error: duet does not implement \"hook_callback\"",
    )
    .await;

    // Keys are refused with a clear error: there is no terminal.
    c.keys(b"ls\r").await;
    match c.until(|m| matches!(m, ServerMessage::Error { .. })).await {
        ServerMessage::Error { code, message, .. } => {
            assert_eq!(code, ErrorCode::BadMessage);
            assert!(message.contains("without a terminal"), "{message}");
        }
        _ => unreachable!(),
    }
    // The transcript holds the agent's lines as written, and duet's.
    let events = server
        .get(&format!("/api/sessions/{id}/events"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // (The fake writes JSON with spaces after its colons, duet without.)
    assert!(events.contains(r#""subtype": "can_use_tool""#), "{events}");
    assert!(
        events.contains(r#""response":{"allowed":true}"#),
        "{events}"
    );
    server.delete(&format!("/api/sessions/{id}")).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_ends_the_turn_and_abandons_its_approval() {
    let (server, mut c, _id) = start().await;
    c.submit("slow").await;
    c.until_event(|e| e["event"]["delta"]["text"] == "one ")
        .await;
    c.send(&ClientMessage::Cancel { id: None }).await;
    let r = result(&mut c).await;
    assert_eq!(r["is_error"], true, "{r}");
    assert_eq!(r["result"], "interrupted");

    // During an approval: the card does not stay pending.
    c.submit("tool three").await;
    let a = c.pending_approval().await;
    c.send(&ClientMessage::Cancel { id: None }).await;
    let gone = c
        .until(|m| matches!(m, ServerMessage::Approval(x) if x.request_id == a.request_id && x.state != ApprovalState::Pending))
        .await;
    let ServerMessage::Approval(gone) = gone else {
        unreachable!()
    };
    assert_eq!(gone.state, ApprovalState::Abandoned);
    result(&mut c).await;
    // And the next prompt is answered.
    c.submit("hello again").await;
    reply(&mut c, "Echo: hello again").await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_and_oversized_lines_are_skipped_with_warnings() {
    let (server, mut c, _id) = start().await;
    c.submit("garbage").await;
    let bad = warning(&mut c, "bad_event").await;
    assert!(bad.contains("this is not json"), "{bad}");
    let long = warning(&mut c, "bad_event").await;
    assert!(long.contains("over the limit"), "{long}");
    reply(&mut c, "after garbage").await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_dies_mid_turn_ends_the_turn_and_the_session() {
    let (server, mut c, _id) = start().await;
    c.submit("die").await;
    let why = warning(&mut c, "agent_exited").await;
    assert!(why.contains("exited before"), "{why}");
    let r = result(&mut c).await;
    assert_eq!(r["is_error"], true);
    let exit = match c.until(|m| matches!(m, ServerMessage::Exit(_))).await {
        ServerMessage::Exit(e) => e,
        _ => unreachable!(),
    };
    assert_eq!(exit.code, Some(3));
    c.until_screen("fatal: the model went away").await;
    server.shutdown().await;
}

/// A burst of events reaches the client whole and in order; prints the
/// rate (measured on 2 shared cores: see the report in docs/agents.md).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_events_arrives_whole_and_in_order() {
    const N: usize = 20_000;
    let (server, mut c, _id) = start().await;
    let sent = std::time::Instant::now();
    c.submit(&format!("flood {N}")).await;
    let mut next = 0usize;
    loop {
        let (_, e) = c
            .until_event(|e| kind(e) == "result" || e["event"]["type"] == "content_block_delta")
            .await;
        if kind(&e) == "result" {
            break;
        }
        assert_eq!(e["event"]["delta"]["text"], format!("{next} "));
        next += 1;
    }
    assert_eq!(next, N);
    let took = sent.elapsed();
    eprintln!(
        "measured: {N} stream-json events agent -> client in {took:?} ({:.0}/s)",
        N as f64 / took.as_secs_f64()
    );
    server.shutdown().await;
}

/// Whether `m` is a warning with `code`.
fn is_warning(m: &ServerMessage, code: &str) -> bool {
    matches!(m, ServerMessage::Warning { code: k, .. } if k == code)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_are_answered_and_their_absence_is_reported_once() {
    let interval = std::time::Duration::from_millis(200);
    let (server, mut c, id) = start_with(true, interval).await;
    // The announced protocol is part of the handshake.
    let (_, start) = server
        .connect(id, None)
        .await
        .until_event(|e| e["subtype"] == "session_start")
        .await;
    assert_eq!(
        start["data"]["announced"]["protocol_version"], "2025-10-13",
        "{start}"
    );
    // The agent asks duet: duet answers.
    c.submit("ask heartbeat").await;
    reply(&mut c, "duet answered heartbeat: result/heartbeat ok").await;
    result(&mut c).await;
    // duet asks again only once the agent answered its probe: a second
    // request read means duet took the answer.
    loop {
        c.submit("heartbeats").await;
        let mut said = String::new();
        c.until(|m| {
            if let ServerMessage::Event { event, .. } = m {
                said = assistant_text(event);
            }
            said.starts_with("heartbeats:")
        })
        .await;
        result(&mut c).await;
        let n: u32 = said["heartbeats: ".len()..].parse().unwrap();
        if n >= 2 {
            break;
        }
    }
    assert!(
        !c.pending
            .iter()
            .any(|m| is_warning(m, "agent_unresponsive")),
        "no warning while it answers"
    );
    c.submit("hang").await;
    reply(&mut c, "now hang").await;
    let message = warning(&mut c, "agent_unresponsive").await;
    assert!(
        message.contains("has not answered a heartbeat"),
        "{message}"
    );
    c.submit("wake").await;
    let mut repeated = 0;
    c.until(|m| {
        repeated += usize::from(is_warning(m, "agent_unresponsive"));
        is_warning(m, "agent_responsive")
    })
    .await;
    assert_eq!(repeated, 0, "the silence was reported more than once");
    // Heartbeats are not conversation: none in the transcript.
    let text = server
        .get(&format!("/api/sessions/{id}/events"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for line in text.lines() {
        let e: Value = serde_json::from_str(line).unwrap();
        assert!(!kind(&e).contains("heartbeat"), "{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_without_heartbeats_gets_one_probe_and_no_warning() {
    let interval = std::time::Duration::from_millis(100);
    let (_server, mut c, _) = start_with(false, interval).await;
    // Ten intervals: a watchdog that misfired would have spoken by now.
    tokio::time::sleep(interval * 10).await;
    c.submit("heartbeats").await;
    let mut warned = Vec::new();
    let mut said = String::new();
    c.until(|m| {
        if let ServerMessage::Warning { code, .. } = m {
            warned.push(code.clone());
        }
        if let ServerMessage::Event { event, .. } = m {
            said = assistant_text(event);
        }
        said.contains("heartbeats:")
    })
    .await;
    assert_eq!(said, "heartbeats: 1", "one probe, then nothing");
    assert!(warned.is_empty(), "{warned:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rfcs_error_semantics_become_warnings_and_end_the_turn() {
    let (_server, mut c, _) = start().await;
    c.submit("control errors").await;
    let message = warning(&mut c, "control_error").await;
    assert!(message.contains("hook timed out"), "{message}");
    reply(&mut c, "Echo: control errors").await;
    result(&mut c).await;

    c.submit("fatal").await;
    let message = warning(&mut c, "agent_error").await;
    assert!(
        message.contains("invalid tool input (QWEN_INVALID_TOOL_ARGS)"),
        "{message}"
    );
    let r = result(&mut c).await;
    assert_eq!(r["is_error"], true, "{r}");
    match c.until(|m| matches!(m, ServerMessage::Exit(_))).await {
        ServerMessage::Exit(e) => assert_eq!(e.code, Some(2)),
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_mismatch_is_reported_as_unsupported_protocol() {
    let (_server, mut c, _) = start().await;
    c.submit("unsupported").await;
    let message = warning(&mut c, "unsupported_protocol").await;
    assert!(
        message.contains("stream-json v9 is not supported"),
        "{message}"
    );
    let r = result(&mut c).await;
    assert_eq!(r["is_error"], true, "{r}");
    match c.until(|m| matches!(m, ServerMessage::Exit(_))).await {
        ServerMessage::Exit(e) => assert_eq!(e.code, Some(3)),
        _ => unreachable!(),
    }
}
