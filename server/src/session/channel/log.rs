//! The event log of one session: every line of its events file gets a
//! sequence number (its 1-based line number), valid events are kept in a
//! bounded in-memory tail for live fan-out, and older ones are read back from
//! the file itself, which is the durable transcript. Clients hold a cursor
//! (the last seq they have), so a slow client costs no memory here.
//!
//! The file is the agent's own (dual output: the agent writes it, duet
//! tails it) or duet's (channels whose events duet normalises: duet
//! appends each one, see [`EventLog::append`]).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::Mutex;

use axum::extract::ws::Utf8Bytes;
use tokio::sync::watch;

use super::times::EventTimes;
use crate::sync::lock;

/// One relayed event: its seq, the line as written, and the ready-made
/// `event` frame with its receive time (see `times.rs`), built once and
/// shared by every client.
#[derive(Clone)]
pub(crate) struct Event {
    pub seq: u64,
    pub line: Utf8Bytes,
    pub frame: Utf8Bytes,
}

struct Inner {
    /// Byte offset in the events file of each line, indexed by seq-1; `None`
    /// for lines that were skipped (invalid, too long, blank).
    offsets: Vec<Option<u64>>,
    /// When each line was received, indexed by seq-1 (`None` for skipped
    /// lines and when times are not kept).
    times: Vec<Option<u64>>,
    stamps: Option<EventTimes>,
    /// The newest valid events, oldest first.
    cache: VecDeque<Event>,
    cache_bytes: usize,
    /// Lines before this seq may have been rewritten (the file was truncated)
    /// and can no longer be read back from disk.
    disk_valid_from: u64,
    /// duet's own events file, when duet is its writer, and its length.
    writer: Option<(std::fs::File, u64)>,
}

/// See the module docs.
pub(crate) struct EventLog {
    path: PathBuf,
    inner: Mutex<Inner>,
    last_seq: watch::Sender<u64>,
    max_cache_bytes: usize,
}

impl EventLog {
    /// An empty log for the events file at `path`.
    pub(crate) fn new(path: PathBuf, max_cache_bytes: usize) -> Self {
        Self {
            path,
            inner: Mutex::new(Inner {
                offsets: Vec::new(),
                times: Vec::new(),
                stamps: None,
                cache: VecDeque::new(),
                cache_bytes: 0,
                disk_valid_from: 1,
                writer: None,
            }),
            last_seq: watch::channel(0).0,
            max_cache_bytes,
        }
    }

