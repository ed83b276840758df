//! The sidecar line ingest: an events file the agent appends to, split at
//! arbitrary points, read by `Tail` after each append and taken in by
//! `dual_output::ingest`. Never panics; every line gets its line number as
//! seq; every complete valid line comes out exactly once, as written, from
//! memory and from the file; over-long, non-UTF-8 and invalid lines are
//! dropped with a warning naming their seq; blank lines silently.

use std::io::Write;
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::session::channel::conversation::validate;
use crate::session::channel::dual_output::ingest;
use crate::session::channel::dual_output::tail::Tail;
use crate::session::channel::log::EventLog;
use crate::session::channel::Conversation;

/// Lines over this many bytes are dropped (small, so over-long lines are cheap).
const MAX_LINE: usize = 96;

const KEYS: &[&str] = &[
    "type",
    "subtype",
    "event",
    "message",
    "content",
    "text",
    "request_id",
    "request",
    "response",
    "session_id",
    "uuid",
    "data",
    "role",
    "index",
    "delta",
    "tool_name",
    "input",
];

const TYPES: &[&str] = &[
    "system",
    "user",
    "assistant",
    "stream_event",
    "result",
    "control_request",
    "control_response",
    "message_start",
    "message_stop",
    "session_start",
    "can_use_tool",
];

/// One line's bytes, without its line end.
fn line_bytes() -> impl Strategy<Value = Vec<u8>> {
    let event = (prop::sample::select(TYPES), super::json_value(KEYS)).prop_map(|(t, v)| {
        let mut obj = match v {
            Value::Object(o) => o,
            other => [("data".to_string(), other)].into_iter().collect(),
        };
        obj.insert("type".into(), t.into());
        Value::Object(obj).to_string().into_bytes()
    });
    prop_oneof![
        4 => event,
        2 => super::json_value(KEYS).prop_map(|v| v.to_string().into_bytes()),
        2 => "[{}\\[\\]\":,a-z0-9 \t\r]{0,40}".prop_map(String::into_bytes),
        1 => prop::sample::select(&["", " ", "\t", "\r", "{}", " {} ", "{\"type\":\"x\"} x"][..]).prop_map(|s| s.as_bytes().to_vec()),
        1 => (80usize..300).prop_map(|n| format!("{{\"type\":\"user\",\"pad\":\"{}\"}}", "x".repeat(n)).into_bytes()),
        // Any byte but LF, drawn directly: a filter rejects 1 in 256 bytes,
        // and at 10^6 cases proptest gives up on that many rejects.
        1 => prop::collection::vec((0u8..255).prop_map(|b| if b >= b'\n' { b + 1 } else { b }), 0..40),
    ]
}

/// What ingest must make of one line: `Some(text)` for a relayed event,
/// `None` for a dropped one (with whether a warning says so).
fn expected(raw: &[u8], terminated: bool) -> (Option<String>, bool) {
    if raw.len() > MAX_LINE {
        return (None, true);
    }
    let mut bytes = raw;
    if terminated && bytes.last() == Some(&b'\r') {
        bytes = &bytes[..bytes.len() - 1];
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return (None, true);
    };
    if text.trim().is_empty() {
        return (None, false);
    }
    match validate(text) {
        Ok(()) => (Some(text.to_string()), false),
        Err(_) => (None, true),
    }
}

#[derive(Debug, Clone)]
struct Case {
    lines: Vec<(Vec<u8>, bool)>,
    /// The last line has no line end.
    unterminated: bool,
    /// Where the stream is split into appends (fractions of its length).
    cuts: Vec<u16>,
    /// Appends between two reads.
    reads_every: usize,
    /// The log's memory: small makes it read events back from the file.
    cache: usize,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((line_bytes(), any::<bool>()), 0..24),
        any::<bool>(),
        prop::collection::vec(any::<u16>(), 0..24),
        1usize..4,
        prop_oneof![Just(0usize), Just(200), Just(1 << 20)],
    )
        .prop_map(|(lines, unterminated, cuts, reads_every, cache)| Case {
            lines,
            unterminated,
            cuts,
            reads_every,
            cache,
        })
}

/// Every event after `from`, paging as a client does.
fn read_all(log: &EventLog, mut from: u64) -> Vec<crate::session::Event> {
    let mut all = Vec::new();
    while from < log.last_seq() {
        let (events, upto) = log.read_after(from, 5);
        assert!(upto > from, "no progress from {from}");
        all.extend(events);
        from = upto;
    }
    all
}

