//! Qwen Code's approval mode, which its dual output does not report: read
//! from its status line (`⏸ Ask permissions (shift + tab to cycle)`, and
//! in 0.15.10 `? for shortcuts` for the default mode, which has no
//! indicator there), told to the chat as duet's `agent_modes` news when it
//! changes, and switched with Qwen's own `/approval-mode <mode>` command
//! through the input file (it lasts the session; docs/qwen-code.md §8.7).
//! Only the English status line is read: a Qwen set to another UI
//! language shows no mode in the chat.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;

use super::super::conversation::Sink;
use crate::session::terminal::output::Output;
use crate::sync::lock;

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

/// One mode as the chat lists it (ACP's `availableModes[]` shape).
#[derive(Serialize)]
struct Mode {
    id: &'static str,
    name: &'static str,
}

/// duet's news of the agent's modes (ACP's `modes` shape), a `system`
/// event.
#[derive(Serialize)]
struct AgentModes {
    r#type: &'static str,
    subtype: &'static str,
    modes: ModeSet,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ModeSet {
    current_mode_id: &'static str,
    available_modes: Vec<Mode>,
}

/// The modes Qwen `version` takes (`auto` came after 0.15).
fn offered(version: Option<&str>) -> impl Iterator<Item = &'static (&'static str, &'static str)> {
    let old = version.is_some_and(|v| v.starts_with("0.15."));
    MODES.iter().filter(move |(id, _)| !(old && *id == "auto"))
}

/// Follows the mode on Qwen's screen; see the module docs.
pub(crate) struct Modes {
    output: Arc<Output>,
    conversation: Sink,
    /// The mode last told to the chat.
    current: Mutex<Option<&'static str>>,
}

impl Modes {
    pub(crate) fn new(output: Arc<Output>, conversation: Sink) -> Arc<Self> {
        Arc::new(Self {
            output,
            conversation,
            current: Mutex::new(None),
        })
    }

    /// Tells the chat whenever the mode on screen changes, until the task
    /// is dropped.
    pub(crate) async fn follow(self: Arc<Self>) {
        let mut changed = self.output.subscribe_screen();
        loop {
            self.look();
            if changed.changed().await.is_err() {
                return;
            }
        }
    }

    /// Reads the screen once; news when the mode changed.
    fn look(&self) {
        let text = self.output.screen_text();
        let Some(mode) = read(&text) else {
            return;
        };
        // Not yet there while the session starts: told at the next look.
        let Some(conversation) = self.conversation.get() else {
            return;
        };
        if lock(&self.current).replace(mode) == Some(mode) {
            return;
        }
        let version = conversation.handshake();
        let version = version.as_ref().and_then(|h| h["version"].as_str());
        conversation.emit(&AgentModes {
            r#type: "system",
            subtype: "agent_modes",
            modes: ModeSet {
                current_mode_id: mode,
                available_modes: offered(version)
                    .map(|&(id, name)| Mode { id, name })
                    .collect(),
            },
        });
    }

    /// The command that switches Qwen to `mode`, once Qwen has shown a
    /// mode (so it is Qwen, ready for commands); an error names the modes
    /// it takes.
    pub(crate) fn command(&self, mode: &str) -> Result<String, String> {
        if lock(&self.current).is_none() {
            return Err("the agent has shown no approval mode duet can read".into());
        }
        let handshake = self.conversation.get().and_then(|c| c.handshake());
        let version = handshake.as_ref().and_then(|h| h["version"].as_str());
        if !offered(version).any(|(id, _)| *id == mode) {
            let ids: Vec<&str> = offered(version).map(|(id, _)| *id).collect();
            return Err(format!(
                "the agent has no mode {mode:?}; it offers {}",
                ids.join(", ")
            ));
        }
        Ok(format!("/approval-mode {mode}"))
    }

    /// Waits until the screen shows `mode`; a warning if it never does.
    pub(crate) async fn confirm(self: Arc<Self>, mode: String) {
        let mut changed = self.output.subscribe_screen();
        let shown = tokio::time::timeout(SWITCH_WAIT, async {
            loop {
                if *lock(&self.current) == Some(mode.as_str()) {
                    return;
                }
                if changed.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
                self.look();
            }
        })
        .await;
        if shown.is_err() {
            self.conversation.warn(
                "set_mode_failed",
                format!("the agent did not show mode {mode:?} (its terminal may say why)"),
                None,
            );
        }
    }
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
        assert_eq!(read("  Mode inconnu (maj + tab pour cycler)"), None);
        let after = screen("qwen-0.24.4/approval-choices", "after-esc");
        assert_eq!(read(&after), Some("default"), "{after}");
        let busy = screen("qwen-0.24.4/busy-submits", "busy_with_queue");
        assert_eq!(read(&busy), Some("default"), "{busy}");
    }
}
