//! The file-edit tool: proposes appending one line to a small existing file
//! (`edit`) or creating a missing one (`write_file`), and applies the
//! proposal once it is allowed, refusing if the file changed meanwhile.

use std::fs;
use std::io;
use std::path::Path;

use super::{Action, Outcome, ToolCall};

/// Largest file the edit tool proposes to change.
pub(crate) const MAX_EDIT_BYTES: u64 = 1024 * 1024;
/// The line the edit tool appends.
pub(crate) const ADDED_LINE: &str = "edited by the duet demo agent";

/// Proposes an edit of `file` (relative to `cwd`): append [`ADDED_LINE`] to an
/// existing file, or create a missing one. The error says why not.
pub(crate) fn propose_edit(id: String, file: &str, cwd: &Path) -> Result<ToolCall, String> {
    let path = cwd.join(file);
    let shown = file.to_string();
    let action = match fs::metadata(&path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Action::Write {
            path,
            shown,
            content: format!("{ADDED_LINE}\n"),
        },
        Err(e) => return Err(format!("I can't look at {file}: {e}.")),
        Ok(meta) if !meta.is_file() => return Err(format!("{file} is not a regular file.")),
        Ok(meta) if meta.len() > MAX_EDIT_BYTES => {
            return Err(format!(
                "{file} is larger than {} KiB; the demo only edits small files.",
                MAX_EDIT_BYTES / 1024
            ))
        }
        Ok(_) => {
            let before = fs::read_to_string(&path)
                .map_err(|e| format!("I can't read {file} as text: {e}."))?;
            let body = before.trim_end_matches('\n');
            let (old, new, after) = match body.rsplit('\n').next() {
                Some(last) if !body.is_empty() => {
                    let new = format!("{last}\n{ADDED_LINE}");
                    let mut after = before.clone();
                    let at = body.len() - last.len();
                    after.replace_range(at..at + last.len(), &new);
                    (last.to_string(), new, after)
                }
                _ => (
                    String::new(),
                    ADDED_LINE.to_string(),
                    format!("{ADDED_LINE}\n"),
                ),
            };
            Action::Edit {
                path,
                shown,
                old,
                new,
                before,
                after,
            }
        }
    };
    Ok(ToolCall { id, action })
}

/// Applies an allowed edit or write. Quick, so it runs on the caller's thread.
pub(crate) fn apply_edit(call: &ToolCall) -> Outcome {
    let result = match &call.action {
        Action::Edit {
            path,
            shown,
            old,
            new,
            ..
        } => fs::read_to_string(path).and_then(|current| {
            let updated = if old.is_empty() && current.trim().is_empty() {
                format!("{new}\n")
            } else {
                let at = current.rfind(old.as_str()).ok_or_else(|| {
                    io::Error::other(format!("{shown} changed since the proposal"))
                })?;
                let mut updated = current.clone();
                updated.replace_range(at..at + old.len(), new);
                updated
            };
            fs::write(path, updated).map(|()| format!("Edited {shown}: appended one line."))
        }),
        Action::Write {
            path,
            shown,
            content,
        } => fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .and_then(|mut f| io::Write::write_all(&mut f, content.as_bytes()))
            .map(|()| format!("Created {shown}.")),
        Action::Shell { .. } => Err(io::Error::other("not a file edit")),
    };
    match result {
        Ok(content) => Outcome {
            tool_use_id: call.id.clone(),
            is_error: false,
            content,
            exit_code: None,
            timed_out: false,
            cancelled: false,
        },
        Err(e) => Outcome::error(call, format!("edit failed: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_appends_a_line_after_the_last_one() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("n.txt"), "one\ntwo\n").unwrap();
        let call = propose_edit("t".into(), "n.txt", dir.path()).unwrap();
        assert_eq!(call.name(), "edit");
        assert_eq!(call.input()["old_string"], "two");
        assert_eq!(call.input()["new_string"], format!("two\n{ADDED_LINE}"));
        let diff = call.diff();
        assert!(diff.contains("--- a/n.txt") && diff.contains(&format!("+{ADDED_LINE}")));
        assert!(!apply_edit(&call).is_error);
        assert_eq!(
            fs::read_to_string(dir.path().join("n.txt")).unwrap(),
            format!("one\ntwo\n{ADDED_LINE}\n")
        );
    }

    #[test]
    fn a_missing_file_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let call = propose_edit("t".into(), "new.txt", dir.path()).unwrap();
        assert_eq!(call.name(), "write_file");
        assert!(call.diff().contains("+++ b/new.txt"));
        assert!(!apply_edit(&call).is_error);
        assert!(
            apply_edit(&call).is_error,
            "a second write must not clobber"
        );
    }
}
