//! `duet serve`'s log lines: colour codes only when stderr is a terminal
//! and `NO_COLOR` is unset, so journald and log files get plain text.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

const TOKEN: &str = "logs-test-token-0123456789";

/// Runs `duet serve` with `stderr` and `no_color`, waits until it is
/// ready, stops it with SIGTERM and returns what it logged (read from
/// `log`, the other end of `stderr`).
fn serve_and_stop(stderr: Stdio, log: impl Read + Send + 'static, no_color: bool) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_duet"));
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--token", TOKEN])
        .arg("--state-dir")
        .arg(tmp.path().join("state"))
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
    if no_color {
        cmd.env("NO_COLOR", "1");
    }
    let mut child = cmd.spawn().unwrap();
    // Our copy of the child's stderr is closed (`cmd` holds it): the reader
    // sees the end when duet exits.
    drop(cmd);
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let mut log = log;
        // A PTY's master reads EIO once the last slave is closed.
        let _ = log.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    });
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    loop {
        let line = lines.next().expect("duet printed its URL").unwrap();
        if line.starts_with("duet is ready: ") {
            break;
        }
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    assert!(child.wait().unwrap().success());
    let log = reader.join().unwrap();
    assert!(log.contains("shutting down"), "{log}");
    log
}

/// A PTY: its slave as a child's stderr, its master to read from.
fn pty() -> (Stdio, File) {
    use rustix::pty::OpenptFlags;
    use std::os::unix::fs::OpenOptionsExt;
    let master =
        rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)
            .unwrap();
    rustix::pty::grantpt(&master).unwrap();
    rustix::pty::unlockpt(&master).unwrap();
    let name = rustix::pty::ptsname(&master, Vec::new()).unwrap();
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(rustix::fs::OFlags::NOCTTY.bits() as i32)
        .open(name.to_str().unwrap())
        .unwrap();
    (Stdio::from(slave), File::from(master))
}

#[test]
fn log_lines_are_plain_text_unless_stderr_is_a_terminal() {
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
    let log = serve_and_stop(Stdio::from(write), File::from(read), false);
    assert!(!log.contains('\x1b'), "colour codes in a pipe: {log:?}");
    // On a terminal they are coloured (which shows the check above can
    // see colour), unless NO_COLOR says otherwise.
    let (slave, master) = pty();
    let log = serve_and_stop(slave, master, false);
    assert!(log.contains('\x1b'), "no colour on a terminal: {log:?}");
    let (slave, master) = pty();
    let log = serve_and_stop(slave, master, true);
    assert!(!log.contains('\x1b'), "colour despite NO_COLOR: {log:?}");
}
