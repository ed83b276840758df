//! The choice of Claude Code's permission dialog that its hook suggestions
//! do not carry: "Yes, and switch to auto mode" (2.1.330; docs/claude-code.md
//! §3). It is on the dialog when Claude offers it, so duet reads it from
//! the screen a moment after the PermissionRequest and offers it in the
//! dialog's words; a browser's choice of it answers the hook as the
//! terminal's choice does: allow, and switch the session's mode.
//!
//! ```text
//!  ❯ 1. Yes
//!    2. Yes, and always allow access to /tmp/claude-fixture/ws from this project
//!    3. Yes, and switch to auto mode · auto mode handles these prompts for you
//!    4. No
//! ```

use std::time::Duration;

use duet_protocol::rest::{ApprovalOption, ApprovalOptionKind};
use serde_json::{json, Value};

use super::modes::FOOTER;
use crate::session::channel::conversation::Sink;
use crate::session::channel::option;
use crate::session::channel::screen_dialog::{self, Choice};
use crate::session::terminal::output::Output;

/// How long after its PermissionRequest the dialog may take to show.
const DIALOG_WAIT: Duration = Duration::from_secs(10);

/// The id prefix of a mode switch; the mode's id follows.
const SWITCH: &str = "switch:";

/// The dialog's "switch to … mode" choice as an option (its words before
/// the " · " hint), if it offers one for a mode duet knows.
pub(super) fn switch_option(choices: &[Choice]) -> Option<ApprovalOption> {
    choices.iter().find_map(|c| {
        let label = c.label.split(" · ").next()?.trim();
        let words = label.strip_prefix("Yes, and switch to ")?;
        let (mode, _) = FOOTER.iter().find(|(_, w)| *w == words)?;
        Some(option(
            &format!("{SWITCH}{mode}"),
            label,
            ApprovalOptionKind::AllowAlways,
        ))
    })
}

/// `options` with `switch` in the dialog's place for it: after the other
/// allowing ones, before "No".
pub(super) fn with_switch(
    mut options: Vec<ApprovalOption>,
    switch: ApprovalOption,
) -> Vec<ApprovalOption> {
    let at = options
        .iter()
        .position(|o| !o.kind.allows())
        .unwrap_or(options.len());
    options.insert(at, switch);
    options
}

/// The hook's decision for a mode-switch option: allowed, and the mode set
/// for the session (what the terminal's choice does).
pub(super) fn switch_decision(option: &ApprovalOption) -> Option<Value> {
    let mode = option.id.strip_prefix(SWITCH)?;
    Some(json!({
        "behavior": "allow",
        "updatedPermissions": [{"type": "setMode", "mode": mode, "destination": "session"}],
    }))
}

/// Offers the dialog's mode switch for approval `request_id` once the
/// dialog is on screen, if it has one.
pub(super) async fn offer(output: std::sync::Arc<Output>, conversation: Sink, request_id: String) {
    let Some(choices) = screen_dialog::shown(&output, DIALOG_WAIT).await else {
        return;
    };
    let (Some(switch), Some(c)) = (switch_option(&choices), conversation.get()) else {
        return;
    };
    let Some(asked) = c
        .approvals()
        .into_iter()
        .find(|a| a.request_id == request_id)
    else {
        return;
    };
    if asked.options.iter().all(|o| o.id != switch.id) {
        c.reoffer(&request_id, with_switch(asked.options, switch));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::channel::screen_dialog::parse;

    #[test]
    fn the_recorded_dialogs_switch_is_offered_before_no_and_answers_with_set_mode() {
        let path = format!(
            "{}/tests/fixtures/claude-2.1.330/screen-permission-dialog.txt",
            env!("CARGO_MANIFEST_DIR")
        );
        let choices = parse(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(choices.len(), 4);
        let switch = switch_option(&choices).unwrap();
        assert_eq!(switch.id, "switch:auto");
        assert_eq!(switch.label, "Yes, and switch to auto mode");
        let hooks = vec![
            option("allow", "Yes", ApprovalOptionKind::AllowOnce),
            option("deny", "No", ApprovalOptionKind::RejectOnce),
        ];
        let ids: Vec<String> = with_switch(hooks, switch.clone())
            .into_iter()
            .map(|o| o.id)
            .collect();
        assert_eq!(ids, ["allow", "switch:auto", "deny"]);
        assert_eq!(
            switch_decision(&switch).unwrap()["updatedPermissions"][0],
            json!({"type": "setMode", "mode": "auto", "destination": "session"})
        );
        assert_eq!(switch_decision(&hooks_allow()), None);
    }

    fn hooks_allow() -> ApprovalOption {
        option("allow", "Yes", ApprovalOptionKind::AllowOnce)
    }

    #[test]
    fn an_unknown_mode_is_not_offered() {
        let choices = parse(" ❯ 1. Yes\n   2. Yes, and switch to warp mode\n   3. No\n").unwrap();
        assert_eq!(switch_option(&choices), None);
    }
}
