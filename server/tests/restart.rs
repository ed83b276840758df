//! A duet killed with SIGKILL and started again on the same `--state-dir`:
//! no program of the earlier run is left running, every earlier session is
//! listed, its transcript readable, until its retention ends, and the
//! audit trail gets the ends the killed duet could not write. A duet
//! stopped with SIGTERM tells its clients so, and its sessions come back
//! saying the server stopped them.

use std::process::Command;

mod support;

use duet_protocol::rest::{Approval, ApprovalState, SessionInfo, SessionStatus};
use duet_protocol::ws::ServerMessage;
use serde_json::Value;
use support::killable::{lines, start_duet, Duet, TOKEN};
use support::{alive, eventually, fetch};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_crash_no_program_is_left_and_every_transcript_is_listed() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let config = tmp.path().join("duet.toml");
    std::fs::write(
        &config,
        r#"
[[profile]]
name = "stubborn"
command = "sh"
# A program that survives its terminal's hangup, as some agents do.
args = ["-c", "trap '' HUP; echo SCREEN-MARK; echo '{\"type\":\"system\",\"subtype\":\"session_start\"}' >> {events_file}; while :; do sleep 1; done"]
"#,
    )
    .unwrap();
    let http = reqwest::Client::new();
    let (mut first, url) = start_duet(&state, &config);
    let create = |url: String| {
        let http = http.clone();
        async move {
            let req = http
                .post(format!("{url}/api/sessions"))
                .bearer_auth(TOKEN)
                .json(&serde_json::json!({}));
            fetch::json::<SessionInfo>(req).await
        }
    };
    let running = create(url.clone()).await;
    let ended = create(url.clone()).await;
    // Both have written their handshake.
    for id in [running.id, ended.id] {
        // Another process writes both: poll.
        eventually(
            &format!("{id}: a handshake, and its output in the recording"),
            || async {
                let info: SessionInfo = fetch::json(
                    http.get(format!("{url}/api/sessions/{id}"))
                        .bearer_auth(TOKEN),
                )
                .await;
                // ...and its line is in the recording on disk.
                let cast = state.join(id.to_string()).join("recording.cast");
                let recorded = std::fs::read_to_string(cast).unwrap_or_default();
                info.last_seq > 0 && recorded.contains("SCREEN-MARK")
            },
        )
        .await;
    }
    // One session ends normally, with a transcript.
    let deleted: SessionInfo = fetch::json(
        http.delete(format!("{url}/api/sessions/{}", ended.id))
            .bearer_auth(TOKEN),
    )
    .await;
    assert_eq!(deleted.status, SessionStatus::Exited);
    let orphan = running.pid.unwrap();
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(alive(orphan), "the program outlives a killed duet");

    let (mut second, url) = start_duet(&state, &config);
    let list: Vec<SessionInfo> =
        fetch::json(http.get(format!("{url}/api/sessions")).bearer_auth(TOKEN)).await;
    let ids: Vec<_> = list.iter().map(|s| s.id).collect();
    assert!(
        ids.contains(&running.id) && ids.contains(&ended.id),
        "{list:?}"
    );
    assert!(list.iter().all(|s| s.status == SessionStatus::Exited));
    // The earlier duet's program is ended (SIGTERM; SIGKILL after grace).
    eventually("the leftover program was ended", || async {
        !alive(orphan)
    })
    .await;
    // Transcripts are readable, numbered as before.
    for id in [running.id, ended.id] {
        let events = http
            .get(format!("{url}/api/sessions/{id}/events"))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(events.status(), 200);
        let text = events.text().await.unwrap();
        assert!(text.contains("session_start"), "{text}");
    }
    let info = list.iter().find(|s| s.id == running.id).unwrap();
    assert!(info.last_seq >= 1);
    // Its end was never recorded: it ended with the earlier duet, not by
    // itself (the SIGTERM is the restart's).
    assert!(info.exit.as_ref().unwrap().server_stopped, "{info:?}");
    let deleted = list.iter().find(|s| s.id == ended.id).unwrap();
    assert!(
        !deleted.exit.as_ref().unwrap().server_stopped,
        "{deleted:?}"
    );
    // Each shows its last screen, replayed from its recording (it was
    // blank: the screen lived only in the earlier duet's memory).
    for id in [running.id, ended.id] {
        let screen = http
            .get(format!("{url}/api/sessions/{id}/screen"))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(screen.contains("SCREEN-MARK"), "{id}: {screen:?}");
    }
    second.kill().unwrap();
    second.wait().unwrap();
}

/// Writes `dir/duet.toml` with one profile, `fake` (the test TUI with its
/// side channel), resumable with `resume`; returns its path.
fn fake_config(dir: &std::path::Path, resume: bool) -> std::path::PathBuf {
    let fake = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fake_tui.py");
    let args = format!(
        "\"{fake}\", \"--json-file\", \"{{events_file}}\", \"--input-file\", \"{{input_file}}\""
    );
    let mut text =
        format!("[[profile]]\nname = \"fake\"\ncommand = \"python3\"\nargs = [{args}]\n");
    if resume {
        text.push_str(&format!("resume_args = [{args}]\n"));
    }
    let config = dir.join("duet.toml");
    std::fs::write(&config, text).unwrap();
    config
}

