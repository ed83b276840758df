//! The live board (`GET /api/sessions/watch`, server-sent events) and
//! renaming sessions (`PATCH /api/sessions/{id}`): every change reaches a
//! watcher without polling, what needs attention comes first, a share
//! link sees its one session, and a name outlives a restart.

mod support;

use duet_protocol::board::{Board, BoardEntry};
use duet_protocol::rest::{Role, SessionStatus, Share};
use serde_json::json;
use support::watch::Watch;
use support::*;

fn entry(board: &Board, id: impl std::fmt::Display) -> Option<&BoardEntry> {
    let id = id.to_string();
    board
        .sessions
        .iter()
        .find(|e| e.session.id.to_string() == id)
}

async fn patch(
    server: &TestServer,
    id: impl std::fmt::Display,
    token: &str,
    body: serde_json::Value,
) -> reqwest::Response {
    server
        .http
        .patch(server.url(&format!("/api/sessions/{id}")))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_change_reaches_the_watcher_and_approvals_come_first() {
    let server = TestServer::start().await;
    let mut watch = Watch::open(&server, TOKEN).await;
    assert!(watch.next().await.unwrap().sessions.is_empty());

    let quiet = server.create("fake").await;
    let busy = server.create("fake").await;
    let board = watch
        .until(|b| entry(b, quiet.id).is_some() && entry(b, busy.id).is_some())
        .await;
    // Newest first while nothing needs attention.
    assert_eq!(board.sessions[0].session.id, busy.id);
    assert_eq!(board.sessions[0].session.profile, "fake");
    assert_eq!(board.sessions[0].session.status, SessionStatus::Running);

    // A viewer connects to the older one: the board says so.
    let mut c = server.connect(quiet.id, None).await;
    watch
        .until(|b| entry(b, quiet.id).is_some_and(|e| e.session.connected.len() == 1))
        .await;

    // An approval: that session comes first, with the tool and its input.
    c.submit("tool touch x").await;
    let board = watch
        .until(|b| entry(b, quiet.id).is_some_and(|e| !e.pending.is_empty()))
        .await;
    let first = &board.sessions[0];
    assert_eq!(first.session.id, quiet.id);
    assert_eq!(first.session.pending_approvals, 1);
    assert_eq!(first.pending[0].tool_name, "run_shell_command");
    assert_eq!(first.pending[0].input["command"], "touch x");
    assert!(first.busy_since.is_some(), "a turn is running: {first:?}");
    assert!(first.last_activity >= quiet.created_at);
    let request_id = first.pending[0].request_id.clone();

    // Decided by REST: the approval leaves the board, the order returns.
    let resp = server
        .post_json(
            &format!("/api/sessions/{}/approvals/{request_id}", quiet.id),
            json!({"allowed": true}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let board = watch
        .until(|b| entry(b, quiet.id).is_some_and(|e| e.pending.is_empty()))
        .await;
    assert_eq!(board.sessions[0].session.id, busy.id);

    // The viewer leaves, the session ends: the board follows, ended last.
    drop(c);
    let resp = server.delete(&format!("/api/sessions/{}", busy.id)).await;
    assert_eq!(resp.status(), 200);
    let board = watch
        .until(|b| {
            entry(b, busy.id).is_some_and(|e| e.session.status == SessionStatus::Exited)
                && entry(b, quiet.id).is_some_and(|e| e.session.connected.is_empty())
        })
        .await;
    assert_eq!(board.sessions.last().unwrap().session.id, busy.id);
    assert!(entry(&board, busy.id).unwrap().busy_since.is_none());

    // Purged: gone from the board.
    let resp = server
        .delete(&format!("/api/sessions/{}?purge=true", busy.id))
        .await;
    assert_eq!(resp.status(), 204);
    watch.until(|b| entry(b, busy.id).is_none()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_is_owner_only_checked_shown_and_survives_a_restart() {
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().join("state");
    let (driver, snippet) = duet_server::config::mint_token("ci", Role::Driver).unwrap();
    let named = toml::from_str::<duet_server::config::ConfigFile>(&snippet)
        .unwrap()
        .named_tokens()
        .unwrap();
    let dir = state_dir.clone();
    let server = TestServer::start_with(move |o| {
        o.state_dir = dir;
        o.tokens = named;
    })
    .await;
    let s = server.create("fake").await;
    assert_eq!(s.name, None);
    let mut watch = Watch::open(&server, TOKEN).await;

    let resp = patch(&server, s.id, TOKEN, json!({"name": "  fix the build "})).await;
    assert_eq!(resp.status(), 200);
    let info: duet_protocol::rest::SessionInfo = resp.json().await.unwrap();
    assert_eq!(info.name.as_deref(), Some("fix the build"));
    watch
        .until(|b| {
            entry(b, s.id).is_some_and(|e| e.session.name.as_deref() == Some("fix the build"))
        })
        .await;
    let record: serde_json::Value = serde_json::from_slice(
        &std::fs::read(state_dir.join(s.id.to_string()).join("session.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(record["name"], "fix the build");

    // A driver may not rename; bad bodies are refused and change nothing.
    let resp = patch(&server, s.id, &driver, json!({"name": "mine"})).await;
    assert_eq!(resp.status(), 403);
    for bad in [
        json!({"name": "a\u{7}b"}),
        json!({"name": "x".repeat(121)}),
        json!({"title": "x"}),
        json!({}),
        json!({"name": 3}),
    ] {
        let resp = patch(&server, s.id, TOKEN, bad.clone()).await;
        assert_eq!(resp.status(), 400, "{bad}");
        let body: serde_json::Value = resp.json().await.unwrap();
        assert!(body["error"]["message"].is_string(), "{body}");
    }
    let resp = patch(&server, "not-a-session", TOKEN, json!({"name": "x"})).await;
    assert_eq!(resp.status(), 404);
    assert_eq!(
        server.info(s.id).await.name.as_deref(),
        Some("fix the build")
    );

    // A restart: the (now ended) session keeps its name.
    server.shutdown().await;
    let dir = state_dir.clone();
    let server = TestServer::start_with(move |o| o.state_dir = dir).await;
    let info = server.info(s.id).await;
    assert_eq!(info.status, SessionStatus::Exited);
    assert_eq!(info.name.as_deref(), Some("fix the build"));
    let mut watch = Watch::open(&server, TOKEN).await;
    let board = watch.next().await.unwrap();
    assert_eq!(
        entry(&board, s.id).unwrap().session.name.as_deref(),
        Some("fix the build")
    );

    // An empty name clears it.
    let resp = patch(&server, s.id, TOKEN, json!({"name": " "})).await;
    assert_eq!(resp.status(), 200);
    watch
        .until(|b| entry(b, s.id).is_some_and(|e| e.session.name.is_none()))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_link_watches_its_one_session_until_it_is_revoked() {
    let server = TestServer::start().await;
    let a = server.create("fake").await;
    let b = server.create("fake").await;
    let resp = server
        .post_json(
            &format!("/api/sessions/{}/shares", a.id),
            json!({"role": "viewer", "expires_in": 600}),
        )
        .await;
    assert_eq!(resp.status(), 201);
    let share: Share = resp.json().await.unwrap();
    let secret = share_secret(&share);

    let mut watch = Watch::open(&server, &secret).await;
    let board = watch.next().await.unwrap();
    assert_eq!(board.sessions.len(), 1);
    assert_eq!(board.sessions[0].session.id, a.id);
    // A change to the other session is never shown to it; one to its own is.
    assert_eq!(
        patch(&server, b.id, TOKEN, json!({"name": "other"}))
            .await
            .status(),
        200
    );
    assert_eq!(
        patch(&server, a.id, TOKEN, json!({"name": "shared"}))
            .await
            .status(),
        200
    );
    watch
        .until(|board| {
            assert_eq!(board.sessions.len(), 1, "{board:?}");
            assert_eq!(board.sessions[0].session.id, a.id);
            board.sessions[0].session.name.as_deref() == Some("shared")
        })
        .await;
    // It may not rename even its own session.
    assert_eq!(
        patch(&server, a.id, &secret, json!({"name": "x"}))
            .await
            .status(),
        403
    );

    // Revoked: the stream ends.
    let resp = server
        .delete(&format!("/api/sessions/{}/shares/{}", a.id, share.id))
        .await;
    assert_eq!(resp.status(), 204);
    assert!(watch.next().await.is_none(), "the stream ends on revoke");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watch_needs_a_token_and_ends_when_the_server_stops() {
    let server = TestServer::start().await;
    let resp = server
        .http
        .get(server.url("/api/sessions/watch"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    let mut watch = Watch::open(&server, TOKEN).await;
    watch.next().await.unwrap();
    server.shutdown().await;
    assert!(watch.next().await.is_none());
}
