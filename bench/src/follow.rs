//! A bare reader that follows a file with inotify (the `notify` crate, as
//! duet does): every complete line appended, stamped with the monotonic
//! clock the moment it was read. The sidecar baseline and the submit
//! measurement both use it.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use notify::{RecursiveMode, Watcher as _};
use tokio::sync::mpsc;

use crate::fixture::mono_ns;

/// A line and when it was seen (monotonic ns).
pub(crate) struct Seen {
    pub at: u64,
    pub line: String,
}

/// Follows one file until dropped.
pub(crate) struct Follower {
    _watcher: notify::RecommendedWatcher,
    pub lines: mpsc::Receiver<Seen>,
}

struct Reader {
    path: PathBuf,
    file: Option<File>,
    partial: Vec<u8>,
    tx: mpsc::Sender<Seen>,
}

impl Reader {
    fn read(&mut self) {
        if self.file.is_none() {
            self.file = File::open(&self.path).ok();
        }
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let mut buf = [0u8; 64 * 1024];
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let at = mono_ns();
            let mut data = &buf[..n];
            while let Some(nl) = data.iter().position(|&b| b == b'\n') {
                self.partial.extend_from_slice(&data[..nl]);
                let line = String::from_utf8_lossy(&self.partial).into_owned();
                self.partial.clear();
                // The receiver going away just means the measurement is over.
                let _ = self.tx.blocking_send(Seen { at, line });
                data = &data[nl + 1..];
            }
            self.partial.extend_from_slice(data);
        }
    }
}

fn changes_data(kind: &notify::EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, ModifyKind};
    use notify::EventKind;
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        _ => true,
    }
}

/// Follows `path` (which may not exist yet) from its start.
pub(crate) fn follow(path: &Path) -> Result<Follower> {
    let dir = path.parent().context("file without a directory")?;
    let (tx, rx) = mpsc::channel(1 << 18);
    let mut reader = Reader {
        path: path.to_path_buf(),
        file: None,
        partial: Vec::new(),
        tx,
    };
    reader.read();
    let target = path.to_path_buf();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(ev) = res {
            if changes_data(&ev.kind) && ev.paths.iter().any(|p| p == &target) {
                reader.read();
            }
        }
    })?;
    watcher.watch(dir, RecursiveMode::NonRecursive)?;
    Ok(Follower {
        _watcher: watcher,
        lines: rx,
    })
}
