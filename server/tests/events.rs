//! Sidecar relay: events in order with seqs, resume without loss or
//! duplicates, garbage lines skipped with warnings, NDJSON over REST.

mod support;

use duet_protocol::ws::{ClientMessage, ServerMessage};
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_arrive_in_order_with_their_line_numbers() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    let (seq, start) = c.until_event(|e| kind(e) == "system").await;
    assert_eq!(seq, 1);
    assert_eq!(start["subtype"], "session_start");
    c.submit("events 500").await;
    c.until_event(|e| kind(e) == "x-test-done").await;
    let seqs = c.seqs();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    // The test events kept their order and payload.
    let is: Vec<u64> = c
        .texts
        .iter()
        .filter_map(|m| match m {
            ServerMessage::Event { event, .. } if kind(event) == "x-test" => event["i"].as_u64(),
            _ => None,
        })
        .collect();
    assert_eq!(is, (0..500).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_from_a_seq_loses_and_repeats_nothing() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.submit("events 50").await;
    let (done, _) = c.until_event(|e| kind(e) == "x-test-done").await;
    let first: Vec<u64> = c.seqs();
    drop(c);

    // Events produced while nobody is connected.
    let resp = server
        .post_json(
            &format!("/api/sessions/{}/submit", s.id),
            serde_json::json!({"text": "events 30"}),
        )
        .await;
    assert_eq!(resp.status(), 200);

    let mut c = server.connect(s.id, Some(done)).await;
    c.until_event(|e| kind(e) == "x-test-done").await;
    let second = c.seqs();
    assert_eq!(second[0], done + 1, "resumes right after the last seen seq");
    let mut all = first.clone();
    all.extend(&second);
    assert_eq!(
        all,
        (1..=all.len() as u64).collect::<Vec<_>>(),
        "no gaps, no duplicates"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_from_old_events_reads_back_from_the_file() {
    // A tiny in-memory tail forces the replay to come from disk.
    let server = TestServer::start_with(|o| o.limits.event_cache_bytes = 2048).await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.submit("events 300").await;
    let (last, _) = c.until_event(|e| kind(e) == "x-test-done").await;
    let mut again = server.connect(s.id, Some(3)).await;
    again.until_event(|e| kind(e) == "x-test-done").await;
    assert_eq!(again.seqs(), (4..=last).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_from_the_file_runs_on_into_the_in_memory_tail() {
    // Only the newest events stay in memory; older ones are read back from
    // the file a batch at a time, and the batch that reaches the in-memory
    // tail stops short of a full one. The replay must carry on into the tail
    // by itself: it used to wait for news (an event, a message from the
    // client, the 30 s keepalive), and a browser opening a long session sat
    // with the end of its history missing until its own ping, 15 s later.
    let server = TestServer::start_with(|o| o.limits.event_cache_bytes = 2048).await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.submit("events 300").await;
    // The turn's last event: nothing new comes while the next client replays
    // (the first one stays connected and idle).
    c.until_event(|e| kind(e) == "x-test-done").await;
    let (last, _) = c.until_event(|e| kind(e) == "assistant").await;
    let mut again = server.connect(s.id, None).await;
    again
        .until(|m| matches!(m, ServerMessage::Event { seq, .. } if *seq == last))
        .await;
    assert_eq!(again.seqs(), (1..=last).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_lines_are_skipped_with_warnings_and_the_stream_goes_on() {
    let server = TestServer::start_with(|o| o.limits.max_sidecar_line = 64 << 10).await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.submit("garbage 200000").await;
    c.until_event(|e| kind(e) == "x-after-garbage").await;
    // Warnings travel beside the events (each names its seq), so the last
    // one may arrive just after the event that follows it.
    let mut seen = 0;
    c.until(|m| {
        seen += matches!(m, ServerMessage::Warning { .. }) as usize;
        seen == 3
    })
    .await;
    let warnings: Vec<(String, Option<u64>)> = c
        .texts
        .iter()
        .filter_map(|m| match m {
            ServerMessage::Warning { code, seq, .. } => Some((code.clone(), *seq)),
            _ => None,
        })
        .collect();
    let codes: Vec<&str> = warnings.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(
        codes,
        ["invalid_line", "line_too_long", "invalid_line"],
        "{warnings:?}"
    );
    // Skipped lines keep their line numbers: the next event's seq counts them.
    let seqs = c.seqs();
    let (after, _) = c
        .texts
        .iter()
        .find_map(|m| match m {
            ServerMessage::Event { seq, event, .. } if kind(event) == "x-after-garbage" => {
                Some((*seq, event.clone()))
            }
            _ => None,
        })
        .unwrap();
    let warn_seqs: Vec<u64> = warnings.iter().filter_map(|(_, s)| *s).collect();
    assert_eq!(warn_seqs, [after - 3, after - 2, after - 1]);
    assert!(!seqs.iter().any(|s| warn_seqs.contains(s)));

    // A client that comes later is told too, once each, in order.
    let mut late = server.connect(s.id, None).await;
    late.until_event(|e| kind(e) == "x-after-garbage").await;
    late.send(&ClientMessage::Ping {
        id: Some("p".into()),
    })
    .await;
    late.until(|m| matches!(m, ServerMessage::Pong { .. }))
        .await;
    let replayed: Vec<(u64, String)> = late
        .texts
        .iter()
        .filter_map(|m| match m {
            ServerMessage::Warning { id, code, .. } => Some((*id, code.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        replayed,
        [
            (1, "invalid_line".to_string()),
            (2, "line_too_long".to_string()),
            (3, "invalid_line".to_string())
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_events_are_ndjson_as_written() {
    let server = TestServer::start().await;
    let s = server.create("fake").await;
    let mut c = server.connect(s.id, None).await;
    c.submit("events 10").await;
    // The turn's last event: the file must be complete before it is compared.
    c.until_event(|e| kind(e) == "assistant").await;
    let path = format!("/api/sessions/{}/events", s.id);
    let all = server.get(&path).send().await.unwrap();
    assert_eq!(
        all.headers()["content-type"].to_str().unwrap(),
        "application/x-ndjson"
    );
    let body = all.text().await.unwrap();
    let file = std::fs::read_to_string(
        server
            .state_dir
            .path()
            .join("state")
            .join(s.id.to_string())
            .join("events.jsonl"),
    )
    .unwrap();
    assert_eq!(body, file, "the events exactly as the program wrote them");
    let tail = server
        .get(&format!("{path}?from=3"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        tail.lines().collect::<Vec<_>>(),
        file.lines().skip(3).collect::<Vec<_>>()
    );
}

/// A program that steps through replacing its events file with symlinks,
/// one step per line typed in its terminal: it writes n=1 to the events
/// file; then puts a symlink to a file in its work dir (holding n=2) in
/// its place; appends n=3 and n=4 to that file; links to a second file
/// (holding n=5); appends n=6 to it and n=99 to the first, no longer
/// linked.
fn relinking_profile() -> duet_server::config::Profile {
    // printf's \173 and \175 are braces, which the profile would take for
    // placeholders.
    let script = r#"
e='{events_file}'; t1="$PWD/t1.jsonl"; t2="$PWD/t2.jsonl"
ev() { printf '\173"type":"x-step","n":%s\175\n' "$1" >> "$2"; }
ev 1 "$e"; echo step-1; read _
ev 2 "$t1"; ln -sf "$t1" "$e"; echo step-2; read _
ev 3 "$t1"; echo step-3; read _
ev 4 "$t1"; echo step-4; read _
ev 5 "$t2"; ln -sf "$t2" "$e"; echo step-5; read _
ev 99 "$t1"; ev 6 "$t2"; echo step-6
exec cat
"#;
    let mut p = demo_profile("relink", None);
    p.command = "sh".into();
    p.args = vec!["-c".into(), script.into()];
    p
}

/// The `n` of every `x-step` event the client got, in order.
fn steps(c: &Client) -> Vec<u64> {
    c.texts
        .iter()
        .filter_map(|m| match m {
            ServerMessage::Event { event, .. } if kind(event) == "x-step" => event["n"].as_u64(),
            _ => None,
        })
        .collect()
}

/// Issue 27: an events file replaced by a symlink warned once and then
/// lost every later line: the program appends to the link's target, and
/// inotify reported those writes under the target's name, which nothing
/// watched. A symlink is followed like any replacement: its target read
/// from its start, each line once, and its later lines as they come.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_events_file_replaced_by_a_symlink_is_followed() {
    let server = TestServer::with_profiles(vec![relinking_profile()]).await;
    let s = server.create("relink").await;
    let mut c = server.connect(s.id, None).await;
    for n in 1..=6 {
        c.until_event(|e| kind(e) == "x-step" && e["n"] == n).await;
        c.until_screen(&format!("step-{n}")).await;
        if n < 6 {
            c.keys(b"\r").await;
        }
    }
    assert_eq!(steps(&c), [1, 2, 3, 4, 5, 6]);
    let replaced = c
        .texts
        .iter()
        .filter(
            |m| matches!(m, ServerMessage::Warning { code, .. } if code == "events_file_replaced"),
        )
        .count();
    assert_eq!(replaced, 2, "one warning per new file");
    // A client that comes now gets the same lines, each once.
    let mut again = server.connect(s.id, Some(0)).await;
    again
        .until_event(|e| kind(e) == "x-step" && e["n"] == 6)
        .await;
    assert_eq!(steps(&again), [1, 2, 3, 4, 5, 6]);
}
