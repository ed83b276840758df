//! Program lifetime: exit status recorded and broadcast, ending a session
//! ends its whole process group, transcripts outlive the program for the
//! retention time, shutdown ends everything.

mod support;

use std::path::PathBuf;
use std::time::Duration;

use duet_protocol::rest::{SessionInfo, SessionStatus};
use duet_protocol::ws::ServerMessage;
use support::*;

fn alive(pid: i32) -> bool {
    // Signal 0 checks existence; a zombie still "exists", so also look at
    // /proc state.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

async fn wait_dead(pid: i32) {
    tokio::time::timeout(DEADLINE, async {
        // Process death has no event a test can await; poll /proc briefly.
        while alive(pid) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("pid {pid} still alive"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quitting_program_reports_its_exit_and_stays_readable() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.submit("hello").await;
    c.submit("/quit").await;
    let (end_seq, end) = c.until_event(|e| e["subtype"] == "session_end").await;
    assert_eq!(kind(&end), "system");
    match c.until(|m| matches!(m, ServerMessage::Exit(_))).await {
        ServerMessage::Exit(e) => {
            assert!(e.success);
            assert_eq!(e.code, Some(0));
        }
        _ => unreachable!(),
    }
    // Exit comes after every event.
    assert_eq!(*c.seqs().last().unwrap(), end_seq);
    let info = server.info(s.id).await;
    assert_eq!(info.status, SessionStatus::Exited);
    assert!(info.ended_at.is_some());
    // A client attaching later gets the whole transcript and the exit.
    let mut late = server.connect(s.id, None).await;
    match &late.texts[0] {
        ServerMessage::Hello(h) => assert_eq!(h.status, SessionStatus::Exited),
        other => panic!("{other:?}"),
    }
    late.until(|m| matches!(m, ServerMessage::Exit(_))).await;
    assert_eq!(late.seqs(), c.seqs());
    // Typing into an ended session is an error, not a hang.
    match late.submit("anyone?").await {
        ServerMessage::Error { code, .. } => {
            assert_eq!(code, duet_protocol::ws::ErrorCode::SessionEnded)
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leftover_holding_the_terminal_is_hung_up_when_the_program_exits() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.submit("escape").await;
    let (_, ev) = c.until_event(|e| kind(e) == "x-child").await;
    let leftover = ev["pid"].as_i64().unwrap() as i32;
    c.submit("/quit").await;
    // The session ends although the leftover still holds the PTY open.
    c.until(|m| matches!(m, ServerMessage::Exit(_))).await;
    // duet closed the master: the leftover's next write failed.
    wait_dead(leftover).await;
    let mark = server
        .state_dir
        .path()
        .join("state")
        .join(s.id.to_string())
        .join("work")
        .join("hung-up");
    assert_eq!(std::fs::read_to_string(mark).unwrap(), "hung up");
}

/// A program that wrote its `session_end` on SIGTERM is left to finish
/// exiting (Qwen Code 0.24 takes up to ~0.6 s, more under load) instead of
/// being hung up a third of the grace period in: its exit stays 143.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_announced_its_end_is_not_hung_up() {
    let server = TestServer::start().await; // kill_grace 2 s: SIGHUP at 0.67 s
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.submit("slow-exit 1.2").await;
    c.until_event(|e| kind(e) == "assistant").await;
    let resp = server.delete(&format!("/api/sessions/{}", s.id)).await;
    assert_eq!(resp.status(), 200);
    let info: SessionInfo = resp.json().await.unwrap();
    assert_eq!(
        info.exit.as_ref().and_then(|e| e.code),
        Some(143),
        "{info:?}"
    );
}

/// A program that announced itself on its side channel (`session_start`)
/// takes SIGTERM as the signal to end, but on a loaded machine it may need
/// more than a third of the grace period to get to its `session_end` (Qwen
/// Code, both versions, at a load of 12 on 2 cores): it is not hung up
/// meanwhile, which would lose that `session_end`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_announced_itself_is_left_the_grace_period_for_sigterm() {
    let server = TestServer::start().await; // kill_grace 2 s: SIGHUP at 0.67 s
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.submit("slow-term 1.0").await;
    c.until_event(|e| kind(e) == "assistant").await;
    let resp = server.delete(&format!("/api/sessions/{}", s.id)).await;
    let info: SessionInfo = resp.json().await.unwrap();
    assert_eq!(
        info.exit.as_ref().and_then(|e| e.code),
        Some(143),
        "{info:?}"
    );
    c.until_event(|e| e["subtype"] == "session_end").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_ends_the_whole_process_group() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.submit("spawn").await;
    let (_, ev) = c.until_event(|e| kind(e) == "x-child").await;
    let child = ev["pid"].as_i64().unwrap() as i32;
    let leader = s.pid.unwrap() as i32;
    assert!(alive(child) && alive(leader));
    let resp = server.delete(&format!("/api/sessions/{}", s.id)).await;
    assert_eq!(resp.status(), 200);
    let info: SessionInfo = resp.json().await.unwrap();
    assert_eq!(info.status, SessionStatus::Exited);
    // SIGTERM came alone first (a program like Qwen Code writes session_end
    // only on SIGTERM), not racing a SIGHUP.
    assert_eq!(
        info.exit.as_ref().and_then(|e| e.code),
        Some(143),
        "{info:?}"
    );
    c.until_event(|e| e["subtype"] == "session_end").await;
    wait_dead(leader).await;
    wait_dead(child).await;
    c.until(|m| matches!(m, ServerMessage::Exit(_))).await;
    // Still readable until purged.
    let events = server
        .get(&format!("/api/sessions/{}/events", s.id))
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), 200);
    let purge = server
        .delete(&format!("/api/sessions/{}?purge=true", s.id))
        .await;
    assert_eq!(purge.status(), 204);
    let gone = server
        .get(&format!("/api/sessions/{}", s.id))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ended_sessions_are_reaped_after_the_retention_time() {
    let server = TestServer::start_with(|o| o.retain = Duration::from_millis(300)).await;
    let s = server.create("fake").await;
    let dir = server.state_dir.path().join("state").join(s.id.to_string());
    let mut c = server.connect(s.id, None).await;
    c.submit("/quit").await;
    c.until(|m| matches!(m, ServerMessage::Exit(_))).await;
    tokio::time::timeout(DEADLINE, async {
        loop {
            let status = server
                .get(&format!("/api/sessions/{}", s.id))
                .send()
                .await
                .unwrap()
                .status();
            if status == 404 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("reaped");
    assert!(!dir.exists(), "transcript directory removed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_every_program_and_closes_clients() {
    let server = TestServer::start().await;
    let a = server.create("fake").await;
    let b = server.create("plain").await;
    let mut c = server.connect(a.id, None).await;
    c.until_event(|e| kind(e) == "system").await;
    server.shutdown().await;
    for pid in [a.pid.unwrap(), b.pid.unwrap()] {
        wait_dead(pid as i32).await;
    }
    // The client saw the exit, then the socket closed.
    c.until(|m| matches!(m, ServerMessage::Exit(_))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_limit_is_enforced() {
    let server = TestServer::start_with(|o| o.max_sessions = 2).await;
    server.create("plain").await;
    server.create("plain").await;
    let resp = server
        .post_json("/api/sessions", serde_json::json!({"profile": "plain"}))
        .await;
    assert_eq!(resp.status(), 429);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "limit_reached");
    let list: Vec<SessionInfo> = server.json("/api/sessions").await;
    assert_eq!(list.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_directories_from_an_earlier_run_are_swept() {
    let (old, recent) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
    let mut state = PathBuf::new();
    let server = TestServer::start_with(|o| {
        // Long enough that "kept for now" holds on a loaded machine.
        o.retain = Duration::from_secs(2);
        state = o.state_dir.clone();
        // What a previous run of duet left: a session that ended long ago,
        // one that was active a moment ago, and something that is no
        // session at all.
        for id in [old, recent] {
            let dir = o.state_dir.join(id.to_string());
            std::fs::create_dir_all(dir.join("work")).unwrap();
            std::fs::write(dir.join("events.jsonl"), "{}\n").unwrap();
        }
        let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
        let dir = o.state_dir.join(old.to_string());
        for p in [dir.join("events.jsonl"), dir.clone()] {
            std::fs::File::open(&p)
                .unwrap()
                .set_modified(hour_ago)
                .unwrap();
        }
        std::fs::create_dir_all(o.state_dir.join("not-a-session")).unwrap();
    })
    .await;
    // The server is up once it answers.
    server.json::<serde_json::Value>("/api/sessions").await;
    assert!(!state.join(old.to_string()).exists(), "swept at start");
    assert!(state.join(recent.to_string()).exists(), "kept for now");
    tokio::time::timeout(DEADLINE, async {
        // Deletion is a timer inside the server; poll for its effect.
        while state.join(recent.to_string()).exists() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("swept after the retention time");
    assert!(state.join("not-a-session").exists());
}
