//! The audit trail: append-only JSONL, one file per session (`audit.jsonl`
//! in its directory, so it goes when the transcript goes) and one for the
//! server (`<state-dir>/audit.jsonl`).
//!
//! Lines are written by one thread per server, fed through a bounded
//! queue: a slow or failing disk never blocks a session (a line that does
//! not fit in the queue, or fails to write, is dropped with a warning and
//! counted in `duet_audit_dropped_total`). Every line is at most
//! [`MAX_LINE`] bytes: strings that came from clients or agents are cut
//! short to fit.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::Arc;

use serde_json::{json, Value};
use tracing::warn;

use super::metrics::Metrics;

/// The longest audit line, in bytes (newline included).
pub(crate) const MAX_LINE: usize = 8 << 10;
/// Longest string kept in a line that had to be shortened.
const MAX_FIELD_CHARS: usize = 256;
/// Lines waiting for the writer thread.
const QUEUE: usize = 4096;

enum Job {
    Line(Arc<File>, Vec<u8>),
    /// Answered once every line queued before it is written.
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// Hands lines to the writer thread.
#[derive(Clone)]
pub(crate) struct Writer {
    queue: SyncSender<Job>,
    metrics: Arc<Metrics>,
}

impl Writer {
    /// Starts the writer thread; it ends when the last `Writer` is dropped.
    pub(crate) fn start(metrics: Arc<Metrics>) -> anyhow::Result<Self> {
        let (queue, jobs) = sync_channel::<Job>(QUEUE);
        let counted = metrics.clone();
        std::thread::Builder::new()
            .name("duet-audit".into())
            .spawn(move || {
                for job in jobs {
                    match job {
                        Job::Line(file, line) => {
                            // One write(2) per line on an O_APPEND file:
                            // lines never interleave.
                            if let Err(e) = (&*file).write_all(&line) {
                                counted.audit_dropped.inc();
                                warn!(?e, "writing an audit line");
                            }
                        }
                        Job::Flush(done) => {
                            let _ = done.send(());
                        }
                    }
                }
            })?;
        Ok(Self { queue, metrics })
    }

    /// Queues `record` (with `ts` added) for `file`; never blocks.
    pub(crate) fn append(&self, file: &Arc<File>, mut record: Value) {
        if let Value::Object(map) = &mut record {
            map.insert("ts".into(), json!(crate::clock::now_ms()));
        }
        let line = bounded_line(record);
        match self.queue.try_send(Job::Line(file.clone(), line)) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                self.metrics.audit_dropped.inc();
                warn!("the audit queue is full; an audit line was dropped");
            }
            Err(TrySendError::Disconnected(_)) => {
                self.metrics.audit_dropped.inc();
            }
        }
    }

    /// Waits until every line queued so far is written.
    pub(crate) async fn flush(&self) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if self.queue.try_send(Job::Flush(tx)).is_ok() {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), rx).await;
        }
    }
}

/// Opens (creating, mode 0600) an audit file for appending.
pub(crate) fn open(path: &Path) -> Option<Arc<File>> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)
    {
        Ok(f) => Some(Arc::new(f)),
        Err(e) => {
            warn!(path = %path.display(), ?e, "opening the audit file; no audit trail here");
            None
        }
    }
}

/// `record` as one line of at most [`MAX_LINE`] bytes.
fn bounded_line(mut record: Value) -> Vec<u8> {
    let mut line = record.to_string().into_bytes();
    if line.len() + 1 > MAX_LINE {
        shorten(&mut record);
        if let Value::Object(map) = &mut record {
            map.insert("truncated".into(), Value::Bool(true));
        }
        line = record.to_string().into_bytes();
        if line.len() + 1 > MAX_LINE {
            // Only a record with very many fields gets here; keep what
            // says what it was.
            let keep = |k: &str| record.get(k).cloned().unwrap_or(Value::Null);
            line = json!({"ts": keep("ts"), "kind": keep("kind"), "session": keep("session"), "truncated": true})
                .to_string()
                .into_bytes();
        }
    }
    line.push(b'\n');
    line
}

fn shorten(v: &mut Value) {
    match v {
        Value::String(s) if s.chars().count() > MAX_FIELD_CHARS => {
            let mut short: String = s.chars().take(MAX_FIELD_CHARS).collect();
            short.push('…');
            *s = short;
        }
        Value::Array(items) => items.iter_mut().for_each(shorten),
        Value::Object(map) => map.values_mut().for_each(shorten),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_to_the_limit() {
        let line = bounded_line(json!({"kind": "submit", "text": "x".repeat(100_000)}));
        assert!(line.len() <= MAX_LINE);
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["kind"], "submit");
        assert_eq!(v["truncated"], true);
        let many: Vec<String> = (0..10_000).map(|i| i.to_string()).collect();
        let line = bounded_line(json!({"kind": "x", "many": many}));
        assert!(line.len() <= MAX_LINE);
        assert!(line.ends_with(b"\n"));
    }
}
