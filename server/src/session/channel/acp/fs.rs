//! The agent's file access through duet (`fs/read_text_file`,
//! `fs/write_text_file`): regular files beneath the session's work dir
//! only (`beneath.rs` resolves the path, so neither `..` nor a symlink —
//! dangling ones included — leads out), and no more than `MAX_FILE`.
//!
//! A FIFO, a device, a socket or a directory is refused, and none can make
//! duet wait: the path is first opened `O_PATH` (which does no I/O) and
//! refused unless it is a regular file, then opened for real with
//! `O_NONBLOCK` (a FIFO swapped in meanwhile opens at once rather than
//! waiting for a writer) and checked again on the descriptor read or
//! written. A write truncates only after those checks. A read takes at
//! most `MAX_FILE + 1` bytes from the descriptor, whatever the file's size
//! said, so a file that grows cannot make it read more.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::path::Path;

use rustix::fs::{FileType, Mode, OFlags};

use super::beneath::{Denied, Root};

/// Largest file read or written for the agent.
pub(crate) const MAX_FILE: u64 = 16 << 20;

/// Why a file request was refused (the JSON-RPC error's message).
pub(crate) type Refusal = String;

/// A file duet creates gets 0666 less the umask, as `std::fs::write` (and
/// the agent's own tools) would give it.
const NEW_FILE: u32 = 0o666;

/// Opens the regular file `path` beneath `root`, for reading or (created
/// if missing) for writing.
fn open(root: &Path, path: &Path, write: bool) -> Result<File, Refusal> {
    let root = Root::open(root).map_err(|e| format!("the work dir cannot be opened: {e}"))?;
    match root.open_path(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => regular(fd, path)?,
        Err(Denied::Io(_, e)) if write && e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e.to_string()),
    }
    let (flags, mode) = if write {
        (
            OFlags::WRONLY | OFlags::CREATE,
            Mode::from_raw_mode(NEW_FILE),
        )
    } else {
        (OFlags::RDONLY, Mode::empty())
    };
    // NOCTTY: a terminal opened here must not become duet's.
    let flags = flags | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = root
        .open_path(path, flags, mode)
        .map_err(|e| e.to_string())?;
    regular(fd.as_fd(), path)?;
    Ok(File::from(fd))
}

/// Refuses anything but a regular file, saying what it is.
fn regular(fd: impl AsFd, path: &Path) -> Result<(), Refusal> {
    let stat = rustix::fs::fstat(fd)
        .map_err(|e| format!("{}: {}", path.display(), std::io::Error::from(e)))?;
    let what = match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => return Ok(()),
        FileType::Directory => "a directory",
        FileType::Fifo => "a FIFO (named pipe)",
        FileType::Socket => "a socket",
        FileType::CharacterDevice | FileType::BlockDevice => "a device",
        _ => "not a regular file",
    };
    Err(format!(
        "{} is {what}; duet reads and writes regular files only",
        path.display()
    ))
}

/// Reads a text file for the agent: `line` (1-based) and `limit` select
/// lines, as ACP's `fs/read_text_file` does.
pub(crate) fn read(
    root: &Path,
    path: &Path,
    line: Option<u64>,
    limit: Option<u64>,
) -> Result<String, Refusal> {
    let file = open(root, path, false)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(format!(
            "{} is over {MAX_FILE} bytes; duet reads at most {MAX_FILE}",
            path.display()
        ));
    }
    let text =
        String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", path.display()))?;
    if line.is_none() && limit.is_none() {
        return Ok(text);
    }
    let skip = line.unwrap_or(1).saturating_sub(1) as usize;
    let take = limit.map_or(usize::MAX, |l| l as usize);
    Ok(text.split_inclusive('\n').skip(skip).take(take).collect())
}

/// [`read`], except that a file that does not exist in a directory that
/// does reads as "" (for agents that write a new file only after reading
/// it, `quirks.rs`). Anything else refused stays refused.
pub(crate) fn read_or_empty(
    root: &Path,
    path: &Path,
    line: Option<u64>,
    limit: Option<u64>,
) -> Result<String, Refusal> {
    read(root, path, line, limit).or_else(|refusal| {
        if missing_in_a_directory(root, path) {
            Ok(String::new())
        } else {
            Err(refusal)
        }
    })
}

