//! A resumed session keeps the earlier conversation: `GET
//! /api/sessions/{id}/history` serves the events of every session in the
//! chain it resumed, oldest first, each with its session and seq, while
//! its own `GET /events` (and WebSocket) carry only its own. Against the
//! scripted stream-json agent (`fixtures/fake_stream_json.py`), whose
//! `initialize` answer names its conversation, so it can be resumed.

mod support;

use duet_protocol::ids::SessionId;
use duet_protocol::rest::{HistoryLine, SessionInfo};
use duet_protocol::ws::ServerMessage;
use serde_json::{json, Value};
use support::{kind, Client, TestServer};

async fn server() -> TestServer {
    TestServer::with_profiles(vec![support::servers::resumable_profile()]).await
}

/// Attaches, waits for the handshake, asks `prompt` and waits for its result.
async fn converse(server: &TestServer, id: SessionId, prompt: &str) -> Client {
    let mut c = server.connect(id, None).await;
    c.until_event(|e| e["subtype"] == "session_start").await;
    c.submit(prompt).await;
    c.until_event(|e| kind(e) == "result").await;
    c
}

async fn end(server: &TestServer, c: &mut Client, id: SessionId) {
    assert!(server
        .delete(&format!("/api/sessions/{id}"))
        .await
        .status()
        .is_success());
    c.until(|m| matches!(m, ServerMessage::Exit(_))).await;
}

async fn resume(server: &TestServer, id: SessionId) -> SessionInfo {
    let resp = server
        .post_json(&format!("/api/sessions/{id}/resume"), json!({}))
        .await;
    assert_eq!(resp.status(), 201);
    let info: SessionInfo = resp.json().await.unwrap();
    assert_eq!(info.resumed_from, Some(id));
    info
}

async fn text(server: &TestServer, path: &str) -> String {
    let resp = server.get(path).send().await.unwrap();
    assert!(resp.status().is_success(), "{path}: {}", resp.status());
    resp.text().await.unwrap()
}

async fn history(server: &TestServer, id: SessionId) -> Vec<HistoryLine> {
    text(server, &format!("/api/sessions/{id}/history"))
        .await
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The prompts (`user` events with text) of a list of events.
fn prompts<'a>(events: impl Iterator<Item = &'a Value>) -> Vec<String> {
    events
        .filter(|e| kind(e) == "user")
        .filter_map(|e| e["message"]["content"][0]["text"].as_str())
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_of_resumptions_keeps_every_earlier_conversation_in_order() {
    let server = server().await;
    let a = server.create("fake").await;
    let mut c = converse(&server, a.id, "hello one").await;
    end(&server, &mut c, a.id).await;
    // A session that resumed nothing has an empty history.
    assert!(history(&server, a.id).await.is_empty());

    let b = resume(&server, a.id).await;
    let h = history(&server, b.id).await;
    assert!(h.iter().all(|l| l.session == a.id));
    assert_eq!(prompts(h.iter().map(|l| &l.event)), ["hello one"]);
    // Each line is the event as A recorded it, under A's seq.
    let a_events: Vec<Value> = text(&server, &format!("/api/sessions/{}/events", a.id))
        .await
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(h.len(), a_events.len());
    for (line, event) in h.iter().zip(&a_events) {
        assert_eq!(&line.event, event);
    }
    assert!(h.windows(2).all(|w| w[0].seq < w[1].seq));

    let mut c = converse(&server, b.id, "hello two").await;
    // B's own events are its own: numbered from 1, without A's.
    let b_events = text(&server, &format!("/api/sessions/{}/events", b.id)).await;
    assert!(!b_events.contains("hello one"), "{b_events}");
    end(&server, &mut c, b.id).await;

    let cc = resume(&server, b.id).await;
    // The earlier sessions may go; the history stays.
    assert_eq!(
        server
            .delete(&format!("/api/sessions/{}?purge=true", a.id))
            .await
            .status(),
        204
    );
    let h = history(&server, cc.id).await;
    let sessions: Vec<SessionId> = h.iter().map(|l| l.session).collect();
    let split = sessions.iter().position(|s| *s == b.id).unwrap();
    assert!(sessions[..split].iter().all(|s| *s == a.id));
    assert!(sessions[split..].iter().all(|s| *s == b.id));
    assert_eq!(
        prompts(h.iter().map(|l| &l.event)),
        ["hello one", "hello two"]
    );
    // And the resumed agent got its conversation id back.
    let mut c = converse(&server, cc.id, "hello three").await;
    let info = server.info(cc.id).await;
    assert_eq!(info.agent_session_id.as_deref(), Some("fake-session-1"));
    end(&server, &mut c, cc.id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purging_a_resumed_chain_leaves_nothing_behind() {
    let server = server().await;
    let a = server.create("fake").await;
    let mut c = converse(&server, a.id, "hello one").await;
    end(&server, &mut c, a.id).await;
    let b = resume(&server, a.id).await;
    let state = server.state_dir.path().join("state");
    let purge = |id: SessionId| {
        let path = format!("/api/sessions/{id}?purge=true");
        let server = &server;
        async move { server.delete(&path).await.status() }
    };
    // A goes first; B still works in A's work directory...
    assert_eq!(purge(a.id).await, 204);
    assert!(state.join(a.id.to_string()).join("work").is_dir());
    // ...and takes it along when it goes.
    assert_eq!(purge(b.id).await, 204);
    let left: Vec<_> = std::fs::read_dir(&state)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_str().is_some_and(|n| n.parse::<SessionId>().is_ok()))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A resume may name the new session's size (a browser sends its own
/// pane's); without one it starts at the ended session's. A size is checked
/// as a create's is, and nothing but a size is taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_starts_at_the_size_it_asks_for() {
    let server = server().await;
    let a = server.create("fake").await;
    let mut c = converse(&server, a.id, "hello one").await;
    end(&server, &mut c, a.id).await;
    let path = format!("/api/sessions/{}/resume", a.id);
    for bad in [
        json!({"cols": 0}),
        json!({"profile": "fake"}),
        json!([40, 20]),
    ] {
        let resp = server.post_json(&path, bad.clone()).await;
        assert_eq!(resp.status(), 400, "{bad}");
    }
    let resp = server
        .post_json(&path, json!({"cols": 41, "rows": 17}))
        .await;
    assert_eq!(resp.status(), 201);
    let b: SessionInfo = resp.json().await.unwrap();
    assert_eq!((b.cols, b.rows), (41, 17));
    // The program starts at it: the recording's header is the PTY's size
    // at the start.
    let cast = text(&server, &format!("/api/sessions/{}/recording", b.id)).await;
    let header: Value = serde_json::from_str(cast.lines().next().unwrap()).unwrap();
    assert_eq!(
        (header["width"].as_u64(), header["height"].as_u64()),
        (Some(41), Some(17))
    );
    let mut c = converse(&server, b.id, "hello two").await;
    end(&server, &mut c, b.id).await;
    // No body: the ended session's size.
    let c2 = resume(&server, b.id).await;
    assert_eq!((c2.cols, c2.rows), (41, 17));
}
