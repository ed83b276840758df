//! A terminal for duet's terminal client under test: the test holds the
//! PTY's master, as a person's terminal emulator would, and runs `duet
//! attach`/`duet run` on its slave, as the leader of a session whose
//! controlling terminal it is (so that a resize sends it SIGWINCH). What
//! the client writes is kept whole and drawn on a vt100 screen.

use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};

use rustix::pty::OpenptFlags;
use rustix::termios::Winsize;
use tokio::sync::watch;

use super::DEADLINE;

/// What the client wrote, and the screen it draws.
struct Seen {
    bytes: Vec<u8>,
    screen: vt100::Parser,
}

/// A terminal with a program on it; see the module docs.
pub(crate) struct Term {
    master: std::fs::File,
    child: Option<Child>,
    pid: u32,
    seen: Arc<Mutex<Seen>>,
    changed: watch::Receiver<u64>,
}

/// `duet` with `args`, on a fresh `cols`×`rows` terminal.
pub(crate) fn duet(args: &[&str], env: &[(&str, &str)], cols: u16, rows: u16) -> Term {
    let mut cmd = Command::new("setsid");
    cmd.arg("--ctty").arg(env!("CARGO_BIN_EXE_duet")).args(args);
    // Not the test's own settings: each test says where its duet is.
    for var in [
        "DUET_SERVER",
        "DUET_TOKEN",
        "DUET_STATE_DIR",
        "DUET_DETACH_KEY",
        "DUET_QR",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("TERM", "xterm-256color");
    for (k, v) in env {
        cmd.env(k, v);
    }
    Term::spawn(cmd, cols, rows)
}

impl Term {
    /// Runs `cmd` with the slave as its standard input, output and error.
    pub(crate) fn spawn(mut cmd: Command, cols: u16, rows: u16) -> Term {
        let master = rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
        rustix::pty::grantpt(&master).unwrap();
        rustix::pty::unlockpt(&master).unwrap();
        let name = rustix::pty::ptsname(&master, Vec::new()).unwrap();
        set_size(&master, cols, rows);
        let slave: OwnedFd = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(name.to_str().unwrap())
            .unwrap()
            .into();
        let child = cmd
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave))
            .spawn()
            .unwrap();
        let master = std::fs::File::from(master);
        let seen = Arc::new(Mutex::new(Seen {
            bytes: Vec::new(),
            screen: vt100::Parser::new(rows, cols, 10_000),
        }));
        let (tx, changed) = watch::channel(0u64);
        let mut reader = master.try_clone().unwrap();
        let into = seen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 65536];
            // EIO once the last holder of the slave is gone.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut s = into.lock().unwrap();
                s.bytes.extend_from_slice(&buf[..n]);
                s.screen.process(&buf[..n]);
                drop(s);
                tx.send_modify(|v| *v += 1);
            }
        });
        Term {
            master,
            pid: child.id(),
            child: Some(child),
            seen,
            changed,
        }
    }

    /// Types `bytes` as a person at this terminal would.
    pub(crate) fn keys(&self, bytes: &[u8]) {
        use std::io::Write;
        (&self.master).write_all(bytes).unwrap();
    }

    /// Resizes the window (the client gets SIGWINCH).
    pub(crate) fn resize(&self, cols: u16, rows: u16) {
        self.seen
            .lock()
            .unwrap()
            .screen
            .screen_mut()
            .set_size(rows, cols);
        set_size(self.master.as_fd(), cols, rows);
    }

    /// Whether the terminal is in raw mode (no line editing, no echo), as
    /// the program on it set it (the master reads the slave's settings).
    pub(crate) fn raw(&self) -> bool {
        use rustix::termios::LocalModes;
        let t = rustix::termios::tcgetattr(&self.master).unwrap();
        !t.local_modes
            .intersects(LocalModes::ICANON | LocalModes::ECHO)
    }

    /// The screen as text.
    pub(crate) fn text(&self) -> String {
        self.seen.lock().unwrap().screen.screen().contents()
    }

    /// Everything written, as text (escapes included).
    pub(crate) fn output(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap().bytes).into_owned()
    }

    /// Waits until `what` holds for the screen.
    pub(crate) async fn until(&mut self, why: &str, what: impl Fn(&vt100::Screen) -> bool) {
        let ok = tokio::time::timeout(DEADLINE, async {
            loop {
                if what(self.seen.lock().unwrap().screen.screen()) {
                    return;
                }
                if self.changed.changed().await.is_err() {
                    // No more output: one last look.
                    assert!(what(self.seen.lock().unwrap().screen.screen()));
                    return;
                }
            }
        })
        .await;
        assert!(ok.is_ok(), "{why}; the screen:\n{}", self.text());
    }

    /// Waits until the screen shows `text`.
    pub(crate) async fn shows(&mut self, text: &str) {
        let want = text.to_string();
        self.until(&format!("waiting for {text:?}"), move |s| {
            s.contents().contains(&want)
        })
        .await;
    }

    /// Waits until the output (all of it, escapes included) holds `text`.
    pub(crate) async fn wrote(&mut self, text: &str) {
        let ok = tokio::time::timeout(DEADLINE, async {
            while !self.output().contains(text) {
                if self.changed.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
        assert!(
            ok.is_ok() && self.output().contains(text),
            "waiting for {text:?} in the output:\n{}",
            self.output()
        );
    }

    /// Waits for the client to exit.
    pub(crate) async fn exit(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("waited for once");
        let waited =
            tokio::time::timeout(DEADLINE, tokio::task::spawn_blocking(move || child.wait())).await;
        match waited {
            Ok(status) => status.unwrap().unwrap(),
            Err(_) => {
                self.kill();
                panic!("the client did not exit; the screen:\n{}", self.text())
            }
        }
    }

    /// The client's pid.
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    fn kill(&self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn set_size(fd: impl AsFd, cols: u16, rows: u16) {
    rustix::termios::tcsetwinsize(
        fd,
        Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )
    .unwrap();
}
