//! The `--input-file` watcher: reads JSONL commands appended to a file (or
//! written to a FIFO) and hands them to the app in order.
//!
//! A regular file is read from its beginning, so commands written before the
//! agent started are not lost, and then again whenever inotify reports a
//! change. The directory is watched rather than the file, so the file may be
//! created, truncated or replaced after start; a slow poll backs inotify up on
//! filesystems that do not report changes. Nothing in the file can stop the
//! watcher: bad lines become notices.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use duet_protocol::command::InputCommand;
use notify::{RecursiveMode, Watcher};
use serde_json::Value;

/// Longest line accepted; a longer one is skipped whole.
pub(crate) const MAX_LINE_BYTES: usize = 1024 * 1024;
/// Longest prompt a `submit` may carry: what duet accepts and sends (a lower
/// cap here lost prompts between 64 and 256 KiB after duet had taken them).
pub(crate) use duet_protocol::command::MAX_SUBMIT_BYTES;
/// How often the file is checked when inotify has said nothing.
const POLL: Duration = Duration::from_secs(1);

/// What the watcher hands over.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Input {
    Command(InputCommand),
    /// A line was skipped, or the watcher hit a problem.
    Notice(String),
}

/// Starts watching `path`; `deliver` returns false once nobody listens,
/// which stops the watcher.
pub(crate) fn spawn(
    path: PathBuf,
    deliver: impl FnMut(Input) -> bool + Send + 'static,
) -> io::Result<()> {
    let is_fifo = std::fs::metadata(&path)
        .map(|m| m.file_type().is_fifo())
        .unwrap_or(false);
    thread::Builder::new()
        .name("input-watcher".into())
        .spawn(move || {
            if is_fifo {
                read_fifo(&path, deliver);
            } else {
                watch_file(&path, deliver);
            }
        })
        .map(|_| ())
}

/// Splits bytes into lines, holding a partial line until its newline comes.
#[derive(Debug, Default)]
pub(crate) struct Lines {
    partial: Vec<u8>,
    /// Inside a line longer than [`MAX_LINE_BYTES`], dropping it to its end.
    skipping: bool,
    number: u64,
}

impl Lines {
    /// Feeds bytes; returns what the complete lines say.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<Input> {
        let mut out = Vec::new();
        let mut rest = bytes;
        while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
            let (head, tail) = rest.split_at(nl);
            rest = &tail[1..];
            self.number += 1;
            if self.skipping {
                self.skipping = false;
                continue;
            }
            if self.partial.len() + head.len() > MAX_LINE_BYTES {
                self.partial.clear();
                out.push(self.too_long());
                continue;
            }
            self.partial.extend_from_slice(head);
            let line = std::mem::take(&mut self.partial);
            out.extend(parse_line(self.number, &line));
        }
        if !self.skipping {
            if self.partial.len() + rest.len() > MAX_LINE_BYTES {
                self.partial.clear();
                self.skipping = true;
                out.push(self.too_long());
            } else {
                self.partial.extend_from_slice(rest);
            }
        }
        out
    }

    /// Forgets everything: the file was truncated or replaced.
    pub(crate) fn reset(&mut self) {
        *self = Lines::default();
    }

    fn too_long(&self) -> Input {
        Input::Notice(format!(
            "input file: skipped line {}: longer than {} KiB",
            self.number + u64::from(self.skipping),
            MAX_LINE_BYTES / 1024
        ))
    }
}

/// One line: a command, a notice, or nothing (blank lines).
fn parse_line(number: u64, line: &[u8]) -> Option<Input> {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let skipped = |why: String| {
        Some(Input::Notice(format!(
            "input file: skipped line {number}: {why}"
        )))
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return skipped(format!("not JSON ({e})")),
    };
    let kind = value
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if kind != "submit" && kind != "confirmation_response" {
        return skipped(format!("unknown command type {kind:?}"));
    }
    match serde_json::from_value::<InputCommand>(value) {
        Ok(InputCommand::Submit { text }) if text.len() > MAX_SUBMIT_BYTES => skipped(format!(
            "submit longer than {} KiB",
            MAX_SUBMIT_BYTES / 1024
        )),
        Ok(command) => Some(Input::Command(command)),
        Err(e) => skipped(format!("bad {kind} ({e})")),
    }
}

/// Follows a regular file: reads what was appended since last time.
struct Follower {
    offset: u64,
    inode: Option<u64>,
    lines: Lines,
}

impl Follower {
    fn read_new(&mut self, path: &Path) -> io::Result<Vec<Input>> {
        let mut file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let meta = file.metadata()?;
        if self.inode != Some(meta.ino()) || meta.len() < self.offset {
            // Replaced or truncated: a new file, read from its start.
            self.inode = Some(meta.ino());
            self.offset = 0;
            self.lines.reset();
        }
        file.seek(SeekFrom::Start(self.offset))?;
        let mut out = Vec::new();
        let mut buf = vec![0; 64 * 1024];
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            self.offset += n as u64;
            out.extend(self.lines.push(&buf[..n]));
        }
        Ok(out)
    }
}

/// Whether an inotify event can mean new content (writes, creation,
/// truncation, replacement), as opposed to someone merely reading.
fn changes_data(kind: &notify::EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, ModifyKind};
    use notify::EventKind;
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        _ => true,
    }
}

