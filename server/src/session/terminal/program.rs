//! Finding and describing the hosted program: its path as the shell
//! would find it on the PATH it will have, the environment it inherits
//! (never duet's own settings), util-linux's `setsid` that starts it, and
//! its exit status in the protocol's terms. Shared by the PTY and the
//! pipes a headless agent runs on.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{anyhow, bail, Result};

use super::pty::SpawnOptions;

/// How a program ended, in the protocol's terms.
pub fn exit_info(status: std::process::ExitStatus) -> duet_protocol::rest::ExitInfo {
    duet_protocol::rest::ExitInfo {
        code: status.code().map(|c| c as u32),
        signal: status.signal().map(signal_name),
        success: status.success(),
    }
}

fn signal_name(signal: i32) -> String {
    nix::sys::signal::Signal::try_from(signal)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {signal}"))
}

/// The program of `opts`, found as the shell would find it on the PATH
/// the program will have.
pub(crate) fn program_path(opts: &SpawnOptions) -> Result<PathBuf> {
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
pub(super) fn setsid() -> Option<&'static Path> {
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

/// Finds the program the way the shell would, so that a profile naming a
/// missing program fails at start with a clear error rather than starting
/// `setsid`, which would print its complaint into the terminal and exit 1.
fn resolve_program(program: &str, cwd: &Path, path: Option<&std::ffi::OsStr>) -> Result<PathBuf> {
    if program.contains('/') {
        // Absolute: setsid runs in `cwd` and would resolve a relative path
        // again from there.
        let p = std::path::absolute(cwd.join(program))?;
        if !p.is_file() {
            bail!("{program:?} does not exist");
        }
        if !is_executable(&p) {
            bail!("{program:?} is not executable");
        }
        return Ok(p);
    }
    find_on_path(program, path).ok_or_else(|| anyhow!("{program:?} was not found on PATH"))
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
    fn signals_have_their_usual_names() {
        assert_eq!(signal_name(9), "SIGKILL");
        assert_eq!(signal_name(1), "SIGHUP");
    }
}
