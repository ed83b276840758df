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

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{anyhow, bail, Context, Result};
use rustix::io::Errno;
use rustix::pty::OpenptFlags;
use tokio::io::unix::AsyncFd;

/// What to run and where.
#[derive(Debug, Clone)]
pub struct SpawnOptions {
    pub program: String,
    pub args: Vec<String>,
    /// Added to (and overriding) duet's own environment, minus `DUET_*`.
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    pub cols: u16,
    pub rows: u16,
}

/// The master side of a PTY, non-blocking, registered with the runtime.
pub struct Pty {
    fd: AsyncFd<OwnedFd>,
    /// Keeps writes from concurrent clients whole and in order: a write
    /// that blocks halfway must finish before the next one starts.
    write_order: tokio::sync::Mutex<()>,
}

/// A started program.
pub struct Spawned {
    pub pty: Pty,
    pub child: tokio::process::Child,
    /// Also its process-group id: the program leads a new session.
    pub pid: u32,
}

/// Opens a PTY of `opts.cols`×`opts.rows` and starts `opts.program` on it.
/// Must run inside a tokio runtime.
pub fn spawn(opts: &SpawnOptions) -> Result<Spawned> {
    let setsid = setsid().ok_or_else(|| {
        anyhow!("duet needs setsid(1) (util-linux) to give programs a controlling terminal; it is not installed")
    })?;
    let path_var = opts
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| OsString::from(v))
        .or_else(|| std::env::var_os("PATH"));
    let program = resolve_program(&opts.program, &opts.cwd, path_var.as_deref())?;

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
    // program does, through `setsid --ctty` on its stdin.
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(rustix::fs::OFlags::NOCTTY.bits() as i32)
        .open(&slave_path)
        .with_context(|| format!("opening {}", slave_path.display()))?;

    let mut cmd = std::process::Command::new(setsid);
    cmd.arg("--ctty").arg(&program).args(&opts.args);
    cmd.current_dir(&opts.cwd);
    // duet's own settings (the auth token above all) must not leak into the
    // programs it hosts.
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("DUET_") {
            cmd.env_remove(&key);
        }
    }
    cmd.env("TERM", "xterm-256color");
    cmd.env("COLORTERM", "truecolor");
    for (k, v) in &opts.env {
        cmd.env(k, v);
    }
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
    #[allow(deprecated)]
    let fd = AsyncFd::new(master).context("registering the PTY with the runtime")?;
    Ok(Spawned {
        pty: Pty {
            fd,
            write_order: tokio::sync::Mutex::new(()),
        },
        child,
        pid,
    })
}

impl Pty {
    /// Waits for output and reads everything already there, up to
    /// `buf.len()` bytes: one push per burst rather than per 4 KiB read.
    /// Returns 0 at EOF (Linux reports a closed slave side as EIO).
    pub async fn read_burst(&self, buf: &mut [u8]) -> io::Result<usize> {
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

    /// Writes all of `data`, in one `write` when the PTY has room (the
    /// usual case: a keystroke costs one syscall on the caller's task).
    pub async fn write_all(&self, mut data: &[u8]) -> io::Result<()> {
        let _order = self.write_order.lock().await;
        while !data.is_empty() {
            let mut guard = self.fd.writable().await?;
            match guard.try_io(|fd| rustix::io::write(fd.get_ref(), data).map_err(io::Error::from))
            {
                Ok(Ok(n)) => data = &data[n..],
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Err(e),
                // Full: readiness was cleared, wait for the program to read.
                Err(_would_block) => {}
            }
        }
        Ok(())
    }

    /// Sets the terminal size; the kernel sends SIGWINCH to the program.
    pub fn resize(&self, cols: u16, rows: u16) -> io::Result<()> {
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

/// How a program ended, in the protocol's terms.
pub fn exit_info(status: std::process::ExitStatus) -> duet_protocol::rest::ExitInfo {
    duet_protocol::rest::ExitInfo {
        code: status.code().map(|c| c as u32),
        signal: status.signal().map(signal_name),
        success: status.success(),
    }
}

fn signal_name(signal: i32) -> String {
    nix::sys::signal::Signal::try_from(signal)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {signal}"))
}

/// util-linux's `setsid`, looked up once.
fn setsid() -> Option<&'static Path> {
    static SETSID: OnceLock<Option<PathBuf>> = OnceLock::new();
    SETSID
        .get_or_init(|| {
            let path = std::env::var_os("PATH");
            find_on_path("setsid", path.as_deref()).or_else(|| {
                ["/usr/bin/setsid", "/bin/setsid"]
                    .into_iter()
                    .map(PathBuf::from)
                    .find(|p| is_executable(p))
            })
        })
        .as_deref()
}

/// Finds the program the way the shell would, so that a profile naming a
/// missing program fails at start with a clear error rather than starting
/// `setsid`, which would print its complaint into the terminal and exit 1.
fn resolve_program(program: &str, cwd: &Path, path: Option<&std::ffi::OsStr>) -> Result<PathBuf> {
    if program.contains('/') {
        let p = cwd.join(program);
        if !p.is_file() {
            bail!("{program:?} does not exist");
        }
        if !is_executable(&p) {
            bail!("{program:?} is not executable");
        }
        return Ok(p);
    }
    find_on_path(program, path).ok_or_else(|| anyhow!("{program:?} was not found on PATH"))
}

fn find_on_path(program: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    File::open(p)
        .and_then(|f| f.metadata())
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_like_the_shell_finds_them() {
        let path = std::env::var_os("PATH");
        let sh = resolve_program("sh", Path::new("/"), path.as_deref()).unwrap();
        assert!(sh.is_absolute() && sh.ends_with("sh"));
        let err = resolve_program("no-such-program-duet", Path::new("/"), path.as_deref())
            .unwrap_err()
            .to_string();
        assert!(err.contains("not found on PATH"), "{err}");
        let err = resolve_program("./nope", Path::new("/tmp"), path.as_deref())
            .unwrap_err()
            .to_string();
        assert!(err.contains("does not exist"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("data"), "not a program").unwrap();
        let err = resolve_program("./data", dir.path(), path.as_deref())
            .unwrap_err()
            .to_string();
        assert!(err.contains("not executable"), "{err}");
    }

    #[test]
    fn signals_have_their_usual_names() {
        assert_eq!(signal_name(9), "SIGKILL");
        assert_eq!(signal_name(1), "SIGHUP");
    }
}