    /// A log whose file duet writes itself (created empty, owner-only).
    pub(crate) fn owned(path: PathBuf, max_cache_bytes: usize) -> std::io::Result<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)?;
        let len = file.metadata()?.len();
        let log = Self::new(path, max_cache_bytes);
        lock(&log.inner).writer = Some((file, len));
        Ok(log)
    }

    /// Stamps each event with its receive time from `stamps`.
    pub(crate) fn with_times(self, stamps: EventTimes) -> Self {
        lock(&self.inner).stamps = Some(stamps);
        self
    }

    /// Appends one event (a JSON object, no newline) to duet's own file and
    /// records it; returns its seq. One `write` per line, so a reader never
    /// sees half of one. A failed write (disk full) is rolled back, so the
    /// next line never lands on half of this one. `derive` runs with the
    /// seq before any client can read the line (see [`EventLog::push`]).
    pub(crate) fn append(&self, line: &str, derive: impl FnOnce(u64)) -> std::io::Result<u64> {
        // Written and numbered under one lock: seq must equal line number.
        let mut inner = lock(&self.inner);
        let Some((file, len)) = inner.writer.as_mut() else {
            return Err(std::io::Error::other(
                "this events file is not duet's to write",
            ));
        };
        let offset = *len;
        let mut buf = String::with_capacity(line.len() + 1);
        buf.push_str(line);
        buf.push('\n');
        if let Err(e) = file.write_all(buf.as_bytes()) {
            let _ = file.set_len(offset);
            return Err(e);
        }
        *len += buf.len() as u64;
        let seq = self.record(&mut inner, offset, line);
        drop(inner);
        derive(seq);
        self.publish(seq);
        Ok(seq)
    }

    /// Records a line that was skipped; returns its seq.
    pub(crate) fn skip_line(&self) -> u64 {
        let mut inner = lock(&self.inner);
        inner.offsets.push(None);
        inner.times.push(None);
        let seq = inner.offsets.len() as u64;
        drop(inner);
        self.publish(seq);
        seq
    }

    /// Records a valid event line found at `offset` in the file; returns its
    /// seq. `derive` runs with the seq before clients can read the line: the
    /// state derived from an event (the gate a prompt waits on, a pending
    /// approval) is in place before anyone sees the event and acts on it.
    pub(crate) fn push(&self, offset: u64, line: &str, derive: impl FnOnce(u64)) -> u64 {
        let mut inner = lock(&self.inner);
        let seq = self.record(&mut inner, offset, line);
        drop(inner);
        derive(seq);
        self.publish(seq);
        seq
    }

    /// Lets readers see lines up to `seq`. Two writers may publish out of
    /// order (one derives while the other publishes): the higher seq stays.
    fn publish(&self, seq: u64) {
        self.last_seq.send_if_modified(|last| {
            let newer = seq > *last;
            if newer {
                *last = seq;
            }
            newer
        });
    }

    /// The highest seq readers may see: recorded and published.
    fn visible(&self, inner: &Inner) -> u64 {
        (inner.offsets.len() as u64).min(*self.last_seq.borrow())
    }

    fn record(&self, inner: &mut Inner, offset: u64, line: &str) -> u64 {
        inner.offsets.push(Some(offset));
        let seq = inner.offsets.len() as u64;
        let at = inner.stamps.as_mut().and_then(|t| t.stamp(seq));
        inner.times.push(at);
        let frame = duet_protocol::ws::event_frame(seq, at, line);
        inner.cache_bytes += line.len() + frame.len();
        inner.cache.push_back(Event {
            seq,
            line: Utf8Bytes::from(line.to_string()),
            frame: Utf8Bytes::from(frame),
        });
        while inner.cache_bytes > self.max_cache_bytes && inner.cache.len() > 1 {
            if let Some(old) = inner.cache.pop_front() {
                inner.cache_bytes -= old.line.len() + old.frame.len();
            }
        }
        seq
    }

    /// The file was truncated: lines from now on are new, earlier ones can
    /// only be served from memory.
    pub(crate) fn file_truncated(&self) {
        let mut inner = lock(&self.inner);
        inner.disk_valid_from = inner.offsets.len() as u64 + 1;
    }

    /// Highest seq readers may see so far (valid or not).
    pub(crate) fn last_seq(&self) -> u64 {
        self.visible(&lock(&self.inner))
    }

    /// A receiver that changes when a line is recorded.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.last_seq.subscribe()
    }

    /// Up to `max` valid events with seq > `after`, in order, and the seq the
    /// caller has now seen up to (skipped lines count as seen). Reads the
    /// file when `after` is older than the in-memory tail; that blocks, so
    /// async callers use [`EventLog::read_after_async`].
    pub(crate) fn read_after(&self, after: u64, max: usize) -> (Vec<Event>, u64) {
        let (disk, disk_from) = {
            let inner = lock(&self.inner);
            let last = self.visible(&inner);
            if after >= last {
                return (Vec::new(), last);
            }
            let cache_first = inner.cache.front().map_or(last + 1, |e| e.seq);
            // Valid lines between the cursor and the cache must come from disk.
            let disk: Vec<(u64, u64, Option<u64>)> = ((after + 1)..cache_first.min(last + 1))
                .filter_map(|seq| {
                    let i = seq as usize - 1;
                    inner.offsets[i].map(|off| (seq, off, inner.times[i]))
                })
                .take(max)
                .collect();
            if disk.is_empty() {
                let start = inner.cache.partition_point(|e| e.seq <= after);
                let events: Vec<Event> = inner
                    .cache
                    .range(start..)
                    .take_while(|e| e.seq <= last)
                    .take(max)
                    .cloned()
                    .collect();
                let upto = if events.len() == max {
                    events.last().map_or(last, |e| e.seq)
                } else {
                    last
                };
                return (events, upto);
            }
            (disk, inner.disk_valid_from)
        };
        let mut events = Vec::with_capacity(disk.len());
        let upto = disk.last().map_or(after, |(seq, _, _)| *seq);
        let Ok(file) = std::fs::File::open(&self.path) else {
            return (events, upto);
        };
        let mut reader = BufReader::new(file);
        let mut line = String::new();
        for (seq, offset, at) in disk {
            if seq < disk_from {
                continue;
            }
            // Valid lines are usually contiguous; seek only across skipped ones.
            if reader.stream_position().ok() != Some(offset)
                && reader.seek(SeekFrom::Start(offset)).is_err()
            {
                continue;
            }
            line.clear();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            // Exactly the terminator the tailer took off (LF or CRLF): a
            // line's own trailing CR belongs to it, live and from disk alike.
            let text = line.strip_suffix('\n').unwrap_or(&line);
            let text = text.strip_suffix('\r').unwrap_or(text);
            events.push(Event {
                seq,
                frame: Utf8Bytes::from(duet_protocol::ws::event_frame(seq, at, text)),
                line: Utf8Bytes::from(text.to_string()),
            });
        }
        (events, upto)
    }

    /// [`EventLog::read_after`] off the async runtime when it may touch disk.
    pub(crate) async fn read_after_async(
        self: &std::sync::Arc<Self>,
        after: u64,
        max: usize,
    ) -> (Vec<Event>, u64) {
        if self.in_memory(after) {
            return self.read_after(after, max);
        }
        let log = self.clone();
        tokio::task::spawn_blocking(move || log.read_after(after, max))
            .await
            .unwrap_or_else(|_| (Vec::new(), after))
    }

    fn in_memory(&self, after: u64) -> bool {
        let inner = lock(&self.inner);
        let last = self.visible(&inner);
        after >= last || inner.cache.front().is_some_and(|e| e.seq <= after + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_from_memory_and_falls_back_to_disk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut f = std::fs::File::create(&path).unwrap();
        let log = EventLog::new(path, 200);
        let mut offset = 0u64;
        for i in 0..20 {
            let line = format!(r#"{{"type":"x","i":{i}}}"#);
            writeln!(f, "{line}").unwrap();
            if i == 3 {
                log.skip_line();
            } else {
                log.push(offset, &line, |_| {});
            }
            offset += line.len() as u64 + 1;
        }
        assert_eq!(log.last_seq(), 20);
        // Everything from the start: the old part comes from disk in batches.
        let mut after = 0;
        let mut seen = Vec::new();
        loop {
            let (events, upto) = log.read_after(after, 5);
            if events.is_empty() && upto == after {
                break;
            }
            seen.extend(events.iter().map(|e| e.seq));
            for e in &events {
                let v: serde_json::Value = serde_json::from_str(e.line.as_str()).unwrap();
                assert_eq!(v["i"], e.seq - 1);
                let frame: serde_json::Value = serde_json::from_str(e.frame.as_str()).unwrap();
                assert_eq!(frame["seq"], e.seq);
            }
            after = upto;
        }
        let expected: Vec<u64> = (1..=20).filter(|s| *s != 4).collect();
        assert_eq!(seen, expected);
    }

    /// A client that sees an event must find the state derived from it in
    /// place: a prompt sent the moment `session_start` arrives was held
    /// ("queued") because the gate opened only after clients were woken.
    #[test]
    fn a_line_is_not_readable_until_its_state_is_derived() {
        let dir = tempfile::tempdir().unwrap();
        let log = EventLog::owned(dir.path().join("events.jsonl"), 1 << 20).unwrap();
        let mut woken = log.subscribe();
        log.append(r#"{"n":1}"#, |seq| {
            assert_eq!(seq, 1);
            assert!(!woken.has_changed().unwrap(), "woken before derive");
            assert_eq!(log.read_after(0, 10).0.len(), 0, "readable before derive");
            assert_eq!(log.last_seq(), 0);
        })
        .unwrap();
        assert!(woken.has_changed().unwrap());
        assert_eq!(*woken.borrow_and_update(), 1);
        log.push(0, "{}", |_| {
            assert_eq!(log.read_after(0, 10).0.len(), 1);
        });
        assert_eq!(log.read_after(0, 10).0.len(), 2);
    }

    /// Found by `fuzz::sidecar`: a line ending in CR before its CRLF came
    /// back from disk without its own CR (every CR was trimmed), so a client
    /// replaying from disk got a different line than a live one.
    #[test]
    fn a_line_read_back_from_disk_keeps_its_own_carriage_return() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        // What the tailer hands over for `{}\r\r\n` and `{"a":1}\r\n`.
        std::fs::write(&path, "{}\r\r\n{\"a\":1}\r\n").unwrap();
        let log = EventLog::new(path, 0);
        log.push(0, "{}\r", |_| {});
        log.push(5, "{\"a\":1}", |_| {});
        let (first, upto) = log.read_after(0, 10);
        let (rest, _) = log.read_after(upto, 10);
        let lines: Vec<&str> = first.iter().chain(&rest).map(|e| e.line.as_str()).collect();
        assert_eq!(lines, ["{}\r", "{\"a\":1}"]);
    }
}
