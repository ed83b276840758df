//! The audit trail: who submitted and decided what, over the WebSocket,
//! over REST and in the terminal, read back with
//! `GET /api/sessions/{id}/audit`; the server's own trail; and the client
//! address taken from `X-Forwarded-For` only behind a TLS proxy.

mod support;

use duet_protocol::rest::{Approval, ApprovalState, Decider};
use duet_protocol::ws::{ClientMessage, ServerMessage};
use serde_json::{json, Value};
use support::*;

async fn pending_approval(c: &mut Client) -> Approval {
    match c
        .until(|m| matches!(m, ServerMessage::Approval(a) if a.state == ApprovalState::Pending))
        .await
    {
        ServerMessage::Approval(a) => a,
        _ => unreachable!(),
    }
}

async fn decided(c: &mut Client, request_id: &str) -> Approval {
    match c
        .until(|m| matches!(m, ServerMessage::Approval(a) if a.request_id == request_id && a.state != ApprovalState::Pending))
        .await
    {
        ServerMessage::Approval(a) => a,
        _ => unreachable!(),
    }
}

async fn audit(server: &TestServer, id: impl std::fmt::Display) -> Vec<Value> {
    let resp = server
        .get(&format!("/api/sessions/{id}/audit"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/x-ndjson");
    resp.text()
        .await
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l}: {e}")))
        .collect()
}

/// The one line of `kind` matching `pred`.
fn one<'a>(lines: &'a [Value], kind: &str, pred: impl Fn(&Value) -> bool) -> &'a Value {
    let found: Vec<&Value> = lines
        .iter()
        .filter(|l| l["kind"] == kind && pred(l))
        .collect();
    assert_eq!(found.len(), 1, "one {kind} line expected in {lines:#?}");
    found[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submits_and_decisions_are_recorded_with_who_and_what() {
    let server = TestServer::start().await;
    let s = server.create("demo").await;
    let mut c = server.connect(s.id, None).await;
    let client_id = match &c.texts[0] {
        ServerMessage::Hello(h) => h.client_id,
        other => panic!("{other:?}"),
    };

    // Over the WebSocket: submit, allow; a second answer is refused.
    c.submit("run echo one").await;
    let first = pending_approval(&mut c).await;
    for (id, allowed) in [("a1", true), ("a2", false)] {
        c.send(&ClientMessage::Approve {
            request_id: first.request_id.clone(),
            allowed: Some(allowed),
            option: None,
            id: Some(id.into()),
        })
        .await;
        c.until(|m| {
            matches!(m, ServerMessage::Ack { id: i, .. } | ServerMessage::Error { id: Some(i), .. } if i == id)
        })
        .await;
    }
    decided(&mut c, &first.request_id).await;

    // Over REST: submit, deny by option.
    let resp = server
        .post_json(
            &format!("/api/sessions/{}/submit", s.id),
            json!({"text": "run echo two"}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let second = pending_approval(&mut c).await;
    let deny = second
        .options
        .iter()
        .find(|o| !o.kind.allows())
        .unwrap()
        .id
        .clone();
    let resp = server
        .post_json(
            &format!("/api/sessions/{}/approvals/{}", s.id, second.request_id),
            json!({"option": deny}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    decided(&mut c, &second.request_id).await;

    // In the terminal.
    c.submit("run echo three").await;
    let third = pending_approval(&mut c).await;
    c.keys(b"y").await;
    let d = decided(&mut c, &third.request_id).await;
    assert_eq!(d.decided_by, Some(Decider::Terminal));

    // Abandoned: the session ends while a request is pending.
    c.submit("run echo four").await;
    let fourth = pending_approval(&mut c).await;
    let resp = server.delete(&format!("/api/sessions/{}", s.id)).await;
    assert_eq!(resp.status(), 200);

    let lines = audit(&server, s.id).await;
    for l in &lines {
        assert_eq!(l["session"], json!(s.id));
        assert!(l["ts"].as_u64().unwrap() >= s.created_at);
    }
    assert_eq!(lines[0]["kind"], "session_create");
    assert_eq!(lines[0]["profile"], "demo");
    assert_eq!(lines[0]["who"]["principal"], "token");
    assert_eq!(lines.last().unwrap()["kind"], "session_end");
    assert!(lines.last().unwrap()["exit"].is_object());

    let ws_submit = one(&lines, "submit", |l| l["text"] == "run echo one");
    assert_eq!(ws_submit["who"]["principal"], "token");
    assert_eq!(ws_submit["who"]["name"], "owner");
    assert_eq!(ws_submit["who"]["role"], "owner");
    assert_eq!(ws_submit["who"]["client"], json!(client_id));
    assert_eq!(ws_submit["who"]["remote"], "127.0.0.1");
    assert_eq!(ws_submit["bytes"], 12);

    let allowed = one(&lines, "approval", |l| {
        l["request_id"] == json!(first.request_id) && l["outcome"] == "allowed"
    });
    assert_eq!(allowed["decided_by"], "client");
    assert_eq!(allowed["tool"], json!(first.tool_name));
    assert_eq!(allowed["option"], "allow");
    assert_eq!(allowed["who"]["client"], json!(client_id));
    assert_eq!(allowed["who"]["remote"], "127.0.0.1");
    let late = one(&lines, "approval", |l| {
        l["request_id"] == json!(first.request_id) && l["outcome"] == "refused"
    });
    assert_eq!(late["error"], "already_resolved");
    assert_eq!(late["option"], json!({"allowed": false}));

    let rest_submit = one(&lines, "submit", |l| l["text"] == "run echo two");
    assert_eq!(rest_submit["who"]["client"], Value::Null);
    assert_eq!(rest_submit["who"]["remote"], "127.0.0.1");
    let denied = one(&lines, "approval", |l| {
        l["request_id"] == json!(second.request_id)
    });
    assert_eq!(denied["outcome"], "denied");
    assert_eq!(denied["decided_by"], "client");
    assert_eq!(denied["option"], json!(deny));
    assert_eq!(denied["who"]["principal"], "token");

    let terminal = one(&lines, "approval", |l| {
        l["request_id"] == json!(third.request_id)
    });
    assert_eq!(terminal["outcome"], "allowed");
    assert_eq!(terminal["decided_by"], "terminal");
    assert_eq!(terminal["who"], Value::Null);
    // Typed by this client: whoever sent the keys is named.
    assert_eq!(terminal["keys_from"]["client"], json!(client_id));
    assert_eq!(terminal["keys_from"]["role"], "owner");

    let abandoned = one(&lines, "approval", |l| {
        l["request_id"] == json!(fourth.request_id)
    });
    assert_eq!(abandoned["outcome"], "abandoned");
    assert_eq!(abandoned["decided_by"], Value::Null);
    for r in [&first, &second, &third, &fourth] {
        let req = one(&lines, "approval_request", |l| {
            l["request_id"] == json!(r.request_id)
        });
        assert_eq!(req["tool"], json!(r.tool_name));
    }
    one(&lines, "session_delete", |l| l["purge"] == false);

    // The server's trail has the session's beginning and end.
    let server_trail =
        std::fs::read_to_string(server.state_dir.path().join("state/audit.jsonl")).unwrap();
    let kinds: Vec<String> = server_trail
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(kinds, ["session_create", "session_delete", "session_end"]);
    assert!(server_trail.lines().all(|l| !l.contains("run echo")));

    // The trail is in the session directory: it lives as long as the
    // transcript, and it outlives a restart of duet.
    let file = server
        .state_dir
        .path()
        .join(format!("state/{}/audit.jsonl", s.id));
    assert!(std::fs::metadata(&file).is_ok());
}

/// Submits with `X-Forwarded-For` and returns the `remote` and `proxy` the
/// audit trail recorded.
async fn recorded_address(server: &TestServer) -> (Value, Value) {
    let s = server.create("demo").await;
    let resp = server
        .post(&format!("/api/sessions/{}/submit", s.id))
        .header("x-forwarded-for", "198.51.100.1, 203.0.113.7")
        .json(&json!({"text": "hello"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let lines = audit(server, s.id).await;
    let submit = one(&lines, "submit", |_| true);
    (
        submit["who"]["remote"].clone(),
        submit["who"]["proxy"].clone(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_for_counts_only_behind_a_tls_proxy() {
    let direct = TestServer::start().await;
    assert_eq!(
        recorded_address(&direct).await,
        (json!("127.0.0.1"), Value::Null),
        "a client cannot choose the address it is recorded under"
    );
    let proxied = TestServer::start_with(|o| o.behind_tls_proxy = true).await;
    assert_eq!(
        recorded_address(&proxied).await,
        (json!("203.0.113.7"), json!("127.0.0.1")),
        "behind the proxy: the address the proxy appended, and the proxy"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_of_an_unknown_session_is_not_found() {
    let server = TestServer::start().await;
    let resp = server
        .get(&format!("/api/sessions/{}/audit", uuid::Uuid::new_v4()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    let resp = server
        .http
        .get(server.url(&format!("/api/sessions/{}/audit", uuid::Uuid::new_v4())))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_trail_outlives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let first = TestServer::start_with(|o| o.state_dir = state.clone()).await;
    let s = first.create("demo").await;
    first.shutdown().await;
    // A new duet over the same state directory lists the ended session
    // (see restart.rs) and its trail, kept for the retention time.
    let second = TestServer::start_with(|o| o.state_dir = state.clone()).await;
    let info = second.info(s.id).await;
    assert_eq!(info.status, duet_protocol::rest::SessionStatus::Exited);
    let kinds: Vec<Value> = audit(&second, s.id)
        .await
        .into_iter()
        .map(|l| l["kind"].clone())
        .collect();
    assert_eq!(kinds, [json!("session_create"), json!("session_end")]);
}

/// The lines of the server's own trail.
fn server_trail(server: &TestServer) -> Vec<Value> {
    std::fs::read_to_string(server.state_dir.path().join("state/audit.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_is_recorded_with_who_and_where_from() {
    let server = TestServer::with_profiles(vec![servers::resumable_profile()]).await;
    let a = server.create("fake").await;
    let mut c = server.connect(a.id, None).await;
    c.until_event(|e| e["subtype"] == "session_start").await;
    assert_eq!(
        server
            .delete(&format!("/api/sessions/{}", a.id))
            .await
            .status(),
        200
    );
    let resp = server
        .post_json(&format!("/api/sessions/{}/resume", a.id), json!({}))
        .await;
    assert_eq!(resp.status(), 201);
    let r: duet_protocol::rest::SessionInfo = resp.json().await.unwrap();

    // The new session's trail starts like any other's, and says what it
    // continues.
    let lines = audit(&server, r.id).await;
    assert_eq!(lines[0]["kind"], "session_create", "{lines:#?}");
    assert_eq!(lines[0]["session"], json!(r.id));
    assert_eq!(lines[0]["resumed_from"], json!(a.id));
    assert_eq!(lines[0]["profile"], "fake");
    assert_eq!(lines[0]["who"]["principal"], "token");
    assert_eq!(lines[0]["who"]["name"], "owner");
    assert_eq!(lines[0]["who"]["remote"], "127.0.0.1");
    // The ended session's trail says where it went on.
    let earlier = audit(&server, a.id).await;
    let resumed = one(&earlier, "session_resume", |_| true);
    assert_eq!(resumed["resumed_as"], json!(r.id));
    assert_eq!(resumed["who"]["name"], "owner");
    assert_eq!(
        one(&earlier, "session_create", |_| true)["resumed_from"],
        Value::Null
    );
    // The server's trail has the new session's start.
    let trail = server_trail(&server);
    let created = one(&trail, "session_create", |l| l["session"] == json!(r.id));
    assert_eq!(created["resumed_from"], json!(a.id));
    assert_eq!(created["who"]["name"], "owner");
}
