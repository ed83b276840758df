//! The agent's file access through duet (`fs/read_text_file`,
//! `fs/write_text_file`), confined to the session's work dir: a path
//! outside it, one that leads out through a symlink, or a file over the
//! size limit is refused.

use std::path::{Path, PathBuf};

/// Largest file read or written for the agent.
pub(crate) const MAX_FILE: u64 = 16 << 20;

/// Why a file request was refused (the JSON-RPC error's message).
pub(crate) type Refusal = String;

/// `path` if it lies inside `root` once every symlink is resolved; a path
/// that does not exist yet counts by its parent directory.
fn confined(root: &Path, path: &Path) -> Result<PathBuf, Refusal> {
    if !path.is_absolute() {
        return Err(format!("{} is not an absolute path", path.display()));
    }
    let root = root
        .canonicalize()
        .map_err(|e| format!("the work dir is not readable: {e}"))?;
    let real = match path.canonicalize() {
        Ok(p) => p,
        Err(_) => {
            let parent = path
                .parent()
                .ok_or_else(|| format!("{} has no parent directory", path.display()))?;
            let name = path
                .file_name()
                .ok_or_else(|| format!("{} names no file", path.display()))?;
            let parent = parent
                .canonicalize()
                .map_err(|e| format!("{}: {e}", parent.display()))?;
            parent.join(name)
        }
    };
    if !real.starts_with(&root) {
        return Err(format!(
            "{} is outside the session's work dir {}",
            path.display(),
            root.display()
        ));
    }
    Ok(real)
}

/// Reads a text file for the agent: `line` (1-based) and `limit` select
/// lines, as ACP's `fs/read_text_file` does.
pub(crate) fn read(
    root: &Path,
    path: &Path,
    line: Option<u64>,
    limit: Option<u64>,
) -> Result<String, Refusal> {
    let real = confined(root, path)?;
    let meta = std::fs::metadata(&real).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.len() > MAX_FILE {
        return Err(format!(
            "{} is {} bytes; duet reads at most {MAX_FILE}",
            path.display(),
            meta.len()
        ));
    }
    let text = std::fs::read_to_string(&real).map_err(|e| format!("{}: {e}", path.display()))?;
    if line.is_none() && limit.is_none() {
        return Ok(text);
    }
    let skip = line.unwrap_or(1).saturating_sub(1) as usize;
    let take = limit.map_or(usize::MAX, |l| l as usize);
    Ok(text.split_inclusive('\n').skip(skip).take(take).collect())
}

/// Writes a text file for the agent (created if missing).
pub(crate) fn write(root: &Path, path: &Path, content: &str) -> Result<(), Refusal> {
    if content.len() as u64 > MAX_FILE {
        return Err(format!(
            "{} bytes for {}; duet writes at most {MAX_FILE}",
            content.len(),
            path.display()
        ));
    }
    let real = confined(root, path)?;
    std::fs::write(&real, content).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_stay_in_the_work_dir() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "no").unwrap();
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        std::fs::write(r.join("a.txt"), "one\ntwo\nthree\n").unwrap();
        assert_eq!(
            read(r, &r.join("a.txt"), None, None).unwrap(),
            "one\ntwo\nthree\n"
        );
        assert_eq!(
            read(r, &r.join("a.txt"), Some(2), Some(1)).unwrap(),
            "two\n"
        );
        write(r, &r.join("new.txt"), "made").unwrap();
        assert_eq!(std::fs::read_to_string(r.join("new.txt")).unwrap(), "made");

        // Outside, relative, up and out, through a symlink: refused.
        let secret = outside.path().join("secret");
        assert!(read(r, &secret, None, None)
            .unwrap_err()
            .contains("outside"));
        assert!(read(r, Path::new("a.txt"), None, None).is_err());
        assert!(read(
            r,
            &r.join("../")
                .join(outside.path().file_name().unwrap())
                .join("secret"),
            None,
            None
        )
        .is_err());
        std::os::unix::fs::symlink(&secret, r.join("link")).unwrap();
        assert!(read(r, &r.join("link"), None, None)
            .unwrap_err()
            .contains("outside"));
        assert!(write(r, &r.join("link"), "x")
            .unwrap_err()
            .contains("outside"));
        std::os::unix::fs::symlink(outside.path(), r.join("dir")).unwrap();
        assert!(write(r, &r.join("dir/new"), "x")
            .unwrap_err()
            .contains("outside"));
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "no");

        // Oversized.
        let big = "x".repeat(MAX_FILE as usize + 1);
        assert!(write(r, &r.join("big"), &big)
            .unwrap_err()
            .contains("at most"));
        std::fs::write(r.join("big"), &big).unwrap();
        assert!(read(r, &r.join("big"), None, None)
            .unwrap_err()
            .contains("at most"));
    }
}
