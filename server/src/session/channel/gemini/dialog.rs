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
//! Pure: screen text in, options out.

use duet_protocol::rest::{ApprovalOption, ApprovalOptionKind};

use crate::session::channel::option;

/// One choice of the dialog on screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Choice {
    /// The digit that picks it.
    pub(super) key: char,
    pub(super) label: String,
}

/// The choices of the approval dialog on the screen, if one is shown: the
/// last run of numbered lines starting at "1. Allow".
pub(super) fn parse(screen: &str) -> Option<Vec<Choice>> {
    let mut found = None;
    let mut run: Option<Vec<Choice>> = None;
    for line in screen.lines() {
        let text = line
            .trim()
            .trim_matches('│')
            .trim()
            .trim_start_matches('●')
            .trim();
        let numbered = text.split_once(". ").and_then(|(n, label)| {
            let mut digits = n.chars();
            let key = digits.next().filter(|c| c.is_ascii_digit())?;
            digits.next().is_none().then(|| Choice {
                key,
                label: label.trim_end_matches(" (esc)").trim().to_string(),
            })
        });
        match (numbered, run.as_mut()) {
            (Some(c), None) if c.key == '1' && c.label.starts_with("Allow") => run = Some(vec![c]),
            (Some(c), Some(r)) if r.last().is_some_and(|l| next(l.key) == Some(c.key)) => r.push(c),
            // A label too long for the box goes on below it.
            (None, Some(r)) if !text.is_empty() && !text.starts_with(['╰', '─']) => {
                if let Some(last) = r.last_mut() {
                    last.label.push(' ');
                    last.label.push_str(text.trim_end_matches(" (esc)"));
                }
            }
            (_, Some(_)) => found = run.take().filter(|r| r.len() > 1).or(found),
            _ => {}
        }
    }
    run.filter(|r| r.len() > 1).or(found)
}

fn next(key: char) -> Option<char> {
    char::from_digit(key.to_digit(10)? + 1, 10)
}

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

/// The key that picks `label` in the dialog on screen now; a rejection is
/// Esc if its line cannot be found (it is always the dialog's last choice).
pub(super) fn key_for(screen: &str, label: &str, reject: bool) -> Option<u8> {
    let choices = parse(screen)?;
    match choices.iter().find(|c| c.label == label) {
        Some(c) => Some(c.key as u8),
        None if reject => Some(0x1b),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/gemini-0.61.0/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(path).unwrap()
    }

    fn labels(choices: &[Choice]) -> Vec<(char, &str)> {
        choices.iter().map(|c| (c.key, c.label.as_str())).collect()
    }

    #[test]
    fn the_real_dialogs_are_read_from_the_screen() {
        let shell = parse(&screen("screen-dialog-shell.txt")).unwrap();
        assert_eq!(
            labels(&shell),
            [
                ('1', "Allow once"),
                ('2', "Allow for this session"),
                ('3', "No, suggest changes")
            ]
        );
        let edit = parse(&screen("screen-dialog-edit.txt")).unwrap();
        assert_eq!(edit.len(), 4);
        assert_eq!(edit[2].label, "Modify with external editor");
        // The editor is the terminal's; the browser gets the rest.
        let offered = options(Some(&edit), "edit");
        let ids: Vec<&str> = offered.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["1", "2", "4"]);
        assert_eq!(offered[2].kind, ApprovalOptionKind::RejectOnce);
        assert_eq!(
            key_for(
                &screen("screen-dialog-edit.txt"),
                "No, suggest changes",
                true
            ),
            Some(b'4')
        );
    }

    #[test]
    fn no_dialog_no_choices() {
        for name in [
            "screen-cancelled.txt",
            "screen-resumed.txt",
            "screen-queued.txt",
        ] {
            assert_eq!(parse(&screen(name)), None, "{name}");
        }
        assert_eq!(key_for("", "Allow once", false), None);
        // A numbered list in a reply is not a dialog.
        assert_eq!(parse("1. Allow me to explain\n\nmore text"), None);
    }

    #[test]
    fn a_long_label_goes_on_below() {
        let screen = "│ ● 1. Allow once │\n│   2. Allow all server tools for this │\n│      session │\n│   3. No, suggest changes (esc) │\n╰──╯";
        let c = parse(screen).unwrap();
        assert_eq!(c[1].label, "Allow all server tools for this session");
        assert_eq!(key_for(screen, "Allow once", false), Some(b'1'));
        assert_eq!(key_for(screen, "Allow for this session", false), None);
        assert_eq!(key_for(screen, "No, gone", true), Some(0x1b));
    }
}
