//! The shell tool: `sh -c` in its own process group on its own thread,
//! stdout and stderr read together up to a cap, killed whole on a timeout or
//! a cancel, and its outcome handed to a callback.

use std::io::{self, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use super::{Action, Outcome, ToolCall};

/// A command running longer than this is killed.
pub(crate) const SHELL_TIMEOUT: Duration = Duration::from_secs(30);
/// Output kept from a command (stdout and stderr together); the rest is read
/// and dropped so the command never blocks on a full pipe.
pub(crate) const OUTPUT_CAP: usize = 64 * 1024;
/// How long to wait for a command's output pipes to close after it exited
/// (a background grandchild may hold them open).
const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// A command running on its own thread.
pub(crate) struct Running {
    cancel: Sender<()>,
}

impl Running {
    /// Kills the command; its outcome still arrives, marked cancelled.
    pub(crate) fn cancel(&self) {
        let _ = self.cancel.send(());
    }
}

/// Starts `sh -c command` in `cwd` on its own thread; `done` gets the outcome.
pub(crate) fn spawn_shell(
    call: &ToolCall,
    cwd: &Path,
    timeout: Duration,
    done: impl FnOnce(Outcome) + Send + 'static,
) -> io::Result<Running> {
    let (cancel_tx, cancel_rx) = mpsc::channel();
    let call = call.clone();
    let cwd = cwd.to_path_buf();
    thread::Builder::new()
        .name("shell-tool".into())
        .spawn(move || done(run_shell(&call, &cwd, timeout, cancel_rx)))?;
    Ok(Running { cancel: cancel_tx })
}

/// What the waiting thread hears: the command exited, or it must be killed.
enum Wait {
    Exited(io::Result<ExitStatus>),
    Cancel,
}

fn run_shell(call: &ToolCall, cwd: &Path, timeout: Duration, cancel: Receiver<()>) -> Outcome {
    let Action::Shell { command, .. } = &call.action else {
        return Outcome::error(call, "not a shell command".into());
    };
    // Its own process group, so a timeout or Esc kills the whole pipeline,
    // not just `sh`.
    let child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return Outcome::error(call, format!("could not start sh: {e}")),
    };
    let group = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    let output = Arc::new(Mutex::new(Capped::default()));
    let (drained_tx, drained_rx) = mpsc::channel();
    let pipes: [Option<Box<dyn Read + Send>>; 2] = [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    ];
    let mut readers = 0;
    for pipe in pipes.into_iter().flatten() {
        readers += 1;
        let output = Arc::clone(&output);
        let drained = drained_tx.clone();
        thread::spawn(move || {
            drain(pipe, &output);
            let _ = drained.send(());
        });
    }

    let (wait_tx, wait_rx) = mpsc::channel();
    let exit_tx = wait_tx.clone();
    thread::spawn(move || {
        let _ = exit_tx.send(Wait::Exited(child.wait()));
    });
    thread::spawn(move || {
        if cancel.recv().is_ok() {
            let _ = wait_tx.send(Wait::Cancel);
        }
    });

    let deadline = Instant::now() + timeout;
    let mut timed_out = false;
    let mut cancelled = false;
    let status = loop {
        match wait_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(Wait::Exited(status)) => break status,
            Ok(Wait::Cancel) => {
                cancelled = true;
                let _ = killpg(group, Signal::SIGKILL);
            }
            Err(RecvTimeoutError::Timeout) if !timed_out => {
                timed_out = true;
                let _ = killpg(group, Signal::SIGKILL);
            }
            Err(_) => break Err(io::Error::other("lost track of the command")),
        }
    };
    let drain_deadline = Instant::now() + DRAIN_GRACE;
    for _ in 0..readers {
        if drained_rx
            .recv_timeout(drain_deadline.saturating_duration_since(Instant::now()))
            .is_err()
        {
            // Something in the background still holds the pipes.
            let _ = killpg(group, Signal::SIGKILL);
            break;
        }
    }
    let text = output.lock().map(|o| o.text()).unwrap_or_default();
    let exit_code = status.as_ref().ok().map(exit_code);
    let (is_error, content) = match (&status, exit_code) {
        _ if cancelled => (true, join(&text, "cancelled by user")),
        _ if timed_out => (
            true,
            join(&text, &format!("timed out after {} s", timeout.as_secs())),
        ),
        (Err(e), _) => (
            true,
            join(&text, &format!("could not wait for the command: {e}")),
        ),
        (Ok(_), Some(0)) => (false, text),
        (Ok(_), code) => (
            true,
            join(&text, &format!("exit code {}", code.unwrap_or(-1))),
        ),
    };
    Outcome {
        tool_use_id: call.id.clone(),
        is_error,
        content,
        exit_code,
        timed_out,
        cancelled,
    }
}

/// The exit code, or 128 + the signal, as shells report it.
fn exit_code(status: &ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(-1)
}

fn join(output: &str, note: &str) -> String {
    if output.is_empty() {
        format!("[{note}]")
    } else {
        format!("{output}\n[{note}]")
    }
}

/// Output kept up to [`OUTPUT_CAP`] bytes, in arrival order.
#[derive(Default)]
struct Capped {
    bytes: Vec<u8>,
    truncated: bool,
}

impl Capped {
    fn text(&self) -> String {
        let text = String::from_utf8_lossy(&self.bytes);
        let text = text.trim_end_matches('\n');
        if self.truncated {
            format!("{text}\n[output truncated at {} KiB]", OUTPUT_CAP / 1024)
        } else {
            text.to_string()
        }
    }
}

fn drain(mut pipe: Box<dyn Read + Send>, output: &Mutex<Capped>) {
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                let Ok(mut out) = output.lock() else {
                    return;
                };
                let room = OUTPUT_CAP.saturating_sub(out.bytes.len());
                out.bytes.extend_from_slice(&buf[..n.min(room)]);
                if n > room {
                    out.truncated = true;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(command: &str) -> ToolCall {
        ToolCall {
            id: "t".into(),
            action: Action::Shell {
                command: command.into(),
                description: String::new(),
            },
        }
    }

    fn run(command: &str, timeout: Duration) -> Outcome {
        let dir = std::env::temp_dir();
        let (_tx, rx) = mpsc::channel();
        run_shell(&shell(command), &dir, timeout, rx)
    }

    #[test]
    fn captures_output_and_exit_code() {
        let ok = run("echo out; echo err >&2", SHELL_TIMEOUT);
        assert!(!ok.is_error);
        assert!(ok.content.contains("out") && ok.content.contains("err"));
        let failed = run("exit 3", SHELL_TIMEOUT);
        assert_eq!(failed.exit_code, Some(3));
        assert!(failed.is_error);
        assert_eq!(failed.content, "[exit code 3]");
    }

    #[test]
    fn output_is_capped() {
        let out = run("head -c 200000 /dev/zero | tr '\\0' x", SHELL_TIMEOUT);
        assert!(out.content.len() < OUTPUT_CAP + 100);
        assert!(out.content.ends_with("[output truncated at 64 KiB]"));
    }

    #[test]
    fn a_slow_command_times_out_with_its_pipeline() {
        let start = Instant::now();
        let out = run("echo started; sleep 20 | cat", Duration::from_millis(200));
        assert!(out.timed_out && out.is_error);
        assert!(out.content.starts_with("started"));
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn cancel_kills_the_command() {
        let (tx, rx) = mpsc::channel();
        let dir = std::env::temp_dir();
        tx.send(()).unwrap();
        let out = run_shell(&shell("sleep 20"), &dir, SHELL_TIMEOUT, rx);
        assert!(out.cancelled && out.is_error);
    }
}
