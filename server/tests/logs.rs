//! `duet serve`'s log lines: colour codes only when stderr is a terminal
//! and `NO_COLOR` is unset, so journald and log files get plain text; no
//! credential in them, whatever the log level.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

const TOKEN: &str = "logs-test-token-0123456789";

/// Runs `duet serve` with `stderr` and the environment `env` (besides no
/// `RUST_LOG` and no `NO_COLOR`), waits until it is ready, lets `visit`
/// make requests to its address, stops it with SIGTERM and returns what it
/// logged (read from `log`, the other end of `stderr`).
fn serve_and_stop(
    stderr: Stdio,
    log: impl Read + Send + 'static,
    env: &[(&str, &str)],
    visit: impl FnOnce(&str),
) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_duet"));
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--token", TOKEN])
        .arg("--state-dir")
        .arg(tmp.path().join("state"))
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
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
    let addr = loop {
        let line = lines.next().expect("duet printed its URL").unwrap();
        if let Some(url) = line.strip_prefix("duet is ready: http://") {
            break url.split('/').next().unwrap().to_string();
        }
    };
    visit(&addr);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    assert!(child.wait().unwrap().success());
    reader.join().unwrap()
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
    let log = serve_and_stop(Stdio::from(write), File::from(read), &[], |_| {});
    assert!(log.contains("shutting down"), "{log}");
    assert!(!log.contains('\x1b'), "colour codes in a pipe: {log:?}");
    // On a terminal they are coloured (which shows the check above can
    // see colour), unless NO_COLOR says otherwise.
    let (slave, master) = pty();
    let log = serve_and_stop(slave, master, &[], |_| {});
    assert!(log.contains("shutting down"), "{log}");
    assert!(log.contains('\x1b'), "no colour on a terminal: {log:?}");
    let (slave, master) = pty();
    let log = serve_and_stop(slave, master, &[("NO_COLOR", "1")], |_| {});
    assert!(log.contains("shutting down"), "{log}");
    assert!(!log.contains('\x1b'), "colour despite NO_COLOR: {log:?}");
}

/// `GET path` on a connection of its own; the answer is not needed.
fn get(addr: &str, path: &str) {
    let mut tcp = std::net::TcpStream::connect(addr).unwrap();
    write!(
        tcp,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = Vec::new();
    tcp.read_to_end(&mut answer).unwrap();
    assert!(answer.starts_with(b"HTTP/1.1 "), "{answer:?}");
}

/// Issue 27: at `RUST_LOG=tower_http=debug` every request's URI was
/// logged whole, the main token of `/?token=` and the secret of
/// `/?share=` with it.
#[test]
fn secrets_in_request_uris_are_never_logged() {
    const SHARE: &str = "share-secret-abcdefghij0123456789";
    for rust_log in ["tower_http=debug", "trace"] {
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
        let log = serve_and_stop(
            Stdio::from(write),
            File::from(read),
            &[("RUST_LOG", rust_log)],
            |addr| {
                get(addr, &format!("/?token={TOKEN}"));
                get(addr, &format!("/?share={SHARE}"));
                get(
                    addr,
                    &format!("/api/sessions/1/events?from=7&token={TOKEN}&{SHARE}"),
                );
            },
        );
        assert!(
            !log.contains(TOKEN),
            "{rust_log}: the token was logged:\n{log}"
        );
        assert!(
            !log.contains(SHARE),
            "{rust_log}: a secret was logged:\n{log}"
        );
        // The requests themselves were logged, with what is safe to log.
        for seen in [
            "uri=/?token=[redacted]",
            "uri=/?share=[redacted]",
            "uri=/api/sessions/1/events?from=7&token=[redacted]&[redacted]",
        ] {
            assert!(log.contains(seen), "{rust_log}: no {seen:?} in:\n{log}");
        }
    }
}
