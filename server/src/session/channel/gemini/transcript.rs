//! What only Gemini CLI's transcript says (docs/gemini-cli.md §5.6): that a
//! turn was cancelled, in the terminal ("No" in the approval dialog, Esc),
//! which fires no hook at all. The transcript
//! (`~/.gemini/tmp/<project>/chats/session-….jsonl`, the SessionStart
//! payload's `transcript_path`) is a log of updates written as the turn
//! goes: a message per line (`{"id", "type": "user" | "gemini" | "info",
//! …}`), `$set` patches between them. A cancelled turn adds its `gemini`
//! message again with the call `status: "cancelled"`, then an `info`
//! "Request cancelled.".
//!
//! The channel reads what was appended since it last looked (never the
//! whole file again: `Tail`), when the screen says something happened.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::session::channel::dual_output::tail::{Line, Tail};

/// Longest transcript line read (a message carries a tool's whole output).
const MAX_LINE: usize = 16 << 20;

/// What a transcript line tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum News {
    /// A tool call was cancelled before it ran (its name and arguments).
    Cancelled { name: String, args: Value },
    /// The turn was cancelled.
    TurnCancelled,
}

/// What one line tells, if anything.
pub(super) fn news(line: &Value) -> Vec<News> {
    match line["type"].as_str() {
        Some("gemini") => line["toolCalls"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["status"] == "cancelled")
            .map(|c| News::Cancelled {
                name: c["name"].as_str().unwrap_or_default().to_string(),
                args: c["args"].clone(),
            })
            .collect(),
        Some("info")
            if line["content"]
                .as_str()
                .is_some_and(|c| c.starts_with("Request cancelled")) =>
        {
            vec![News::TurnCancelled]
        }
        _ => Vec::new(),
    }
}

/// The transcript of one session, read as it grows.
pub(super) struct Transcript {
    path: PathBuf,
    tail: Tail,
}

impl Transcript {
    /// Follows the transcript at `path` from what it holds now on: what
    /// came before (a resumed session's earlier turns) is old news.
    pub(super) fn follow(path: &Path) -> Self {
        let mut tail = Tail::new(MAX_LINE);
        let _ = tail.read(path);
        Self {
            path: path.to_path_buf(),
            tail,
        }
    }

    /// What was appended since the last read.
    pub(super) fn read(&mut self) -> Vec<News> {
        let Ok(batch) = self.tail.read(&self.path) else {
            return Vec::new();
        };
        batch
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Text { text, .. } => serde_json::from_str::<Value>(text).ok(),
                _ => None,
            })
            .flat_map(|v| news(&v))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// The transcript of the scripted session: the Esc of step 4 is the
    /// one cancellation in it.
    #[test]
    fn the_real_cancel_is_found_as_the_file_grows() {
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/gemini-0.61.0/transcript.jsonl"
        );
        let lines: Vec<String> = std::fs::read_to_string(fixture)
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let mut file = std::fs::File::create(&path).unwrap();
        writeln!(file, "{}", lines[0]).unwrap();
        let mut t = Transcript::follow(&path);
        let mut all = Vec::new();
        for line in &lines[1..] {
            writeln!(file, "{line}").unwrap();
            all.extend(t.read());
        }
        assert_eq!(
            all,
            [
                News::Cancelled {
                    name: "run_shell_command".into(),
                    args: serde_json::json!({"command": "touch made_by_tool.txt", "description": "Create a file"}),
                },
                News::TurnCancelled,
            ]
        );
    }
}
