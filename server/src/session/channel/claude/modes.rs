//! Claude Code's permission mode: read from its footer (`⏸ manual mode
//! on`, `⏵⏵ accept edits on`, ...; followed by `screen_modes.rs`) and from
//! every hook's `permission_mode`, which is Claude's own word for it; switched
//! with the key its TUI takes, Shift+Tab, which cycles the modes (manual →
//! accept edits → plan → auto, as its settings allow): one press at a
//! time, each confirmed by the footer, until it shows the mode asked for.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;

use super::super::conversation::modes::modes_of;
use super::super::conversation::Sink;
use super::super::screen_modes::{Reading, ScreenModes};

/// Claude's modes (2.1.330): the `permission_mode` of its hooks, and its
/// titles. `bypassPermissions` and `dontAsk` are not in its Shift+Tab
/// cycle (they need a flag), so they are not offered.
const MODES: [(&str, &str); 4] = [
    ("default", "Manual"),
    ("acceptEdits", "Accept edits"),
    ("plan", "Plan"),
    ("auto", "Auto"),
];

/// The words of the footer for each mode (its `indicator`), after the
/// mode's symbol and before " on".
pub(super) const FOOTER: [(&str, &str); 4] = [
    ("default", "manual mode"),
    ("acceptEdits", "accept edits"),
    ("plan", "plan mode"),
    ("auto", "auto mode"),
];

/// The key that moves Claude to its next mode.
const SHIFT_TAB: &[u8] = b"\x1b[Z";

/// How long one press may take to show on the footer.
const STEP_WAIT: Duration = Duration::from_secs(5);

/// What Claude's screen says of its mode.
pub(crate) const READING: Reading = Reading { read, offered };

/// The mode Claude's footer shows, if it shows one.
pub(crate) fn read(screen: &str) -> Option<&'static str> {
    screen.lines().rev().find_map(|line| {
        let rest = ["⏸ ", "⏵⏵ "]
            .iter()
            .find_map(|symbol| line.find(symbol).map(|at| &line[at + symbol.len()..]))?;
        FOOTER
            .iter()
            .find(|(_, words)| {
                rest.strip_prefix(words)
                    .is_some_and(|after| after == " on" || after.starts_with(" on "))
            })
            .map(|(id, _)| *id)
    })
}

fn offered(_: Option<&Value>) -> Vec<(&'static str, &'static str)> {
    MODES.to_vec()
}

/// A hook said Claude is in `mode` (its `permission_mode`).
pub(crate) fn from_hook(conversation: &Sink, mode: &str) {
    let Some(c) = conversation.get() else {
        return;
    };
    if c.modes().is_none() {
        c.set_modes(modes_of(MODES, Some(mode)));
    } else {
        c.set_current_mode(mode);
    }
}

/// Presses Shift+Tab until the footer shows `target`; a warning if it
/// never does (a mode the settings leave out of the cycle, a footer duet
/// cannot read).
pub(crate) async fn cycle(modes: Arc<ScreenModes>, keys: mpsc::Sender<Bytes>, target: String) {
    // Each mode once, and back: the cycle is no longer than that.
    for _ in 0..=MODES.len() {
        let now = modes.current();
        if now == Some(target.as_str()) {
            return;
        }
        if keys.send(Bytes::from_static(SHIFT_TAB)).await.is_err() {
            return;
        }
        if modes.shows(STEP_WAIT, |m| Some(m) != now).await.is_none() {
            break;
        }
    }
    modes.not_shown(&target);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The footers of Claude 2.1.330, and screens without one.
    #[test]
    fn the_mode_is_read_from_the_footer() {
        assert_eq!(read("❯ \n  ⏸ manual mode on"), Some("default"));
        assert_eq!(
            read("  ⏵⏵ accept edits on (shift+tab to cycle)"),
            Some("acceptEdits")
        );
        assert_eq!(read("  ⏸ plan mode on"), Some("plan"));
        assert_eq!(read("  ⏵⏵ auto mode on · 1 shell"), Some("auto"));
        assert_eq!(read("  ⏸ manual mode onward"), None);
        assert_eq!(read("please turn plan mode on"), None);
        let dialog =
            include_str!("../../../../tests/fixtures/claude-2.1.330/screen-permission-dialog.txt");
        assert_eq!(read(dialog), None);
    }
}
