//! Prompts duet holds for the agent, kept in the session directory so that
//! a killed duet loses none.
//!
//! A prompt sent while the agent is busy waits in memory (`delivery.rs`)
//! until the agent can take it. If duet dies meanwhile, a duet started
//! again over the directory reads the prompts back from `held.jsonl` and
//! shows them as unsent, text and all; when the program ends with prompts
//! still held, they stay in the file the same way. The file is the whole
//! list, one JSON line per prompt (`{"n":1,"text":"…"}`), oldest first:
//! a prompt handed to the agent leaves it, and the file goes when the list
//! is empty. It is rewritten whole (a new file renamed over the old one),
//! so a crash leaves the old list or the new one, never half of either;
//! the list is short (at most `max_held_submits` held, as many unsent).
//!
//! A prompt leaves the file only after it was handed to the agent: duet
//! killed in between shows a prompt the agent may have taken as unsent
//! (text shown twice), never the reverse (text lost).

use std::io::Write;
use std::path::{Path, PathBuf};

use duet_protocol::ws::HeldPrompt;
use tracing::warn;

/// The file name in the session directory.
pub(crate) const FILE: &str = "held.jsonl";

/// See the module docs.
#[derive(Default)]
pub(crate) struct HeldFile {
    /// Where the list is kept; `None`: nowhere (a conversation without a
    /// session directory, in unit tests).
    path: Option<PathBuf>,
    /// The numbers of the prompts on disk, in order.
    saved: Vec<u64>,
}

impl HeldFile {
    /// The file of a new session in `dir`: nothing on disk yet.
    pub(crate) fn create(dir: &Path) -> Self {
        Self {
            path: Some(dir.join(FILE)),
            saved: Vec::new(),
        }
    }

    /// The file an earlier duet kept in `dir`, and the prompts in it.
    pub(crate) fn open(dir: &Path) -> (Self, Vec<HeldPrompt>) {
        let prompts = read(dir);
        let file = Self {
            path: Some(dir.join(FILE)),
            saved: prompts.iter().map(|p| p.n).collect(),
        };
        (file, prompts)
    }

    /// Writes `prompts` down, unless they are what the file holds already
    /// (most changes of the conversation leave the list as it was). A
    /// failed write is logged and tried again with the next change: the
    /// session goes on, only a crash meanwhile would lose the difference.
    pub(crate) fn keep<'a>(&mut self, prompts: impl Iterator<Item = &'a HeldPrompt> + Clone) {
        let Some(path) = &self.path else { return };
        if prompts.clone().map(|p| p.n).eq(self.saved.iter().copied()) {
            return;
        }
        let written = if prompts.clone().next().is_none() {
            match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            }
        } else {
            write(path, prompts.clone())
        };
        match written {
            Ok(()) => self.saved = prompts.map(|p| p.n).collect(),
            Err(e) => warn!(
                ?e,
                "keeping held prompts on disk; a crash now would lose them"
            ),
        }
    }
}

/// The prompts kept in `dir` (none without a file). Unreadable lines are
/// skipped: one bad line must not cost the others.
pub(crate) fn read(dir: &Path) -> Vec<HeldPrompt> {
    let text = std::fs::read_to_string(dir.join(FILE)).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The prompts a session resuming the ended one in `dir` offers again,
/// numbered from 1: at most `max`, the newest (a chain of resumptions must
/// not grow the list without bound); the second value says how many older
/// ones were left out (they stay in the ended session's directory).
pub(crate) fn carry(dir: &Path, max: usize) -> (Vec<HeldPrompt>, usize) {
    let mut prompts = read(dir);
    let left_out = prompts.len().saturating_sub(max);
    prompts.drain(..left_out);
    let carried = prompts
        .into_iter()
        .zip(1..)
        .map(|(p, n)| HeldPrompt { n, text: p.text })
        .collect();
    (carried, left_out)
}

fn write<'a>(path: &Path, prompts: impl Iterator<Item = &'a HeldPrompt>) -> std::io::Result<()> {
    let tmp = path.with_extension("jsonl.tmp");
    let mut text = Vec::new();
    for p in prompts {
        serde_json::to_writer(&mut text, p).map_err(std::io::Error::other)?;
        text.push(b'\n');
    }
    // Owner-only like every file of a session: it holds what the user typed.
    let mut file = crate::state_dir::create_private(&tmp)?;
    file.write_all(&text)?;
    drop(file);
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn prompt(n: u64, text: &str) -> HeldPrompt {
        HeldPrompt {
            n,
            text: text.into(),
        }
    }

    #[test]
    fn the_list_is_kept_whole_read_back_and_removed_once_empty() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = HeldFile::create(dir.path());
        let path = dir.path().join(FILE);
        let (one, two) = (prompt(1, "one\nline two"), prompt(2, "zwei \"2\""));
        file.keep([].iter());
        assert!(!path.exists(), "nothing held, no file");
        file.keep([one.clone(), two.clone()].iter());
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(read(dir.path()), [one.clone(), two.clone()]);
        // Read back by a duet started again over the directory.
        let (mut again, prompts) = HeldFile::open(dir.path());
        assert_eq!(prompts, [one, two.clone()]);
        // The first was handed to the agent.
        again.keep([two.clone()].iter());
        assert_eq!(read(dir.path()), [two]);
        again.keep([].iter());
        assert!(!path.exists());
        assert!(read(dir.path()).is_empty());
    }

    #[test]
    fn a_resumed_session_carries_the_newest_renumbered() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = HeldFile::create(dir.path());
        file.keep([prompt(4, "a"), prompt(7, "b"), prompt(9, "c")].iter());
        let (carried, left_out) = carry(dir.path(), 2);
        assert_eq!(carried, [prompt(1, "b"), prompt(2, "c")]);
        assert_eq!(left_out, 1);
        assert_eq!(carry(dir.path(), 8).0.len(), 3);
    }

    #[test]
    fn an_unchanged_list_is_not_written_and_a_bad_line_costs_only_itself() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(&path, "{\"n\":3,\"text\":\"kept\"}\nnot json\n{\"n\":4").unwrap();
        let (mut file, prompts) = HeldFile::open(dir.path());
        assert_eq!(prompts, [prompt(3, "kept")]);
        // The same list: the file is left as it is.
        file.keep(prompts.iter());
        assert!(std::fs::read_to_string(&path).unwrap().contains("not json"));
        // Nowhere to keep it: nothing happens.
        HeldFile::default().keep(prompts.iter());
    }
}
