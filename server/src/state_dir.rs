//! The state directory, and the session directories duet makes in it.
//!
//! Session directories hold what a program reads and writes (its input
//! file, its transcript, its work directory), so the state directory must be
//! duet's alone. duet creates it private when it is missing and refuses one
//! that others could reach into, rather than change it: a directory with a
//! loose mode may well be shared (`--state-dir /tmp`), and tightening it
//! would break its other users. Likewise duet only ever deletes directories
//! it made itself, which carry a marker file from their creation.

use std::fs::DirBuilder;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The file in every session directory duet made: what makes a directory
/// one duet may delete.
pub const MARKER: &str = ".duet-session";

/// Makes `path` a usable state directory: creates it (and missing parents)
/// mode 0700 if it does not exist, and refuses an existing one that is a
/// symlink, not a directory, not owned by duet's user, or open to group or
/// others in any way. An existing directory is never changed.
pub fn prepare(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(parent)
                    .with_context(|| format!("creating {}", parent.display()))?;
            }
            match DirBuilder::new().mode(0o700).create(path) {
                // Ours: the umask may have taken bits the owner needs.
                Ok(()) => std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
                    .with_context(|| format!("setting the mode of {}", path.display()))?,
                // Someone made it meanwhile: it is checked like any other.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("creating the state directory {}", path.display())
                    })
                }
            }
        }
        Err(e) => {
            return Err(e)
                .with_context(|| format!("checking the state directory {}", path.display()))
        }
    }
    check(path)
}

/// Refuses a state directory others could use against duet (see [`prepare`]).
fn check(path: &Path) -> Result<()> {
    let shown = path.display();
    let how = "choose a private directory of duet's user with --state-dir (DUET_STATE_DIR), \
               or leave it out for the default";
    let meta = std::fs::symlink_metadata(path)
        .with_context(|| format!("checking the state directory {shown}"))?;
    if meta.file_type().is_symlink() {
        bail!(
            "the state directory {shown} is a symlink; whoever controls the link controls \
             where sessions live. Give the real path, or {how}"
        );
    }
    if !meta.is_dir() {
        bail!("the state directory {shown} is not a directory; {how}");
    }
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        bail!(
            "the state directory {shown} is owned by uid {}, not by duet's user (uid {me}); {how}",
            meta.uid()
        );
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        bail!(
            "the state directory {shown} has mode {mode:04o}, so other users can reach into it; \
             it must be private (0700). duet does not change a directory it did not create: \
             `chmod 700` it if it is duet's alone, or {how}"
        );
    }
    Ok(())
}

/// Creates the private directory of a new session, with its marker.
pub fn create_session_dir(state_dir: &Path, name: &str) -> std::io::Result<PathBuf> {
    let dir = state_dir.join(name);
    // Not recursive, and an existing directory is an error: a session
    // directory is always new.
    match DirBuilder::new().mode(0o700).create(&dir) {
        // The state directory went away while duet ran (a tmp cleaner ages
        // out /tmp/duet-<uid>): make it again, checked as at start.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            prepare(state_dir).map_err(|e| std::io::Error::other(format!("{e:#}")))?;
            DirBuilder::new().mode(0o700).create(&dir)?;
        }
        r => r?,
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(dir.join(MARKER))?;
    Ok(dir)
}

/// Whether `dir` is a session directory duet made (and so may delete): a
/// real directory of duet's user with the marker in it.
pub fn is_session_dir(dir: &Path) -> bool {
    let me = nix::unistd::geteuid().as_raw();
    let ours = |p: &Path, want_dir: bool| {
        std::fs::symlink_metadata(p).is_ok_and(|m| {
            m.uid() == me
                && if want_dir {
                    m.file_type().is_dir()
                } else {
                    m.file_type().is_file()
                }
        })
    };
    ours(dir, true) && ours(&dir.join(MARKER), false)
}

/// A new, empty file only its owner may read (0600 whatever the umask), for
/// what duet keeps in a session directory.
pub(crate) fn create_private(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(path)
}

/// A private per-user directory for session files.
pub fn default_state_dir() -> PathBuf {
    let uid = nix::unistd::getuid();
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join("duet"),
        _ => std::env::temp_dir().join(format!("duet-{uid}")),
    }
}
