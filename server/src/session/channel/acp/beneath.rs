//! Opening a path an agent names beneath the session's work dir, never out
//! of it. The path must be absolute and under the work dir (by the name
//! duet gave the agent, or its real path); the rest is resolved from a
//! descriptor of the work dir by the kernel, `openat2` with
//! `RESOLVE_BENEATH`, so neither `..` nor a symlink leads out — checked on
//! the very open, with no gap between a check and the use of the path.
//!
//! Where `openat2` is missing (Linux before 5.6; ENOSYS, or EPERM from a
//! seccomp filter), a walk gives the same answer one component at a time:
//! every open is `O_NOFOLLOW` from the descriptor of the directory reached
//! so far, and a symlink is read (`readlinkat`) and its target walked in
//! its place, so the kernel never follows a link for duet; `..` goes back
//! to the directory the walk came from, and out of the root is refused.
//! The walk also answers what `RESOLVE_BENEATH` refuses and need not: a
//! symlink with an absolute target naming the work dir (agents' tools make
//! them) is followed, from the root.

use std::ffi::OsString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{openat, openat2, readlinkat, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// Symlinks one path may go through (Linux's own limit).
const MAX_LINKS: usize = 40;
/// `openat2` answers EAGAIN when a rename raced its check of a `..`; it
/// may be asked again.
const RETRIES: usize = 4;

/// Why a path was not opened.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Denied {
    #[error("{} is not an absolute path", .0.display())]
    Relative(PathBuf),
    #[error("{} is outside the session's work dir", .0.display())]
    Outside(PathBuf),
    #[error("{} leads outside the session's work dir (through `..` or a symlink)", .0.display())]
    LeadsOut(PathBuf),
    #[error("{}: {}", .0.display(), .1)]
    Io(PathBuf, std::io::Error),
}

/// What went wrong in a resolution, before it is told with its path.
enum Failed {
    Out,
    Errno(Errno),
}

/// The work dir, open, and the names an agent may know it by.
pub(crate) struct Root {
    fd: OwnedFd,
    names: Vec<PathBuf>,
}

impl Root {
    /// Opens the work dir (a path of the operator's profile: trusted, so
    /// followed if it is itself a symlink).
    pub(crate) fn open(dir: &Path) -> Result<Self, Denied> {
        let io = |e: Errno| Denied::Io(dir.to_path_buf(), e.into());
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(dir, flags, Mode::empty()).map_err(io)?;
        let mut names = vec![dir.to_path_buf()];
        // The agent runs in the work dir and may spell it as `getcwd` does.
        if let Ok(real) = dir.canonicalize() {
            if real != dir {
                names.push(real);
            }
        }
        Ok(Self { fd, names })
    }

    /// Opens `path` beneath the work dir with `flags` (and `mode`, which
    /// only `O_CREAT` may have).
    pub(crate) fn open_path(
        &self,
        path: &Path,
        flags: OFlags,
        mode: Mode,
    ) -> Result<OwnedFd, Denied> {
        self.resolve(path, flags, mode, true)
    }

