//! Web Push against a push service written for the tests (`push/service.rs`:
//! it checks each request's VAPID JWT and decrypts its aes128gcm body with
//! keys made as a browser makes them).
//! Then: approvals, long turns, exits and withdrawals reach a device;
//! 410 prunes it; endpoints must be https; a share hears of its session
//! only, a muted session is not heard of; the key outlives a restart.

#[path = "push/service.rs"]
mod service;
mod support;

use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use duet_protocol::push::{PushDevice, PushKey, PushKind, PushPayload, PushShow};
use duet_protocol::rest::{Approval, Share};
use serde_json::{json, Value};
use service::{Device, PushService};
use support::*;

async fn vapid_key(server: &TestServer) -> String {
    server.json::<PushKey>("/api/push/key").await.public_key
}

async fn subscribe(server: &TestServer, token: &str, device: &Device) -> reqwest::Response {
    server
        .http
        .post(server.url("/api/push/subscriptions"))
        .bearer_auth(token)
        .json(&device.json())
        .send()
        .await
        .unwrap()
}

/// Submits `text` to session `id` and returns the approval it raises.
async fn approval_for(server: &TestServer, id: impl std::fmt::Display, text: &str) {
    let resp = server
        .post_json(&format!("/api/sessions/{id}/submit"), json!({"text": text}))
        .await;
    assert!(resp.status().is_success(), "{}", resp.text().await.unwrap());
}

/// `PUT /api/push/subscriptions/mute` as `token`.
async fn mute(
    server: &TestServer,
    token: &str,
    endpoint: &str,
    session: duet_protocol::ids::SessionId,
    muted: bool,
) -> reqwest::Response {
    server
        .http
        .put(server.url("/api/push/subscriptions/mute"))
        .bearer_auth(token)
        .json(&json!({"endpoint": endpoint, "session": session, "muted": muted}))
        .send()
        .await
        .unwrap()
}

fn show(p: PushPayload) -> PushShow {
    match p {
        PushPayload::Show(s) => s,
        other => panic!("expected a notification, got {other:?}"),
    }
}

