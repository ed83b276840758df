//! Qwen Code's approval dialog, offered in the chat in its own words
//! (docs/qwen-code.md §8.5). Its input file carries two answers: allowed
//! (Qwen's "Yes, allow once") and not (its "No, suggest changes"). Its
//! dialog offers more: "Always allow … in this project", "… for this user",
//! "Yes, allow always", and in Auto mode "Switch to Default Mode and allow
//! once". Those are answered with the dialog's number key, which duet can
//! press because it holds the terminal; Qwen's `control_response` (it
//! writes one for every allowing choice) confirms them.
//!
//! Pure: the dialog's choices in, the approval's options out.

use duet_protocol::rest::{ApprovalOption, ApprovalOptionKind};

use crate::session::channel::option;
use crate::session::channel::screen_dialog::Choice;

/// The option answered through the input file with `allowed: true`.
pub(super) const ALLOW: &str = "allow";
/// The option answered through the input file with `allowed: false`.
pub(super) const DENY: &str = "deny";

/// The approval's options for the dialog's choices, in its order: the
/// input file's two under their usual ids ([`ALLOW`], [`DENY`]; a client
/// that sends `allowed` still gets them), the others under their key.
/// `None` when the dialog is not one this knows how to answer (no "allow
/// once" or no "No" among its choices): the chat keeps allow and deny.
pub(super) fn options(choices: &[Choice]) -> Option<Vec<ApprovalOption>> {
    let once = choices.iter().any(|c| c.label == "Yes, allow once");
    let no = choices.iter().any(|c| c.label.starts_with("No"));
    if !(once && no) {
        return None;
    }
    let options = choices
        .iter()
        .filter_map(|c| {
            let (id, kind) = if c.label == "Yes, allow once" {
                (ALLOW.to_string(), ApprovalOptionKind::AllowOnce)
            } else if c.label.starts_with("No") {
                (DENY.to_string(), ApprovalOptionKind::RejectOnce)
            } else if c.label.starts_with("Modify") {
                // Opens an editor in the terminal: the terminal's to take.
                return None;
            } else if always(&c.label) {
                (c.key.to_string(), ApprovalOptionKind::AllowAlways)
            } else {
                (c.key.to_string(), ApprovalOptionKind::AllowOnce)
            };
            Some(option(&id, &c.label, kind))
        })
        .collect();
    Some(options)
}

/// Whether a choice keeps allowing after this once ("Always allow …",
/// "Yes, allow always", plan mode's "auto-accept edits").
fn always(label: &str) -> bool {
    let label = label.to_lowercase();
    label.contains("always") || label.contains("auto-accept")
}

/// Whether `option` is answered with a key in the terminal rather than
/// through the input file.
pub(super) fn by_key(option: &ApprovalOption) -> bool {
    option.id != ALLOW && option.id != DENY
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::channel::screen_dialog::parse;

    fn screen(path: &str) -> String {
        let path = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(path).unwrap()
    }

    fn offered(path: &str) -> Vec<(String, String, ApprovalOptionKind)> {
        options(&parse(&screen(path)).unwrap())
            .unwrap()
            .into_iter()
            .map(|o| (o.id, o.label, o.kind))
            .collect()
    }

    #[test]
    fn every_choice_of_the_default_mode_dialog_is_offered_in_its_words() {
        use ApprovalOptionKind::*;
        let o = offered("qwen-0.24.4/approval-choices/screens/dialog-2.txt");
        let o: Vec<(&str, &str, ApprovalOptionKind)> = o
            .iter()
            .map(|(i, l, k)| (i.as_str(), l.as_str(), *k))
            .collect();
        assert_eq!(
            o,
            [
                ("allow", "Yes, allow once", AllowOnce),
                (
                    "2",
                    "Always allow run 'touch *' commands in this project",
                    AllowAlways
                ),
                (
                    "3",
                    "Always allow run 'touch *' commands for this user",
                    AllowAlways
                ),
                ("deny", "No, suggest changes", RejectOnce),
            ]
        );
    }

    #[test]
    fn auto_modes_switch_allows_once_by_its_key() {
        let o = offered("qwen-0.24.4/approval-choices/screens/auto-dialog-1.txt");
        assert_eq!(o[1].0, "2");
        assert_eq!(o[1].2, ApprovalOptionKind::AllowOnce);
        assert!(by_key(&option(&o[1].0, &o[1].1, o[1].2)));
        assert!(!by_key(&option("allow", "Yes, allow once", o[0].2)));
    }

    #[test]
    fn the_editor_is_the_terminals_and_unknown_dialogs_keep_allow_and_deny() {
        let edit = parse(
            "  Apply this change?\n  › 1. Yes, allow once\n    2. Yes, allow always\n    3. Modify with external editor\n    4. No, suggest changes (esc)\n",
        )
        .unwrap();
        let ids: Vec<String> = options(&edit).unwrap().into_iter().map(|o| o.id).collect();
        assert_eq!(ids, ["allow", "2", "deny"]);
        // Plan mode's dialog has no "allow once": the file's yes would be
        // a different choice than the chat says.
        let plan = parse(
            "  › 1. Yes, restore previous mode (default)\n    2. Yes, and manually approve edits\n    3. No, keep planning (esc)\n",
        )
        .unwrap();
        assert_eq!(options(&plan), None);
    }
}
