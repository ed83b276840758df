//! One inotify instance for the whole server (via `notify`), dispatching
//! change events to the session whose events file changed. One watcher per
//! session would cost a thread and an inotify instance each, and the kernel
//! caps instances per user at 128 by default.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use notify::{RecursiveMode, Watcher as _};
use tokio::sync::Notify;

use crate::sync::lock;

type Targets = Arc<Mutex<HashMap<PathBuf, Arc<Notify>>>>;

/// See the module docs.
pub struct Watcher {
    inner: Mutex<notify::RecommendedWatcher>,
    targets: Targets,
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

impl Watcher {
    /// Starts the inotify thread.
    pub fn new() -> Result<Self> {
        let targets: Targets = Arc::default();
        let dispatch = targets.clone();
        let inner = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            let targets = lock(&dispatch);
            match res {
                // Opens and reads (our own tailer's among them) are not
                // changes; reacting to them would make the tailer wake itself.
                Ok(ev) if !changes_data(&ev.kind) => {}
                Ok(ev) if !ev.need_rescan() && !ev.paths.is_empty() => {
                    for path in &ev.paths {
                        if let Some(n) = targets.get(path) {
                            n.notify_one();
                        }
                    }
                }
                // Overflowed queue or an error: we do not know what changed,
                // so every session re-reads (a read with nothing new is cheap).
                _ => targets.values().for_each(|n| n.notify_one()),
            }
        })
        .context("starting inotify")?;
        Ok(Self {
            inner: Mutex::new(inner),
            targets,
        })
    }

    /// Wakes `notify` whenever `file` (inside `dir`) changes. Wakes it once
    /// right away too, for anything written before the watch existed.
    pub fn watch(&self, dir: &Path, file: PathBuf, notify: Arc<Notify>) -> Result<()> {
        lock(&self.targets).insert(file, notify.clone());
        lock(&self.inner)
            .watch(dir, RecursiveMode::NonRecursive)
            .with_context(|| format!("watching {}", dir.display()))?;
        notify.notify_one();
        Ok(())
    }

    /// Stops watching.
    pub fn unwatch(&self, dir: &Path, file: &Path) {
        lock(&self.targets).remove(file);
        let _ = lock(&self.inner).unwatch(dir);
    }
}