fn watch_file(path: &Path, mut deliver: impl FnMut(Input) -> bool) {
    let (wake_tx, wake_rx) = mpsc::sync_channel::<()>(1);
    let name = path.file_name().map(|n| n.to_os_string());
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // Keep the watcher alive for as long as we follow the file.
    let _watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let ours = match &event {
            // Our own open/read/close of the file are inotify events too;
            // waking on them would make the follower wake itself forever.
            Ok(ev) if !changes_data(&ev.kind) => false,
            Ok(ev) => ev.paths.iter().any(|p| p.file_name() == name.as_deref()),
            Err(_) => true,
        };
        if ours {
            // A full channel already holds a wake-up; one is enough.
            let _ = wake_tx.try_send(());
        }
    })
    .and_then(|mut w| w.watch(&dir, RecursiveMode::NonRecursive).map(|()| w))
    .map_err(|e| {
        deliver(Input::Notice(format!(
            "input file: cannot watch {} ({e}); checking it every {} s instead",
            dir.display(),
            POLL.as_secs()
        )))
    });

    let mut follower = Follower {
        offset: 0,
        inode: None,
        lines: Lines::default(),
    };
    let mut last_error = None;
    loop {
        match follower.read_new(path) {
            Ok(inputs) => {
                last_error = None;
                for input in inputs {
                    if !deliver(input) {
                        return;
                    }
                }
            }
            Err(e) => {
                // Say it once, not every poll.
                let message = format!("input file {}: {e}", path.display());
                if last_error.as_ref() != Some(&message) {
                    if !deliver(Input::Notice(message.clone())) {
                        return;
                    }
                    last_error = Some(message);
                }
            }
        }
        match wake_rx.recv_timeout(POLL) {
            Ok(()) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => thread::sleep(POLL),
        }
    }
}

/// Reads a FIFO: each writer's lines until it closes, then waits for the next.
fn read_fifo(path: &Path, mut deliver: impl FnMut(Input) -> bool) {
    let mut lines = Lines::default();
    let mut buf = vec![0; 64 * 1024];
    loop {
        // Blocks until a writer opens the FIFO.
        let mut file = match File::open(path) {
            Ok(f) => f,
            Err(e) => {
                deliver(Input::Notice(format!(
                    "input file {}: {e}; remote input off",
                    path.display()
                )));
                return;
            }
        };
        loop {
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    for input in lines.push(&buf[..n]) {
                        if !deliver(input) {
                            return;
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn submit(text: &str) -> Input {
        Input::Command(InputCommand::Submit { text: text.into() })
    }

    #[test]
    fn partial_lines_wait_for_their_newline() {
        let mut lines = Lines::default();
        assert_eq!(lines.push(b"{\"type\":\"submit\",\"te"), vec![]);
        assert_eq!(lines.push(b"xt\":\"hi\"}\n{\"type\""), vec![submit("hi")]);
        assert_eq!(
            lines.push(b":\"confirmation_response\",\"request_id\":\"r\",\"allowed\":false}\r\n"),
            vec![Input::Command(InputCommand::ConfirmationResponse {
                request_id: "r".into(),
                allowed: false
            })]
        );
    }

    #[test]
    fn bad_lines_become_notices_and_do_not_stop_the_rest() {
        let mut lines = Lines::default();
        let out = lines.push(
            b"not json\n\n{\"type\":\"dance\"}\n{\"type\":\"submit\"}\n{\"type\":\"submit\",\"text\":\"ok\"}\n",
        );
        assert_eq!(out.len(), 4, "{out:?}");
        assert!(
            matches!(&out[0], Input::Notice(n) if n.contains("line 1") && n.contains("not JSON"))
        );
        assert!(
            matches!(&out[1], Input::Notice(n) if n.contains("line 3") && n.contains("\"dance\""))
        );
        assert!(matches!(&out[2], Input::Notice(n) if n.contains("line 4")));
        assert_eq!(out[3], submit("ok"));
    }

    #[test]
    fn takes_every_prompt_duet_may_send_and_skips_a_longer_one() {
        let mut lines = Lines::default();
        let text = "x".repeat(MAX_SUBMIT_BYTES);
        let line = format!("{{\"type\":\"submit\",\"text\":\"{text}\"}}\n");
        assert_eq!(lines.push(line.as_bytes()), vec![submit(&text)]);
        let over = format!("{{\"type\":\"submit\",\"text\":\"{text}x\"}}\n");
        let out = lines.push(over.as_bytes());
        assert!(matches!(&out[..], [Input::Notice(n)] if n.contains("submit longer than")));
    }

    #[test]
    fn an_overlong_line_is_skipped_whole() {
        let mut lines = Lines::default();
        let big = vec![b'x'; MAX_LINE_BYTES + 10];
        let out = lines.push(&big);
        assert!(matches!(&out[..], [Input::Notice(n)] if n.contains("longer than")));
        assert_eq!(
            lines.push(b"xxxx\n{\"type\":\"submit\",\"text\":\"a\"}\n"),
            vec![submit("a")]
        );
    }

    #[test]
    fn follower_reads_appends_and_restarts_after_truncation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.jsonl");
        let mut f = Follower {
            offset: 0,
            inode: None,
            lines: Lines::default(),
        };
        assert_eq!(f.read_new(&path).unwrap(), vec![]);
        std::fs::write(
            &path,
            "{\"type\":\"submit\",\"text\":\"a\"}\n{\"type\":\"sub",
        )
        .unwrap();
        assert_eq!(f.read_new(&path).unwrap(), vec![submit("a")]);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut file, b"mit\",\"text\":\"b\"}\n").unwrap();
        assert_eq!(f.read_new(&path).unwrap(), vec![submit("b")]);
        std::fs::write(&path, "{\"type\":\"submit\",\"text\":\"c\"}\n").unwrap();
        assert_eq!(f.read_new(&path).unwrap(), vec![submit("c")]);
    }
}