fn run(dir: &std::path::Path, case: &Case) -> Result<(), TestCaseError> {
    let path = dir.join("events.jsonl");
    let _ = std::fs::remove_file(&path);
    let mut stream = Vec::new();
    let mut want = Vec::new();
    let n = case.lines.len();
    for (i, (raw, crlf)) in case.lines.iter().enumerate() {
        let last = i + 1 == n;
        let terminated = !(last && case.unterminated);
        stream.extend_from_slice(raw);
        if terminated {
            stream.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
            // The CR of a CRLF is part of the line for the length limit.
            let mut line = raw.clone();
            if *crlf {
                line.push(b'\r');
            }
            want.push(expected(&line, true));
        } else if !raw.is_empty() {
            want.push(expected(raw, false));
        }
    }
    let mut cuts: Vec<usize> = case
        .cuts
        .iter()
        .map(|c| *c as usize * stream.len() / (u16::MAX as usize + 1))
        .collect();
    cuts.push(stream.len());
    cuts.sort_unstable();

    let log = Arc::new(EventLog::new(path.clone(), case.cache));
    let (control, _rx) = broadcast::channel(1024);
    let conversation = Conversation::new(log.clone(), control, 16, 1 << 20);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap();
    let mut tail = Tail::new(MAX_LINE);
    let mut at = 0;
    for (k, cut) in cuts.iter().enumerate() {
        file.write_all(&stream[at..*cut]).unwrap();
        at = *cut;
        if k % case.reads_every == 0 || k + 1 == cuts.len() {
            let batch = tail.read(&path).unwrap();
            prop_assert!(!batch.truncated && batch.replaced_at.is_none());
            ingest::batch(&conversation, batch, MAX_LINE);
        }
    }
    if let Some(line) = tail.flush_partial() {
        ingest::line(&conversation, line, MAX_LINE);
    }
    prop_assert_eq!(tail.flush_partial(), None);

    // One seq per line, in order.
    prop_assert_eq!(log.last_seq(), want.len() as u64);
    let events = read_all(&log, 0);
    let got: Vec<(u64, String)> = events.iter().map(|e| (e.seq, e.line.to_string())).collect();
    let valid: Vec<(u64, String)> = want
        .iter()
        .enumerate()
        .filter_map(|(i, (text, _))| text.clone().map(|t| (i as u64 + 1, t)))
        .collect();
    prop_assert_eq!(&got, &valid);
    // Resuming from any seq gives exactly the events after it.
    for from in 0..=want.len() as u64 {
        let events = read_all(&log, from);
        let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
        let want_seqs: Vec<u64> = valid
            .iter()
            .map(|(s, _)| *s)
            .filter(|s| *s > from)
            .collect();
        prop_assert_eq!(seqs, want_seqs, "resume from {}", from);
    }
    // Each dropped line is named by one warning (blank ones by none).
    let warned: Vec<u64> = conversation
        .warnings_after(0)
        .iter()
        .filter_map(|w| w.seq)
        .collect();
    let want_warned: Vec<u64> = want
        .iter()
        .enumerate()
        .filter(|(_, (_, warn))| *warn)
        .map(|(i, _)| i as u64 + 1)
        .collect();
    prop_assert_eq!(warned, want_warned);
    Ok(())
}

#[test]
fn appended_lines_come_out_once_in_order() {
    let dir = tempfile::tempdir().unwrap();
    proptest!(super::config(), |(case in case())| {
        run(dir.path(), &case)?;
    });
}

/// `validate` accepts exactly the lines that are one JSON object.
#[test]
fn validate_accepts_json_objects() {
    let line = prop_oneof![
        super::json_value(KEYS).prop_map(|v| v.to_string()),
        (prop::sample::select(TYPES), super::json_value(KEYS)).prop_map(|(t, v)| {
            serde_json::json!({"type": t, "event": v, "data": v}).to_string()
        }),
        "[{}\\[\\]\":,a-z0-9 ]{0,40}",
        any::<String>(),
    ];
    proptest!(super::config(), |(line in line)| {
        let is_object = serde_json::from_str::<Value>(&line).is_ok_and(|v| v.is_object());
        prop_assert_eq!(validate(&line).is_ok(), is_object, "{}", line);
    });
}
