//! Deciding from a notification (`POST /api/push/decide`): an approval's
//! push to a principal that may approve carries Allow, Deny and a
//! capability; the capability decides that approval once, as that
//! principal, for a few minutes, and nothing else. The other devices'
//! notifications are withdrawn; the audit trail and the metrics say it came
//! from a notification. (The service worker's side: web/e2e/push-decide.spec.ts.)

#[path = "push/service.rs"]
mod service;
mod support;

use std::time::Duration;

use duet_protocol::push::{PushKey, PushKind, PushPayload, PushShow};
use duet_protocol::rest::{Approval, ApprovalState, Decider, Role, Share};
use duet_server::config::ConfigFile;
use serde_json::{json, Value};
use service::{Device, PushService};
use support::*;

async fn subscribe(server: &TestServer, token: &str, device: &Device) {
    let resp = server
        .http
        .post(server.url("/api/push/subscriptions"))
        .bearer_auth(token)
        .json(&device.json())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
}

/// The next push to device `name`: one that came while the test waited
/// for another device first, else the next to arrive.
async fn next_for(service: &mut PushService, name: &str) -> service::Received {
    match service.seen.iter().position(|r| r.name == name) {
        Some(i) => service.seen.remove(i),
        None => service.next_for(name).await,
    }
}

/// The next approval notification `device` (named `name`) gets.
async fn next_approval(
    service: &mut PushService,
    key: &str,
    name: &str,
    device: &Device,
) -> PushShow {
    loop {
        let r = next_for(service, name).await;
        if let PushPayload::Show(n) = device.open(&r, key, &service.origin) {
            if n.kind == PushKind::Approval {
                return n;
            }
        }
    }
}

/// Posts a notification's answer, with no credential but the capability.
async fn decide(server: &TestServer, body: Value) -> reqwest::Response {
    server
        .http
        .post(server.url("/api/push/decide"))
        .json(&body)
        .send()
        .await
        .unwrap()
}

fn capability(n: &PushShow) -> String {
    n.decide.as_ref().expect("buttons").capability.clone()
}

async fn submit(server: &TestServer, id: impl std::fmt::Display, text: &str) {
    let resp = server
        .post_json(&format!("/api/sessions/{id}/submit"), json!({"text": text}))
        .await;
    assert!(resp.status().is_success());
}

