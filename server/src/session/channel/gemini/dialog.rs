//! Gemini CLI's approval dialog as the screen shows it (docs/gemini-cli.md
//! §5.3): no hook can answer it, so duet reads its options from the screen
//! (the exact list depends on flags the Notification does not carry) and
//! answers with the key the dialog takes for the chosen one (its number).
//!
//! ```text
//! │ Allow execution of [Shell]?        │
//! │ ● 1. Allow once                    │
//! │   2. Allow for this session        │
//! │   3. No, suggest changes (esc)     │
//! ```
//!
//! Reading the screen is `screen_dialog`'s; this is what Gemini's words
//! mean. Pure: screen text in, options out.

use duet_protocol::rest::{ApprovalOption, ApprovalOptionKind};

use crate::session::channel::option;
pub(super) use crate::session::channel::screen_dialog::{parse, Choice};

/// What a choice does, by its wording; `None` for one the browser cannot
/// take part in ("Modify with external editor" opens an editor in the
/// terminal).
pub(super) fn kind(label: &str) -> Option<ApprovalOptionKind> {
    if label.starts_with("Allow once") {
        Some(ApprovalOptionKind::AllowOnce)
    } else if label.starts_with("Allow") {
        Some(ApprovalOptionKind::AllowAlways)
    } else if label.starts_with("No") {
        Some(ApprovalOptionKind::RejectOnce)
    } else {
        None
    }
}

/// The approval's options: the dialog's own, in its order (its key as the
/// id), or, when it was not seen, the ones every dialog of `details_type`
/// has (§5.3: "Allow for this session" may be missing from a real one).
pub(super) fn options(choices: Option<&[Choice]>, details_type: &str) -> Vec<ApprovalOption> {
    match choices {
        Some(choices) => choices
            .iter()
            .filter_map(|c| Some(option(&c.key.to_string(), &c.label, kind(&c.label)?)))
            .collect(),
        None => {
            let session = match details_type {
                "mcp" => "Allow tool for this session",
                _ => "Allow for this session",
            };
            vec![
                option("1", "Allow once", ApprovalOptionKind::AllowOnce),
                option("2", session, ApprovalOptionKind::AllowAlways),
                option("no", "No, suggest changes", ApprovalOptionKind::RejectOnce),
            ]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editor_is_the_terminals_the_browser_gets_the_rest() {
        let path = format!(
            "{}/tests/fixtures/gemini-0.61.0/screen-dialog-edit.txt",
            env!("CARGO_MANIFEST_DIR")
        );
        let edit = parse(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(edit.len(), 4);
        let offered = options(Some(&edit), "edit");
        let ids: Vec<&str> = offered.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["1", "2", "4"]);
        assert_eq!(offered[2].kind, ApprovalOptionKind::RejectOnce);
        // Not seen: what every such dialog has.
        let unseen = options(None, "mcp");
        assert_eq!(unseen[1].label, "Allow tool for this session");
    }
}
