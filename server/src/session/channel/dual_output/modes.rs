//! Qwen Code's approval mode, which its dual output does not report: read
//! from its status line (`⏸ Ask permissions (shift + tab to cycle)`, and
//! in 0.15.10 `? for shortcuts` for the default mode, which has no
//! indicator there; followed by `screen_modes.rs`), and switched with Qwen's own `/approval-mode <mode>` command
//! through the input file (it lasts the session; docs/qwen-code.md §8.7).
//! Only the English status line is read: a Qwen set to another UI
//! language shows no mode in the chat.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::super::screen_modes::{Reading, ScreenModes};

/// How long Qwen may take to show a mode it was asked for (it runs the
/// command once a turn under way has ended).
const SWITCH_WAIT: Duration = Duration::from_secs(30);

/// Qwen's modes, with the words of its status line (0.24.4's
/// `formatApprovalModeName`; 0.15.10 uses the same words).
const MODES: [(&str, &str); 5] = [
    ("plan", "plan mode"),
    ("default", "Ask permissions"),
    ("auto-edit", "auto-accept edits"),
    ("auto", "Auto mode"),
    ("yolo", "YOLO mode"),
];

/// The hint after the mode's name on the status line.
const CYCLE_HINT: &str = "(shift + tab to cycle)";

/// What Qwen's screen says of its mode.
pub(crate) const READING: Reading = Reading { read, offered };

/// The mode Qwen's status line shows, if it shows one.
pub(crate) fn read(screen: &str) -> Option<&'static str> {
    for line in screen.lines().rev() {
        if let Some(at) = line.find(CYCLE_HINT) {
            let name = line[..at].trim();
            return MODES
                .iter()
                .find(|(_, words)| name.ends_with(words))
                .map(|(id, _)| *id);
        }
        if line.trim_start().starts_with("? for shortcuts") {
            return Some("default");
        }
    }
    None
}

/// The modes the Qwen of `handshake` takes (`auto` came after 0.15).
fn offered(handshake: Option<&Value>) -> Vec<(&'static str, &'static str)> {
    let version = handshake.and_then(|h| h["version"].as_str());
    let old = version.is_some_and(|v| v.starts_with("0.15."));
    MODES
        .into_iter()
        .filter(|(id, _)| !(old && *id == "auto"))
        .collect()
}

/// The command that switches Qwen to `mode`; an error names the modes it
/// takes.
pub(crate) fn command(modes: &ScreenModes, mode: &str) -> Result<String, String> {
    modes.check(mode)?;
    Ok(format!("/approval-mode {mode}"))
}

/// What Qwen answers a switch sent before it has loaded its slash
/// commands, a moment after its prompt shows (docs/qwen-code.md §3.18).
const UNKNOWN: &str = "Unknown command: /approval-mode";

/// How often a switch Qwen did not know yet is sent again.
const RESENDS: usize = 5;

/// How many of Qwen's "unknown command" answers to a switch `screen` shows
/// (the count before a send, to tell a new answer from an old one).
pub(crate) fn refusals(screen: &str) -> usize {
    screen.matches(UNKNOWN).count()
}

/// Waits until the screen shows `mode`, sending the switch again with
/// `resend` each time Qwen answers it did not know the command yet (more
/// than `refused` such answers on screen); a warning if it never shows.
pub(crate) async fn confirm(
    modes: Arc<ScreenModes>,
    mode: String,
    mut refused: usize,
    resend: impl Fn() -> bool,
) {
    for _ in 0..=RESENDS {
        let answer = modes
            .shows_unless(SWITCH_WAIT, |m| m == mode, |s| refusals(s) > refused)
            .await;
        match answer {
            Some(Ok(_)) => return,
            Some(Err(_)) => {
                refused = refusals(&modes.screen_text());
                if !resend() {
                    break;
                }
            }
            None => break,
        }
    }
    modes.not_shown(&mode);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(dir: &str, name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/{dir}/screens/{name}.txt",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// The status lines of real Qwen screens, and a screen without one
    /// (busy: the line is gone) that says nothing.
    #[test]
    fn the_mode_is_read_from_the_status_line() {
        assert_eq!(
            read("  ⏸ Ask permissions (shift + tab to cycle)"),
            Some("default")
        );
        assert_eq!(read("  Auto mode (shift + tab to cycle)"), Some("auto"));
        assert_eq!(read("YOLO mode (shift + tab to cycle)"), Some("yolo"));
        assert_eq!(
            read("auto-accept edits (shift + tab to cycle)"),
            Some("auto-edit")
        );
        assert_eq!(read("  ? for shortcuts"), Some("default"));
        assert_eq!(read("✳ Thinking…\n> hello"), None);
        // A switch sent before Qwen loaded its commands, answered.
        let early = "  > /approval-mode yolo\n  ✕ Unknown command: /approval-mode yolo";
        assert_eq!((refusals(early), refusals("  ? for shortcuts")), (1, 0));
        assert_eq!(read("  Mode inconnu (maj + tab pour cycler)"), None);
        let after = screen("qwen-0.24.4/approval-choices", "after-esc");
        assert_eq!(read(&after), Some("default"), "{after}");
        let busy = screen("qwen-0.24.4/busy-submits", "busy_with_queue");
        assert_eq!(read(&busy), Some("default"), "{busy}");
    }
}
