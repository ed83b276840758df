//! A duet killed with SIGKILL and started again on the same `--state-dir`:
//! no program of the earlier run is left running, and every earlier
//! session is listed, its transcript readable, until its retention ends.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use duet_protocol::rest::{SessionInfo, SessionStatus};

const TOKEN: &str = "restart-test-token";

/// `duet serve` as a separate process (so it can be killed), with the
/// profiles of `config`; returns it and its base URL.
fn start_duet(state: &std::path::Path, config: &std::path::Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_duet"))
        .args(["serve", "--listen", "127.0.0.1:0", "--token", TOKEN])
        .arg("--state-dir")
        .arg(state)
        .arg("--config")
        .arg(config)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().expect("duet printed its URL").unwrap();
        if let Some(rest) = line.strip_prefix("duet is ready: ") {
            let url = rest.split_whitespace().next().unwrap();
            break url
                .split('?')
                .next()
                .unwrap()
                .trim_end_matches('/')
                .to_string();
        }
    };
    (child, url)
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s[s.rfind(')').unwrap() + 1..].trim_start().starts_with('Z'))
        .unwrap_or(false)
}

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
            let info: SessionInfo = http
                .post(format!("{url}/api/sessions"))
                .bearer_auth(TOKEN)
                .json(&serde_json::json!({}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            info
        }
    };
    let running = create(url.clone()).await;
    let ended = create(url.clone()).await;
    // Both have written their handshake.
    for id in [running.id, ended.id] {
        loop {
            let info: SessionInfo = http
                .get(format!("{url}/api/sessions/{id}"))
                .bearer_auth(TOKEN)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            // ...and its line is in the recording on disk.
            let cast = state.join(id.to_string()).join("recording.cast");
            let recorded = std::fs::read_to_string(cast).unwrap_or_default();
            if info.last_seq > 0 && recorded.contains("SCREEN-MARK") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    // One session ends normally, with a transcript.
    let deleted: SessionInfo = http
        .delete(format!("{url}/api/sessions/{}", ended.id))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(deleted.status, SessionStatus::Exited);
    let orphan = running.pid.unwrap();
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(alive(orphan), "the program outlives a killed duet");

    let (mut second, url) = start_duet(&state, &config);
    let list: Vec<SessionInfo> = http
        .get(format!("{url}/api/sessions"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<_> = list.iter().map(|s| s.id).collect();
    assert!(
        ids.contains(&running.id) && ids.contains(&ended.id),
        "{list:?}"
    );
    assert!(list.iter().all(|s| s.status == SessionStatus::Exited));
    // The earlier duet's program is ended (SIGTERM; SIGKILL after grace).
    tokio::time::timeout(Duration::from_secs(10), async {
        while alive(orphan) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the leftover program was ended");
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
