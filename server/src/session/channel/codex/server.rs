//! The Codex app server a session owns: `<codex> app-server --listen
//! unix://<session>/codex.sock`, with the profile's environment and work
//! dir, in a process group of its own (the npm launcher runs the native
//! Codex as its child), ended with the session. The TUI attaches to it
//! with `--remote`, duet as a second client (docs/codex.md §7).
//!
//! The TUI fails at once when the socket is not there yet, so the app
//! server is started first and waited for (a few hundred ms; bounded).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use crate::config::SpawnOptions;

/// Longest wait for the app server's socket (it took 0.3 s to 2 s on two
/// busy cores).
const LISTEN_WAIT: Duration = Duration::from_secs(30);

/// See the module docs. Kills its process group when dropped.
pub(super) struct AppServer {
    child: std::process::Child,
    stopped: bool,
    /// The socket's path as the TUI is given it (Codex makes it a symlink
    /// to the socket it binds under /tmp).
    pub(super) socket: PathBuf,
}

impl AppServer {
    /// Starts `tui.program app-server --listen unix://socket` where `tui`
    /// would run, and waits until it listens. Blocks (off the runtime's
    /// workers when it can): the TUI must not start before.
    pub(super) fn start(tui: &SpawnOptions, socket: PathBuf, log: &Path) -> Result<Self> {
        let _ = std::fs::remove_file(&socket);
        let log = std::fs::File::create(log).context("creating the app server's log")?;
        let program = crate::session::terminal::program::program_path(tui)?;
        let mut cmd = std::process::Command::new(program);
        cmd.arg("app-server")
            .arg("--listen")
            .arg(format!("unix://{}", socket.display()))
            .current_dir(&tui.cwd)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        crate::session::terminal::program::set_env(&mut cmd, tui);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd
            .spawn()
            .with_context(|| format!("starting {} app-server", tui.program))?;
        let mut server = Self {
            child,
            stopped: false,
            socket,
        };
        let mut wait = || server.wait_listening();
        match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
            Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(wait),
            _ => wait(),
        }?;
        Ok(server)
    }

    fn wait_listening(&mut self) -> Result<()> {
        let until = Instant::now() + LISTEN_WAIT;
        while Instant::now() < until {
            // Listening, not only bound: the TUI gives up on a refusal.
            let listening = self
                .target()
                .is_some_and(|t| std::os::unix::net::UnixStream::connect(t).is_ok());
            if listening {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait()? {
                bail!("the Codex app server exited before it listened ({status})");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        bail!(
            "the Codex app server did not listen on {} within {LISTEN_WAIT:?}",
            self.socket.display()
        )
    }

    /// The socket itself (the link's target): connecting through a path
    /// longer than a Unix socket address holds fails.
    pub(super) fn target(&self) -> Option<PathBuf> {
        let target = match std::fs::read_link(&self.socket) {
            Ok(t) if t.is_absolute() => t,
            Ok(t) => self.socket.parent()?.join(t),
            Err(_) => self.socket.clone(),
        };
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(&target)
            .ok()
            .filter(|m| m.file_type().is_socket())
            .map(|_| target)
    }

    /// Ends the app server and whatever it runs (once: its process group
    /// id could be another's after it is reaped), and removes its socket.
    pub(super) fn stop(&mut self) {
        if std::mem::replace(&mut self.stopped, true) {
            return;
        }
        let target = self.target();
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        }
        let _ = self.child.wait();
        if let Some(target) = target.filter(|t| *t != self.socket) {
            let _ = std::fs::remove_file(target);
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}

impl Drop for AppServer {
    fn drop(&mut self) {
        self.stop();
    }
}
