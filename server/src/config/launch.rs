//! What the owner chose for one session beyond its profile (`duet run`
//! does): the directory the program runs in, and arguments appended to the
//! profile's own. Both are checked here; neither ever makes a command line
//! of a client's: the program is still the profile's, with its arguments
//! first, and only a profile that says `extra_args = true` takes more.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::ResolvedProfile;
use crate::error::AppError;

/// Most arguments a create may add.
pub(crate) const MAX_ARGS: usize = 64;
/// Longest argument (and `cwd`), in bytes.
pub(crate) const MAX_ARG_BYTES: usize = 4096;

/// See the module docs. Kept with the session (and in `session.json`), so a
/// resume starts the conversation again where and how it ran.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Launch {
    /// The working directory the owner chose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cwd: Option<PathBuf>,
    /// Appended to the profile's arguments, verbatim (no placeholders).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) args: Vec<String>,
}

impl Launch {
    /// Checks a create's `cwd` and `args` against `profile` and the state
    /// directory: 400 with the reason when they cannot be used.
    pub(crate) fn check(
        cwd: Option<&str>,
        args: &[String],
        profile: &ResolvedProfile,
        state_dir: &Path,
    ) -> Result<Launch, AppError> {
        if !args.is_empty() && !profile.allows_extra_args() {
            return Err(AppError::bad_request(format!(
                "profile {:?} takes no extra arguments (a profile allows them with \
                 extra_args = true)",
                profile.name
            )));
        }
        if args.len() > MAX_ARGS {
            return Err(AppError::bad_request(format!(
                "{} arguments; at most {MAX_ARGS}",
                args.len()
            )));
        }
        if let Some(a) = args
            .iter()
            .find(|a| a.len() > MAX_ARG_BYTES || a.contains('\0'))
        {
            return Err(AppError::bad_request(format!(
                "an argument is longer than {MAX_ARG_BYTES} bytes or holds a NUL: {:?}",
                a.chars().take(40).collect::<String>()
            )));
        }
        let cwd = cwd.map(|c| check_cwd(c, state_dir)).transpose()?;
        Ok(Launch {
            cwd,
            args: args.to_vec(),
        })
    }
}

/// An absolute path of an existing directory that duet can enter and
/// list, outside the state directory (whose session directories duet
/// deletes, and whose files the programs must not be handed).
fn check_cwd(cwd: &str, state_dir: &Path) -> Result<PathBuf, AppError> {
    let bad = |why: String| Err(AppError::bad_request(format!("cwd {cwd:?}: {why}")));
    if cwd.len() > MAX_ARG_BYTES || cwd.contains('\0') {
        return bad(format!("longer than {MAX_ARG_BYTES} bytes or holds a NUL"));
    }
    let path = Path::new(cwd);
    if !path.is_absolute() {
        return bad("not an absolute path".into());
    }
    let real = match std::fs::canonicalize(path) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return bad("no such directory on the server".into())
        }
        Err(e) => return bad(format!("cannot be used: {e}")),
    };
    if !real.is_dir() {
        return bad("not a directory".into());
    }
    let state = std::fs::canonicalize(state_dir).unwrap_or_else(|_| state_dir.to_path_buf());
    if real.starts_with(&state) {
        return bad(format!(
            "inside duet's state directory {}; choose a directory of your own",
            state_dir.display()
        ));
    }
    use rustix::fs::Access;
    if let Err(e) = rustix::fs::access(&real, Access::EXEC_OK | Access::READ_OK) {
        return bad(format!("duet cannot enter it: {}", std::io::Error::from(e)));
    }
    Ok(path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cwd_is_an_absolute_usable_directory_outside_the_state_dir() {
        let root = tempfile::tempdir().unwrap();
        let state = root.path().join("state");
        let session = state.join("abc");
        std::fs::create_dir_all(&session).unwrap();
        let file = root.path().join("f");
        std::fs::write(&file, "").unwrap();
        let link = root.path().join("into-state");
        std::os::unix::fs::symlink(&session, &link).unwrap();
        let ok = root.path().to_str().unwrap();
        assert_eq!(
            check_cwd(ok, &state).unwrap(),
            PathBuf::from(ok),
            "kept as given"
        );
        for (bad, why) in [
            ("relative/dir", "absolute"),
            (file.to_str().unwrap(), "not a directory"),
            ("/no/such/dir/anywhere", "no such directory"),
            (state.to_str().unwrap(), "state directory"),
            (session.to_str().unwrap(), "state directory"),
            (link.to_str().unwrap(), "state directory"),
        ] {
            let err = check_cwd(bad, &state).unwrap_err();
            assert!(err.message.contains(why), "{bad}: {}", err.message);
            assert_eq!(err.status, axum::http::StatusCode::BAD_REQUEST);
        }
    }
}
