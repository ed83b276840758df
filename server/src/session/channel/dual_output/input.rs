//! The one writer of a dual-output agent's input file. Each command is
//! appended as one line with a single `write` on an `O_APPEND` descriptor,
//! so the agent never reads half a command. A write that fails part-way
//! (disk full) is cut back off the file, so the next command never lands
//! on half of this one.
//!
//! Appending a short line to a local regular file does not block in any
//! meaningful way, so this is done inline under a std mutex (never held
//! across an `.await`): the submit path is latency-sensitive.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use duet_protocol::command::InputCommand;

use crate::sync::lock;

struct State {
    file: File,
    closed: bool,
}

/// See the module docs.
pub(crate) struct InputFile {
    state: Mutex<State>,
}

impl InputFile {
    /// Opens (creating) `path` for appending.
    pub(crate) fn open(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self {
            state: Mutex::new(State {
                file,
                closed: false,
            }),
        })
    }

    /// Appends `cmd` as one line.
    pub(crate) fn send(&self, cmd: &InputCommand) -> std::io::Result<()> {
        let line = cmd.to_line();
        let mut st = lock(&self.state);
        if st.closed {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        let len = st.file.metadata()?.len();
        if let Err(e) = st.file.write_all(line.as_bytes()) {
            // Nobody else writes this file: what is past `len` is ours.
            let _ = st.file.set_len(len);
            return Err(e);
        }
        Ok(())
    }

    /// The program is gone: refuse further commands.
    pub(crate) fn close(&self) {
        lock(&self.state).closed = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_command_and_none_after_close() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("input.jsonl");
        let w = InputFile::open(&path).unwrap();
        w.send(&InputCommand::Submit {
            text: "a\nb".into(),
        })
        .unwrap();
        w.send(&InputCommand::ConfirmationResponse {
            request_id: "r".into(),
            allowed: true,
        })
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2);
        w.close();
        assert!(w.send(&InputCommand::Submit { text: "x".into() }).is_err());
    }
}
