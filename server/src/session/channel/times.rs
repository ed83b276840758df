//! When duet received each event, for replay: milliseconds since the
//! session's clock started, the same instant the terminal recording's time 0
//! is taken from (`terminal/recording.rs`), so an event at `at` ms sits
//! beside the cast's output at `at / 1000` s.
//!
//! The events file stays verbatim (it is the agent's own, and the export),
//! so the times live beside it in `events.times`, written by duet: one
//! `SEQ MS` line per event, one `write` per line. A duet started again after
//! a restart reads them back, so an ended session replays as it happened.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use tracing::warn;

/// The file name in the session directory.
pub(crate) const FILE: &str = "events.times";

/// See the module docs.
pub(crate) struct EventTimes {
    /// The session clock's zero; `None` for a session recovered after a
    /// restart (its clock is gone: only what the file says is known).
    epoch: Option<Instant>,
    /// Where new times are appended; `None` once a write failed (the
    /// session goes on, later events just have no time).
    file: Option<File>,
    /// Times read back from the file, by seq.
    known: HashMap<u64, u64>,
}

impl EventTimes {
    /// Times for a new session whose clock started at `epoch`, written to
    /// `path` (created empty, owner-only).
    pub(crate) fn create(path: &Path, epoch: Instant) -> std::io::Result<Self> {
        let file = crate::state_dir::create_private(path)?;
        Ok(Self {
            epoch: Some(epoch),
            file: Some(file),
            known: HashMap::new(),
        })
    }

    /// The times an earlier duet wrote at `path` (none if it has no file,
    /// e.g. a session from before times were kept). Unreadable lines are
    /// skipped: a time is a nicety, never a reason to lose the transcript.
    pub(crate) fn load(path: &Path) -> Self {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let known = text
            .lines()
            .filter_map(|l| {
                let (seq, at) = l.split_once(' ')?;
                Some((seq.parse().ok()?, at.parse().ok()?))
            })
            .collect();
        Self {
            epoch: None,
            file: None,
            known,
        }
    }

    /// The time of event `seq`: the one on file, else now on the session
    /// clock (and then written down).
    pub(crate) fn stamp(&mut self, seq: u64) -> Option<u64> {
        if let Some(at) = self.known.get(&seq) {
            return Some(*at);
        }
        let at = self.epoch?.elapsed().as_millis() as u64;
        if let Some(file) = self.file.as_mut() {
            if let Err(e) = file.write_all(format!("{seq} {at}\n").as_bytes()) {
                warn!(?e, "writing event times; later events have none");
                self.file = None;
            }
        }
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_monotonic_written_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let epoch = Instant::now();
        let mut t = EventTimes::create(&path, epoch).unwrap();
        let a = t.stamp(1).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let b = t.stamp(3).unwrap();
        assert!(b >= a + 5, "{a} {b}");
        // A torn last line (a crash mid-write) is skipped, not fatal.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"4 1")
            .unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"x\n")
            .unwrap();
        let mut back = EventTimes::load(&path);
        assert_eq!(back.stamp(1), Some(a));
        assert_eq!(back.stamp(3), Some(b));
        assert_eq!(back.stamp(4), None);
        assert_eq!(back.stamp(2), None);
        assert_eq!(EventTimes::load(&dir.path().join("none")).stamp(1), None);
    }
}
