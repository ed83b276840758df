//! The dual-output events channel: JSON lines written, one `write` each, by a
//! dedicated thread, so that neither a FIFO nobody opened yet nor a reader
//! that stopped reading can freeze the TUI.
//!
//! Failure policy, as in Qwen Code: a channel that cannot be opened is a
//! warning and the TUI runs without it; a reader that goes away (EPIPE or any
//! other write error) disables the channel, never the TUI.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use duet_protocol::sidecar::SidecarEvent;

use crate::options::EventTarget;

/// Lines the writer may fall behind before the channel is given up on. A
/// reader this far behind is stuck; rather than freeze the TUI or queue
/// without bound, the stream ends there (a clean end is easier on a consumer
/// than a silent gap).
pub(crate) const BACKLOG_LINES: usize = 8192;

/// Something for the TUI to tell the user about the channel.
pub(crate) type Notify = Box<dyn Fn(String) + Send>;

/// The writing end of the events channel; cheap to share between threads.
pub(crate) struct Sidecar {
    lines: Mutex<Option<SyncSender<String>>>,
    alive: AtomicBool,
    ended: AtomicBool,
    finished: Mutex<Option<Receiver<()>>>,
}

/// How the file will be opened.
enum Opening {
    /// Already open.
    Ready(File),
    /// A FIFO (or pipe): opening it for writing blocks until a reader opens
    /// it, so the writer thread does it.
    Deferred(PathBuf),
}

impl Sidecar {
    /// A channel that writes nothing.
    pub(crate) fn disabled() -> Self {
        Sidecar {
            lines: Mutex::new(None),
            alive: AtomicBool::new(false),
            ended: AtomicBool::new(true),
            finished: Mutex::new(None),
        }
    }

    /// Opens the channel. The error is the warning to print; the caller runs
    /// the TUI without dual output.
    pub(crate) fn open(target: &EventTarget, notify: Notify) -> Result<Self, String> {
        let opening = match target {
            EventTarget::Fd(fd) if *fd <= 2 => {
                return Err(format!(
                    "--json-fd {fd} refused: fds 0, 1 and 2 belong to the terminal"
                ))
            }
            // A path to the already-open descriptor: std has no safe way to
            // adopt a raw fd, and the workspace forbids unsafe code.
            EventTarget::Fd(fd) => open_target(&PathBuf::from(format!("/dev/fd/{fd}")), false)
                .map_err(|e| format!("--json-fd {fd}: {e}"))?,
            EventTarget::Path(path) => open_target(path, true)
                .map_err(|e| format!("--json-file {}: {e}", path.display()))?,
        };
        let (lines_tx, lines_rx) = mpsc::sync_channel::<String>(BACKLOG_LINES);
        let (done_tx, done_rx) = mpsc::channel();
        let sidecar = Sidecar {
            lines: Mutex::new(Some(lines_tx)),
            alive: AtomicBool::new(true),
            ended: AtomicBool::new(false),
            finished: Mutex::new(Some(done_rx)),
        };
        thread::Builder::new()
            .name("sidecar-writer".into())
            .spawn(move || {
                write_lines(opening, lines_rx, notify);
                let _ = done_tx.send(());
            })
            .map_err(|e| format!("cannot start the events writer: {e}"))?;
        Ok(sidecar)
    }

    /// Whether events are still being written.
    pub(crate) fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Relaxed)
    }

    /// Queues one event. Never blocks.
    pub(crate) fn emit(&self, event: &SidecarEvent) {
        if !self.is_alive() {
            return;
        }
        let line = event.to_line();
        let Ok(mut guard) = self.lines.lock() else {
            return;
        };
        let Some(tx) = guard.as_ref() else {
            return;
        };
        match tx.try_send(line) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                // Dropping the sender lets the writer finish the backlog and stop.
                *guard = None;
                self.alive.store(false, Ordering::Relaxed);
            }
            Err(TrySendError::Disconnected(_)) => {
                *guard = None;
                self.alive.store(false, Ordering::Relaxed);
            }
        }
    }

    /// Writes `session_end` (once, whoever calls first) and waits up to
    /// `grace` for the writer to get everything out.
    pub(crate) fn end(&self, session_end: &SidecarEvent, grace: Duration) {
        if self.ended.swap(true, Ordering::SeqCst) {
            return;
        }
        self.emit(session_end);
        if let Ok(mut guard) = self.lines.lock() {
            *guard = None;
        }
        let done = self.finished.lock().ok().and_then(|mut f| f.take());
        if let Some(done) = done {
            let _ = done.recv_timeout(grace);
        }
    }
}

