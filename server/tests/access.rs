//! Access control: token required, cookie login, Origin checked, no session
//! for bad credentials, and no command line accepted from a client.

mod support;

use support::*;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_needs_the_token_but_health_does_not() {
    let server = TestServer::start().await;
    let health = server
        .http
        .get(server.url("/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    for req in [
        server.http.get(server.url("/api/sessions")),
        server.http.post(server.url("/api/sessions")),
        server
            .http
            .get(server.url("/api/sessions"))
            .bearer_auth("wrong-token-wrong-token"),
    ] {
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 401);
        let body: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "unauthorized");
    }
    // Nothing was started.
    let list: Vec<serde_json::Value> = server.json("/api/sessions").await;
    assert!(list.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_url_becomes_an_httponly_cookie() {
    let server = TestServer::start().await;
    let no_redirect = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let resp = no_redirect
        .get(server.url(&format!("/?token={TOKEN}")))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 303);
    assert_eq!(resp.headers()["location"], "./");
    let cookie = resp.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().unwrap().to_string();
    let ok = no_redirect
        .get(server.url("/api/sessions"))
        .header("cookie", &pair)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    // A wrong token in the URL gets no cookie.
    let bad = no_redirect
        .get(server.url("/?token=nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 401);
    assert!(bad.headers().get("set-cookie").is_none());
    // A cookie-authenticated request from another site's page is refused.
    let cross = no_redirect
        .post(server.url("/api/sessions"))
        .header("cookie", &pair)
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status(), 403);
}

async fn ws_status(server: &TestServer, id: &str, auth: Option<&str>, origin: Option<&str>) -> u16 {
    let mut req = format!("ws://{}/api/sessions/{id}/ws", server.addr)
        .into_client_request()
        .unwrap();
    if let Some(a) = auth {
        req.headers_mut()
            .insert("authorization", HeaderValue::from_str(a).unwrap());
    }
    if let Some(o) = origin {
        req.headers_mut()
            .insert("origin", HeaderValue::from_str(o).unwrap());
    }
    match tokio_tungstenite::connect_async(req).await {
        Ok(_) => 101,
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => resp.status().as_u16(),
        Err(e) => panic!("{e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_checks_token_and_origin() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let id = s.id.to_string();
    let good = format!("Bearer {TOKEN}");
    assert_eq!(ws_status(&server, &id, None, None).await, 401);
    assert_eq!(
        ws_status(&server, &id, Some("Bearer wrong"), None).await,
        401
    );
    assert_eq!(
        ws_status(&server, &id, Some(&good), Some("http://evil.example")).await,
        403
    );
    let own = format!("http://{}", server.addr);
    assert_eq!(ws_status(&server, &id, Some(&good), Some(&own)).await, 101);
    assert_eq!(ws_status(&server, &id, Some(&good), None).await, 101);
    let unknown = duet_protocol::ids::SessionId::new().to_string();
    assert_eq!(ws_status(&server, &unknown, Some(&good), None).await, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_origins_are_configurable() {
    let server = TestServer::start_with(|o| {
        o.allowed_origins = vec!["https://app.example.com".into()];
    })
    .await;
    let s = server.create("fake").await;
    let good = format!("Bearer {TOKEN}");
    assert_eq!(
        ws_status(
            &server,
            &s.id.to_string(),
            Some(&good),
            Some("https://app.example.com")
        )
        .await,
        101
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_pick_profiles_by_name_and_nothing_else() {
    let server = TestServer::start().await;
    let profiles: Vec<serde_json::Value> = server.json("/api/profiles").await;
    assert!(profiles
        .iter()
        .any(|p| p["name"] == "fake" && p["default"] == true));
    assert!(profiles
        .iter()
        .all(|p| p.get("command").is_none() && p.get("args").is_none()));
    for body in [
        serde_json::json!({"profile": "fake", "command": "rm -rf /"}),
        serde_json::json!({"profile": "fake", "args": ["-c", "id"]}),
        serde_json::json!({"profile": "fake", "env": {"X": "1"}}),
    ] {
        let resp = server
            .post("/api/sessions")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400, "{body}");
        let err: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(err["error"]["code"], "bad_message");
    }
    let resp = server
        .post_json(
            "/api/sessions",
            serde_json::json!({"profile": "../../bin/sh"}),
        )
        .await;
    assert_eq!(resp.status(), 404);
    let err: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(err["error"]["code"], "unknown_profile");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let dir = server.state_dir.path().join("state").join(s.id.to_string());
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("events.jsonl")), 0o600);
    assert_eq!(mode(&dir.join("input.jsonl")), 0o600);
}
