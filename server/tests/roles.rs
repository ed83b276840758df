//! Roles: every REST route and WebSocket message checks the principal's
//! role; who is connected is announced; named tokens from the config (hash
//! only); the audit names who acted. Share links are in `shares.rs`.

mod support;

use duet_protocol::rest::Role;
use duet_protocol::ws::{ClientMessage, ErrorCode, ServerMessage};
use duet_server::config::{mint_token, ConfigFile};
use serde_json::{json, Value};
use support::servers::server_with_roles;
use support::*;

fn can(role: Role, allowed: &[Role]) -> bool {
    allowed.contains(&role)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rest_route_checks_the_role() {
    use Role::*;
    let (server, tokens) = server_with_roles().await;
    let s = server.create("fake").await;
    let victim = server.create("fake").await;
    let id = s.id;
    let all = [Owner, Driver, Approver, Viewer];
    // (method, path, body, roles allowed). Destructive routes last.
    let routes: Vec<(&str, String, Value, Vec<Role>)> = vec![
        ("GET", "/api/me".into(), Value::Null, all.to_vec()),
        ("GET", "/api/profiles".into(), Value::Null, all.to_vec()),
        ("GET", "/api/sessions".into(), Value::Null, all.to_vec()),
        (
            "GET",
            format!("/api/sessions/{id}"),
            Value::Null,
            all.to_vec(),
        ),
        (
            "GET",
            format!("/api/sessions/{id}/events"),
            Value::Null,
            all.to_vec(),
        ),
        (
            "GET",
            format!("/api/sessions/{id}/screen"),
            Value::Null,
            all.to_vec(),
        ),
        (
            "GET",
            format!("/api/sessions/{id}/approvals"),
            Value::Null,
            all.to_vec(),
        ),
        (
            "GET",
            format!("/api/sessions/{id}/recording"),
            Value::Null,
            all.to_vec(),
        ),
        (
            "GET",
            format!("/api/sessions/{id}/usage"),
            Value::Null,
            all.to_vec(),
        ),
        (
            "PUT",
            format!("/api/sessions/{id}/budget"),
            json!({"turns": 10}),
            vec![Owner],
        ),
        (
            "GET",
            format!("/api/sessions/{id}/audit"),
            Value::Null,
            vec![Owner],
        ),
        ("GET", "/metrics".into(), Value::Null, vec![Owner]),
        // Web Push: every role registers its own devices.
        ("GET", "/api/push/key".into(), Value::Null, all.to_vec()),
        (
            "GET",
            "/api/push/subscriptions".into(),
            Value::Null,
            all.to_vec(),
        ),
        (
            "POST",
            "/api/push/subscriptions".into(),
            json!({"endpoint": "https://push.example/x", "keys": {"p256dh": "x", "auth": "y"}}),
            all.to_vec(),
        ),
        (
            "PUT",
            "/api/push/subscriptions/mute".into(),
            json!({"endpoint": "https://push.example/x", "session": id, "muted": true}),
            all.to_vec(),
        ),
        (
            "DELETE",
            "/api/push/subscriptions".into(),
            json!({"endpoint": "https://push.example/x"}),
            all.to_vec(),
        ),
        (
            "POST",
            format!("/api/sessions/{id}/mode"),
            json!({"mode": "plan"}),
            vec![Owner, Driver],
        ),
        (
            "POST",
            format!("/api/sessions/{id}/submit"),
            json!({"text": "hi"}),
            vec![Owner, Driver],
        ),
        (
            "POST",
            format!("/api/sessions/{id}/approvals/nope"),
            json!({"allowed": true}),
            vec![Owner, Approver],
        ),
        (
            "POST",
            format!("/api/sessions/{id}/resume"),
            Value::Null,
            vec![Owner],
        ),
        (
            "GET",
            format!("/api/sessions/{id}/shares"),
            Value::Null,
            vec![Owner],
        ),
        (
            "POST",
            format!("/api/sessions/{id}/shares"),
            json!({"role": "viewer", "expires_in": 60}),
            vec![Owner],
        ),
        (
            "POST",
            "/api/sessions".into(),
            json!({"profile": "fake"}),
            vec![Owner],
        ),
        (
            "DELETE",
            format!("/api/sessions/{}", victim.id),
            Value::Null,
            vec![Owner],
        ),
    ];
    for (role, token) in tokens.iter().rev() {
        for (method, path, body, allowed) in &routes {
            let mut req = server
                .http
                .request(method.parse().unwrap(), server.url(path))
                .bearer_auth(token);
            if !body.is_null() {
                req = req.json(body);
            }
            let resp = req.send().await.unwrap();
            let status = resp.status();
            let text = resp.text().await.unwrap();
            if can(*role, allowed) {
                assert_ne!(status, 403, "{role:?} {method} {path}: {text}");
            } else {
                assert_eq!(status, 403, "{role:?} {method} {path}: {text}");
                let v: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(v["error"]["code"], "forbidden");
                let needed = if allowed.len() == 1 {
                    "owner"
                } else {
                    allowed[1].as_str()
                };
                let msg = v["error"]["message"].as_str().unwrap();
                assert!(msg.contains(needed) && msg.contains(role.as_str()), "{msg}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_websocket_message_checks_the_role() {
    use Role::*;
    let (server, tokens) = server_with_roles().await;
    let s = server.create("fake").await;
    let table: Vec<(ClientMessage, Vec<Role>)> = vec![
        (
            ClientMessage::Submit {
                text: "hi".into(),
                id: Some("m".into()),
            },
            vec![Owner, Driver],
        ),
        (
            ClientMessage::Resize {
                cols: 90,
                rows: 30,
                id: Some("m".into()),
            },
            vec![Owner, Driver],
        ),
        (
            ClientMessage::Cancel {
                id: Some("m".into()),
            },
            vec![Owner, Driver],
        ),
        (
            ClientMessage::Approve {
                request_id: "nope".into(),
                allowed: Some(true),
                option: None,
                id: Some("m".into()),
            },
            vec![Owner, Approver],
        ),
        (
            ClientMessage::Pause {
                id: Some("m".into()),
            },
            vec![Owner, Driver, Approver, Viewer],
        ),
        (
            ClientMessage::Resume {
                id: Some("m".into()),
            },
            vec![Owner, Driver, Approver, Viewer],
        ),
        (
            ClientMessage::Ping {
                id: Some("m".into()),
            },
            vec![Owner, Driver, Approver, Viewer],
        ),
    ];
    for (role, token) in &tokens {
        let mut c = server.connect_as(s.id, None, token).await;
        match &c.texts[0] {
            ServerMessage::Hello(h) => assert_eq!(h.role, *role),
            other => panic!("{other:?}"),
        }
        for (msg, allowed) in &table {
            c.send(msg).await;
            let reply = c
                .until(|m| {
                    matches!(m, ServerMessage::Ack { id, .. } if id == "m")
                        || matches!(m, ServerMessage::Error { id: Some(id), .. } if id == "m")
                        || matches!(m, ServerMessage::Pong { id: Some(id) } if id == "m")
                })
                .await;
            let forbidden = matches!(
                reply,
                ServerMessage::Error {
                    code: ErrorCode::Forbidden,
                    ..
                }
            );
            assert_eq!(
                forbidden,
                !can(*role, allowed),
                "{role:?} {msg:?}: {reply:?}"
            );
        }
        // Keystrokes: refused once, not once per frame; the socket stays up.
        for _ in 0..20 {
            c.keys(b"x").await;
        }
        c.send(&ClientMessage::Ping {
            id: Some("after".into()),
        })
        .await;
        c.until(|m| matches!(m, ServerMessage::Pong { id: Some(id) } if id == "after"))
            .await;
        let refusals = c
            .texts
            .iter()
            .filter(|m| {
                matches!(
                    m,
                    ServerMessage::Error {
                        code: ErrorCode::Forbidden,
                        id: None,
                        ..
                    }
                )
            })
            .count();
        let expect = usize::from(!can(*role, &[Owner, Driver]));
        assert_eq!(refusals, expect, "{role:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn who_is_connected_is_announced_and_listed() {
    let (server, tokens) = server_with_roles().await;
    let s = server.create("fake").await;
    let mut owner = server.connect(s.id, None).await;
    let viewer = server.connect_as(s.id, None, &tokens[3].1).await;
    match &viewer.texts[0] {
        ServerMessage::Hello(h) => {
            assert_eq!((h.role, h.principal.as_str()), (Role::Viewer, "vw"));
            assert_eq!(h.clients.len(), 2);
        }
        other => panic!("{other:?}"),
    }
    owner
        .until(|m| matches!(m, ServerMessage::Clients { clients } if clients.len() == 2))
        .await;
    let info = server.info(s.id).await;
    let mut names: Vec<_> = info
        .connected
        .iter()
        .map(|c| (c.name.clone(), c.role))
        .collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        names,
        [
            ("owner".to_string(), Role::Owner),
            ("vw".to_string(), Role::Viewer)
        ]
    );
    drop(viewer);
    owner
        .until(|m| matches!(m, ServerMessage::Clients { clients } if clients.len() == 1))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_named_token_from_the_config_works_and_is_stored_hashed() {
    let (token, snippet) = mint_token("ci", Role::Driver).unwrap();
    assert!(!snippet.contains(&token), "{snippet}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("duet.toml");
    std::fs::write(&path, &snippet).unwrap();
    let file = ConfigFile::read(&path).unwrap();
    let named = file.named_tokens().unwrap();
    assert_eq!(
        (named[0].name.as_str(), named[0].role),
        ("ci", Role::Driver)
    );
    assert!(!std::fs::read_to_string(&path).unwrap().contains(&token));
    // A plain token in the config is refused.
    let plain = format!("[[token]]\nname = \"ci\"\nrole = \"driver\"\ntoken = \"{token}\"\n");
    assert!(toml::from_str::<ConfigFile>(&plain).is_err());
    let server = TestServer::start_with(|o| o.tokens = named).await;
    let s = server.create("fake").await;
    let mut c = server.connect_as(s.id, None, &token).await;
    match &c.texts[0] {
        ServerMessage::Hello(h) => assert_eq!((h.role, h.principal.as_str()), (Role::Driver, "ci")),
        other => panic!("{other:?}"),
    }
    assert!(matches!(c.submit("hello").await, ServerMessage::Ack { .. }));
    // Logging in with it gives a cookie with that token, not the owner's.
    let login = server
        .http
        .post(server.url("/api/login"))
        .json(&json!({"token": token}))
        .send()
        .await
        .unwrap();
    let cookie = login.headers()["set-cookie"].to_str().unwrap();
    assert!(
        cookie.contains(&token) && !cookie.contains(TOKEN),
        "{cookie}"
    );
    // The hash alone is not a token.
    let hash = snippet.split('"').rev().nth(1).unwrap().to_string();
    let wrong = server
        .http
        .get(server.url("/api/sessions"))
        .bearer_auth(hash)
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_trail_names_the_token_and_role_that_acted() {
    let (server, tokens) = server_with_roles().await;
    let token = |r: Role| tokens.iter().find(|(x, _)| *x == r).unwrap().1.clone();
    let s = server.create("demo").await;
    let mut watcher = server.connect(s.id, None).await;
    let resp = server
        .http
        .post(server.url(&format!("/api/sessions/{}/submit", s.id)))
        .bearer_auth(token(Role::Driver))
        .json(&json!({"text": "run echo named"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let pending = match watcher
        .until(|m| matches!(m, ServerMessage::Approval(a) if a.state == duet_protocol::rest::ApprovalState::Pending))
        .await
    {
        ServerMessage::Approval(a) => a,
        _ => unreachable!(),
    };
    let resp = server
        .http
        .post(server.url(&format!(
            "/api/sessions/{}/approvals/{}",
            s.id, pending.request_id
        )))
        .bearer_auth(token(Role::Approver))
        .json(&json!({"allowed": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    // Every tab's card can say who decided.
    let decided: Value = resp.json().await.unwrap();
    assert_eq!(decided["decided_by_name"], "apr");
    let seen = watcher
        .until(|m| matches!(m, ServerMessage::Approval(a) if a.request_id == pending.request_id && a.state != duet_protocol::rest::ApprovalState::Pending))
        .await;
    match seen {
        ServerMessage::Approval(a) => assert_eq!(a.decided_by_name.as_deref(), Some("apr")),
        _ => unreachable!(),
    }
    let lines: Vec<Value> = server
        .get(&format!("/api/sessions/{}/audit", s.id))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let submit = lines
        .iter()
        .find(|l| l["kind"] == "submit" && l["text"] == "run echo named")
        .expect("the submit is audited");
    assert_eq!(submit["who"]["principal"], "named");
    assert_eq!(submit["who"]["name"], "drv");
    assert_eq!(submit["who"]["role"], "driver");
    let decision = lines
        .iter()
        .find(|l| l["kind"] == "approval" && l["outcome"] == "allowed")
        .expect("the decision is audited");
    assert_eq!(decision["who"]["name"], "apr");
    assert_eq!(decision["who"]["role"], "approver");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_says_what_was_refused() {
    let (server, tokens) = server_with_roles().await;
    let s = server.create("fake").await;
    let audit = format!("/api/sessions/{}/audit", s.id);
    let rename = format!("/api/sessions/{}", s.id);
    for (role, token) in tokens.iter().filter(|(r, _)| *r != Role::Owner) {
        for (method, path, what) in [
            ("GET", audit.as_str(), "reading a session's audit trail"),
            ("GET", "/metrics", "reading the server's metrics"),
            ("PATCH", rename.as_str(), "naming"),
        ] {
            let resp = server
                .http
                .request(method.parse().unwrap(), server.url(path))
                .bearer_auth(token)
                .json(&json!({"name": "x"}))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 403, "{role:?} {method} {path}");
            let v: Value = resp.json().await.unwrap();
            let msg = v["error"]["message"].as_str().unwrap();
            assert!(
                msg.contains(what) && msg.contains("owner") && msg.contains(role.as_str()),
                "{role:?} {method} {path}: {msg}"
            );
        }
    }
}
