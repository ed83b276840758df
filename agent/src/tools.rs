//! The two tools the scripted model can call: `run_shell_command` (`sh -c` in
//! the working directory, with a timeout and an output cap) and a file edit
//! (`edit` of an existing file, `write_file` of a new one), proposed as a
//! unified diff and applied only once allowed.

use std::fs;
use std::io::{self, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

/// A command running longer than this is killed.
pub(crate) const SHELL_TIMEOUT: Duration = Duration::from_secs(30);
/// Output kept from a command (stdout and stderr together); the rest is read
/// and dropped so the command never blocks on a full pipe.
pub(crate) const OUTPUT_CAP: usize = 64 * 1024;
/// Largest file the edit tool proposes to change.
pub(crate) const MAX_EDIT_BYTES: u64 = 1024 * 1024;
/// The line the edit tool appends.
pub(crate) const ADDED_LINE: &str = "edited by the duet demo agent";
/// How long to wait for a command's output pipes to close after it exited
/// (a background grandchild may hold them open).
const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// A tool call the model wants to make.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCall {
    /// The `tool_use` id.
    pub id: String,
    pub action: Action,
}

/// What the call does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    Shell {
        command: String,
        description: String,
    },
    /// Replace the last occurrence of `old` (the file's last line) in an
    /// existing file.
    Edit {
        path: PathBuf,
        shown: String,
        old: String,
        new: String,
        /// The whole file before and after, for the diff.
        before: String,
        after: String,
    },
    /// Create a file that does not exist.
    Write {
        path: PathBuf,
        shown: String,
        content: String,
    },
}

impl ToolCall {
    /// The tool's name on the wire.
    pub(crate) fn name(&self) -> &'static str {
        match self.action {
            Action::Shell { .. } => "run_shell_command",
            Action::Edit { .. } => "edit",
            Action::Write { .. } => "write_file",
        }
    }

    /// The tool's input on the wire, in Qwen Code's field names.
    pub(crate) fn input(&self) -> Value {
        match &self.action {
            Action::Shell {
                command,
                description,
            } => json!({ "command": command, "description": description }),
            Action::Edit { path, old, new, .. } => json!({
                "file_path": path.display().to_string(),
                "old_string": old,
                "new_string": new,
            }),
            Action::Write { path, content, .. } => json!({
                "file_path": path.display().to_string(),
                "content": content,
            }),
        }
    }

    /// What the approval prompt shows between backticks.
    pub(crate) fn subject(&self) -> &str {
        match &self.action {
            Action::Shell { command, .. } => command,
            Action::Edit { shown, .. } | Action::Write { shown, .. } => shown,
        }
    }

    /// The proposed change as a unified diff; empty for a command.
    pub(crate) fn diff(&self) -> String {
        match &self.action {
            Action::Shell { .. } => String::new(),
            Action::Edit {
                shown,
                before,
                after,
                ..
            } => similar::TextDiff::from_lines(before, after)
                .unified_diff()
                .context_radius(3)
                .header(&format!("a/{shown}"), &format!("b/{shown}"))
                .to_string(),
            Action::Write { shown, content, .. } => similar::TextDiff::from_lines("", content)
                .unified_diff()
                .header("/dev/null", &format!("b/{shown}"))
                .to_string(),
        }
    }
}

/// How a tool call ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outcome {
    pub tool_use_id: String,
    pub is_error: bool,
    /// The `tool_result` content.
    pub content: String,
    /// A command's exit code.
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
}

impl Outcome {
    /// The result of a call the user did not allow.
    pub(crate) fn denied(call: &ToolCall) -> Self {
        Outcome {
            tool_use_id: call.id.clone(),
            is_error: true,
            content: "denied by user".into(),
            exit_code: None,
            timed_out: false,
            cancelled: false,
        }
    }

    /// The result of a call that failed before or while running.
    pub(crate) fn error(call: &ToolCall, content: String) -> Self {
        Outcome {
            is_error: true,
            content,
            ..Outcome::denied(call)
        }
    }
}

