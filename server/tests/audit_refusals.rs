//! Refusals for the caller's role are audited like other refusals: a 403
//! on a session's route (REST or a WebSocket message) is a line in that
//! session's trail, one on a server-wide route a line in the server's,
//! each with who, what and `outcome: "refused"`. A principal repeating a
//! refused request writes a bounded number of lines; requests without a
//! valid credential (401) write none.

mod support;

use duet_protocol::rest::Role;
use duet_protocol::ws::{ClientMessage, ErrorCode, ServerMessage};
use serde_json::{json, Value};
use support::servers::server_with_roles;
use support::*;

/// Refusal lines per principal and file per minute (observe/refusals.rs).
const LINES_PER_WINDOW: usize = 20;

async fn audit(server: &TestServer, id: impl std::fmt::Display) -> Vec<Value> {
    server
        .text(&format!("/api/sessions/{id}/audit"))
        .await
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The refusal lines of `kind` by principal `name`.
fn refusals<'a>(lines: &'a [Value], kind: &str, name: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["kind"] == kind && l["who"]["name"] == name && l["outcome"] == "refused")
        .collect()
}

/// Checks the fields every refusal for a role has.
fn check(l: &Value, role: Role, action: &str) {
    assert_eq!(l["error"], "forbidden", "{l}");
    assert_eq!(l["action"], action, "{l}");
    assert_eq!(l["who"]["principal"], "named", "{l}");
    assert_eq!(l["who"]["role"], role.as_str(), "{l}");
    assert_eq!(l["who"]["remote"], "127.0.0.1", "{l}");
}

