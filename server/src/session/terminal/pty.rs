//! A session's PTY: open one, start a program on it as the leader of a new
//! session, and read and write the master from the async runtime.
//!
//! Not portable-pty, which duet used at first, for two measured reasons.
//! Its spawn runs a `pre_exec` hook (setsid, TIOCSCTTY, closing fds), which
//! forces `fork()` of the whole server: with 1,000 sessions that copied
//! ~400 MiB of page tables per start and held duet to 19–43 starts/s. And its
//! I/O handles are blocking, so every keystroke and every output chunk took a
//! hop through a dedicated thread. Here the PTY is opened with rustix (safe
//! wrappers), the program is started with plain `std::process::Command`
//! (posix_spawn, no fork of duet) through util-linux's `setsid --ctty`, which
//! gives it a new session with the PTY as its controlling terminal, and the
//! master is a non-blocking fd driven by tokio's `AsyncFd`.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};
use bytes::Bytes;
use rustix::io::Errno;
use rustix::pty::OpenptFlags;
use tokio::io::unix::AsyncFd;
use tokio::sync::{mpsc, watch};

use super::program::{program_path, set_env, setsid};

/// Writes that could not go straight to the PTY wait here for the writer
/// task, at most this many of them...
const WRITE_QUEUE: usize = 256;
/// ...and at most this many bytes (or one write of any size): a program
/// that stops reading its input must not make duet hold whatever clients
/// keep sending (4 MiB frames took duet to 1.1 GiB). Over it, writes are
/// refused at once with [`queue_full`], never waited for, so the sending
/// client's other messages go on.
pub(crate) const MAX_QUEUED_BYTES: usize = 1 << 20;

/// How often a write to a full PTY is retried: first, and at most.
const WRITE_BACKOFF_MIN: std::time::Duration = std::time::Duration::from_millis(1);
const WRITE_BACKOFF_MAX: std::time::Duration = std::time::Duration::from_millis(50);

pub(crate) use crate::config::SpawnOptions;

/// The master side of a PTY, non-blocking, registered with the runtime.
///
/// Writes take a fast path: when nothing is queued and the PTY has room,
/// the caller's own task writes (one syscall, no handoff). Whatever does
/// not fit goes to a queue drained by a writer task, so a program that
/// stops reading its input holds up only the queue (a caller waits only
/// when the queue is full), and bytes that reached the queue are written
/// even if their client goes away.
pub(crate) struct Pty {
    fd: AsyncFd<OwnedFd>,
    /// True once the session lets go of the PTY: the reader and the writer
    /// task stop, and the master closes when the last handle drops.
    closed: watch::Sender<bool>,
    /// Held by whoever writes to the fd.
    writing: tokio::sync::Mutex<()>,
    /// Held while putting bytes in the queue (or writing them directly), so
    /// that one caller's bytes are never split by another's.
    order: tokio::sync::Mutex<()>,
    /// Items in `queue` not yet written; the fast path needs it at 0 so that
    /// nothing overtakes queued bytes.
    queued: AtomicUsize,
    /// Bytes in `queue` not yet written.
    queued_bytes: AtomicUsize,
    queue: mpsc::Sender<Bytes>,
}

/// A started program.
pub(crate) struct Spawned {
    pub pty: Arc<Pty>,
    pub child: tokio::process::Child,
    /// Also its process-group id: the program leads a new session.
    pub pid: u32,
}

