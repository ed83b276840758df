//! One duet per state directory, and how a terminal client finds it.
//!
//! Two duets on one state directory end each other's programs: each takes
//! the other's session directories for leftovers of a crash
//! (`registry/leftovers.rs`). So a duet holds an exclusive `flock` on
//! `duet.lock` in its state directory for its whole life, taken before it
//! recovers or sweeps anything, and a second one is refused with the
//! first's pid and URL. The kernel drops the lock with its process, so the
//! lock of a duet that was killed (`kill -9`, a crash) is simply taken over,
//! and its file rewritten.
//!
//! Once it listens, duet writes `server.json` beside it (owner-only, like
//! the directory): its pid, URL and token, which `duet attach` and
//! `duet run` read to reach the local duet without flags.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::FlockOperation;
use serde::{Deserialize, Serialize};

/// The lock file in the state directory.
pub const LOCK_FILE: &str = "duet.lock";
/// What a client reads to reach the duet of a state directory.
pub const SERVER_FILE: &str = "server.json";

/// Who holds the lock: what `duet.lock` says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The process id of the duet holding the lock.
    pub pid: u32,
    /// Where it listens; absent while it starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// How to reach a running duet: `server.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerFile {
    /// The process id of that duet (a client checks it still runs).
    pub pid: u32,
    /// The base URL, without a trailing slash.
    pub url: String,
    /// The owner's token (absent with `--no-auth`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

impl ServerFile {
    /// The `server.json` of state directory `dir`, if there is a readable one.
    pub fn read(dir: &Path) -> Option<ServerFile> {
        let text = std::fs::read(dir.join(SERVER_FILE)).ok()?;
        serde_json::from_slice(&text).ok()
    }
}

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another duet runs on this state directory.
    #[error(
        "another duet ({}) runs on the state directory {}: two would end each other's \
         sessions. Use that one, stop it, or give this one a directory of its own with \
         --state-dir (DUET_STATE_DIR)",
        describe(.holder), .dir.display()
    )]
    Held {
        /// The state directory another duet runs on.
        dir: PathBuf,
        /// Who holds the lock, as its `duet.lock` says (absent if unreadable).
        holder: Option<Holder>,
    },
    /// Taking the lock failed for another reason (the file could not be
    /// opened or locked).
    #[error("locking the state directory {}: {source}", .dir.display())]
    Io {
        /// The state directory whose lock could not be taken.
        dir: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

fn describe(holder: &Option<Holder>) -> String {
    match holder {
        Some(Holder {
            pid,
            url: Some(url),
        }) => format!("pid {pid}, {url}"),
        Some(Holder { pid, url: None }) => format!("pid {pid}, still starting"),
        None => "its pid is not known".into(),
    }
}

/// The exclusive lock of a state directory, held until dropped (the file
/// stays open; closing it, or the process ending, lets go).
#[derive(Debug)]
pub struct StateLock {
    file: File,
    dir: PathBuf,
}

impl StateLock {
    /// Takes the lock of state directory `dir` (which must exist and have
    /// been checked: `state_dir::prepare`), or says who has it.
    pub fn acquire(dir: &Path) -> Result<StateLock, LockError> {
        let io = |source| LockError::Io {
            dir: dir.to_path_buf(),
            source,
        };
        let path = dir.join(LOCK_FILE);
        // No symlink followed: the directory is private, and this file must
        // be what it seems.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&path)
            .map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if !meta.is_file() || meta.uid() != nix::unistd::geteuid().as_raw() {
            return Err(io(std::io::Error::other(format!(
                "{} is not a file of duet's user",
                path.display()
            ))));
        }
        match rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                let mut file = file;
                return Err(LockError::Held {
                    dir: dir.to_path_buf(),
                    holder: read_holder(&mut file),
                });
            }
            Err(e) => return Err(io(e.into())),
        }
        let lock = StateLock {
            file,
            dir: dir.to_path_buf(),
        };
        // What a dead holder wrote is replaced at once.
        lock.write_holder(&Holder {
            pid: std::process::id(),
            url: None,
        })
        .map_err(io)?;
        Ok(lock)
    }

    /// The state directory this lock is of.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Says where this duet listens: in the lock file (for a second duet's
    /// refusal) and in `server.json` with the token (for clients).
    pub fn publish(&self, url: &str, token: Option<&str>) -> std::io::Result<()> {
        let pid = std::process::id();
        self.write_holder(&Holder {
            pid,
            url: Some(url.to_string()),
        })?;
        let info = ServerFile {
            pid,
            url: url.to_string(),
            token: token.map(str::to_string),
        };
        // Whole or not at all: a client may read it at any moment.
        let tmp = self.dir.join(".server.json.tmp");
        let mut f = crate::state_dir::create_private(&tmp)?;
        f.write_all(&serde_json::to_vec(&info).map_err(std::io::Error::other)?)?;
        drop(f);
        std::fs::rename(&tmp, self.dir.join(SERVER_FILE))
    }

    fn write_holder(&self, holder: &Holder) -> std::io::Result<()> {
        let text = serde_json::to_vec(holder).map_err(std::io::Error::other)?;
        let mut file = &self.file;
        file.set_len(0)?;
        file.rewind()?;
        file.write_all(&text)
    }
}

impl Drop for StateLock {
    /// A duet that stopped is reached no more: its `server.json` goes (if
    /// it is still this duet's), so clients start another rather than
    /// knock on a closed port.
    fn drop(&mut self) {
        let path = self.dir.join(SERVER_FILE);
        if ServerFile::read(&self.dir).is_some_and(|s| s.pid == std::process::id()) {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn read_holder(file: &mut File) -> Option<Holder> {
    let mut text = Vec::new();
    file.rewind().ok()?;
    file.take(4096).read_to_end(&mut text).ok()?;
    serde_json::from_slice(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_with_the_holder_and_taken_once_it_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let first = StateLock::acquire(dir.path()).unwrap();
        first.publish("http://127.0.0.1:9", Some("tok")).unwrap();
        // flock locks belong to an open file: a second open in the same
        // process is refused as another process would be.
        let err = StateLock::acquire(dir.path()).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains(&std::process::id().to_string())
                && msg.contains("http://127.0.0.1:9")
                && msg.contains(&dir.path().display().to_string())
                && msg.contains("--state-dir"),
            "{msg}"
        );
        let server = ServerFile::read(dir.path()).unwrap();
        assert_eq!(server.token.as_deref(), Some("tok"));
        drop(first);
        assert!(ServerFile::read(dir.path()).is_none());
        let again = StateLock::acquire(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(LOCK_FILE)).unwrap();
        assert_eq!(
            serde_json::from_str::<Holder>(&text).unwrap(),
            Holder {
                pid: std::process::id(),
                url: None
            }
        );
        drop(again);
    }

    #[test]
    fn the_files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let lock = StateLock::acquire(dir.path()).unwrap();
        lock.publish("http://x", None).unwrap();
        for f in [LOCK_FILE, SERVER_FILE] {
            let mode = std::fs::metadata(dir.path().join(f))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "{f}: {mode:o}");
        }
    }
}