/// Proposes an edit of `file` (relative to `cwd`): append [`ADDED_LINE`] to an
/// existing file, or create a missing one. The error says why not.
pub(crate) fn propose_edit(id: String, file: &str, cwd: &Path) -> Result<ToolCall, String> {
    let path = cwd.join(file);
    let shown = file.to_string();
    let action = match fs::metadata(&path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Action::Write {
            path,
            shown,
            content: format!("{ADDED_LINE}\n"),
        },
        Err(e) => return Err(format!("I can't look at {file}: {e}.")),
        Ok(meta) if !meta.is_file() => return Err(format!("{file} is not a regular file.")),
        Ok(meta) if meta.len() > MAX_EDIT_BYTES => {
            return Err(format!(
                "{file} is larger than {} KiB; the demo only edits small files.",
                MAX_EDIT_BYTES / 1024
            ))
        }
        Ok(_) => {
            let before = fs::read_to_string(&path)
                .map_err(|e| format!("I can't read {file} as text: {e}."))?;
            let body = before.trim_end_matches('\n');
            let (old, new, after) = match body.rsplit('\n').next() {
                Some(last) if !body.is_empty() => {
                    let new = format!("{last}\n{ADDED_LINE}");
                    let mut after = before.clone();
                    let at = body.len() - last.len();
                    after.replace_range(at..at + last.len(), &new);
                    (last.to_string(), new, after)
                }
                _ => (
                    String::new(),
                    ADDED_LINE.to_string(),
                    format!("{ADDED_LINE}\n"),
                ),
            };
            Action::Edit {
                path,
                shown,
                old,
                new,
                before,
                after,
            }
        }
    };
    Ok(ToolCall { id, action })
}

/// Applies an allowed edit or write. Quick, so it runs on the caller's thread.
pub(crate) fn apply_edit(call: &ToolCall) -> Outcome {
    let result = match &call.action {
        Action::Edit {
            path,
            shown,
            old,
            new,
            ..
        } => fs::read_to_string(path).and_then(|current| {
            let updated = if old.is_empty() && current.trim().is_empty() {
                format!("{new}\n")
            } else {
                let at = current.rfind(old.as_str()).ok_or_else(|| {
                    io::Error::other(format!("{shown} changed since the proposal"))
                })?;
                let mut updated = current.clone();
                updated.replace_range(at..at + old.len(), new);
                updated
            };
            fs::write(path, updated).map(|()| format!("Edited {shown}: appended one line."))
        }),
        Action::Write {
            path,
            shown,
            content,
        } => fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .and_then(|mut f| io::Write::write_all(&mut f, content.as_bytes()))
            .map(|()| format!("Created {shown}.")),
        Action::Shell { .. } => Err(io::Error::other("not a file edit")),
    };
    match result {
        Ok(content) => Outcome {
            tool_use_id: call.id.clone(),
            is_error: false,
            content,
            exit_code: None,
            timed_out: false,
            cancelled: false,
        },
        Err(e) => Outcome::error(call, format!("edit failed: {e}")),
    }
}

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

    #[test]
    fn edit_appends_a_line_after_the_last_one() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("n.txt"), "one\ntwo\n").unwrap();
        let call = propose_edit("t".into(), "n.txt", dir.path()).unwrap();
        assert_eq!(call.name(), "edit");
        assert_eq!(call.input()["old_string"], "two");
        assert_eq!(call.input()["new_string"], format!("two\n{ADDED_LINE}"));
        let diff = call.diff();
        assert!(diff.contains("--- a/n.txt") && diff.contains(&format!("+{ADDED_LINE}")));
        assert!(!apply_edit(&call).is_error);
        assert_eq!(
            fs::read_to_string(dir.path().join("n.txt")).unwrap(),
            format!("one\ntwo\n{ADDED_LINE}\n")
        );
    }

    #[test]
    fn a_missing_file_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let call = propose_edit("t".into(), "new.txt", dir.path()).unwrap();
        assert_eq!(call.name(), "write_file");
        assert!(call.diff().contains("+++ b/new.txt"));
        assert!(!apply_edit(&call).is_error);
        assert!(
            apply_edit(&call).is_error,
            "a second write must not clobber"
        );
    }
}
