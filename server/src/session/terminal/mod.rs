//! The terminal half of a session: the PTY the program runs on, and its
//! output on the way to clients.
//!
//! Output path: `pty` (the master, read in bursts) → [`Terminal::pump`] →
//! `output` (the ring every client reads with its own cursor) → `ws/send`;
//! `screen` is fed from the same ring on its own thread, `flow` decides
//! when the pump waits for clients. Keys go the other way, from `ws/recv`
//! straight to [`Terminal::write`].

pub(crate) mod flow;
pub(crate) mod output;
pub(crate) mod parser;
pub(crate) mod pipes;
pub(crate) mod program;
pub(crate) mod pty;
pub(crate) mod recording;
pub(crate) mod resize;
pub(crate) mod screen;
pub(crate) mod skim;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use bytes::Bytes;
use tracing::{debug, warn};

use crate::sync::lock;
use output::{Output, OutputLimits};
use pty::Pty;
use recording::Recording;

/// Why keys did not reach the program.
#[derive(Debug)]
pub(crate) enum KeysError {
    /// The PTY is gone.
    Closed,
    /// The program is not reading; see `pty::MAX_QUEUED_BYTES`.
    Full(String),
}

/// A session's PTY and output. The PTY handle goes away once the program
/// has exited and its output drained.
pub(crate) struct Terminal {
    pub(crate) output: Arc<Output>,
    pty: Mutex<Option<Arc<Pty>>>,
    /// The program runs on pipes (`pipes.rs`): no keys reach it.
    headless: AtomicBool,
}

impl Terminal {
    /// Output for a `cols`×`rows` screen, and the thread that parses it.
    pub(crate) fn new(
        cols: u16,
        rows: u16,
        limits: OutputLimits,
        recording: Option<Recording>,
    ) -> Result<Self> {
        let output = Arc::new(Output::new(cols, rows, limits));
        if let Some(r) = recording {
            let _ = output.recording.set(Arc::new(r));
        }
        // The parser is CPU-bound; it gets a thread of its own rather than a
        // runtime worker the forwarding path needs. Closing the output ends it.
        std::thread::Builder::new()
            .name("duet-screen".into())
            .stack_size(256 * 1024)
            .spawn({
                let output = output.clone();
                move || output.run_parser()
            })
            .context("spawning the screen thread")?;
        Ok(Self {
            output,
            pty: Mutex::new(None),
            headless: AtomicBool::new(false),
        })
    }

    /// Starts moving the program's output into the ring, until EOF.
    pub(crate) fn attach_pty(&self, pty: Arc<Pty>) -> impl std::future::Future<Output = ()> {
        *lock(&self.pty) = Some(pty.clone());
        pump(pty, self.output.clone())
    }

    /// Shows a headless program's stderr, until EOF; from now on the
    /// terminal takes no keys.
    pub(crate) fn attach_stderr(
        &self,
        stderr: tokio::process::ChildStderr,
    ) -> impl std::future::Future<Output = ()> {
        self.headless.store(true, Ordering::Release);
        pipes::pump_stderr(stderr, self.output.clone())
    }

    /// Whether the program runs without a PTY (see [`pipes`]).
    pub(crate) fn is_headless(&self) -> bool {
        self.headless.load(Ordering::Acquire)
    }

    /// Sends bytes to the program.
    pub(crate) async fn write(&self, bytes: Bytes) -> Result<(), KeysError> {
        // Written from the caller's own task: one syscall when the PTY has
        // room, no thread hop.
        let Some(pty) = lock(&self.pty).clone() else {
            return Err(KeysError::Closed);
        };
        pty.write(bytes).await.map_err(|e| match e.kind() {
            std::io::ErrorKind::WouldBlock => KeysError::Full(e.to_string()),
            _ => KeysError::Closed,
        })
    }

    /// Sets the PTY size and records it in the stream.
    pub(crate) fn resize(&self, cols: u16, rows: u16) {
        // Recorded in the stream before the program learns of it (SIGWINCH):
        // its redraw at the new size must land after the mark, or the screen
        // would parse it at the old size.
        self.output.resize(cols, rows);
        let pty = lock(&self.pty).clone();
        if let Some(Err(e)) = pty.map(|p| p.resize(cols, rows)) {
            warn!(?e, "resizing the PTY");
        }
        if let Some(r) = self.output.recording.get() {
            r.resize(cols, rows);
        }
    }

    /// Writes out what the recording holds in its buffer, so that the file
    /// has all output so far.
    pub(crate) fn flush_recording(&self) {
        if let Some(r) = self.output.recording.get() {
            r.flush();
        }
    }

    /// The program exited: hang up whatever still holds the terminal (a job
    /// the shell put in a group of its own) by closing the master.
    pub(crate) fn close_pty(&self) {
        if let Some(pty) = lock(&self.pty).take() {
            pty.close();
        }
    }

    /// Closes the output with no PTY ever attached (a failed start).
    pub(crate) fn abandon(&self) {
        self.output.close();
    }
}

/// The PTY read buffer of a session that has not flooded yet.
const PUMP_FIRST_BUF: usize = 4 << 10;
/// ... and of one that has.
const PUMP_MAX_BUF: usize = 64 << 10;

/// Moves program output into the ring until EOF.
async fn pump(pty: Arc<Pty>, output: Arc<Output>) {
    let recording = output.recording.get().cloned();
    // Up to 64 KiB per push: a flood arrives in 4 KiB reads, and each push
    // wakes the parser and every client. The buffer starts small and doubles
    // each time a burst fills it (zeroing touches every page: an idle
    // session keeps 4 KiB resident, not 64).
    let mut buf = vec![0u8; PUMP_FIRST_BUF];
    loop {
        output.make_room().await;
        match pty.read_burst(&mut buf).await {
            Ok(0) => break,
            Ok(n) => {
                if n == buf.len() && buf.len() < PUMP_MAX_BUF {
                    buf.resize((buf.len() * 2).min(PUMP_MAX_BUF), 0);
                }
                // Clients first: the recording is off the echo's path.
                output.push(Bytes::copy_from_slice(&buf[..n]));
                if let Some(r) = &recording {
                    r.output(&buf[..n]);
                }
            }
            Err(e) => {
                debug!(?e, "reading the PTY");
                break;
            }
        }
    }
    if let Some(r) = &recording {
        r.flush();
    }
    output.close();
}
