//! Test harness: runs the demo agent binary in a real PTY, records what it
//! draws, and reads its events file. Every wait is bounded by a deadline and
//! ends as soon as its condition holds.

// Each test file uses a different subset of these helpers.
#![allow(dead_code)]

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use duet_protocol::command::InputCommand;
use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};
use serde_json::Value;
use tempfile::TempDir;

/// How long any single wait may take before the test fails.
pub(crate) const DEADLINE: Duration = Duration::from_secs(10);
/// Pause between two looks at the events file.
const POLL: Duration = Duration::from_millis(5);

/// Everything the PTY has shown so far, and a way to wait for more.
type Screen = Arc<(Mutex<Vec<u8>>, Condvar)>;

/// A running demo agent.
pub(crate) struct Agent {
    pub dir: TempDir,
    pub events: PathBuf,
    pub input: PathBuf,
    child: Box<dyn Child + Send + Sync>,
    writer: Box<dyn Write + Send>,
    screen: Screen,
    gate: mpsc::Sender<()>,
    _master: Box<dyn MasterPty + Send>,
}

impl Agent {
    /// The usual setup: events and input files in a fresh directory, no
    /// token delay.
    pub(crate) fn start() -> Agent {
        Agent::start_with(|_| {}, standard_args)
    }

    /// Prepares the directory with `setup`, then starts the agent with the
    /// arguments `args` returns.
    pub(crate) fn start_with(
        setup: impl FnOnce(&Path),
        args: impl FnOnce(&Path) -> Vec<String>,
    ) -> Agent {
        let agent = Agent::start_paused(setup, args);
        agent.resume_reading();
        agent
    }

    /// Like [`Agent::start_with`], but nobody reads the terminal until
    /// [`Agent::resume_reading`]: the agent's writes block once the PTY's
    /// buffer is full.
    pub(crate) fn start_paused(
        setup: impl FnOnce(&Path),
        args: impl FnOnce(&Path) -> Vec<String>,
    ) -> Agent {
        let dir = tempfile::tempdir().expect("tempdir");
        let events = dir.path().join("events.jsonl");
        let input = dir.path().join("input.jsonl");
        std::fs::write(&input, "").expect("create input file");
        setup(dir.path());

        let pty = native_pty_system()
            .openpty(PtySize {
                rows: 30,
                cols: 100,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_duet-demo-agent"));
        cmd.args(args(dir.path()));
        cmd.cwd(dir.path());
        cmd.env("TERM", "xterm-256color");
        let child = pty.slave.spawn_command(cmd).expect("spawn agent");
        drop(pty.slave);

        let screen: Screen = Arc::default();
        let mut reader = pty.master.try_clone_reader().expect("pty reader");
        let sink = Arc::clone(&screen);
        let (gate, gate_rx) = mpsc::channel::<()>();
        thread::spawn(move || {
            if gate_rx.recv().is_err() {
                return;
            }
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let (lock, ready) = &*sink;
                lock.lock().unwrap().extend_from_slice(&buf[..n]);
                ready.notify_all();
            }
        });
        let writer = pty.master.take_writer().expect("pty writer");
        Agent {
            dir,
            events,
            input,
            child,
            writer,
            screen,
            gate,
            _master: pty.master,
        }
    }

    /// Starts reading the terminal.
    pub(crate) fn resume_reading(&self) {
        let _ = self.gate.send(());
    }

    /// Types into the terminal (`\r` is Enter, `\x1b` is Esc).
    pub(crate) fn type_keys(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).expect("type");
        self.writer.flush().expect("flush");
    }

    /// Appends a raw line to the input file.
    pub(crate) fn append_input(&self, line: &str) {
        append(&self.input, line);
    }

    /// Submits a prompt through the input file.
    pub(crate) fn submit(&self, text: &str) {
        append(
            &self.input,
            InputCommand::Submit { text: text.into() }
                .to_line()
                .trim_end(),
        );
    }

    /// Answers an approval through the input file.
    pub(crate) fn confirm(&self, request_id: &str, allowed: bool) {
        append(
            &self.input,
            InputCommand::ConfirmationResponse {
                request_id: request_id.into(),
                allowed,
            }
            .to_line()
            .trim_end(),
        );
    }

