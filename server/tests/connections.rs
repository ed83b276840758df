//! Connection limits: a client that never finishes its request headers is
//! closed after the header timeout, and connections over the cap are closed
//! at once, so half-open connections cannot starve the server.

mod support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A connection that sent part of a request line and then nothing.
async fn half_open(addr: SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /healthz HT").await.unwrap();
    s
}

/// Whether the server closes `s` within `within`.
async fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 1024];
    tokio::time::timeout(within, async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

async fn health(server: &TestServer) -> bool {
    // A fresh client each time: no pooled connection to count against the cap.
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    client
        .get(server.url("/healthz"))
        .timeout(Duration::from_secs(2))
        .send()
        .await
        .is_ok_and(|r| r.status() == 200)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unfinished_request_headers_are_timed_out() {
    let timeout = Duration::from_millis(500);
    let server = TestServer::start_with(|o| o.header_read_timeout = timeout).await;
    let started = Instant::now();
    let mut partial = half_open(server.addr).await;
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    assert!(
        closed_within(&mut partial, Duration::from_secs(5)).await,
        "a partial request line was held open"
    );
    assert!(
        closed_within(&mut silent, Duration::from_secs(5)).await,
        "a connection that sent nothing was held open"
    );
    assert!(started.elapsed() >= timeout, "closed before the timeout");
    assert!(health(&server).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_cap_are_closed_and_health_still_answers() {
    let server = TestServer::start_with(|o| {
        o.max_connections = 32;
        o.header_read_timeout = Duration::from_secs(60);
    })
    .await;
    // Many half-open connections, below the cap: the server still answers.
    let mut held = Vec::new();
    for _ in 0..24 {
        held.push(half_open(server.addr).await);
    }
    assert!(
        health(&server).await,
        "no answer with 24 half-open connections"
    );
    // Over the cap: closed at once, long before the header timeout.
    let mut extra = Vec::new();
    for _ in 0..20 {
        extra.push(half_open(server.addr).await);
    }
    let mut closed = 0;
    for s in &mut extra {
        if closed_within(s, Duration::from_millis(200)).await {
            closed += 1;
        }
    }
    // 44 connections against a cap of 32: 12 over (give or take the health
    // probe's, which the server may not have seen close yet).
    assert!(
        closed >= 10,
        "only {closed} of 20 connections over the cap closed"
    );
    // Once the holders let go, there is room again.
    drop(held);
    drop(extra);
    // Freed slots have no event to await from outside; retry the probe.
    eventually("health answers again", || health(&server)).await;
}

/// Reads one HTTP response from `s`: its status and its body.
async fn response(s: &mut (impl tokio::io::AsyncRead + Unpin)) -> (u16, String) {
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    let head_end = loop {
        if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0, "the connection ended before a response: {got:?}");
        got.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&got[..head_end]).to_string();
    let status = head[9..12].parse().unwrap();
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length: ")
                .map(str::to_string)
        })
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while got.len() < head_end + length {
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0, "the body was cut off");
        got.extend_from_slice(&buf[..n]);
    }
    (
        status,
        String::from_utf8_lossy(&got[head_end..]).to_string(),
    )
}

/// Issue 27: an authenticated request's body sent a byte at a time was
/// never timed out (the header timeout ends at the headers): it held its
/// connection and a handler for as long as the client liked. Now the
/// whole body must arrive within the body timeout, or the answer is 408
/// and a JSON error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_trickles_in_is_timed_out() {
    let server = TestServer::start_with(|o| o.body_read_timeout = Duration::from_millis(500)).await;
    let tcp = TcpStream::connect(server.addr).await.unwrap();
    let (mut read, mut write) = tcp.into_split();
    let head = format!(
        "POST /api/sessions HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{",
        server.addr
    );
    write.write_all(head.as_bytes()).await.unwrap();
    // A byte every 50 ms: the body would take 50 s in all.
    let trickle = tokio::spawn(async move {
        while write.write_all(b" ").await.is_ok() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let (status, body) = tokio::time::timeout(DEADLINE, response(&mut read))
        .await
        .expect("an answer before the body is done");
    trickle.abort();
    assert_eq!(status, 408, "{body}");
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["error"]["code"], "bad_message", "{body}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did not arrive"),
        "{body}"
    );
    // A body that comes at once is taken as before.
    let resp = server
        .post("/api/sessions")
        .json(&serde_json::json!({"profile": "fake"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
}