/// The lines of `kind` in `trail` about `id`: the session's, or a request's.
fn about<'a>(trail: &'a [Value], kind: &str, id: &str) -> Vec<&'a Value> {
    trail
        .iter()
        .filter(|l| l["kind"] == kind && (l["session"] == id || l["request_id"] == id))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_crash_the_trail_gets_the_ends_it_missed_once() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let config = fake_config(tmp.path(), false);
    let first = Duet::start(&state, &config);
    let open = first.create().await;
    let ended = first.create().await;
    let mut c = first.ws(open.id).await;
    // One request answered in the terminal, one still open at the crash.
    c.submit("tool one").await;
    let answered = c.pending_approval().await;
    c.keys(b"y").await;
    c.until(|m| matches!(m, ServerMessage::Approval(a) if a.request_id == answered.request_id && a.confirmed))
        .await;
    c.submit("tool two").await;
    let open_request = c.pending_approval().await;
    // Another session ends before the crash, as usual.
    let req = first
        .http
        .delete(format!("{}/api/sessions/{}", first.url, ended.id));
    first.send(req).await;
    let before = first.audit(open.id).await;
    assert_eq!(
        about(&before, "approval", &open_request.request_id).len(),
        0
    );
    drop(c);
    first.kill();

    let second = Duet::start(&state, &config);
    let trail = second.audit(open.id).await;
    // The open request: abandoned, written at the restart.
    let written = about(&trail, "approval", &open_request.request_id);
    assert_eq!(written.len(), 1, "{trail:#?}");
    assert_eq!(written[0]["outcome"], "abandoned");
    assert_eq!(written[0]["recovered"], true);
    assert_eq!(written[0]["decided_by"], Value::Null);
    assert_eq!(written[0]["tool"], "run_shell_command");
    // The answered one was recorded at the time, and only then.
    let then = about(&trail, "approval", &answered.request_id);
    assert_eq!(then.len(), 1, "{trail:#?}");
    assert_eq!(then[0]["decided_by"], "terminal");
    assert_eq!(then[0]["recovered"], Value::Null);
    let end = about(&trail, "session_end", &open.id.to_string());
    assert_eq!(end.len(), 1, "{trail:#?}");
    assert_eq!(end[0]["recovered"], true);
    assert_eq!(end[0]["exit"]["success"], false);
    let approvals: Vec<Approval> = second
        .get(&format!("/api/sessions/{}/approvals", open.id))
        .await;
    let shown = approvals
        .iter()
        .find(|a| a.request_id == open_request.request_id)
        .unwrap();
    assert_eq!(shown.state, ApprovalState::Abandoned);

    // The server's trail: the crashed session's end, marked; the other
    // session's end once, as written when it ended.
    let server_trail = || lines(&std::fs::read_to_string(state.join("audit.jsonl")).unwrap());
    let all = server_trail();
    let open_end = about(&all, "session_end", &open.id.to_string());
    assert_eq!(open_end.len(), 1, "{all:#?}");
    assert_eq!(open_end[0]["recovered"], true);
    let ended_end = about(&all, "session_end", &ended.id.to_string());
    assert_eq!(ended_end.len(), 1, "{all:#?}");
    assert_eq!(ended_end[0]["recovered"], Value::Null);
    let ended_trail = second.audit(ended.id).await;
    second.kill();

    // Started once more: nothing is missing, so nothing is written.
    let third = Duet::start(&state, &config);
    assert_eq!(third.audit(open.id).await, trail);
    assert_eq!(third.audit(ended.id).await, ended_trail);
    assert_eq!(server_trail(), all);
    third.kill();
}

/// `systemctl stop` (SIGTERM to duet): each attached client hears that the
/// server stopped (the exit says so, the socket closes as "going away"),
/// not that its program crashed with 143; after a restart the session is
/// listed as ended by the server, and can be resumed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_duet_says_so_and_its_sessions_come_back_resumable() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let config = fake_config(tmp.path(), true);
    let mut first = Duet::start(&state, &config);
    let s = first.create().await;
    let mut c = first.ws(s.id).await;
    // Its handshake names the conversation, which a resume needs.
    c.until_event(|e| e["subtype"] == "session_start").await;
    let term = Command::new("kill")
        .args(["-TERM", &first.child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let ServerMessage::Exit(exit) = c.until(|m| matches!(m, ServerMessage::Exit(_))).await else {
        unreachable!()
    };
    assert!(exit.server_stopped, "{exit:?}");
    assert_eq!(
        c.closed().await,
        Some((1001, "duet is shutting down".into()))
    );
    assert!(first.child.wait().unwrap().success());

    let second = Duet::start(&state, &config);
    let info: SessionInfo = second.get(&format!("/api/sessions/{}", s.id)).await;
    assert_eq!(info.status, SessionStatus::Exited);
    assert!(info.exit.as_ref().unwrap().server_stopped, "{info:?}");
    assert!(info.resumable, "{info:?}");
    // A client that reconnects hears the same.
    let c = second.ws(s.id).await;
    let ServerMessage::Hello(hello) = &c.texts[0] else {
        unreachable!()
    };
    assert!(hello.exit.as_ref().unwrap().server_stopped, "{hello:?}");
    second.kill();
}