/// Whether `path` names nothing, beneath `root`, in a directory that is
/// there (a dangling symlink that stays inside counts: writing it creates
/// its target, as `write` does).
fn missing_in_a_directory(root: &Path, path: &Path) -> bool {
    let Ok(root) = Root::open(root) else {
        return false;
    };
    let gone = matches!(
        root.open_path(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()),
        Err(Denied::Io(_, e)) if e.kind() == std::io::ErrorKind::NotFound
    );
    let dir = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    gone && path
        .parent()
        .is_some_and(|parent| root.open_path(parent, dir, Mode::empty()).is_ok())
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
    let mut file = open(root, path, true)?;
    file.set_len(0)
        .and_then(|()| file.write_all(content.as_bytes()))
        .map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::channel::acp::beneath::tests::dirs;
    use rustix::fs::{mknodat, CWD};
    use std::os::unix::fs::{symlink, PermissionsExt};
    use std::path::PathBuf;
    use std::time::Duration;

    /// Long enough for any loaded machine; it only tells a hang from an
    /// answer.
    const HANG: Duration = Duration::from_secs(30);

    #[track_caller]
    fn refused<T: std::fmt::Debug>(got: Result<T, Refusal>, why: &str) {
        let e = got.unwrap_err();
        assert!(e.contains(why), "{e}");
    }

    fn read_all(root: &Path, path: &Path) -> Result<String, Refusal> {
        read(root, path, None, None)
    }

    #[test]
    fn a_file_inside_is_read_and_written() {
        let d = dirs();
        let r = &d.root;
        std::fs::write(r.join("a.txt"), "one\ntwo\nthree\n").unwrap();
        assert_eq!(read_all(r, &r.join("a.txt")).unwrap(), "one\ntwo\nthree\n");
        assert_eq!(
            read(r, &r.join("a.txt"), Some(2), Some(1)).unwrap(),
            "two\n"
        );
        assert_eq!(read(r, &r.join("a.txt"), Some(3), None).unwrap(), "three\n");
        // Written over: truncated to the new content.
        write(r, &r.join("a.txt"), "1").unwrap();
        assert_eq!(std::fs::read_to_string(r.join("a.txt")).unwrap(), "1");
        // Created with the mode std::fs::write would give it.
        write(r, &r.join("sub/new.txt"), "made").unwrap();
        assert_eq!(
            std::fs::read_to_string(r.join("sub/new.txt")).unwrap(),
            "made"
        );
        std::fs::write(r.join("by_std"), "").unwrap();
        let mode = |p: PathBuf| std::fs::metadata(p).unwrap().permissions().mode();
        assert_eq!(mode(r.join("sub/new.txt")), mode(r.join("by_std")));
        refused(read_all(r, &r.join("sub/missing")), "No such file");
    }

    #[test]
    fn a_symlink_that_stays_inside_is_followed() {
        let d = dirs();
        let r = &d.root;
        symlink("sub/a.txt", r.join("rel")).unwrap();
        symlink(r.join("sub/a.txt"), r.join("abs")).unwrap();
        symlink("sub", r.join("dir")).unwrap();
        assert_eq!(read_all(r, &r.join("rel")).unwrap(), "a");
        assert_eq!(read_all(r, &r.join("abs")).unwrap(), "a");
        write(r, &r.join("dir/b.txt"), "b").unwrap();
        write(r, &r.join("rel"), "through").unwrap();
        assert_eq!(std::fs::read_to_string(r.join("sub/b.txt")).unwrap(), "b");
        assert_eq!(
            std::fs::read_to_string(r.join("sub/a.txt")).unwrap(),
            "through"
        );
    }

    #[test]
    fn relative_up_and_outside_paths_are_refused() {
        let d = dirs();
        let (r, out) = (&d.root, &d.outside);
        refused(read_all(r, Path::new("sub/a.txt")), "not an absolute path");
        refused(write(r, Path::new("new.txt"), "x"), "not an absolute path");
        refused(read_all(r, &r.join("../outside/secret")), "leads outside");
        refused(
            write(r, &r.join("sub/../../outside/secret"), "x"),
            "leads outside",
        );
        refused(read_all(r, &out.join("secret")), "is outside");
        refused(write(r, &out.join("secret"), "x"), "is outside");
        assert_eq!(std::fs::read_to_string(out.join("secret")).unwrap(), "no");
    }

    #[test]
    fn symlinks_out_are_refused() {
        let d = dirs();
        let (r, out) = (&d.root, &d.outside);
        symlink(out.join("secret"), r.join("file")).unwrap();
        symlink("../outside/secret", r.join("relative")).unwrap();
        symlink(out, r.join("dir")).unwrap();
        symlink("/dev/zero", r.join("zero")).unwrap();
        for p in ["file", "relative", "dir/secret", "zero"] {
            refused(read_all(r, &r.join(p)), "leads outside");
            refused(write(r, &r.join(p), "x"), "leads outside");
        }
        refused(write(r, &r.join("dir/new"), "x"), "leads outside");
        assert_eq!(std::fs::read_to_string(out.join("secret")).unwrap(), "no");
        assert!(!out.join("new").exists());
    }

    /// The report of issue 27: `ln -s /outside/pwned.txt WORK/x`, then a
    /// write of `WORK/x` created `/outside/pwned.txt`.
    #[test]
    fn a_dangling_symlink_out_creates_nothing() {
        let d = dirs();
        let (r, out) = (&d.root, &d.outside);
        symlink(out.join("pwned.txt"), r.join("x")).unwrap();
        symlink("../outside/pwned.txt", r.join("y")).unwrap();
        for p in ["x", "y"] {
            refused(write(r, &r.join(p), "pwned"), "leads outside");
        }
        assert!(!out.join("pwned.txt").exists());
    }

    #[test]
    fn a_dangling_symlink_into_a_missing_directory_creates_nothing() {
        let d = dirs();
        let (r, out) = (&d.root, &d.outside);
        symlink(out.join("nodir/pwned.txt"), r.join("x")).unwrap();
        symlink("nodir/file", r.join("y")).unwrap();
        refused(write(r, &r.join("x"), "pwned"), "leads outside");
        refused(write(r, &r.join("y"), "x"), "No such file");
        assert!(!out.join("nodir").exists());
        assert!(!r.join("nodir").exists());
    }

    /// Gemini CLI reads a file before it writes a new one: a missing file
    /// in a directory that exists reads as ""; one in a missing
    /// directory, outside, or behind a symlink out is refused as before.
    #[test]
    fn a_missing_file_in_a_directory_reads_empty_and_nothing_else_does() {
        let d = dirs();
        let (r, out) = (&d.root, &d.outside);
        assert_eq!(
            read_or_empty(r, &r.join("new.txt"), None, None).unwrap(),
            ""
        );
        refused(read(r, &r.join("new.txt"), None, None), "No such file");
        std::fs::write(r.join("old.txt"), "kept").unwrap();
        assert_eq!(
            read_or_empty(r, &r.join("old.txt"), None, None).unwrap(),
            "kept"
        );
        refused(
            read_or_empty(r, &r.join("nodir/new.txt"), None, None),
            "No such file",
        );
        refused(
            read_or_empty(r, &out.join("new.txt"), None, None),
            "outside",
        );
        symlink(out.join("missing.txt"), r.join("x")).unwrap();
        refused(read_or_empty(r, &r.join("x"), None, None), "leads outside");
        refused(read_or_empty(r, &r.join("sub"), None, None), "a directory");
    }

    /// Runs `op` on a thread of its own; a hang fails the test instead of
    /// pinning it (the thread is left behind).
    fn within<T: Send + 'static>(op: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(op()));
        rx.recv_timeout(HANG).expect("the call blocked")
    }

    #[test]
    fn a_fifo_is_refused_at_once() {
        let d = dirs();
        let r = d.root.clone();
        let pipe = r.join("pipe");
        mknodat(CWD, &pipe, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
        let (r1, p1) = (r.clone(), pipe.clone());
        refused(within(move || read_all(&r1, &p1)), "is a FIFO");
        refused(within(move || write(&r, &pipe, "x")), "is a FIFO");
    }

    #[test]
    fn a_device_is_refused() {
        let d = dirs();
        let r = &d.root;
        // A device node of duet's own making needs CAP_MKNOD (root in a
        // container); without it, the check runs on /dev/null itself.
        let null = r.join("null");
        let dev = rustix::fs::makedev(1, 3);
        match mknodat(
            CWD,
            &null,
            FileType::CharacterDevice,
            Mode::from_raw_mode(0o666),
            dev,
        ) {
            Ok(()) => {
                refused(read_all(r, &null), "is a device");
                refused(write(r, &null, "x"), "is a device");
            }
            Err(e) => {
                eprintln!("no device node ({e}); checking /dev/null's descriptor");
                let fd = File::open("/dev/null").unwrap();
                refused(regular(&fd, Path::new("/dev/null")), "is a device");
            }
        }
    }

    #[test]
    fn a_socket_and_a_directory_are_refused() {
        let d = dirs();
        let r = &d.root;
        let _listening = std::os::unix::net::UnixListener::bind(r.join("sock")).unwrap();
        refused(read_all(r, &r.join("sock")), "is a socket");
        refused(write(r, &r.join("sock"), "x"), "is a socket");
        refused(read_all(r, &r.join("sub")), "is a directory");
        refused(write(r, &r.join("sub"), "x"), "is a directory");
        refused(read_all(r, r), "is a directory");
    }

    #[test]
    fn files_over_the_bound_are_refused() {
        let d = dirs();
        let r = &d.root;
        let big = "x".repeat(MAX_FILE as usize + 1);
        refused(write(r, &r.join("big"), &big), "at most");
        assert!(!r.join("big").exists());
        std::fs::write(r.join("big"), &big).unwrap();
        refused(read_all(r, &r.join("big")), "at most");
        std::fs::write(r.join("big"), &big[1..]).unwrap();
        assert_eq!(read_all(r, &r.join("big")).unwrap().len() as u64, MAX_FILE);
    }
}
