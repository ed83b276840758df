//! Share links: one role on one session, nothing of any other session,
//! revocable at once (live sockets close) and expiring.

mod support;

use duet_protocol::rest::{Me, Role, Share};
use duet_protocol::ws::{ClientMessage, ServerMessage};
use futures_util::StreamExt;
use serde_json::{json, Value};
use support::*;
use tokio_tungstenite::tungstenite::Message;

async fn create_share(
    server: &TestServer,
    id: impl std::fmt::Display,
    body: Value,
) -> reqwest::Response {
    server
        .post_json(&format!("/api/sessions/{id}/shares"), body)
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_of_session_a_cannot_see_session_b() {
    let server = TestServer::start().await;
    let a = server.create("fake").await;
    let b = server.create("fake").await;
    // Least privilege, bounded lifetime.
    let owner_share = create_share(&server, a.id, json!({"role": "owner", "expires_in": 60})).await;
    assert_eq!(owner_share.status(), 403);
    let forever = create_share(
        &server,
        a.id,
        json!({"role": "viewer", "expires_in": 8 * 86400}),
    )
    .await;
    assert_eq!(forever.status(), 400);
    let resp = create_share(&server, a.id, json!({"role": "viewer", "expires_in": 600})).await;
    assert_eq!(resp.status(), 201);
    let share: Share = resp.json().await.unwrap();
    // The link becomes a cookie and opens session A.
    let no_redirect = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let resp = no_redirect
        .get(server.url(share.url.as_deref().unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 303);
    assert_eq!(resp.headers()["location"], format!("./#/session/{}", a.id));
    let cookie = resp.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().unwrap().to_string();
    let get = |path: String| {
        no_redirect
            .get(server.url(&path))
            .header("cookie", pair.clone())
            .send()
    };
    let list: Vec<Value> = get("/api/sessions".into())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["id"], a.id.to_string());
    assert_eq!(
        get(format!("/api/sessions/{}", a.id))
            .await
            .unwrap()
            .status(),
        200
    );
    for path in [
        format!("/api/sessions/{}", b.id),
        format!("/api/sessions/{}/events", b.id),
        format!("/api/sessions/{}/screen", b.id),
    ] {
        assert_eq!(get(path).await.unwrap().status(), 404);
    }
    assert_eq!(get("/api/profiles".into()).await.unwrap().status(), 403);
    // It may ask who it is: the browser learns it runs on a share link
    // without a refused request.
    let me: Me = get("/api/me".into()).await.unwrap().json().await.unwrap();
    assert_eq!(me.name, format!("share:{}", share.id));
    assert_eq!(me.role, Role::Viewer);
    assert_eq!(me.session, Some(a.id));
    assert_eq!(me.expires_at, Some(share.expires_at));
    let owner: Me = server.json("/api/me").await;
    assert_eq!((owner.name.as_str(), owner.role), ("owner", Role::Owner));
    assert_eq!((owner.session, owner.expires_at), (None, None));
    let anonymous = no_redirect.get(server.url("/api/me")).send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    let create = no_redirect
        .post(server.url("/api/sessions"))
        .header("cookie", pair.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(create.status(), 403);
    // Nor over a WebSocket.
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut req = format!("ws://{}/api/sessions/{}/ws", server.addr, b.id)
        .into_client_request()
        .unwrap();
    req.headers_mut().insert("cookie", pair.parse().unwrap());
    assert!(tokio_tungstenite::connect_async(req).await.is_err());
    let c = server.connect_as(a.id, None, &share_secret(&share)).await;
    match &c.texts[0] {
        ServerMessage::Hello(h) => {
            assert_eq!(h.role, Role::Viewer);
            assert_eq!(h.principal, format!("share:{}", share.id));
        }
        other => panic!("{other:?}"),
    }
    // The list shows it, without its secret.
    let listed: Vec<Share> = server.json(&format!("/api/sessions/{}/shares", a.id)).await;
    assert_eq!(listed.len(), 1);
    assert!(listed[0].url.is_none());
}

/// Reads until the server closes; returns the close reason.
async fn close_reason(c: &mut Client) -> String {
    tokio::time::timeout(DEADLINE, async {
        loop {
            match c.ws.next().await {
                Some(Ok(Message::Close(Some(frame)))) => return frame.reason.to_string(),
                Some(Ok(Message::Close(None))) | None => return String::new(),
                Some(Ok(_)) => {}
                Some(Err(e)) => return format!("error: {e}"),
            }
        }
    })
    .await
    .expect("the server closes the socket")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_a_share_closes_its_live_socket() {
    let server = TestServer::start().await;
    let a = server.create("fake").await;
    let resp = create_share(&server, a.id, json!({"role": "driver", "expires_in": 600})).await;
    let share: Share = resp.json().await.unwrap();
    let mut c = server.connect_as(a.id, None, &share_secret(&share)).await;
    let mut owner = server.connect(a.id, None).await;
    let gone = server
        .delete(&format!("/api/sessions/{}/shares/{}", a.id, share.id))
        .await;
    assert_eq!(gone.status(), 204);
    assert!(close_reason(&mut c).await.contains("revoked"));
    let refused = server
        .http
        .get(server.url(&format!("/api/sessions/{}", a.id)))
        .bearer_auth(share_secret(&share))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    // The owner's socket stays.
    owner
        .send(&ClientMessage::Ping {
            id: Some("p".into()),
        })
        .await;
    owner
        .until(|m| matches!(m, ServerMessage::Pong { .. }))
        .await;
    // Both ends of the link are in the session's audit trail, and what the
    // share did is recorded under its own name.
    let audit = server
        .get(&format!("/api/sessions/{}/audit", a.id))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let lines: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let created = lines
        .iter()
        .find(|l| l["kind"] == "share_create")
        .expect("share creation audited");
    assert_eq!(created["share"], json!(share.id));
    assert_eq!(created["role"], "driver");
    assert_eq!(created["who"]["name"], "owner");
    let revoked = lines
        .iter()
        .find(|l| l["kind"] == "share_revoke")
        .expect("revocation audited");
    assert_eq!(revoked["share"], json!(share.id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_share_is_refused() {
    let server = TestServer::start().await;
    let a = server.create("fake").await;
    let resp = create_share(&server, a.id, json!({"role": "viewer", "expires_in": 1})).await;
    let share: Share = resp.json().await.unwrap();
    let mut c = server.connect_as(a.id, None, &share_secret(&share)).await;
    // Its socket closes when it expires...
    assert!(close_reason(&mut c).await.contains("expired"));
    // ...and the secret no longer works, nor does the link.
    let refused = server
        .http
        .get(server.url(&format!("/api/sessions/{}", a.id)))
        .bearer_auth(share_secret(&share))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let link = server
        .http
        .get(server.url(share.url.as_deref().unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(link.status(), 401);
    assert!(server
        .json::<Vec<Share>>(&format!("/api/sessions/{}/shares", a.id))
        .await
        .is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_share_still_sending_gets_its_close_frame_not_a_reset() {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Error;
    // A program that never reads its terminal: the keys back up into the
    // socket, so it holds unread input when the server closes it.
    let server = TestServer::with_profiles(vec![duet_server::config::Profile {
        extra_args: false,
        name: "stalled".into(),
        description: None,
        command: "sleep".into(),
        args: vec!["600".into()],
        env: Default::default(),
        cwd: None,
        ready_text: None,
        channel: None,
        resume_args: None,
    }])
    .await;
    let a = server.create("stalled").await;
    let resp = create_share(&server, a.id, json!({"role": "driver", "expires_in": 600})).await;
    let share: Share = resp.json().await.unwrap();
    let c = server.connect_as(a.id, None, &share_secret(&share)).await;
    let (mut sink, mut stream) = c.ws.split();
    let (started_tx, started) = tokio::sync::oneshot::channel();
    let flood = tokio::spawn(async move {
        let keys = Message::Binary(vec![b'k'; 1 << 18].into());
        let first = sink.send(keys.clone()).await;
        let _ = started_tx.send(());
        first?;
        loop {
            sink.send(keys.clone()).await?;
            // A client reads while it sends (a browser does): once the
            // server has closed, its lingering socket takes up to 64 MiB
            // more before it resets, and a flood that never let the reading
            // task run on a loaded machine sent all of that before the close
            // frame was read (CI, once: EPIPE).
            tokio::task::yield_now().await;
        }
    });
    started.await.unwrap();
    let gone = server
        .delete(&format!("/api/sessions/{}/shares/{}", a.id, share.id))
        .await;
    assert_eq!(gone.status(), 204);
    let (code, reason) = tokio::time::timeout(DEADLINE, close_of(&mut stream))
        .await
        .expect("closed within the deadline")
        .expect("a close frame with a code");
    assert_eq!(code, 1008, "{reason}");
    // The sender learns of the close from the close frame (tungstenite
    // refuses a send after it), not from a reset connection.
    let stopped: Result<(), Error> = tokio::time::timeout(DEADLINE, flood)
        .await
        .expect("the flood stops")
        .unwrap();
    let err = stopped.expect_err("sends fail once the socket is closed");
    assert!(!matches!(err, Error::Io(_)), "{err:?}");
}
