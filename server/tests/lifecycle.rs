//! Program lifetime: exit status recorded and broadcast, ending a session
//! ends its whole process group, transcripts outlive the program for the
//! retention time, shutdown ends everything.

mod support;

use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;
use std::time::Duration;

use duet_protocol::rest::{SessionInfo, SessionStatus};
use duet_protocol::ws::ServerMessage;
use support::*;

async fn wait_dead(pid: i32) {
    eventually(&format!("pid {pid} is gone"), || async {
        !alive(pid as u32)
    })
    .await;
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
    // Ended by its owner, not by a stopping server.
    assert!(!info.exit.as_ref().unwrap().server_stopped, "{info:?}");
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
    assert!(alive(child as u32) && alive(leader as u32));
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
    // Ended by its owner, not by a stopping server.
    assert!(!info.exit.as_ref().unwrap().server_stopped, "{info:?}");
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
    // Reaping is a timer inside the server; poll for its effect.
    eventually("reaped", || async {
        let resp = server.get(&format!("/api/sessions/{}", s.id)).send().await;
        resp.unwrap().status() == 404
    })
    .await;
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
    // The client saw the exit, which says the server stopped (the program's
    // 143 is the shutdown's SIGTERM, not a crash), then the socket closed
    // as "going away".
    let exit = c.until(|m| matches!(m, ServerMessage::Exit(_))).await;
    let ServerMessage::Exit(exit) = exit else {
        unreachable!()
    };
    assert!(exit.server_stopped, "{exit:?}");
    assert_eq!(
        c.closed().await,
        Some((1001, "duet is shutting down".to_string()))
    );
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
        // one that was active a moment ago (both with the marker duet puts
        // in the session directories it makes), and something that is no
        // session at all.
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&o.state_dir)
            .unwrap();
        for id in [old, recent] {
            let dir = o.state_dir.join(id.to_string());
            std::fs::create_dir_all(dir.join("work")).unwrap();
            std::fs::write(dir.join("events.jsonl"), "{}\n").unwrap();
            std::fs::write(dir.join(duet_server::state_dir::MARKER), "").unwrap();
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
    // Deletion is a timer inside the server; poll for its effect.
    eventually("swept after the retention time", || async {
        !state.join(recent.to_string()).exists()
    })
    .await;
    assert!(state.join("not-a-session").exists());
}

async fn create_and_purge(server: &TestServer) {
    let s = server.create("fake").await;
    let resp = server
        .delete(&format!("/api/sessions/{}?purge=true", s.id))
        .await;
    assert_eq!(resp.status(), 204);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purged_session_leaves_nothing_behind() {
    // The server runs in this process, so its descriptors are ours to count.
    let server = TestServer::start().await;
    // One cycle first, for what is made once (the inotify instance, the
    // HTTP connection, blocking-pool threads).
    create_and_purge(&server).await;
    let before = open_fds();
    for _ in 0..20 {
        create_and_purge(&server).await;
    }
    // The session's last tasks let go of it just after the answer.
    let settled = within(DEADLINE, || async { open_fds() <= before + 3 }).await;
    assert!(
        settled,
        "20 purged sessions still hold {} descriptors (was {before})",
        open_fds()
    );
    let left: Vec<_> = std::fs::read_dir(server.state_dir.path().join("state"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let list: Vec<SessionInfo> = server.json("/api/sessions").await;
    assert!(list.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn the_session_limit_holds_under_concurrent_creates() {
    let server = TestServer::start_with(|o| o.max_sessions = 4).await;
    let creates = (0..30).map(|_| async {
        server
            .post_json("/api/sessions", serde_json::json!({"profile": "plain"}))
            .await
            .status()
            .as_u16()
    });
    let statuses = futures_util::future::join_all(creates).await;
    let accepted = statuses.iter().filter(|s| **s == 201).count();
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!((accepted, refused), (4, 26), "{statuses:?}");
    let list: Vec<SessionInfo> = server.json("/api/sessions").await;
    assert_eq!(list.len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_start_gives_its_slot_back() {
    let server = TestServer::start_with(|o| {
        o.max_sessions = 1;
        // A work directory that does not exist: the program cannot start.
        let broken = demo_profile("broken", Some("/nonexistent/duet-test-cwd".into()));
        let config = duet_server::config::ConfigFile {
            default_profile: Some("demo".into()),
            profiles: vec![demo_profile("demo", None), broken],
            tokens: Vec::new(),
            ..Default::default()
        };
        o.profiles =
            duet_server::config::Profiles::from_config(config, env!("CARGO_BIN_EXE_duet").into())
                .unwrap();
    })
    .await;
    for _ in 0..3 {
        let resp = server
            .post_json("/api/sessions", serde_json::json!({"profile": "broken"}))
            .await;
        assert_eq!(resp.status(), 500);
    }
    server.create("demo").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_ended_sessions_of_resumable_profiles_resume() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    assert!(!s.resumable);
    let running = server
        .post_json(
            &format!("/api/sessions/{}/resume", s.id),
            serde_json::json!({}),
        )
        .await;
    assert_eq!(running.status(), 409);
    let body: serde_json::Value = running.json().await.unwrap();
    assert_eq!(body["error"]["code"], "not_resumable");
    let mut c = server.connect(s.id, None).await;
    c.submit("/quit").await;
    c.until(|m| matches!(m, ServerMessage::Exit(_))).await;
    // Its profile has no resume_args.
    let ended = server
        .post_json(
            &format!("/api/sessions/{}/resume", s.id),
            serde_json::json!({}),
        )
        .await;
    assert_eq!(ended.status(), 409);
    let unknown = server
        .post_json(
            &format!("/api/sessions/{}/resume", uuid::Uuid::new_v4()),
            serde_json::json!({}),
        )
        .await;
    assert_eq!(unknown.status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attached_clients_are_closed_when_their_session_is_purged() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.until_screen("fake-tui ready").await;
    let purge = server
        .delete(&format!("/api/sessions/{}?purge=true", s.id))
        .await;
    assert_eq!(purge.status(), 204);
    // The socket closes with a reason instead of holding the session.
    let (_, reason) = c.closed().await.expect("a close frame");
    assert_eq!(reason, "the session was removed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relative_state_dir_still_carries_prompts() {
    // Relative to the test's working directory, as `--state-dir state` is
    // to duet's. The program runs elsewhere (its work directory), so the
    // files of its side channel must be named absolutely.
    let base = tempfile::tempdir_in(".").unwrap();
    let relative = PathBuf::from(base.path().file_name().unwrap()).join("state");
    assert!(relative.is_relative(), "{}", relative.display());
    let server = TestServer::start_with(|o| o.state_dir = relative).await;
    let s = server.create("demo").await;
    let mut c = server.connect(s.id, None).await;
    let ack = c.submit("hello").await;
    assert!(matches!(ack, ServerMessage::Ack { .. }), "{ack:?}");
    let (_, reply) = c.until_event(|e| kind(e) == "assistant").await;
    assert!(assistant_text(&reply).contains("hello"), "{reply}");
}
