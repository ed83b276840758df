//! The one writer of a session's input file. Each command is appended as one
//! line with a single `write` on an `O_APPEND` descriptor, so a reader never
//! sees half a command. Submits that arrive before the program can read its
//! input (before its `session_start`) are held, in order, and written the
//! moment it is ready: a prompt typed into a freshly opened tab is not lost.
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
    ready: bool,
    closed: bool,
    held: VecDeque<String>,
}

/// See the module docs.
pub struct InputWriter {
    state: Mutex<State>,
    max_held: usize,
}

impl InputWriter {
    /// Opens (creating) `path` for appending. With `ready` false, submits are
    /// held until [`InputWriter::mark_ready`].
    pub fn open(path: &Path, ready: bool, max_held: usize) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self {
            state: Mutex::new(State {
                file,
                ready,
                closed: false,
                held: VecDeque::new(),
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
        let holdable = matches!(cmd, InputCommand::Submit { .. });
        if holdable && (!st.ready || !st.held.is_empty()) {
            if st.held.len() >= self.max_held {
                return Err(InputError::QueueFull(self.max_held));
            }
            st.held.push_back(line);
            return Ok(Delivery::Queued);
        }
        st.file.write_all(line.as_bytes())?;
        Ok(Delivery::Written)
    }

    /// The program is reading its input now: write everything held.
    pub fn mark_ready(&self) -> std::io::Result<usize> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.ready = true;
        let mut written = 0;
        while let Some(line) = st.held.front() {
            let line = line.clone();
            st.file.write_all(line.as_bytes())?;
            st.held.pop_front();
            written += 1;
        }
        Ok(written)
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
        assert_eq!(w.mark_ready().unwrap(), 2);
        assert_eq!(w.send(&submit("four")).unwrap(), Delivery::Written);
        let text = std::fs::read_to_string(&path).unwrap();
        let texts: Vec<String> = text
            .lines()
            .map(|l| match serde_json::from_str(l).unwrap() {
                InputCommand::Submit { text } => text,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(texts, ["one", "two", "four"]);
        w.close();
        assert!(matches!(w.send(&submit("x")), Err(InputError::Closed)));
    }
}