/// Opens a regular file for appending now; leaves a FIFO to the writer
/// thread. `create` is false for /dev/fd/N, which must already exist.
fn open_target(path: &Path, create: bool) -> std::io::Result<Opening> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.file_type().is_fifo() => return Ok(Opening::Deferred(path.to_path_buf())),
        Ok(meta) if meta.file_type().is_socket() => {
            return Err(std::io::Error::other(
                "is a socket, which cannot be reopened through a path; use a pipe or a file",
            ))
        }
        Ok(meta) if meta.is_dir() => return Err(std::io::Error::other("is a directory")),
        Ok(_) => {}
        Err(e) if !create => return Err(e),
        Err(_) => {}
    }
    OpenOptions::new()
        .append(true)
        .create(create)
        .open(path)
        .map(Opening::Ready)
}

/// The writer thread: one `write` per line, so a line never interleaves with
/// another writer's on an O_APPEND file, and lines up to PIPE_BUF are atomic
/// on a pipe.
fn write_lines(opening: Opening, lines: Receiver<String>, notify: Notify) {
    let mut file = match opening {
        Opening::Ready(file) => file,
        Opening::Deferred(path) => match OpenOptions::new().append(true).open(&path) {
            Ok(file) => file,
            Err(e) => {
                notify(format!(
                    "events channel {}: {e}; dual output off",
                    path.display()
                ));
                return;
            }
        },
    };
    for line in lines {
        if let Err(e) = file.write_all(line.as_bytes()).and_then(|()| file.flush()) {
            notify(format!("events reader went away ({e}); dual output off"));
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Events;

    #[test]
    fn fds_of_the_terminal_are_refused() {
        for fd in 0..=2 {
            let err = Sidecar::open(&EventTarget::Fd(fd), Box::new(|_| {})).err();
            assert!(err.unwrap().contains("refused"));
        }
    }

    #[test]
    fn a_closed_fd_is_a_warning() {
        let err = Sidecar::open(&EventTarget::Fd(987_654), Box::new(|_| {})).err();
        assert!(err.unwrap().contains("--json-fd 987654"));
    }

    #[test]
    fn writes_lines_in_order_and_session_end_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let sidecar = Sidecar::open(&EventTarget::Path(path.clone()), Box::new(|_| {})).unwrap();
        let events = Events::new("s");
        sidecar.emit(&events.user_text("one"));
        sidecar.emit(&events.user_text("two"));
        sidecar.end(&events.session_end(), Duration::from_secs(5));
        sidecar.end(&events.session_end(), Duration::from_secs(5));
        sidecar.emit(&events.user_text("after the end"));
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].contains("one") && lines[1].contains("two"));
        assert!(lines[2].contains("session_end"));
    }

    #[test]
    fn an_inherited_fd_is_reopened_for_appending() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let file = File::create(&path).unwrap();
        let fd = u32::try_from(file.as_raw_fd()).unwrap();
        let sidecar = Sidecar::open(&EventTarget::Fd(fd), Box::new(|_| {})).unwrap();
        let events = Events::new("s");
        sidecar.end(&events.session_end(), Duration::from_secs(5));
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .contains("session_end"));
    }

    #[test]
    fn an_unopenable_path_is_a_warning() {
        let err = Sidecar::open(
            &EventTarget::Path("/nonexistent-dir/x/events.jsonl".into()),
            Box::new(|_| {}),
        )
        .err();
        assert!(err.unwrap().contains("--json-file"));
    }
}
