//! Every REST failure is a JSON error with a code, whatever produced it: a
//! handler, an extractor's rejection, the router (no route, wrong method).

mod support;

use serde_json::json;
use support::*;

/// Checks the status, the JSON error and its code; returns the message.
async fn expect_error(resp: reqwest::Response, status: u16, code: &str) -> String {
    assert_eq!(resp.status(), status, "{}", resp.url());
    let ty = resp.headers()["content-type"].to_str().unwrap().to_string();
    assert!(ty.starts_with("application/json"), "{ty}");
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], code, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(!message.is_empty(), "{body}");
    message.to_string()
}

/// duet's words for a body over the limit, on every route.
const TOO_LARGE: &str = "the request body is too large (the limit is 2 MiB)";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_failures_are_json_errors_with_codes() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    // A query that does not parse.
    let resp = server
        .get(&format!("/api/sessions/{}/events?from=abc", s.id))
        .send()
        .await
        .unwrap();
    expect_error(resp, 400, "bad_message").await;
    let resp = server
        .http
        .delete(server.url(&format!("/api/sessions/{}?purge=maybe", s.id)))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    expect_error(resp, 400, "bad_message").await;
    // No such route under /api, and a method a route does not take.
    let resp = server.get("/api/nothing-here").send().await.unwrap();
    expect_error(resp, 404, "bad_message").await;
    let resp = server
        .http
        .put(server.url("/api/sessions"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    expect_error(resp, 405, "bad_message").await;
    // A plain GET of the WebSocket route (no upgrade).
    let resp = server
        .get(&format!("/api/sessions/{}/ws", s.id))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_client_error());
    let ty = resp.headers()["content-type"].to_str().unwrap().to_string();
    assert!(ty.starts_with("application/json"), "{ty}");
    // A body over the limit, last: the server answers before reading the
    // body and closes that connection, so a request reusing it from the pool
    // could fail with IncompleteMessage (seen once in CI).
    let resp = server
        .post("/api/sessions")
        .header("content-type", "application/json")
        .body(vec![b' '; 3 << 20])
        .send()
        .await
        .unwrap();
    assert_eq!(expect_error(resp, 413, "too_large").await, TOO_LARGE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_body_over_the_limit_is_too_large_on_every_route() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let body = serde_json::to_vec(&serde_json::json!({"text": "x".repeat(3 << 20)})).unwrap();
    let resp = server
        .post(&format!("/api/sessions/{}/submit", s.id))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(expect_error(resp, 413, "too_large").await, TOO_LARGE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_must_be_a_json_object_of_the_right_shape() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    // serde would build a struct from an array of its fields in order.
    for body in [json!([]), json!(["fake", 80, 24]), json!("fake")] {
        let resp = server.post_json("/api/sessions", body.clone()).await;
        expect_error(resp, 400, "bad_message").await;
    }
    let submit = format!("/api/sessions/{}/submit", s.id);
    let resp = server.post_json(&submit, json!(["hi"])).await;
    expect_error(resp, 400, "bad_message").await;
    // A wrong type names the field, in duet's words, not the framework's.
    let resp = server.post_json(&submit, json!({"text": 5})).await;
    assert_eq!(resp.status(), 400);
    let body: serde_json::Value = resp.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("bad request body") && message.contains("string"),
        "{message}"
    );
    assert!(!message.contains("Failed to deserialize"), "{message}");
    // A zero size is refused, as a WebSocket `resize` to it is.
    for body in [
        json!({"profile": "fake", "cols": 0}),
        json!({"profile": "fake", "rows": 0}),
    ] {
        let resp = server.post_json("/api/sessions", body).await;
        expect_error(resp, 400, "bad_message").await;
    }
    // No session was made by any of them.
    let list: serde_json::Value = server.json("/api/sessions").await;
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_body_is_taken_whatever_its_content_type() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let submit = format!("/api/sessions/{}/submit", s.id);
    // `curl -d` says form-encoded; a bare script says nothing.
    for ty in [
        Some("application/x-www-form-urlencoded"),
        Some("text/plain"),
        None,
    ] {
        let mut req = server.post(&submit).body(r#"{"text": "hello"}"#);
        if let Some(ty) = ty {
            req = req.header("content-type", ty);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 200, "{ty:?}: {}", resp.text().await.unwrap());
    }
    let resp = server
        .http
        .patch(server.url(&format!("/api/sessions/{}", s.id)))
        .bearer_auth(TOKEN)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(r#"{"name": "scripted"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(server.info(s.id).await.name.as_deref(), Some("scripted"));
    // What is not JSON is refused in duet's words.
    let resp = server
        .post(&submit)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("text=hello")
        .send()
        .await
        .unwrap();
    let message = expect_error(resp, 400, "bad_message").await;
    assert!(
        message.starts_with("the request body is not JSON"),
        "{message}"
    );
    let resp = server.post(&submit).send().await.unwrap();
    let message = expect_error(resp, 400, "bad_message").await;
    assert!(message.contains("empty"), "{message}");
}