    fn resolve(
        &self,
        path: &Path,
        flags: OFlags,
        mode: Mode,
        kernel_first: bool,
    ) -> Result<OwnedFd, Denied> {
        if !path.is_absolute() {
            return Err(Denied::Relative(path.to_path_buf()));
        }
        let rest = self
            .under(path)
            .ok_or_else(|| Denied::Outside(path.to_path_buf()))?;
        let rest = if rest.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rest
        };
        let walked = || self.walk(rest, flags, mode);
        let got = if kernel_first {
            match beneath(self.fd.as_fd(), rest, flags, mode) {
                // EXDEV: out, or an absolute link the walk may find inside.
                Err(Errno::XDEV | Errno::NOSYS | Errno::PERM) => walked(),
                got => got.map_err(Failed::Errno),
            }
        } else {
            walked()
        };
        got.map_err(|f| match f {
            Failed::Out => Denied::LeadsOut(path.to_path_buf()),
            Failed::Errno(e) => Denied::Io(path.to_path_buf(), e.into()),
        })
    }

    /// What follows the work dir's name in `path`, if it starts with one.
    fn under<'a>(&self, path: &'a Path) -> Option<&'a Path> {
        self.names.iter().find_map(|n| path.strip_prefix(n).ok())
    }

    /// The walk of the module docs.
    fn walk(&self, rest: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd, Failed> {
        // Components still to walk, the next one last.
        let mut todo = Vec::new();
        push(&mut todo, rest);
        // The directories entered below the root, innermost last.
        let mut dirs: Vec<OwnedFd> = Vec::new();
        let mut links = 0;
        while let Some(name) = todo.pop() {
            let here = dirs.last().map_or(self.fd.as_fd(), |d| d.as_fd());
            if name == ".." {
                dirs.pop().ok_or(Failed::Out)?;
                continue;
            }
            match readlinkat(here, name.as_os_str(), Vec::new()) {
                Ok(target) => {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(Failed::Errno(Errno::LOOP));
                    }
                    let target = PathBuf::from(OsString::from_vec(target.into_bytes()));
                    if target.is_absolute() {
                        push(&mut todo, self.under(&target).ok_or(Failed::Out)?);
                        dirs.clear();
                    } else {
                        push(&mut todo, &target);
                    }
                    continue;
                }
                // Not a symlink; or missing, which the open reports (or
                // creates).
                Err(Errno::INVAL | Errno::NOENT) => {}
                Err(e) => return Err(Failed::Errno(e)),
            }
            // O_NOFOLLOW: a name that became a link since it was read is
            // refused (ELOOP, or ENOTDIR for a directory), never followed.
            if todo.is_empty() {
                return openat(here, name.as_os_str(), flags | OFlags::NOFOLLOW, mode)
                    .map_err(Failed::Errno);
            }
            let dir = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            dirs.push(openat(here, name.as_os_str(), dir, Mode::empty()).map_err(Failed::Errno)?);
        }
        // The path ended at a directory (`.`, `..`, a link to one).
        let here = dirs.last().map_or(self.fd.as_fd(), |d| d.as_fd());
        openat(here, ".", flags, mode).map_err(Failed::Errno)
    }
}