/// A server that pushes to the test's service, with one named token per
/// role (`apr`, `vw`); returns it and those tokens.
/// A server with push on, and the tokens of an approver, a viewer and a driver.
async fn server(lifetime: Duration) -> (TestServer, String, String, String) {
    let mut config = String::new();
    let mut tokens = Vec::new();
    for (name, role) in [
        ("apr", Role::Approver),
        ("vw", Role::Viewer),
        ("drv", Role::Driver),
    ] {
        let (token, snippet) = duet_server::config::mint_token(name, role).unwrap();
        config.push_str(&snippet);
        tokens.push(token);
    }
    let named = toml::from_str::<ConfigFile>(&config)
        .unwrap()
        .named_tokens()
        .unwrap();
    let server = TestServer::start_with(move |o| {
        o.tokens = named;
        o.push_insecure_loopback = true;
        o.push_action_lifetime = lifetime;
    })
    .await;
    let driver = tokens.pop().unwrap();
    let viewer = tokens.pop().unwrap();
    let approver = tokens.pop().unwrap();
    (server, approver, viewer, driver)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capability_decides_its_approval_once() {
    let mut service = PushService::start().await;
    let (server, _, _, _) = server(Duration::from_secs(600)).await;
    let key = server.json::<PushKey>("/api/push/key").await.public_key;
    let phone = Device::new(&service, "phone");
    let tablet = Device::new(&service, "tablet");
    let watch = Device::new(&service, "watch");
    for d in [&phone, &tablet, &watch] {
        subscribe(&server, TOKEN, d).await;
    }
    let s = server.create("demo").await;
    let mut client = server.connect(s.id, None).await;
    submit(&server, s.id, "run echo from-the-phone").await;

    let n = next_approval(&mut service, &key, "phone", &phone).await;
    let on_tablet = next_approval(&mut service, &key, "tablet", &tablet).await;
    let on_watch = next_approval(&mut service, &key, "watch", &watch).await;
    let actions: Vec<(&str, &str)> = n
        .actions
        .iter()
        .map(|a| (a.action.as_str(), a.title.as_str()))
        .collect();
    assert_eq!(actions, [("allow", "Allow"), ("deny", "Deny")]);
    assert_eq!(n.body, "echo from-the-phone");
    let rid = n.request_id.clone().unwrap();
    let decide_to = n.decide.as_ref().unwrap();
    assert_eq!(decide_to.url, "./api/push/decide");
    assert_eq!(decide_to.capability.len(), 64);
    // Each device its own secret.
    assert_ne!(capability(&on_tablet), capability(&n));

    // Sent for another approval: refused, and spent.
    let misused =
        json!({"capability": capability(&on_watch), "allowed": true, "request_id": "other"});
    assert_eq!(decide(&server, misused.clone()).await.status(), 403);
    assert_eq!(decide(&server, misused).await.status(), 401);

    // Allow, as the service worker would: no cookie, no token.
    let resp = decide(
        &server,
        json!({"capability": capability(&n), "allowed": true, "request_id": rid}),
    )
    .await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    let a: Approval = resp.json().await.unwrap();
    assert_eq!(
        (a.state, a.decided_by, a.decided_by_name.as_deref()),
        (
            ApprovalState::Allowed,
            Some(Decider::Notification),
            Some("owner")
        )
    );
    // The tool runs.
    client
        .until_event(|e| {
            e["type"] == "user"
                && e.to_string().contains("from-the-phone")
                && e.to_string().contains("tool_result")
        })
        .await;
    // Twice: refused.
    let resp = decide(
        &server,
        json!({"capability": capability(&n), "allowed": false}),
    )
    .await;
    assert_eq!(resp.status(), 401);
    // The tablet's notification is withdrawn, and its secret, never used,
    // is worthless now.
    loop {
        let r = next_for(&mut service, "tablet").await;
        if let PushPayload::Close { close } = tablet.open(&r, &key, &service.origin) {
            assert_eq!(close, n.tag);
            break;
        }
    }
    let resp = decide(
        &server,
        json!({"capability": capability(&on_tablet), "allowed": true}),
    )
    .await;
    assert_eq!(resp.status(), 401);

    // The trail and the metrics say where the decision came from.
    let audit = server.text(&format!("/api/sessions/{}/audit", s.id)).await;
    let line: Value = audit
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["kind"] == "approval" && l["outcome"] == "allowed")
        .unwrap();
    assert_eq!(line["decided_by"], "notification");
    assert_eq!(line["who"]["name"], "owner");
    let metrics = server.text("/metrics").await;
    assert!(
        metrics.contains(r#"duet_approvals_total{outcome="allowed",decided_by="notification"} 1"#),
        "{metrics}"
    );
    // The chat's word: an `approval` message decided by a notification.
    let msg = client
        .until(|m| matches!(m, duet_protocol::ws::ServerMessage::Approval(a) if a.state == ApprovalState::Allowed))
        .await;
    let duet_protocol::ws::ServerMessage::Approval(a) = msg else {
        unreachable!()
    };
    assert_eq!(a.decided_by, Some(Decider::Notification));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capability_expires() {
    let mut service = PushService::start().await;
    let (server, _, _, _) = server(Duration::ZERO).await;
    let key = server.json::<PushKey>("/api/push/key").await.public_key;
    let phone = Device::new(&service, "phone");
    subscribe(&server, TOKEN, &phone).await;
    let s = server.create("demo").await;
    submit(&server, s.id, "run echo too-late").await;
    let n = next_approval(&mut service, &key, "phone", &phone).await;
    let resp = decide(
        &server,
        json!({"capability": capability(&n), "allowed": true}),
    )
    .await;
    assert_eq!(resp.status(), 410);
    let body: Value = resp.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("expired"),
        "{body}"
    );
    let pending: Vec<Approval> = server
        .json(&format!("/api/sessions/{}/approvals", s.id))
        .await;
    assert_eq!(pending[0].state, ApprovalState::Pending);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_principals_that_may_approve_get_buttons() {
    let mut service = PushService::start().await;
    let (server, approver, viewer, driver) = server(Duration::from_secs(600)).await;
    let key = server.json::<PushKey>("/api/push/key").await.public_key;
    let apr = Device::new(&service, "apr");
    let vw = Device::new(&service, "vw");
    let drv = Device::new(&service, "drv");
    subscribe(&server, &approver, &apr).await;
    subscribe(&server, &viewer, &vw).await;
    subscribe(&server, &driver, &drv).await;
    let s = server.create("demo").await;
    submit(&server, s.id, "run echo who-may").await;
    // A viewer and a driver hear of it, with no buttons and no capability.
    for (name, device) in [("vw", &vw), ("drv", &drv)] {
        let seen = next_approval(&mut service, &key, name, device).await;
        assert!(seen.actions.is_empty() && seen.decide.is_none(), "{name}");
        assert_eq!(seen.body, "echo who-may", "{name}");
    }
    let n = next_approval(&mut service, &key, "apr", &apr).await;
    let resp = decide(
        &server,
        json!({"capability": capability(&n), "allowed": false}),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let a: Approval = resp.json().await.unwrap();
    assert_eq!(
        (a.state, a.decided_by_name.as_deref(), a.reason.as_deref()),
        (
            ApprovalState::Denied,
            Some("apr"),
            Some("Denied from a notification")
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_share_takes_its_capabilities_with_it() {
    let mut service = PushService::start().await;
    let (server, _, _, _) = server(Duration::from_secs(600)).await;
    let key = server.json::<PushKey>("/api/push/key").await.public_key;
    let s = server.create("demo").await;
    let share: Share = server
        .post_json(
            &format!("/api/sessions/{}/shares", s.id),
            json!({"role": "approver", "expires_in": 600}),
        )
        .await
        .json()
        .await
        .unwrap();
    let guest = Device::new(&service, "guest");
    subscribe(&server, &share_secret(&share), &guest).await;
    submit(&server, s.id, "run echo shared").await;
    let n = next_approval(&mut service, &key, "guest", &guest).await;
    assert_eq!(n.actions.len(), 2);
    let resp = server
        .delete(&format!("/api/sessions/{}/shares/{}", s.id, share.id))
        .await;
    assert_eq!(resp.status(), 204);
    let resp = decide(
        &server,
        json!({"capability": capability(&n), "allowed": true}),
    )
    .await;
    assert_eq!(resp.status(), 403);
    let pending: Vec<Approval> = server
        .json(&format!("/api/sessions/{}/approvals", s.id))
        .await;
    assert_eq!(pending[0].state, ApprovalState::Pending);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_origin_is_refused_and_guesses_are_throttled() {
    let mut service = PushService::start().await;
    let (server, _, _, _) = server(Duration::from_secs(600)).await;
    let key = server.json::<PushKey>("/api/push/key").await.public_key;
    let phone = Device::new(&service, "phone");
    subscribe(&server, TOKEN, &phone).await;
    let s = server.create("demo").await;
    submit(&server, s.id, "run echo cross-site").await;
    let n = next_approval(&mut service, &key, "phone", &phone).await;
    // Another site's page holding a capability still cannot use it.
    let resp = server
        .http
        .post(server.url("/api/push/decide"))
        .header("origin", "http://evil.example")
        .json(&json!({"capability": capability(&n), "allowed": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
    // Nothing was decided.
    let pending: Vec<Approval> = server
        .json(&format!("/api/sessions/{}/approvals", s.id))
        .await;
    assert_eq!(pending[0].state, ApprovalState::Pending);
    // Guessing: each wrong capability counts, as a wrong token does (and
    // the address is then refused for tokens too).
    let mut statuses = Vec::new();
    for i in 0..12 {
        let resp = decide(
            &server,
            json!({"capability": format!("{i:064x}"), "allowed": true}),
        )
        .await;
        statuses.push(resp.status().as_u16());
    }
    assert_eq!(statuses[0], 401);
    assert_eq!(*statuses.last().unwrap(), 429, "{statuses:?}");
    // Not JSON, or no capability: 400, refused before anything.
    let resp = server
        .http
        .post(server.url("/api/push/decide"))
        .body("allowed=true")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
}