/// The one refusal of `kind` by `name`, checked.
fn refusal<'a>(lines: &'a [Value], kind: &str, name: &str, role: Role, action: &str) -> &'a Value {
    let found = refusals(lines, kind, name);
    assert_eq!(found.len(), 1, "one {kind} refusal of {name} in {lines:#?}");
    check(found[0], role, action);
    found[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_for_the_role_are_audited_where_they_happened() {
    let (server, tokens) = server_with_roles().await;
    let token = |role: Role| tokens.iter().find(|(r, _)| *r == role).unwrap().1.clone();
    let s = server.create("fake").await;
    let id = s.id;
    use Role::*;
    // (method, path, body, refused role).
    let refused: Vec<(&str, String, Value, Role)> = vec![
        (
            "POST",
            format!("/api/sessions/{id}/approvals/r1"),
            json!({"allowed": true}),
            Driver,
        ),
        (
            "POST",
            format!("/api/sessions/{id}/submit"),
            json!({"text": "hi"}),
            Viewer,
        ),
        (
            "POST",
            format!("/api/sessions/{id}/mode"),
            json!({"mode": "plan"}),
            Approver,
        ),
        (
            "POST",
            format!("/api/sessions/{id}/model"),
            json!({"model": "large"}),
            Viewer,
        ),
        ("DELETE", format!("/api/sessions/{id}"), Value::Null, Viewer),
        (
            "POST",
            format!("/api/sessions/{id}/resume"),
            Value::Null,
            Driver,
        ),
        (
            "PATCH",
            format!("/api/sessions/{id}"),
            json!({"name": "mine"}),
            Approver,
        ),
        (
            "POST",
            format!("/api/sessions/{id}/shares"),
            json!({"role": "viewer", "expires_in": 60}),
            Driver,
        ),
        (
            "GET",
            format!("/api/sessions/{id}/audit"),
            Value::Null,
            Viewer,
        ),
        (
            "POST",
            "/api/sessions".into(),
            json!({"profile": "fake"}),
            Viewer,
        ),
        ("GET", "/metrics".into(), Value::Null, Driver),
    ];
    for (method, path, body, role) in &refused {
        let mut req = server
            .http
            .request(method.parse().unwrap(), server.url(path))
            .bearer_auth(token(*role));
        if !body.is_null() {
            req = req.json(body);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 403, "{method} {path} as {role:?}");
    }

    // Over the WebSocket: a message and keystrokes.
    let mut c = server.connect_as(id, None, &token(Viewer)).await;
    let client_id = match &c.texts[0] {
        ServerMessage::Hello(h) => h.client_id,
        other => panic!("{other:?}"),
    };
    c.send(&ClientMessage::Submit {
        text: "hi".into(),
        id: Some("m1".into()),
    })
    .await;
    c.until(|m| matches!(m, ServerMessage::Error { code: ErrorCode::Forbidden, id: Some(i), .. } if i == "m1"))
        .await;
    c.keys(b"x").await;
    c.until(|m| {
        matches!(
            m,
            ServerMessage::Error {
                code: ErrorCode::Forbidden,
                id: None,
                ..
            }
        )
    })
    .await;

    // Without a valid credential: 401, and nothing written.
    for _ in 0..5 {
        let resp = server
            .http
            .post(server.url(&format!("/api/sessions/{id}/submit")))
            .bearer_auth("not-a-token-at-all")
            .json(&json!({"text": "hi"}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 401);
    }

    let lines = audit(&server, id).await;
    let approval = refusal(&lines, "approval", "drv", Driver, "approve");
    assert_eq!(approval["session"], json!(id));
    refusal(&lines, "set_mode", "apr", Approver, "drive");
    refusal(&lines, "set_model", "vw", Viewer, "drive");
    refusal(&lines, "session_delete", "vw", Viewer, "manage");
    refusal(&lines, "session_resume", "drv", Driver, "manage");
    refusal(&lines, "session_rename", "apr", Approver, "manage");
    refusal(&lines, "share_create", "drv", Driver, "manage");
    refusal(&lines, "audit_read", "vw", Viewer, "audit");
    let submits = refusals(&lines, "submit", "vw");
    assert_eq!(submits.len(), 2, "REST and WebSocket: {submits:#?}");
    for l in &submits {
        check(l, Viewer, "drive");
    }
    assert_eq!(submits[0]["who"]["client"], Value::Null);
    assert_eq!(submits[1]["who"]["client"], json!(client_id));
    let keys = refusal(&lines, "keys", "vw", Viewer, "drive");
    assert_eq!(keys["who"]["client"], json!(client_id));
    // Nothing else: the refusals did not act, and the 401s left no line.
    let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.len(), 12, "{kinds:?}");
    assert_eq!(kinds[0], "session_create");

    // Server-wide routes: the server's trail.
    let trail: Vec<Value> =
        std::fs::read_to_string(server.state_dir.path().join("state/audit.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let create = refusal(&trail, "session_create", "vw", Viewer, "manage");
    assert_eq!(create["session"], Value::Null);
    refusal(&trail, "metrics", "drv", Driver, "metrics");
    assert_eq!(trail.len(), 3, "{trail:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_principal_repeating_a_refused_request_writes_a_bounded_trail() {
    let (server, tokens) = server_with_roles().await;
    let viewer = &tokens.iter().find(|(r, _)| *r == Role::Viewer).unwrap().1;
    let driver = &tokens.iter().find(|(r, _)| *r == Role::Driver).unwrap().1;
    let s = server.create("fake").await;
    let refuse = |token: &str| {
        server
            .http
            .post(server.url(&format!("/api/sessions/{}/submit", s.id)))
            .bearer_auth(token)
            .json(&json!({"text": "hi"}))
            .send()
    };
    for _ in 0..3 * LINES_PER_WINDOW {
        assert_eq!(refuse(viewer).await.unwrap().status(), 403);
    }
    // Another principal is not held back by the first one's flood.
    let resp = server
        .post_json(
            &format!("/api/sessions/{}/approvals/r1", s.id),
            json!({"allowed": true}),
        )
        .await;
    assert_eq!(resp.status(), 404, "the owner may; r1 is unknown");
    let resp = server
        .http
        .post(server.url(&format!("/api/sessions/{}/approvals/r1", s.id)))
        .bearer_auth(driver)
        .json(&json!({"allowed": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);

    let lines = audit(&server, s.id).await;
    assert_eq!(refusals(&lines, "submit", "vw").len(), LINES_PER_WINDOW);
    assert_eq!(refusals(&lines, "approval", "drv").len(), 1);
}
