//! Finding and describing the hosted program: its path as the shell
//! would find it on the PATH it will have, the environment it inherits
//! (never duet's own settings), util-linux's `setsid` that starts it, and
//! its exit status in the protocol's terms. Shared by the PTY and the
//! pipes a headless agent runs on.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::pty::SpawnOptions;

/// How a program ended, in the protocol's terms.
pub(crate) fn exit_info(status: std::process::ExitStatus) -> duet_protocol::rest::ExitInfo {
    duet_protocol::rest::ExitInfo {
        code: status.code().map(|c| c as u32),
        signal: status.signal().map(signal_name),
        success: status.success(),
        server_stopped: false,
        ended_by: None,
    }
}

fn signal_name(signal: i32) -> String {
    nix::sys::signal::Signal::try_from(signal)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {signal}"))
}

/// Why a profile cannot start as configured: what it names is missing.
/// The operator's to fix (the request was fine), so the REST answer says
/// which (`profile_misconfigured`) rather than failing as duet's own error.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Misconfigured {
    #[error("the working directory {0:?} does not exist")]
    NoCwd(PathBuf),
    #[error("the working directory {0:?} is not a directory")]
    CwdNotDir(PathBuf),
    #[error("the working directory {0:?} cannot be entered (permission denied)")]
    CwdDenied(PathBuf),
    #[error("the program {0:?} does not exist")]
    NoProgram(String),
    #[error("the program {0:?} is not executable")]
    NotExecutable(String),
    #[error("the program {0:?} was not found on PATH")]
    NotOnPath(String),
}

/// The program of `opts`, found as the shell would find it on the PATH
/// the program will have, after checking its working directory: the
/// process would fail to change into a missing one with ENOENT, which
/// reads as if the program were missing.
pub(crate) fn program_path(opts: &SpawnOptions) -> Result<PathBuf, Misconfigured> {
    check_cwd(&opts.cwd)?;
    let path_var = opts
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| OsString::from(v))
        .or_else(|| std::env::var_os("PATH"));
    resolve_program(&opts.program, &opts.cwd, path_var.as_deref())
}

/// Strips duet's own settings (the auth token above all) from what a
/// hosted program inherits, then adds the profile's environment.
pub(crate) fn set_env(cmd: &mut std::process::Command, opts: &SpawnOptions) {
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("DUET_") {
            cmd.env_remove(&key);
        }
    }
    for (k, v) in &opts.env {
        cmd.env(k, v);
    }
}

/// util-linux's `setsid`, looked up once.
pub(crate) fn setsid() -> Option<&'static Path> {
    static SETSID: OnceLock<Option<PathBuf>> = OnceLock::new();
    SETSID
        .get_or_init(|| {
            let path = std::env::var_os("PATH");
            find_on_path("setsid", path.as_deref()).or_else(|| {
                ["/usr/bin/setsid", "/bin/setsid"]
                    .into_iter()
                    .map(PathBuf::from)
                    .find(|p| is_executable(p))
            })
        })
        .as_deref()
}

/// A working directory the program can be started in.
fn check_cwd(cwd: &Path) -> Result<(), Misconfigured> {
    match std::fs::metadata(cwd) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(Misconfigured::NoCwd(cwd.to_path_buf()))
        }
        Ok(m) if !m.is_dir() => Err(Misconfigured::CwdNotDir(cwd.to_path_buf())),
        _ if rustix::fs::access(cwd, rustix::fs::Access::EXEC_OK).is_err() => {
            Err(Misconfigured::CwdDenied(cwd.to_path_buf()))
        }
        _ => Ok(()),
    }
}

/// Finds the program the way the shell would, so that a profile naming a
/// missing program fails at start with a clear error rather than starting
/// `setsid`, which would print its complaint into the terminal and exit 1.
fn resolve_program(
    program: &str,
    cwd: &Path,
    path: Option<&std::ffi::OsStr>,
) -> Result<PathBuf, Misconfigured> {
    if program.contains('/') {
        // Absolute: setsid runs in `cwd` and would resolve a relative path
        // again from there. (`absolute` fails only for an empty path.)
        let p = std::path::absolute(cwd.join(program))
            .map_err(|_| Misconfigured::NoProgram(program.into()))?;
        if !p.is_file() {
            return Err(Misconfigured::NoProgram(program.into()));
        }
        if !is_executable(&p) {
            return Err(Misconfigured::NotExecutable(program.into()));
        }
        return Ok(p);
    }
    find_on_path(program, path).ok_or_else(|| Misconfigured::NotOnPath(program.into()))
}

fn find_on_path(program: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
        .and_then(|p| std::path::absolute(p).ok())
}

fn is_executable(p: &Path) -> bool {
    p.is_file() && rustix::fs::access(p, rustix::fs::Access::EXEC_OK).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_like_the_shell_finds_them() {
        let path = std::env::var_os("PATH");
        let sh = resolve_program("sh", Path::new("/"), path.as_deref()).unwrap();
        assert!(sh.is_absolute() && sh.ends_with("sh"));
        let err = resolve_program("no-such-program-duet", Path::new("/"), path.as_deref())
            .unwrap_err()
            .to_string();
        assert!(err.contains("not found on PATH"), "{err}");
        let err = resolve_program("./nope", Path::new("/tmp"), path.as_deref())
            .unwrap_err()
            .to_string();
        assert!(err.contains("does not exist"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("data"), "not a program").unwrap();
        let err = resolve_program("./data", dir.path(), path.as_deref())
            .unwrap_err()
            .to_string();
        assert!(err.contains("not executable"), "{err}");
    }

    #[test]
    fn a_missing_working_directory_is_named_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("gone");
        let err = check_cwd(&missing).unwrap_err();
        assert!(matches!(err, Misconfigured::NoCwd(_)), "{err}");
        assert!(err.to_string().contains("working directory"), "{err}");
        std::fs::write(&missing, "a file").unwrap();
        let err = check_cwd(&missing).unwrap_err();
        assert!(matches!(err, Misconfigured::CwdNotDir(_)), "{err}");
        assert!(check_cwd(dir.path()).is_ok());
    }

    #[test]
    fn signals_have_their_usual_names() {
        assert_eq!(signal_name(9), "SIGKILL");
        assert_eq!(signal_name(1), "SIGHUP");
    }
}