async fn insecure_server() -> TestServer {
    TestServer::start_with(|o| {
        o.push_insecure_loopback = true;
        o.push_long_turn = Duration::ZERO;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_turns_exits_and_withdrawals_reach_a_device() {
    let mut service = PushService::start().await;
    let server = insecure_server().await;
    let key = vapid_key(&server).await;
    assert_eq!(B64.decode(&key).unwrap().len(), 65);
    let phone = Device::new(&service, "phone");
    let resp = subscribe(&server, TOKEN, &phone).await;
    assert_eq!(resp.status(), 201);
    let device: PushDevice = resp.json().await.unwrap();
    assert_eq!(device.endpoint, phone.endpoint);

    let s = server.create("demo").await;
    let resp = server
        .http
        .patch(server.url(&format!("/api/sessions/{}", s.id)))
        .bearer_auth(TOKEN)
        .json(&json!({"name": "nightly"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    approval_for(&server, s.id, "run echo while-away").await;

    // The approval: high urgency, the session's name, the tool, its input.
    let approval = loop {
        let r = service.next_for("phone").await;
        let urgency = r.headers["urgency"].to_str().unwrap().to_string();
        let n = show(phone.open(&r, &key, &service.origin));
        if n.kind == PushKind::Approval {
            assert_eq!(urgency, "high");
            break n;
        }
    };
    let pending: Vec<Approval> = server
        .json(&format!("/api/sessions/{}/approvals", s.id))
        .await;
    let rid = &pending[0].request_id;
    assert_eq!(approval.title, "nightly: allow run_shell_command?");
    assert_eq!(approval.body, "echo while-away");
    assert_eq!(approval.tag, format!("duet-approval-{}-{rid}", s.id));
    assert_eq!(approval.session, s.id);
    assert_eq!(
        approval.url,
        format!("./#/session/{}/approval/{}", s.id, rid)
    );

    // Decided by REST: the notification is withdrawn; the turn then ends
    // (any turn is long with a 0 s threshold).
    let resp = server
        .post_json(
            &format!("/api/sessions/{}/approvals/{rid}", s.id),
            json!({"allowed": true}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let (mut closed, mut turn) = (false, None);
    while !(closed && turn.is_some()) {
        let r = service.next_for("phone").await;
        match phone.open(&r, &key, &service.origin) {
            PushPayload::Close { close } => {
                assert_eq!(close, approval.tag);
                closed = true;
            }
            PushPayload::Show(n) if n.kind == PushKind::Turn => turn = Some(n),
            PushPayload::Show(n) => panic!("unexpected {n:?}"),
        }
    }
    let turn = turn.unwrap();
    assert_eq!(turn.tag, format!("duet-turn-{}", s.id));
    assert_eq!(turn.title, "nightly: turn finished");
    assert!(
        turn.body.starts_with("The agent finished after "),
        "{}",
        turn.body
    );
    assert_eq!(turn.url, format!("./#/session/{}", s.id));

    // Ended: the exit, with how.
    let resp = server.delete(&format!("/api/sessions/{}", s.id)).await;
    assert_eq!(resp.status(), 200);
    let exit = loop {
        let n = show(phone.open(&service.next_for("phone").await, &key, &service.origin));
        if n.kind == PushKind::Exit {
            break n;
        }
    };
    assert_eq!(exit.tag, format!("duet-exit-{}", s.id));
    assert!(exit.title.starts_with("nightly "), "{}", exit.title);
    assert!(exit.body.starts_with("The program "), "{}", exit.body);

    // Turned off: listed no more.
    let resp = server
        .http
        .delete(server.url("/api/push/subscriptions"))
        .bearer_auth(TOKEN)
        .json(&json!({"endpoint": phone.endpoint}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    let left: Vec<PushDevice> = server.json("/api/push/subscriptions").await;
    assert!(left.is_empty());
    // The audit trail has the changes, without the endpoint's secret path.
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gone_subscription_is_pruned() {
    let mut service = PushService::start().await;
    let server = insecure_server().await;
    let gone = Device::new(&service, "gone-laptop");
    assert_eq!(subscribe(&server, TOKEN, &gone).await.status(), 201);
    let s = server.create("demo").await;
    approval_for(&server, s.id, "run echo hi").await;
    service.next_for("gone-laptop").await;
    eventually("the device is pruned", || async {
        let left: Vec<PushDevice> = server.json("/api/push/subscriptions").await;
        left.is_empty()
    })
    .await;
    let metrics = server.text("/metrics").await;
    assert!(
        metrics.contains(r#"duet_push_deliveries_total{outcome="pruned"} 1"#),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoints_must_be_https_and_keys_real() {
    let service = PushService::start().await;
    let server = TestServer::start().await;
    let device = Device::new(&service, "d");
    let resp = subscribe(&server, TOKEN, &device).await;
    assert_eq!(resp.status(), 400);
    let body: Value = resp.json().await.unwrap();
    let msg = body["error"]["message"].as_str().unwrap();
    assert!(msg.contains("https"), "{msg}");

    let mut bad = device.json();
    bad["endpoint"] = json!("https://push.example/x");
    bad["keys"]["p256dh"] = json!(B64.encode([4u8; 65]));
    let resp = server
        .post_json("/api/push/subscriptions", bad.clone())
        .await;
    assert_eq!(resp.status(), 400);
    bad["keys"]["p256dh"] = device.json()["keys"]["p256dh"].clone();
    bad["keys"]["auth"] = json!("AAAA");
    assert_eq!(
        server
            .post_json("/api/push/subscriptions", bad.clone())
            .await
            .status(),
        400
    );
    bad["keys"]["auth"] = device.json()["keys"]["auth"].clone();
    assert_eq!(
        server
            .post_json("/api/push/subscriptions", bad.clone())
            .await
            .status(),
        201
    );
    bad["endpoint"] = json!("https://10.1.2.3/x");
    assert_eq!(
        server
            .post_json("/api/push/subscriptions", bad)
            .await
            .status(),
        400
    );
    // Without a credential: 401, as every API route.
    let resp = server
        .http
        .get(server.url("/api/push/key"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_hears_of_its_session_only_and_a_mute_silences_one() {
    let mut service = PushService::start().await;
    let server = insecure_server().await;
    let key = vapid_key(&server).await;
    let a = server.create("demo").await;
    let b = server.create("demo").await;
    let share: Share = server
        .post_json(
            &format!("/api/sessions/{}/shares", a.id),
            json!({"role": "viewer", "expires_in": 600}),
        )
        .await
        .json()
        .await
        .unwrap();
    let secret = share_secret(&share);
    let guest = Device::new(&service, "guest");
    let owner = Device::new(&service, "owner");
    assert_eq!(subscribe(&server, &secret, &guest).await.status(), 201);
    assert_eq!(subscribe(&server, TOKEN, &owner).await.status(), 201);
    // The share sees only its own device list, and may not mute b.
    let mine: Vec<PushDevice> = fetch::json(
        server
            .http
            .get(server.url("/api/push/subscriptions"))
            .bearer_auth(&secret),
    )
    .await;
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0].endpoint, guest.endpoint);
    let resp = mute(&server, &secret, &guest.endpoint, b.id, true).await;
    assert_eq!(resp.status(), 404);

    // The owner mutes a on its device.
    let resp = mute(&server, TOKEN, &owner.endpoint, a.id, true).await;
    assert_eq!(resp.status(), 200);
    let device: PushDevice = resp.json().await.unwrap();
    assert_eq!(device.muted, vec![a.id]);

    // b asks: the owner hears, the share does not.
    approval_for(&server, b.id, "run echo in-b").await;
    let n = show(owner.open(&service.next_for("owner").await, &key, &service.origin));
    assert_eq!((n.kind, n.session), (PushKind::Approval, b.id));
    // a asks: the share hears; the owner muted it.
    approval_for(&server, a.id, "run echo in-a").await;
    let n = show(guest.open(&service.next_for("guest").await, &key, &service.origin));
    assert_eq!((n.kind, n.session), (PushKind::Approval, a.id));
    assert_eq!(n.body, "echo in-a");
    // Unmuted, the owner hears of a's next approval, and never heard of
    // the first.
    let resp = mute(&server, TOKEN, &owner.endpoint, a.id, false).await;
    assert_eq!(resp.status(), 200);
    let pending: Vec<Approval> = server
        .json(&format!("/api/sessions/{}/approvals", a.id))
        .await;
    server
        .post_json(
            &format!("/api/sessions/{}/approvals/{}", a.id, pending[0].request_id),
            json!({"allowed": false}),
        )
        .await;
    approval_for(&server, a.id, "run echo in-a-again").await;
    let n = loop {
        let n = owner.open(&service.next_for("owner").await, &key, &service.origin);
        if let PushPayload::Show(n) = n {
            if n.session == a.id && n.kind == PushKind::Approval {
                break n;
            }
        }
    };
    assert_eq!(n.body, "echo in-a-again");
    let guest_heard: Vec<PushPayload> = service
        .seen
        .iter()
        .filter(|r| r.name == "guest")
        .map(|r| guest.open(r, &key, &service.origin))
        .collect();
    for p in guest_heard {
        if let PushPayload::Show(n) = p {
            assert_eq!(n.session, a.id, "the share heard of another session");
        }
    }
    // Revoked: the share's device goes at the next push it would get.
    let resp = server
        .delete(&format!("/api/sessions/{}/shares/{}", a.id, share.id))
        .await;
    assert_eq!(resp.status(), 204);
    assert_eq!(
        server
            .delete(&format!("/api/sessions/{}", a.id))
            .await
            .status(),
        200
    );
    loop {
        let n = owner.open(&service.next_for("owner").await, &key, &service.origin);
        if matches!(&n, PushPayload::Show(n) if n.kind == PushKind::Exit) {
            break;
        }
    }
    let kept = std::fs::read_to_string(
        server
            .state_dir
            .path()
            .join("state/push-subscriptions.json"),
    )
    .unwrap();
    assert!(
        kept.contains(&owner.endpoint) && !kept.contains(&guest.endpoint),
        "{kept}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_and_the_devices_outlive_a_restart() {
    let service = PushService::start().await;
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("state");
    let d = dir.clone();
    let server = TestServer::start_with(move |o| {
        o.state_dir = d;
        o.push_insecure_loopback = true;
    })
    .await;
    let key = vapid_key(&server).await;
    let phone = Device::new(&service, "phone");
    assert_eq!(subscribe(&server, TOKEN, &phone).await.status(), 201);
    server.shutdown().await;
    use std::os::unix::fs::PermissionsExt;
    for f in ["push-vapid.key", "push-subscriptions.json"] {
        let mode = std::fs::metadata(dir.join(f)).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{f} is private");
    }
    let audit = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap();
    let line = audit
        .lines()
        .find(|l| l.contains("push_subscribe"))
        .unwrap();
    assert!(
        line.contains(&service.origin) && !line.contains("/push/phone"),
        "{line}"
    );

    let d = dir.clone();
    let server = TestServer::start_with(move |o| o.state_dir = d).await;
    assert_eq!(vapid_key(&server).await, key);
    let devices: Vec<PushDevice> = server.json("/api/push/subscriptions").await;
    assert_eq!(devices.len(), 1);
    assert_eq!(devices[0].endpoint, phone.endpoint);
}