    /// The screen output so far, escape sequences removed.
    pub(crate) fn screen(&self) -> String {
        strip_ansi(&self.screen.0.lock().unwrap())
    }

    /// How many bytes the agent wrote to the terminal so far.
    pub(crate) fn output_len(&self) -> usize {
        self.screen.0.lock().unwrap().len()
    }

    /// Waits until the screen shows `needle`.
    pub(crate) fn wait_screen(&self, needle: &str) {
        self.wait_output(needle, |bytes| strip_ansi(bytes).contains(needle));
    }

    /// Waits until the raw output (escape sequences included) has `needle`.
    pub(crate) fn wait_raw(&self, needle: &str) {
        self.wait_output(needle, |bytes| {
            String::from_utf8_lossy(bytes).contains(needle)
        });
    }

    fn wait_output(&self, needle: &str, found: impl Fn(&[u8]) -> bool) {
        let (lock, ready) = &*self.screen;
        let deadline = Instant::now() + DEADLINE;
        let mut bytes = lock.lock().unwrap();
        loop {
            if found(&bytes) {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "screen never showed {needle:?}; it shows:\n{}",
                strip_ansi(&bytes)
            );
            bytes = ready.wait_timeout(bytes, left).unwrap().0;
        }
    }

    /// The complete lines of the events file so far.
    pub(crate) fn events(&self) -> Vec<Value> {
        read_events(&self.events)
    }

    /// Waits for the first event matching `pred`; `what` names it in failures.
    pub(crate) fn wait_event(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        self.wait_events(what, 1, pred).remove(0)
    }

    /// Waits until `count` events match `pred`; returns them.
    pub(crate) fn wait_events(
        &self,
        what: &str,
        count: usize,
        pred: impl Fn(&Value) -> bool,
    ) -> Vec<Value> {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let found: Vec<Value> = self.events().into_iter().filter(|e| pred(e)).collect();
            if found.len() >= count {
                return found;
            }
            assert!(
                Instant::now() < deadline,
                "never saw {count} x {what}; events:\n{}\nscreen:\n{}",
                self.events()
                    .iter()
                    .map(Value::to_string)
                    .collect::<Vec<_>>()
                    .join("\n"),
                self.screen()
            );
            thread::sleep(POLL);
        }
    }

    /// Waits for the agent to exit; returns its exit code.
    pub(crate) fn wait_exit(&mut self) -> u32 {
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status.exit_code();
            }
            assert!(
                Instant::now() < deadline,
                "agent did not exit; screen:\n{}",
                self.screen()
            );
            thread::sleep(POLL);
        }
    }

    /// The agent's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.process_id().expect("pid")
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
    }
}

/// `--json-file`, `--input-file` and `--token-delay-ms 0` in `dir`.
pub(crate) fn standard_args(dir: &Path) -> Vec<String> {
    vec![
        "--json-file".into(),
        dir.join("events.jsonl").display().to_string(),
        "--input-file".into(),
        dir.join("input.jsonl").display().to_string(),
        "--token-delay-ms".into(),
        "0".into(),
    ]
}

/// The complete lines of an events file.
pub(crate) fn read_events(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    complete
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad event line {l:?}: {e}")))
        .collect()
}

fn append(path: &Path, line: &str) {
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .expect("open input file");
    file.write_all(format!("{line}\n").as_bytes())
        .expect("append input");
}

/// The event's kind: `type`, or for stream events the inner event's type.
pub(crate) fn kind(event: &Value) -> String {
    match event["type"].as_str().unwrap_or_default() {
        "stream_event" => event["event"]["type"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        "system" => event["subtype"].as_str().unwrap_or_default().to_string(),
        other => other.to_string(),
    }
}

/// A `user` event whose first block is text `text`.
pub(crate) fn is_user_text(event: &Value, text: &str) -> bool {
    event["type"] == "user" && event["message"]["content"][0]["text"] == text
}

/// A `user` event carrying a tool_result.
pub(crate) fn is_tool_result(event: &Value) -> bool {
    event["type"] == "user" && event["message"]["content"][0]["type"] == "tool_result"
}

/// Removes CSI and OSC escape sequences from terminal output.
pub(crate) fn strip_ansi(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' || (c == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}
