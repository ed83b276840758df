//! One inotify instance for the whole server (via `notify`), dispatching
//! change events to the session whose events file changed. One watcher per
//! session would cost a thread and an inotify instance each, and the kernel
//! caps instances per user at 128 by default.
//!
//! inotify reports a change under the name that was written: when the
//! events file is a symlink, the program's appends are news of the file
//! it points to, in that file's directory. So a session also follows its
//! link's target ([`LinkTarget`]); a directory is watched once, however
//! many followed files are in it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use notify::{RecursiveMode, Watcher as _};
use tokio::sync::Notify;
use tracing::debug;

use crate::sync::lock;

/// Each followed file and whom its changes wake.
type Targets = Arc<Mutex<HashMap<PathBuf, Vec<Arc<Notify>>>>>;

/// See the module docs.
pub(crate) struct Watcher {
    inner: Mutex<notify::RecommendedWatcher>,
    targets: Targets,
    /// Each watched directory and how many followed files are in it. Its
    /// lock is taken before `inner`'s, never by the dispatching thread.
    dirs: Mutex<HashMap<PathBuf, usize>>,
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
    pub(crate) fn new() -> Result<Self> {
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
                        for n in targets.get(path).into_iter().flatten() {
                            n.notify_one();
                        }
                    }
                }
                // Overflowed queue or an error: we do not know what changed,
                // so every session re-reads (a read with nothing new is cheap).
                _ => targets.values().flatten().for_each(|n| n.notify_one()),
            }
        })
        .context("starting inotify")?;
        Ok(Self {
            inner: Mutex::new(inner),
            targets,
            dirs: Mutex::default(),
        })
    }

    /// Wakes `notify` whenever `file` (inside `dir`) changes. Wakes it once
    /// right away too, for anything written before the watch existed.
    pub(crate) fn watch(&self, dir: &Path, file: PathBuf, notify: Arc<Notify>) -> Result<()> {
        {
            let mut dirs = lock(&self.dirs);
            let count = dirs.entry(dir.to_path_buf()).or_insert(0);
            if *count == 0 {
                if let Err(e) = lock(&self.inner).watch(dir, RecursiveMode::NonRecursive) {
                    dirs.remove(dir);
                    return Err(e).with_context(|| format!("watching {}", dir.display()));
                }
            }
            *count += 1;
        }
        lock(&self.targets)
            .entry(file)
            .or_default()
            .push(notify.clone());
        notify.notify_one();
        Ok(())
    }

    /// Stops waking `notify` for `file`, and watching `dir` once no
    /// followed file is left in it.
    pub(crate) fn unwatch(&self, dir: &Path, file: &Path, notify: &Arc<Notify>) {
        {
            let mut targets = lock(&self.targets);
            let Some(woken) = targets.get_mut(file) else {
                return;
            };
            let before = woken.len();
            woken.retain(|n| !Arc::ptr_eq(n, notify));
            if woken.len() == before {
                return;
            }
            if woken.is_empty() {
                targets.remove(file);
            }
        }
        let mut dirs = lock(&self.dirs);
        if let Some(count) = dirs.get_mut(dir) {
            *count -= 1;
            if *count == 0 {
                dirs.remove(dir);
                let _ = lock(&self.inner).unwatch(dir);
            }
        }
    }
}

/// The file a session's events path links to, followed as long as the path
/// is a symlink (see the module docs); unfollowed when dropped.
pub(crate) struct LinkTarget {
    watcher: Arc<Watcher>,
    wake: Arc<Notify>,
    /// The target's directory and the target, as watched.
    followed: Option<(PathBuf, PathBuf)>,
}

impl LinkTarget {
    pub(crate) fn new(watcher: Arc<Watcher>, wake: Arc<Notify>) -> Self {
        Self {
            watcher,
            wake,
            followed: None,
        }
    }

    /// What a change of the target wakes.
    pub(crate) fn wake(&self) -> Arc<Notify> {
        self.wake.clone()
    }

    /// Follows what `path` links to now (nothing when it is no symlink).
    /// A new target is read once at once (the watch wakes the reader), so
    /// nothing appended before its watch existed waits for the next change.
    pub(crate) fn update(&mut self, path: &Path) {
        let target = link_target(path);
        if self.followed.as_ref().map(|(_, t)| t) == target.as_ref() {
            return;
        }
        self.unfollow();
        let Some(target) = target else { return };
        let Some(dir) = target.parent().map(Path::to_path_buf) else {
            return;
        };
        match self.watcher.watch(&dir, target.clone(), self.wake.clone()) {
            Ok(()) => self.followed = Some((dir, target)),
            // Read at the path's own changes, and at exit.
            Err(e) => debug!(?e, "following the events file's link"),
        }
    }

    fn unfollow(&mut self) {
        if let Some((dir, target)) = self.followed.take() {
            self.watcher.unwatch(&dir, &target, &self.wake);
        }
    }
}

impl Drop for LinkTarget {
    fn drop(&mut self) {
        self.unfollow();
    }
}

/// Where the symlink at `path` leads, with every directory resolved (as
/// inotify names its files); `None` when `path` is no symlink. A dangling
/// link leads to where its target will be.
fn link_target(path: &Path) -> Option<PathBuf> {
    if !std::fs::symlink_metadata(path)
        .ok()?
        .file_type()
        .is_symlink()
    {
        return None;
    }
    if let Ok(target) = std::fs::canonicalize(path) {
        return Some(target);
    }
    let link = std::fs::read_link(path).ok()?;
    let target = path.parent()?.join(link);
    let dir = std::fs::canonicalize(target.parent()?).ok()?;
    Some(dir.join(target.file_name()?))
}
