//! The earlier conversation of a resumed session. When a session resumes
//! an ended one, the ended session's events — after its own history, so
//! a resumption of a resumption carries the whole chain — are copied into
//! the new session's `history.jsonl`, one line per event:
//! `{"session":"<id>","seq":N,"event":{…}}`, the event as it was written.
//!
//! A copy rather than a link: the ended session may be purged (retention,
//! DELETE ?purge) while the new one lives on, and its events file is final
//! once it ended, so the copy never goes stale. The new session's own
//! events (GET /events, the WebSocket) stay its own, numbered from 1;
//! clients read the history once, from GET /api/sessions/{id}/history.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use duet_protocol::ids::SessionId;

use super::channel::conversation::validate;

/// The history file in a session directory.
pub(crate) const FILE: &str = "history.jsonl";

/// The most history a session carries: past it the oldest events are left
/// out (a chat of a few hundred turns is a few MiB).
const MAX_BYTES: usize = 16 << 20;

/// What [`copy`] wrote.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Copied {
    pub(crate) events: usize,
    /// Oldest events left out to stay under the size limit.
    pub(crate) omitted: usize,
}

/// Writes `to_dir`'s history: `from_dir`'s history, then the events of
/// session `from` (its `events.jsonl`; lines that are not one JSON object
/// were never events, and are skipped, their seq kept).
pub(crate) fn copy(from: SessionId, from_dir: &Path, to_dir: &Path) -> std::io::Result<Copied> {
    let mut kept: VecDeque<String> = VecDeque::new();
    let mut bytes = 0usize;
    let mut omitted = 0usize;
    let mut keep = |line: String| {
        bytes += line.len() + 1;
        kept.push_back(line);
        while bytes > MAX_BYTES {
            let Some(old) = kept.pop_front() else { break };
            bytes -= old.len() + 1;
            omitted += 1;
        }
    };
    if let Some(earlier) = open(&from_dir.join(FILE))? {
        for line in earlier.lines() {
            let line = line?;
            if validate(&line).is_ok() {
                keep(line);
            }
        }
    }
    if let Some(events) = open(&from_dir.join("events.jsonl"))? {
        // Read as bytes: a line that is not UTF-8 still takes its seq.
        for (i, line) in events.split(b'\n').enumerate() {
            let line = line?;
            let Ok(text) = std::str::from_utf8(&line) else {
                continue;
            };
            let text = text.trim();
            if validate(text).is_err() {
                continue;
            }
            keep(format!(
                "{{\"session\":\"{from}\",\"seq\":{},\"event\":{text}}}",
                i + 1
            ));
        }
    }
    let copied = Copied {
        events: kept.len(),
        omitted,
    };
    if kept.is_empty() {
        return Ok(copied);
    }
    let tmp = to_dir.join(".history.jsonl.tmp");
    {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        let mut w = std::io::BufWriter::new(file);
        for line in &kept {
            w.write_all(line.as_bytes())?;
            w.write_all(b"\n")?;
        }
        w.flush()?;
    }
    std::fs::rename(&tmp, to_dir.join(FILE))?;
    Ok(copied)
}

fn open(path: &Path) -> std::io::Result<Option<BufReader<std::fs::File>>> {
    match std::fs::File::open(path) {
        Ok(f) => Ok(Some(BufReader::new(f))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn a_chain_of_resumptions_carries_every_earlier_event_in_order() {
        let (a, b, c) = (dir(), dir(), dir());
        let (ida, idb) = (SessionId::new(), SessionId::new());
        std::fs::write(
            a.path().join("events.jsonl"),
            "{\"type\":\"user\",\"n\":1}\nnot json\n{\"type\":\"result\"}\n",
        )
        .unwrap();
        assert_eq!(
            copy(ida, a.path(), b.path()).unwrap(),
            Copied {
                events: 2,
                omitted: 0
            }
        );
        std::fs::write(
            b.path().join("events.jsonl"),
            "{\"type\":\"user\",\"n\":2}\n",
        )
        .unwrap();
        assert_eq!(copy(idb, b.path(), c.path()).unwrap().events, 3);
        let text = std::fs::read_to_string(c.path().join(FILE)).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let got: Vec<(String, u64, String)> = lines
            .iter()
            .map(|l| {
                (
                    l["session"].as_str().unwrap().to_string(),
                    l["seq"].as_u64().unwrap(),
                    l["event"]["type"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (ida.to_string(), 1, "user".into()),
                // Line 2 was not an event; its seq is not reused.
                (ida.to_string(), 3, "result".into()),
                (idb.to_string(), 1, "user".into()),
            ]
        );
    }

    #[test]
    fn no_events_no_file_and_the_oldest_go_first_past_the_limit() {
        let (a, b) = (dir(), dir());
        assert_eq!(
            copy(SessionId::new(), a.path(), b.path()).unwrap(),
            Copied::default()
        );
        assert!(!b.path().join(FILE).exists());
        let big = format!(
            "{{\"type\":\"assistant\",\"pad\":\"{}\"}}\n",
            "x".repeat(1 << 20)
        );
        std::fs::write(a.path().join("events.jsonl"), big.repeat(20)).unwrap();
        let copied = copy(SessionId::new(), a.path(), b.path()).unwrap();
        assert_eq!(copied.events + copied.omitted, 20);
        assert!(copied.omitted >= 4, "{copied:?}");
        let text = std::fs::read_to_string(b.path().join(FILE)).unwrap();
        assert!(text.len() <= MAX_BYTES);
        // The newest are kept.
        let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(last["seq"], 20);
    }
}
