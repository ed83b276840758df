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
