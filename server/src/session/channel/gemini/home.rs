//! Where a duet session's Gemini CLI finds its hooks. Gemini reads hooks
//! only from settings files: the user's `~/.gemini/settings.json`, a
//! project's `.gemini/settings.json`, or a system file that must be owned
//! by root all the way up (`GEMINI_CLI_SYSTEM_SETTINGS_PATH` is skipped
//! otherwise: "Parent directory '/tmp' is insecure"). duet edits none of
//! the user's or the project's files. Instead each session gets a Gemini
//! home of its own (`GEMINI_CLI_HOME`, which stands for the home directory
//! in every path Gemini uses), in the session directory:
//!
//! - `.gemini/settings.json`: the user's settings (auth, model, …) with
//!   duet's hooks added to theirs;
//! - every other entry of the user's `~/.gemini` as a symlink to it, and
//!   `tmp/`, `history/` and `projects.json` always (created in the user's
//!   directory if missing), so that conversations, their transcripts and
//!   `--resume` are the user's own, shared with Gemini run by hand and
//!   with the next session that resumes one;
//! - `~/.agents` (skills), if the user has one.

use std::os::unix::fs::{symlink, DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::{json, Map, Value};
use tracing::warn;

/// The hook events duet listens to (docs/gemini-cli.md §4.3).
pub(super) const HOOK_EVENTS: &[&str] = &[
    "SessionStart",
    "BeforeAgent",
    "AfterModel",
    "BeforeTool",
    "Notification",
    "AfterTool",
    "AfterAgent",
    "SessionEnd",
];

/// Kept in the user's `~/.gemini` even when Gemini has not made them yet.
const SHARED_DIRS: &[&str] = &["tmp", "history"];
/// Linked even when missing: a write through the link creates the file in
/// the user's directory.
const SHARED_FILES: &[&str] = &["projects.json"];

/// Makes the session's Gemini home in `dir` over the user's (`user_home`,
/// whose `.gemini` holds their settings), with one hook per event of
/// [`HOOK_EVENTS`] running `command(event)`. Returns the directory to pass
/// as `GEMINI_CLI_HOME`.
pub(super) fn prepare(
    dir: &Path,
    user_home: &Path,
    command: impl Fn(&str) -> String,
) -> Result<PathBuf> {
    let user = user_home.join(".gemini");
    let ours = dir.join(".gemini");
    let private = |path: &Path| {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(path)
            .with_context(|| format!("creating {}", path.display()))
    };
    private(&ours)?;
    for name in SHARED_DIRS {
        private(&user.join(name))?;
    }
    let mut linked = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&user) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name != "settings.json" {
                linked.push(PathBuf::from(name));
            }
        }
    }
    for name in SHARED_FILES {
        if !linked.iter().any(|l| l == Path::new(name)) {
            linked.push(PathBuf::from(name));
        }
    }
    for name in linked {
        symlink(user.join(&name), ours.join(&name))
            .with_context(|| format!("linking {} into the session", name.display()))?;
    }
    let agents = user_home.join(".agents");
    if agents.is_dir() {
        symlink(&agents, dir.join(".agents")).context("linking ~/.agents")?;
    }
    let settings = with_hooks(user_settings(&user.join("settings.json")), command);
    let path = ours.join("settings.json");
    let mut file = std::fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("creating {}", path.display()))?;
    std::io::Write::write_all(&mut file, settings.to_string().as_bytes())
        .context("writing Gemini's settings")?;
    Ok(dir.to_path_buf())
}

/// The user's settings, or none (with a warning when they cannot be read:
/// Gemini then starts as a new user would).
fn user_settings(path: &Path) -> Value {
    match std::fs::read_to_string(path) {
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(v) if v.is_object() => v,
            _ => {
                warn!(path = %path.display(), "Gemini's settings are not plain JSON; the session starts without them");
                json!({})
            }
        },
        Err(_) => json!({}),
    }
}

/// `settings` with duet's hook added to each event's list.
fn with_hooks(mut settings: Value, command: impl Fn(&str) -> String) -> Value {
    if !settings["hooks"].is_object() {
        settings["hooks"] = Value::Object(Map::new());
    }
    for event in HOOK_EVENTS {
        let entry =
            json!({"hooks": [{"type": "command", "name": "duet", "command": command(event)}]});
        match settings["hooks"][*event].as_array_mut() {
            Some(list) => list.push(entry),
            None => settings["hooks"][*event] = json!([entry]),
        }
    }
    // duet's chat lives on its hooks.
    settings["hooksConfig"]["enabled"] = json!(true);
    settings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_home_is_the_users_with_duets_hooks() {
        let user = tempfile::tempdir().unwrap();
        let session = tempfile::tempdir().unwrap();
        let gemini = user.path().join(".gemini");
        std::fs::create_dir(&gemini).unwrap();
        let theirs = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "their-hook"}]}]},
        });
        std::fs::write(gemini.join("settings.json"), theirs.to_string()).unwrap();
        std::fs::write(gemini.join("oauth_creds.json"), "{}").unwrap();
        let home = prepare(session.path(), user.path(), |e| format!("duet hook {e}")).unwrap();
        assert_eq!(home, session.path());

        let ours = home.join(".gemini");
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(ours.join("settings.json")).unwrap())
                .unwrap();
        assert_eq!(
            settings["security"]["auth"]["selectedType"],
            "gemini-api-key"
        );
        let before_tool = settings["hooks"]["BeforeTool"].as_array().unwrap();
        assert_eq!(before_tool[0]["hooks"][0]["command"], "their-hook");
        assert_eq!(
            before_tool[1]["hooks"][0]["command"],
            "duet hook BeforeTool"
        );
        for event in HOOK_EVENTS {
            assert!(settings["hooks"][*event].is_array(), "{event}");
        }
        // The user's files are theirs, shared; their settings untouched.
        assert_eq!(
            std::fs::read_link(ours.join("oauth_creds.json")).unwrap(),
            gemini.join("oauth_creds.json")
        );
        assert!(gemini.join("tmp").is_dir() && ours.join("tmp").is_dir());
        std::fs::write(ours.join("projects.json"), "{}").unwrap();
        assert!(gemini.join("projects.json").is_file());
        let unchanged: Value =
            serde_json::from_str(&std::fs::read_to_string(gemini.join("settings.json")).unwrap())
                .unwrap();
        assert_eq!(unchanged, theirs);
    }
}