/// `openat2(dir, rest, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`.
fn beneath(dir: BorrowedFd, rest: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd, Errno> {
    let how = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    let mut tries = 0;
    loop {
        match openat2(dir, rest, flags, mode, how) {
            Err(Errno::AGAIN) if tries < RETRIES => tries += 1,
            got => return got,
        }
    }
}

/// Queues the components of a relative `path` on `todo` (next one last).
fn push(todo: &mut Vec<OsString>, path: &Path) {
    for c in path.components().rev() {
        match c {
            Component::Normal(name) => todo.push(name.to_os_string()),
            Component::ParentDir => todo.push("..".into()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A work dir (`root`, with `sub/a.txt` and `sub/deeper/`) and a
    /// directory beside it (`outside`, with `secret`).
    pub(crate) struct Dirs {
        _tmp: tempfile::TempDir,
        pub(crate) root: PathBuf,
        pub(crate) outside: PathBuf,
    }

    pub(crate) fn dirs() -> Dirs {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let (root, outside) = (base.join("work"), base.join("outside"));
        std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(root.join("sub/a.txt"), "a").unwrap();
        std::fs::write(outside.join("secret"), "no").unwrap();
        Dirs {
            _tmp: tmp,
            root,
            outside,
        }
    }

    /// Opens `path` both ways: `openat2` first, and the walk alone (what a
    /// kernel without `openat2` gets); they must agree.
    fn both(root: &Root, path: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd, String> {
        let kernel = root.resolve(path, flags, mode, true);
        let walked = root.resolve(path, flags, mode, false);
        match (kernel, walked) {
            (Ok(k), Ok(w)) => {
                let (ks, ws) = (
                    rustix::fs::fstat(&k).unwrap(),
                    rustix::fs::fstat(&w).unwrap(),
                );
                assert_eq!((ks.st_dev, ks.st_ino), (ws.st_dev, ws.st_ino), "{path:?}");
                Ok(k)
            }
            (Err(k), Err(w)) => {
                assert_eq!(k.to_string(), w.to_string(), "{path:?}");
                Err(k.to_string())
            }
            (k, w) => panic!("{path:?}: openat2 {k:?}, the walk {w:?}"),
        }
    }

    fn read(root: &Root, path: &Path) -> Result<OwnedFd, String> {
        both(root, path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
    }

    #[test]
    fn links_that_stay_inside_are_followed_both_ways() {
        let d = dirs();
        let r = &d.root;
        symlink("sub/a.txt", r.join("rel")).unwrap();
        symlink(r.join("sub/a.txt"), r.join("abs")).unwrap();
        symlink("../a.txt", r.join("sub/deeper/up")).unwrap();
        symlink("sub", r.join("subdir")).unwrap();
        symlink("rel", r.join("chain")).unwrap();
        let root = Root::open(r).unwrap();
        for p in [
            "sub/a.txt",
            "rel",
            "abs",
            "sub/deeper/up",
            "subdir/a.txt",
            "subdir/deeper/../a.txt",
            "chain",
            "sub/../sub/./a.txt",
        ] {
            read(&root, &r.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
        }
        // The work dir itself, by its real name too.
        let dir = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        both(&root, r, dir, Mode::empty()).unwrap();
        both(&root, &r.join("sub/.."), dir, Mode::empty()).unwrap();
    }

    #[test]
    fn every_way_out_is_refused_both_ways() {
        let d = dirs();
        let (r, out) = (&d.root, &d.outside);
        symlink(out.join("secret"), r.join("file_out")).unwrap();
        symlink("../outside/secret", r.join("rel_out")).unwrap();
        symlink(out, r.join("dir_out")).unwrap();
        symlink("/", r.join("slash")).unwrap();
        symlink("/proc/self/root/etc/passwd", r.join("magic")).unwrap();
        symlink("loop", r.join("loop")).unwrap();
        let root = Root::open(r).unwrap();
        let refused = |p: &Path, why: &str| {
            let e = read(&root, p).unwrap_err();
            assert!(e.contains(why), "{p:?}: {e}");
        };
        refused(Path::new("sub/a.txt"), "not an absolute path");
        refused(&out.join("secret"), "is outside");
        refused(&r.join("../outside/secret"), "leads outside");
        refused(&r.join("sub/../../outside/secret"), "leads outside");
        refused(&r.join("file_out"), "leads outside");
        refused(&r.join("rel_out"), "leads outside");
        refused(&r.join("dir_out/secret"), "leads outside");
        refused(&r.join("slash/etc/passwd"), "leads outside");
        refused(&r.join("magic"), "leads outside");
        refused(&r.join("loop"), "symbolic links");
    }

    #[test]
    fn a_dangling_link_out_creates_nothing_both_ways() {
        let d = dirs();
        let (r, out) = (&d.root, &d.outside);
        symlink(out.join("pwned"), r.join("x")).unwrap();
        symlink("../outside/pwned", r.join("y")).unwrap();
        symlink(out.join("nodir/pwned"), r.join("z")).unwrap();
        symlink("missing/file", r.join("inside_missing")).unwrap();
        let root = Root::open(r).unwrap();
        let create = OFlags::WRONLY | OFlags::CREATE | OFlags::CLOEXEC;
        let mode = Mode::from_raw_mode(0o600);
        for p in ["x", "y", "z"] {
            let e = both(&root, &r.join(p), create, mode).unwrap_err();
            assert!(e.contains("leads outside"), "{p}: {e}");
        }
        let e = both(&root, &r.join("inside_missing"), create, mode).unwrap_err();
        assert!(e.contains("No such file"), "{e}");
        assert!(!out.join("pwned").exists());
        assert!(!out.join("nodir").exists());
        assert!(!r.join("missing").exists());
    }
}
