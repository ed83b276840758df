//! The two tools the scripted model can call: `run_shell_command` (`sh -c` in
//! the working directory, with a timeout and an output cap: `shell.rs`) and
//! a file edit (`edit` of an existing file, `write_file` of a new one,
//! proposed as a unified diff and applied only once allowed: `edit.rs`).
//! Here: the call as the model makes it and how it ended.

mod edit;
mod shell;

use std::path::PathBuf;

use serde_json::{json, Value};

pub(crate) use edit::{apply_edit, propose_edit, ADDED_LINE};
pub(crate) use shell::{spawn_shell, Running, SHELL_TIMEOUT};

/// A tool call the model wants to make.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCall {
    /// The `tool_use` id.
    pub id: String,
    pub action: Action,
}

/// What the call does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    Shell {
        command: String,
        description: String,
    },
    /// Replace the last occurrence of `old` (the file's last line) in an
    /// existing file.
    Edit {
        path: PathBuf,
        shown: String,
        old: String,
        new: String,
        /// The whole file before and after, for the diff.
        before: String,
        after: String,
    },
    /// Create a file that does not exist.
    Write {
        path: PathBuf,
        shown: String,
        content: String,
    },
}

impl ToolCall {
    /// The tool's name on the wire.
    pub(crate) fn name(&self) -> &'static str {
        match self.action {
            Action::Shell { .. } => "run_shell_command",
            Action::Edit { .. } => "edit",
            Action::Write { .. } => "write_file",
        }
    }

    /// The tool's input on the wire, in Qwen Code's field names.
    pub(crate) fn input(&self) -> Value {
        match &self.action {
            Action::Shell {
                command,
                description,
            } => json!({ "command": command, "description": description }),
            Action::Edit { path, old, new, .. } => json!({
                "file_path": path.display().to_string(),
                "old_string": old,
                "new_string": new,
            }),
            Action::Write { path, content, .. } => json!({
                "file_path": path.display().to_string(),
                "content": content,
            }),
        }
    }

    /// What the approval prompt shows between backticks.
    pub(crate) fn subject(&self) -> &str {
        match &self.action {
            Action::Shell { command, .. } => command,
            Action::Edit { shown, .. } | Action::Write { shown, .. } => shown,
        }
    }

    /// The proposed change as a unified diff; empty for a command.
    pub(crate) fn diff(&self) -> String {
        match &self.action {
            Action::Shell { .. } => String::new(),
            Action::Edit {
                shown,
                before,
                after,
                ..
            } => similar::TextDiff::from_lines(before, after)
                .unified_diff()
                .context_radius(3)
                .header(&format!("a/{shown}"), &format!("b/{shown}"))
                .to_string(),
            Action::Write { shown, content, .. } => similar::TextDiff::from_lines("", content)
                .unified_diff()
                .header("/dev/null", &format!("b/{shown}"))
                .to_string(),
        }
    }
}

/// How a tool call ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outcome {
    pub tool_use_id: String,
    pub is_error: bool,
    /// The `tool_result` content.
    pub content: String,
    /// A command's exit code.
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
}

impl Outcome {
    /// The result of a call the user did not allow.
    pub(crate) fn denied(call: &ToolCall) -> Self {
        Outcome {
            tool_use_id: call.id.clone(),
            is_error: true,
            content: "denied by user".into(),
            exit_code: None,
            timed_out: false,
            cancelled: false,
        }
    }

    /// The result of a call that failed before or while running.
    pub(crate) fn error(call: &ToolCall, content: String) -> Self {
        Outcome {
            is_error: true,
            content,
            ..Outcome::denied(call)
        }
    }
}
