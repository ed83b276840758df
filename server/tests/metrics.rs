//! `GET /metrics`: behind the token on the main listener, without it on
//! `--metrics-listen`, and counters that follow what a session does.

mod support;

use std::sync::Arc;

use duet_protocol::rest::{Approval, ApprovalState};
use duet_protocol::ws::{ClientMessage, ServerMessage};
use duet_server::server::MetricsListen;
use support::*;

/// The value of the series `series` (name and labels, as exported).
fn value(text: &str, series: &str) -> f64 {
    metric(text, series)
}

async fn scrape(server: &TestServer) -> String {
    let resp = server.get("/metrics").send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let kind = resp.headers()["content-type"].to_str().unwrap().to_string();
    assert!(kind.starts_with("application/openmetrics-text"), "{kind}");
    resp.text().await.unwrap()
}

async fn pending_approval(c: &mut Client) -> Approval {
    match c
        .until(|m| matches!(m, ServerMessage::Approval(a) if a.state == ApprovalState::Pending))
        .await
    {
        ServerMessage::Approval(a) => a,
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_follow_a_session() {
    let server = TestServer::start().await;
    assert_eq!(
        server
            .http
            .get(server.url("/metrics"))
            .send()
            .await
            .unwrap()
            .status(),
        401,
        "the main listener's /metrics needs the token"
    );
    let before = scrape(&server).await;
    assert_eq!(value(&before, r#"duet_sessions{status="running"}"#), 0.0);
    assert_eq!(
        value(
            &before,
            r#"duet_approvals_total{outcome="allowed",decided_by="client"}"#
        ),
        0.0
    );

    let s = server.create("demo").await;
    let mut c = server.connect(s.id, None).await;
    c.until_screen("run ls -la").await;
    c.keys(b"x\x7f").await;
    c.submit("run echo metrics").await;
    let req = pending_approval(&mut c).await;
    c.send(&ClientMessage::Approve {
        request_id: req.request_id.clone(),
        allowed: Some(true),
        option: None,
        id: Some("a1".into()),
    })
    .await;
    c.until(|m| matches!(m, ServerMessage::Ack { id, .. } if id == "a1"))
        .await;
    c.until_event(|e| e["message"]["content"][0]["type"] == "tool_result")
        .await;
    // A bad message gets an error frame.
    c.send_raw(r#"{"type":"nope","id":"e1"}"#).await;
    c.until(|m| matches!(m, ServerMessage::Error { id: Some(i), .. } if i == "e1"))
        .await;

    let text = scrape(&server).await;
    assert_eq!(value(&text, r#"duet_sessions{status="running"}"#), 1.0);
    assert_eq!(value(&text, "duet_sessions_started_total"), 1.0);
    assert_eq!(value(&text, "duet_clients_connected"), 1.0);
    assert_eq!(
        value(
            &text,
            r#"duet_approvals_total{outcome="allowed",decided_by="client"}"#
        ),
        1.0
    );
    assert_eq!(
        value(
            &text,
            r#"duet_approvals_total{outcome="denied",decided_by="client"}"#
        ),
        0.0
    );
    assert_eq!(value(&text, "duet_approval_decision_seconds_count"), 1.0);
    assert_eq!(value(&text, r#"duet_resyncs_total{reason="attach"}"#), 1.0);
    assert_eq!(
        value(&text, r#"duet_ws_errors_total{code="unknown_type"}"#),
        1.0
    );
    assert_eq!(value(&text, "duet_keystroke_bytes_total"), 2.0);
    assert!(value(&text, r#"duet_ws_sent_bytes_total{frame="binary"}"#) >= c.term_bytes as f64);
    assert!(value(&text, r#"duet_ws_sent_bytes_total{frame="text"}"#) > 0.0);
    let events = c.seqs().len() as f64;
    assert!(events > 0.0);
    assert!(value(&text, "duet_events_relayed_total") >= events);
    assert_eq!(value(&text, "duet_session_start_failures_total"), 0.0);
    assert!(text.ends_with("# EOF\n"));

    drop(c);
    server.delete(&format!("/api/sessions/{}", s.id)).await;
    let text = scrape(&server).await;
    assert_eq!(value(&text, r#"duet_sessions{status="running"}"#), 0.0);
    assert_eq!(value(&text, r#"duet_sessions{status="exited"}"#), 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_failures_are_counted() {
    let server = TestServer::start_with(|o| {
        let broken = demo_profile("broken", Some("/nonexistent/duet-test-cwd".into()));
        let config = duet_server::config::ConfigFile {
            default_profile: Some("broken".into()),
            profiles: vec![broken],
            tokens: Vec::new(),
            ..Default::default()
        };
        o.profiles =
            duet_server::config::Profiles::from_config(config, env!("CARGO_BIN_EXE_duet").into())
                .unwrap();
    })
    .await;
    for _ in 0..2 {
        let resp = server
            .post_json("/api/sessions", serde_json::json!({"profile": "broken"}))
            .await;
        assert_eq!(resp.status(), 500);
    }
    let text = scrape(&server).await;
    assert_eq!(value(&text, "duet_session_start_failures_total"), 2.0);
    assert_eq!(value(&text, "duet_sessions_started_total"), 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_listener_needs_no_token_and_serves_nothing_else() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = TestServer::start_with(|o| {
        o.metrics_listen = Some(MetricsListen::Bound(Arc::new(listener)));
    })
    .await;
    server.create("demo").await;
    let http = reqwest::Client::new();
    let resp = tokio::time::timeout(DEADLINE, async {
        loop {
            match http.get(format!("http://{addr}/metrics")).send().await {
                Ok(r) => return r,
                Err(_) => tokio::task::yield_now().await,
            }
        }
    })
    .await
    .expect("the metrics listener answers");
    assert_eq!(resp.status(), 200);
    let text = resp.text().await.unwrap();
    assert_eq!(value(&text, r#"duet_sessions{status="running"}"#), 1.0);
    for path in ["/api/sessions", "/", "/healthz"] {
        let status = http
            .get(format!("http://{addr}{path}"))
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, 404, "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flow_holds_and_warnings_are_counted() {
    const FLOOD: u64 = 32 << 20;
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    // This client reads its hello and then stops reading: once its socket
    // buffers are full it holds the program for a moment.
    let _stalled = server.connect(s.id, None).await;
    let mut reader = server.connect(s.id, None).await;
    reader.until_event(|e| kind(e) == "system").await;
    reader.submit(&format!("flood {FLOOD}")).await;
    reader.until_event(|e| kind(e) == "x-flood-done").await;
    // Lines that are not JSON objects are skipped with warnings.
    reader.submit("garbage 10").await;
    reader.until_event(|e| kind(e) == "x-after-garbage").await;

    let text = scrape(&server).await;
    assert!(value(&text, "duet_flow_holds_total") >= 1.0);
    assert_eq!(value(&text, r#"duet_resyncs_total{reason="attach"}"#), 2.0);
    assert!(value(&text, r#"duet_ws_sent_bytes_total{frame="binary"}"#) >= FLOOD as f64);
    let warnings: f64 = text
        .lines()
        .filter(|l| l.starts_with("duet_warnings_total{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert!(warnings >= 2.0, "{text}");
}

/// Sessions that are purged leave nothing in memory: not the session, its
/// output, screen and events (the gauge counts the sessions not yet freed),
/// not its clients, whether they left before the purge or were attached
/// through it (the server closes those). A task or a map that kept a
/// session would keep the gauge up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purged_sessions_and_their_clients_are_freed() {
    let server = TestServer::start().await;
    let mut attached = Vec::new();
    let mut ids = Vec::new();
    for i in 0..4 {
        let s = server.create("demo").await;
        let mut c = server.connect(s.id, None).await;
        c.until_screen("run ls -la").await;
        c.submit(&format!("hello {i}")).await;
        c.until_event(|e| kind(e) == "assistant").await;
        // Half leave first; the others are still attached at the purge.
        if i % 2 == 0 {
            drop(c);
            let mut again = server.connect(s.id, Some(1)).await;
            again.until_event(|_| true).await;
        } else {
            attached.push(c);
        }
        ids.push(s.id);
    }
    let text = scrape(&server).await;
    assert_eq!(value(&text, "duet_sessions_in_memory"), 4.0);
    for id in &ids {
        let resp = server
            .delete(&format!("/api/sessions/{id}?purge=true"))
            .await;
        assert_eq!(resp.status(), 204);
    }
    // The clients still attached are not dropped here: the server must
    // close them for their sessions to go.
    let freed = within(DEADLINE, || async {
        let text = scrape(&server).await;
        value(&text, "duet_sessions_in_memory") == 0.0
            && value(&text, "duet_clients_connected") == 0.0
    })
    .await;
    let text = scrape(&server).await;
    assert!(
        freed,
        "purged sessions still in memory: {} sessions, {} clients",
        value(&text, "duet_sessions_in_memory"),
        value(&text, "duet_clients_connected")
    );
    assert_eq!(value(&text, r#"duet_sessions{status="running"}"#), 0.0);
    drop(attached);
}