/// Opens a PTY of `opts.cols`×`opts.rows` and starts `opts.program` on it.
/// Must run inside a tokio runtime.
pub(crate) fn spawn(opts: &SpawnOptions) -> Result<Spawned> {
    let setsid = setsid().ok_or_else(|| {
        anyhow!("duet needs setsid(1) (util-linux) to give programs a controlling terminal; it is not installed")
    })?;
    let program = program_path(opts)?;

    // CLOEXEC on both sides: a master inherited by another session's program
    // would keep this PTY open after its own program exits.
    let master =
        rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)
            .context("opening a PTY")?;
    rustix::pty::grantpt(&master).context("grantpt")?;
    rustix::pty::unlockpt(&master).context("unlockpt")?;
    let slave_path = rustix::pty::ptsname(&master, Vec::new()).context("ptsname")?;
    let slave_path = PathBuf::from(std::ffi::OsStr::from_bytes(slave_path.as_bytes()));
    set_size(&master, opts.cols, opts.rows).context("setting the PTY size")?;
    // duet must not acquire the PTY as its own controlling terminal; the
    // program does, through `setsid -c` on its stdin.
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(rustix::fs::OFlags::NOCTTY.bits() as i32)
        .open(&slave_path)
        .with_context(|| format!("opening {}", slave_path.display()))?;

    // `-c` (util-linux's --ctty; busybox and toybox know only `-c`): a new
    // session with stdin, the PTY, as its controlling terminal. The child is
    // not a process-group leader (no `process_group` here), so setsid does
    // not fork: the pid we get is the program's, and its group's id.
    let mut cmd = std::process::Command::new(setsid);
    cmd.arg("-c").arg(&program).args(&opts.args);
    cmd.current_dir(&opts.cwd);
    cmd.env("TERM", "xterm-256color");
    cmd.env("COLORTERM", "truecolor");
    set_env(&mut cmd, opts);
    cmd.stdin(slave.try_clone()?)
        .stdout(slave.try_clone()?)
        .stderr(slave);
    let child = tokio::process::Command::from(cmd)
        .spawn()
        .with_context(|| format!("starting {:?}", opts.program))?;
    // The slave handles given to the child were ours to close: the command
    // is dropped with them above, so only the program holds the PTY open, and
    // the master reads EOF when it exits.
    let pid = child.id().context("the program has no pid")?;

    rustix::io::ioctl_fionbio(&master, true).context("making the PTY non-blocking")?;
    // Deprecated because a generic `T` could change the fd it reports; an
    // `OwnedFd` owns one descriptor for its whole life, which is exactly the
    // safety contract of `AsyncFd::register` (unsafe, and duet forbids unsafe).
    //
    // Readable only: writes never wait on the reactor (see `write_all`), and
    // with writable interest too every keystroke woke the event loop twice,
    // once for the echo and once for the edge that says the line discipline
    // took the key (profiled, docs/benchmarks.md).
    #[allow(deprecated)]
    let fd = AsyncFd::with_interest(master, tokio::io::Interest::READABLE)
        .context("registering the PTY with the runtime")?;
    let (queue, rx) = mpsc::channel(WRITE_QUEUE);
    let pty = Arc::new(Pty {
        fd,
        closed: watch::channel(false).0,
        writing: tokio::sync::Mutex::new(()),
        order: tokio::sync::Mutex::new(()),
        queued: AtomicUsize::new(0),
        queued_bytes: AtomicUsize::new(0),
        queue,
    });
    tokio::spawn(write_queued(pty.clone(), rx));
    Ok(Spawned { pty, child, pid })
}

/// Drains the write queue until the PTY is closed or the program is gone.
async fn write_queued(pty: Arc<Pty>, mut rx: mpsc::Receiver<Bytes>) {
    let mut closed = pty.closed.subscribe();
    loop {
        let data = tokio::select! {
            data = rx.recv() => data,
            _ = closed.wait_for(|c| *c) => None,
        };
        let Some(data) = data else { break };
        let done = {
            let _writing = pty.writing.lock().await;
            let done = tokio::select! {
                r = pty.write_all(&data) => r.is_ok(),
                _ = closed.wait_for(|c| *c) => false,
            };
            pty.queued.fetch_sub(1, Ordering::AcqRel);
            pty.queued_bytes.fetch_sub(data.len(), Ordering::AcqRel);
            done
        };
        if !done {
            // The program is gone: later writes fail on the closed queue.
            break;
        }
    }
}

/// One count in [`Pty::queued`] for an item not in the queue yet.
struct Counted<'a>(&'a AtomicUsize);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

fn closed_error() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the PTY is closed")
}

/// The error of a write refused because the program is not reading.
pub(crate) fn queue_full() -> io::Error {
    io::Error::new(
        io::ErrorKind::WouldBlock,
        format!(
            "the program is not reading its input: {} KiB are waiting for it already; these keys were dropped",
            MAX_QUEUED_BYTES >> 10
        ),
    )
}

