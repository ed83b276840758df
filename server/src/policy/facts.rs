//! What a policy looks at in a tool call: the tool's name, the command it
//! runs, the paths it touches, and where those are. Tools name these in
//! their input, differently per agent (Qwen Code's `command` and
//! `file_path`, Claude Code's `command`, `file_path` and `notebook_path`,
//! ACP's `locations`); the fields below cover the agents duet hosts. A
//! command's own arguments are not parsed for paths: a rule about paths
//! says nothing about a shell command (match on `command` for those).

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// Input fields that hold one path.
const PATH_FIELDS: &[&str] = &[
    "file_path",
    "path",
    "absolute_path",
    "notebook_path",
    "dir_path",
    "directory",
];
/// Input fields that hold a list of paths.
const PATH_LIST_FIELDS: &[&str] = &["paths", "file_paths"];

/// The facts of one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Facts {
    pub(crate) tool: String,
    /// The command line, for tools that run one.
    pub(crate) command: Option<String>,
    /// Where the paths it touches lie: `Some(true)` all inside the work
    /// dir, `Some(false)` at least one outside, `None` no path named.
    pub(crate) inside: Option<bool>,
}

/// The command of a tool's input: `command` (a string, or a list of
/// arguments, joined with spaces) or `cmd`.
pub(crate) fn command(input: &Value) -> Option<String> {
    let field = input.get("command").or_else(|| input.get("cmd"))?;
    match field {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let parts: Option<Vec<&str>> = parts.iter().map(Value::as_str).collect();
            Some(parts?.join(" "))
        }
        _ => None,
    }
}

/// The paths a tool's input names.
pub(crate) fn paths(input: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for f in PATH_FIELDS {
        if let Some(p) = input.get(*f).and_then(Value::as_str) {
            out.push(p.to_string());
        }
    }
    for f in PATH_LIST_FIELDS {
        if let Some(list) = input.get(*f).and_then(Value::as_array) {
            out.extend(list.iter().filter_map(Value::as_str).map(str::to_string));
        }
    }
    // ACP: `locations: [{path, line}]` (copied into the input by duet
    // when the agent gives them).
    if let Some(list) = input.get("locations").and_then(Value::as_array) {
        out.extend(
            list.iter()
                .filter_map(|l| l.get("path").and_then(Value::as_str))
                .map(str::to_string),
        );
    }
    out
}

/// `path` made absolute against `base` and free of `.` and `..`, without
/// asking the file system.
pub(crate) fn lexical(base: &Path, path: &str) -> PathBuf {
    let joined = base.join(path);
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// How paths are placed: lexically (pure, for tests and `duet policy
/// check` without a work dir on disk), or through the file system, so a
/// symlink inside the work dir that leads out counts as outside.
pub(crate) trait Resolve {
    fn resolve(&self, base: &Path, path: &str) -> PathBuf;
}

/// See [`Resolve`].
#[cfg(test)]
pub(crate) struct Lexical;

#[cfg(test)]
impl Resolve for Lexical {
    fn resolve(&self, base: &Path, path: &str) -> PathBuf {
        lexical(base, path)
    }
}

/// See [`Resolve`]: the longest part of the path that exists is
/// canonicalized (its symlinks followed), the rest appended as written.
pub(crate) struct OnDisk;

impl Resolve for OnDisk {
    fn resolve(&self, base: &Path, path: &str) -> PathBuf {
        let full = lexical(base, path);
        let mut existing = full.as_path();
        let mut rest = Vec::new();
        loop {
            if let Ok(real) = std::fs::canonicalize(existing) {
                let mut out = real;
                for part in rest.iter().rev() {
                    out.push(part);
                }
                // A `..` after a symlink was already taken lexically: the
                // result is where the path leads or lies beyond it.
                return out;
            }
            match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    rest.push(name.to_os_string());
                    existing = parent;
                }
                _ => return full,
            }
        }
    }
}

impl Facts {
    /// The facts of a call of `tool` with `input`, paths placed against
    /// `work_dir` (itself already resolved) by `resolve`.
    pub(crate) fn of(tool: &str, input: &Value, work_dir: &Path, resolve: &dyn Resolve) -> Self {
        let paths = paths(input);
        let inside = (!paths.is_empty()).then(|| {
            paths
                .iter()
                .all(|p| resolve.resolve(work_dir, p).starts_with(work_dir))
        });
        Self {
            tool: tool.to_string(),
            command: command(input),
            inside,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_are_placed_against_the_work_dir() {
        let work = Path::new("/srv/project");
        let inside = |input: Value| Facts::of("t", &input, work, &Lexical).inside;
        assert_eq!(inside(json!({"file_path": "a/b.rs"})), Some(true));
        assert_eq!(inside(json!({"file_path": "/srv/project/x"})), Some(true));
        assert_eq!(inside(json!({"file_path": "../project/x"})), Some(true));
        assert_eq!(inside(json!({"file_path": "../x"})), Some(false));
        assert_eq!(inside(json!({"path": "/etc/passwd"})), Some(false));
        // A sibling whose name starts with the work dir's is outside.
        assert_eq!(inside(json!({"path": "/srv/projectshop/x"})), Some(false));
        assert_eq!(inside(json!({"paths": ["a", "/tmp/b"]})), Some(false));
        assert_eq!(
            inside(json!({"locations": [{"path": "/srv/project/a", "line": 3}]})),
            Some(true)
        );
        assert_eq!(inside(json!({"command": "cat /etc/passwd"})), None);
        assert_eq!(
            command(&json!({"command": ["bash", "-lc", "ls"]})).as_deref(),
            Some("bash -lc ls")
        );
        assert_eq!(command(&json!({"cmd": "make"})).as_deref(), Some("make"));
        assert_eq!(command(&json!({"command": 3})), None);
    }

    #[test]
    fn a_symlink_that_leads_out_is_outside_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, work.join("link")).unwrap();
        let work = std::fs::canonicalize(&work).unwrap();
        let on_disk = |p: &str| Facts::of("t", &json!({"file_path": p}), &work, &OnDisk).inside;
        assert_eq!(on_disk("link/new.txt"), Some(false));
        assert_eq!(on_disk("sub/new.txt"), Some(true));
        assert_eq!(on_disk("notes.txt"), Some(true));
        // Lexically the link looks inside: the reason for OnDisk.
        assert_eq!(
            Facts::of("t", &json!({"file_path": "link/x"}), &work, &Lexical).inside,
            Some(true)
        );
    }
}
