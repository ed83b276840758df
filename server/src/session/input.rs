//! The one writer of a session's input file. Each command is appended as one
//! line with a single `write` on an `O_APPEND` descriptor, so a reader never
//! sees half a command.
//!
//! Submits go through a gate: they are written only while the program is
//! idle (see `turn.rs`), one at a time, and held in order otherwise. Before
//! its `session_start` a program does not read its input yet; during a turn
//! Qwen Code drops what it reads. A prompt sent at either moment is held and
//! delivered, not lost. Slash commands produce no events in Qwen Code, so
//! they do not close the gate behind them.
//!
//! Appending a short line to a local regular file does not block in any
//! meaningful way, so this is done inline under a std mutex (never held
//! across an `.await`) rather than through a writer task: the submit path is
//! latency-sensitive.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use duet_protocol::command::InputCommand;

/// Why a command was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{0} commands are already waiting for the program to start; try again later")]
    QueueFull(usize),
    #[error("the program has exited")]
    Closed,
    #[error("writing the input file: {0}")]
    Io(#[from] std::io::Error),
}

/// Whether a command went out or is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    Written,
    Queued,
}

struct State {
    file: File,
    /// The program can take a submit now.
    open: bool,
    closed: bool,
    held: VecDeque<String>,
    /// When the last submit that closed the gate was written, until the
    /// program shows it took it (any turn signal).
    in_flight_since: Option<Instant>,
}

/// See the module docs.
pub struct InputWriter {
    state: Mutex<State>,
    max_held: usize,
}

impl InputWriter {
    /// Opens (creating) `path` for appending. With `open` false, submits are
    /// held until [`InputWriter::set_idle`] opens the gate.
    pub fn open(path: &Path, open: bool, max_held: usize) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self {
            state: Mutex::new(State {
                file,
                open,
                closed: false,
                held: VecDeque::new(),
                in_flight_since: None,
            }),
            max_held,
        })
    }

    /// Writes `cmd`, or holds it if it is a submit and the program is not
    /// ready yet. Other commands answer something the program already asked,
    /// so they always go straight out.
    pub fn send(&self, cmd: &InputCommand) -> Result<Delivery, InputError> {
        let line = cmd.to_line();
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.closed {
            return Err(InputError::Closed);
        }
        let InputCommand::Submit { text } = cmd else {
            st.file.write_all(line.as_bytes())?;
            return Ok(Delivery::Written);
        };
        if !st.open || !st.held.is_empty() {
            if st.held.len() >= self.max_held {
                return Err(InputError::QueueFull(self.max_held));
            }
            st.held.push_back(line);
            return Ok(Delivery::Queued);
        }
        st.file.write_all(line.as_bytes())?;
        st.open = !closes_gate(text);
        if !st.open {
            st.in_flight_since = Some(Instant::now());
        }
        Ok(Delivery::Written)
    }

    /// The program became idle (`true`) or busy (`false`). When idle, writes
    /// held submits up to and including the next one that starts a turn.
    /// Returns how many were written.
    pub fn set_idle(&self, idle: bool) -> std::io::Result<usize> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.open = idle;
        st.in_flight_since = None;
        let mut written = 0;
        while st.open {
            let Some(line) = st.held.front().cloned() else {
                break;
            };
            st.file.write_all(line.as_bytes())?;
            st.held.pop_front();
            written += 1;
            let text = match serde_json::from_str::<InputCommand>(line.trim_end()) {
                Ok(InputCommand::Submit { text }) => text,
                _ => String::new(),
            };
            st.open = !closes_gate(&text);
            if !st.open {
                st.in_flight_since = Some(Instant::now());
            }
        }
        Ok(written)
    }

    /// If a submit was written more than `after` ago and the program has
    /// shown no sign of taking it, stop waiting for it: open the gate (and
    /// write the next held submit). A program that silently ignores one
    /// prompt must not block every later one. Returns whether it did.
    pub fn release_if_stuck(&self, after: Duration) -> std::io::Result<bool> {
        let stuck = {
            let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            st.in_flight_since.is_some_and(|t| t.elapsed() >= after)
        };
        if stuck {
            self.set_idle(true)?;
        }
        Ok(stuck)
    }

    /// Submits waiting for the gate.
    pub fn held(&self) -> usize {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .held
            .len()
    }

    /// The program is gone: refuse new commands, drop held ones (returned).
    pub fn close(&self) -> usize {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.closed = true;
        let dropped = st.held.len();
        st.held.clear();
        dropped
    }
}

/// Whether writing this submit starts a turn (so the next one must wait).
fn closes_gate(text: &str) -> bool {
    // `/quit` ends the program; other slash commands produce no events.
    !text.trim_start().starts_with('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_submits_until_ready_then_writes_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("input.jsonl");
        let w = InputWriter::open(&path, false, 2).unwrap();
        let submit = |t: &str| InputCommand::Submit { text: t.into() };
        assert_eq!(w.send(&submit("one")).unwrap(), Delivery::Queued);
        assert_eq!(w.send(&submit("two")).unwrap(), Delivery::Queued);
        assert!(matches!(
            w.send(&submit("three")),
            Err(InputError::QueueFull(2))
        ));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
        // One turn at a time: "one" goes out, "two" waits for the next idle.
        assert_eq!(w.set_idle(true).unwrap(), 1);
        assert_eq!(w.held(), 1);
        assert_eq!(w.set_idle(true).unwrap(), 1);
        assert_eq!(w.send(&submit("/help")).unwrap(), Delivery::Queued);
        assert_eq!(w.set_idle(true).unwrap(), 1);
        // A slash command leaves the gate open.
        assert_eq!(w.send(&submit("four")).unwrap(), Delivery::Written);
        assert_eq!(w.send(&submit("five")).unwrap(), Delivery::Queued);
        let text = std::fs::read_to_string(&path).unwrap();
        let texts: Vec<String> = text
            .lines()
            .map(|l| match serde_json::from_str(l).unwrap() {
                InputCommand::Submit { text } => text,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(texts, ["one", "two", "/help", "four"]);
        // "four" got no reaction: after the timeout "five" goes out anyway.
        assert!(!w.release_if_stuck(Duration::from_secs(3600)).unwrap());
        assert!(w.release_if_stuck(Duration::ZERO).unwrap());
        assert_eq!(w.held(), 0);
        w.close();
        assert!(matches!(w.send(&submit("x")), Err(InputError::Closed)));
    }
}