impl Pty {
    /// Writes `data` to the program, in order with this caller's earlier
    /// writes. Returns once the bytes are written or queued.
    pub(crate) async fn write(&self, data: Bytes) -> io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        if *self.closed.borrow() {
            return Err(closed_error());
        }
        if self.try_write_now(&data)? {
            return Ok(());
        }
        // Behind whatever is queued. `order` keeps every caller's bytes whole:
        // nobody enqueues between another's direct write and its rest.
        let _order = self.order.lock().await;
        let len = data.len();
        let waiting = self.queued_bytes.load(Ordering::Acquire);
        if waiting > 0 && waiting + len > MAX_QUEUED_BYTES {
            return Err(queue_full());
        }
        self.queued.fetch_add(1, Ordering::AcqRel);
        // Uncounted again if it never gets queued.
        let counted = Counted(&self.queued);
        self.queued_bytes.fetch_add(len, Ordering::AcqRel);
        match self.queue.try_send(data) {
            Ok(()) => {
                std::mem::forget(counted);
                Ok(())
            }
            Err(e) => {
                self.queued_bytes.fetch_sub(len, Ordering::AcqRel);
                Err(match e {
                    mpsc::error::TrySendError::Full(_) => queue_full(),
                    mpsc::error::TrySendError::Closed(_) => closed_error(),
                })
            }
        }
    }

    /// The fast path of [`write`](Self::write), taken only when nothing is
    /// queued or being written and the queue has room: one non-blocking
    /// `write`, and whatever did not fit is queued at once, under the same
    /// locks, so nothing can come between. False: take the slow path.
    fn try_write_now(&self, data: &Bytes) -> io::Result<bool> {
        if self.queued.load(Ordering::Acquire) != 0 {
            return Ok(false);
        }
        let (Ok(_order), Ok(_writing)) = (self.order.try_lock(), self.writing.try_lock()) else {
            return Ok(false);
        };
        // Checked again under the locks: the writer task decrements before
        // it lets go of `writing`.
        if self.queued.load(Ordering::Acquire) != 0 {
            return Ok(false);
        }
        let Ok(permit) = self.queue.try_reserve() else {
            return Ok(false);
        };
        // A plain non-blocking write; see `write_all` for why the reactor's
        // write readiness is not used.
        let n = match rustix::io::write(self.fd.get_ref(), data) {
            Ok(n) => n,
            Err(Errno::AGAIN | Errno::INTR) => 0,
            Err(e) => return Err(e.into()),
        };
        if n < data.len() {
            self.queued.fetch_add(1, Ordering::AcqRel);
            self.queued_bytes
                .fetch_add(data.len() - n, Ordering::AcqRel);
            permit.send(data.slice(n..));
        }
        Ok(true)
    }

    /// Lets go of the PTY: the reader sees EOF, queued writes are dropped,
    /// and the master closes once the session drops its handle, which
    /// hangs up anything still holding the terminal.
    pub(crate) fn close(&self) {
        self.closed.send_replace(true);
    }

    /// Waits for output and reads everything already there, up to
    /// `buf.len()` bytes: one push per burst rather than per 4 KiB read.
    /// Returns 0 at EOF (Linux reports a closed slave side as EIO) or once
    /// [`close`](Self::close) was called.
    pub(crate) async fn read_burst(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut closed = self.closed.subscribe();
        tokio::select! {
            r = self.read_available(buf) => r,
            _ = closed.wait_for(|c| *c) => Ok(0),
        }
    }

    async fn read_available(&self, buf: &mut [u8]) -> io::Result<usize> {
        /// Far below the ~4 KiB a PTY hands out per read under a flood.
        const SHORT_READ: usize = 512;
        let mut filled = 0;
        loop {
            let mut guard = self.fd.readable().await?;
            loop {
                match rustix::io::read(self.fd.get_ref(), &mut buf[filled..]) {
                    Ok(0) | Err(Errno::IO) => return Ok(filled),
                    Ok(n) => {
                        filled += n;
                        if filled == buf.len() {
                            return Ok(filled);
                        }
                        // A short first read is interactive output (an
                        // echo): hand it over now, and take it that the PTY
                        // is empty instead of asking with one more `read`
                        // (a syscall on every echo's path). Safe: output
                        // written after this read is a new edge, and
                        // `clear_ready` keeps readiness that an event
                        // newer than this guard set.
                        if filled < SHORT_READ {
                            guard.clear_ready();
                            return Ok(filled);
                        }
                    }
                    Err(Errno::INTR) => {}
                    Err(Errno::AGAIN) => {
                        guard.clear_ready();
                        if filled > 0 {
                            return Ok(filled);
                        }
                        break;
                    }
                    // Hand over what was read; the error comes back on the
                    // next call.
                    Err(_) if filled > 0 => return Ok(filled),
                    Err(e) => return Err(e.into()),
                }
            }
        }
    }

    /// Writes all of `data`, waiting for room. Only the writer task calls
    /// it, holding `writing`.
    ///
    /// Room is polled with a backoff, not awaited through the reactor: a PTY
    /// master keeps reporting itself writable while writes fail with EAGAIN
    /// (the kernel counts free buffer space finer than it allocates it), and
    /// tokio then never clears the readiness, so a readiness loop spins at
    /// 100 % CPU (seen with strace: nothing but failing writes). Only a
    /// program that stopped reading its input gets here.
    async fn write_all(&self, mut data: &[u8]) -> io::Result<()> {
        let mut backoff = WRITE_BACKOFF_MIN;
        while !data.is_empty() {
            match rustix::io::write(self.fd.get_ref(), data) {
                Ok(n) => {
                    data = &data[n..];
                    backoff = WRITE_BACKOFF_MIN;
                }
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => {
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(WRITE_BACKOFF_MAX);
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Sets the terminal size; the kernel sends SIGWINCH to the program.
    pub(crate) fn resize(&self, cols: u16, rows: u16) -> io::Result<()> {
        set_size(self.fd.get_ref(), cols, rows)
    }
}

fn set_size(fd: &OwnedFd, cols: u16, rows: u16) -> io::Result<()> {
    rustix::termios::tcsetwinsize(
        fd,
        rustix::termios::Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )
    .map_err(io::Error::from)
}
