//! Access control: Host and Origin checked, token required (and guesses
//! throttled), cookie login, no session for bad credentials, and no command
//! line accepted from a client.

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
    // Every file duet writes there (the program's own are in `work`).
    let mut c = server.connect(s.id, None).await;
    c.submit("hello").await;
    drop(c);
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            assert_eq!(mode(&path), 0o600, "{}", path.display());
            seen.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    assert!(seen.iter().any(|f| f == "session.json"), "{seen:?}");
}

/// Sends `method path` with a `Host` (and a matching `Origin`) of our choice,
/// as a page on another name that resolves to this server would.
async fn as_host(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    host: &str,
) -> reqwest::Response {
    server
        .http
        .request(method, server.url(path))
        .header("host", host)
        .header("origin", format!("http://{host}"))
        .header("content-type", "application/json")
        .body(r#"{"profile":"plain"}"#)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebound_name_is_refused_even_without_auth() {
    let server = TestServer::start_with(|o| {
        o.token = None;
        o.allowed_hosts = vec!["duet.example.com".into(), "*.pods.example".into()];
    })
    .await;
    let port = server.addr.port();
    // DNS rebinding: a page on evil.example whose name now resolves to
    // 127.0.0.1 is "same origin" with itself, so Origin alone proves
    // nothing; the Host it names must be one duet answers to.
    for host in [
        format!("evil.example:{port}"),
        "evil.example".to_string(),
        format!("localhost.evil.example:{port}"),
        format!("duet.example.com.evil.example:{port}"),
        format!("pods.example:{port}"),
    ] {
        let resp = as_host(&server, reqwest::Method::POST, "/api/sessions", &host).await;
        assert_eq!(resp.status(), 421, "{host}");
        let body: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "forbidden", "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("--allowed-host"), "{message}");
    }
    let evil = format!("evil.example:{port}");
    for path in ["/", "/index.html", "/api/profiles", "/api/sessions"] {
        let resp = as_host(&server, reqwest::Method::GET, path, &evil).await;
        assert_eq!(resp.status(), 421, "GET {path}");
    }
    // The WebSocket too (the session exists; the name is what is refused).
    let s = server.create("plain").await;
    let mut req = format!("ws://{}/api/sessions/{}/ws", server.addr, s.id)
        .into_client_request()
        .unwrap();
    req.headers_mut()
        .insert("host", HeaderValue::from_str(&evil).unwrap());
    req.headers_mut().insert(
        "origin",
        HeaderValue::from_str(&format!("http://{evil}")).unwrap(),
    );
    match tokio_tungstenite::connect_async(req).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => {
            assert_eq!(resp.status().as_u16(), 421)
        }
        other => panic!("the WebSocket was not refused: {:?}", other.map(|_| ())),
    }
    // Load balancers probe health by the pod's address, any name.
    let health = as_host(&server, reqwest::Method::GET, "/healthz", &evil).await;
    assert_eq!(health.status(), 200);
    // Loopback names, the listen address and configured names are fine.
    for host in [
        format!("localhost:{port}"),
        format!("LocalHost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("127.1.2.3:{port}"),
        format!("[::1]:{port}"),
        "duet.example.com".to_string(),
        "Duet.Example.com:8443".to_string(),
        format!("duet-0.pods.example:{port}"),
    ] {
        let resp = as_host(&server, reqwest::Method::GET, "/api/sessions", &host).await;
        assert_eq!(resp.status(), 200, "{host}");
    }
    let resp = as_host(
        &server,
        reqwest::Method::POST,
        "/api/sessions",
        &format!("localhost:{port}"),
    )
    .await;
    assert_eq!(resp.status(), 201);
    // Only the two sessions asked for by allowed names exist.
    let list: Vec<serde_json::Value> = server.json("/api/sessions").await;
    assert_eq!(list.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_check_applies_with_auth_on_too() {
    let server = TestServer::start().await;
    let resp = server
        .get("/api/sessions")
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 421);
    let resp = server
        .get("/api/sessions")
        .header("host", format!("localhost:{}", server.addr.port()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
}

/// The status line of a request written by hand (clients add a Host).
/// Fails the test if the server has not sent a whole line within
/// [`DEADLINE`] (a server that neither answers nor closes would otherwise
/// hang the test).
async fn raw_status(server: &TestServer, head: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    let read = tokio::time::timeout(DEADLINE, async {
        while !got.windows(2).any(|w| w == b"\r\n") {
            match s.read(&mut buf).await.unwrap() {
                0 => break,
                n => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    let text = String::from_utf8_lossy(&got).into_owned();
    assert!(
        read.is_ok(),
        "no status line within {DEADLINE:?} for {head:?}; got {text:?}"
    );
    text.lines().next().unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_names_its_host_once() {
    let server = TestServer::start().await;
    let auth = format!("Authorization: Bearer {TOKEN}\r\n");
    let here = format!("Host: 127.0.0.1:{}\r\n", server.addr.port());
    let ok = raw_status(
        &server,
        &format!("GET /api/sessions HTTP/1.1\r\n{here}{auth}\r\n"),
    )
    .await;
    assert!(ok.contains(" 200 "), "{ok}");
    // HTTP/1.1 without a Host is malformed (RFC 9112, 3.2).
    let missing = raw_status(
        &server,
        &format!("GET /api/sessions HTTP/1.1\r\n{auth}\r\n"),
    )
    .await;
    assert!(missing.contains(" 400 "), "{missing}");
    // Two: only one would be checked, and a proxy might route by the other.
    let twice = raw_status(
        &server,
        &format!("GET /api/sessions HTTP/1.1\r\n{here}Host: evil.example\r\n{auth}\r\n"),
    )
    .await;
    assert!(twice.contains(" 400 "), "{twice}");
}

async fn login(http: &reqwest::Client, server: &TestServer, token: &str) -> reqwest::Response {
    http.post(server.url("/api/login"))
        .json(&serde_json::json!({ "token": token }))
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_logins_are_rate_limited_per_address() {
    let server = TestServer::start().await;
    let http = &server.http;
    // One stale token sent again and again (a browser with the cookie of a
    // restarted duet) is one wrong guess, not many.
    for _ in 0..30 {
        let stale = http
            .get(server.url("/api/sessions"))
            .header(
                "cookie",
                format!("duet_token_{}=stale-token-0123456789", server.addr.port()),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(stale.status(), 401);
    }
    // Different guesses count.
    for i in 1..10 {
        let resp = login(http, &server, &format!("wrong-token-wrong-token-{i}")).await;
        assert_eq!(resp.status(), 401, "attempt {i}");
    }
    let resp = login(http, &server, "wrong-token-wrong-token").await;
    assert_eq!(resp.status(), 429);
    let retry: u64 = resp.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "Retry-After: {retry}");
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "limit_reached");
    // While blocked, no token is even looked at (a right one must not stand
    // out), whichever way it comes: login, the page URL, a bearer header.
    assert_eq!(login(http, &server, TOKEN).await.status(), 429);
    let page = http
        .get(server.url(&format!("/?token={TOKEN}")))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 429);
    let bearer = http
        .get(server.url("/api/sessions"))
        .bearer_auth("wrong-token-wrong-token")
        .send()
        .await
        .unwrap();
    assert_eq!(bearer.status(), 429);
    // Another address is not held back by this one.
    let other = reqwest::Client::builder()
        .local_address(std::net::IpAddr::from([127, 0, 0, 2]))
        .build()
        .unwrap();
    assert_eq!(login(&other, &server, TOKEN).await.status(), 204);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_sites_page_cannot_post_to_login() {
    let server = TestServer::start().await;
    // A form-encoded or text/plain post needs no CORS preflight, and a JSON
    // body is taken whatever its type: the Origin check is what stops it.
    let post = |origin: String| {
        server
            .http
            .post(server.url("/api/login"))
            .header("origin", origin)
            .header("content-type", "text/plain")
            .body(format!(r#"{{"token": "{TOKEN}"}}"#))
            .send()
    };
    let resp = post("https://evil.example".into()).await.unwrap();
    assert_eq!(resp.status(), 403);
    assert!(resp.headers().get("set-cookie").is_none());
    let own = post(format!("http://{}", server.addr)).await.unwrap();
    assert_eq!(own.status(), 204);
    assert!(own.headers().get("set-cookie").is_some());
}
