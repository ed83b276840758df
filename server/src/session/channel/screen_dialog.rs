//! An agent's approval dialog as its screen shows it, for agents whose side
//! channel cannot carry every choice of it (Gemini CLI's hooks answer none;
//! Qwen Code's input file says only yes or no): duet reads the choices from
//! the screen, in the agent's own words, and answers one by pressing its
//! number, since it holds the terminal.
//!
//! ```text
//! │ Allow execution of [Shell]?        │      Allow execution of: 'touch'?
//! │ ● 1. Allow once                    │      › 1. Yes, allow once
//! │   2. Allow for this session        │        2. Always allow run 'touch *' commands in this project
//! │   3. No, suggest changes (esc)     │        3. Always allow run 'touch *' commands for this user
//!                                              4. No, suggest changes (esc)
//! ```
//!
//! Gemini CLI (left) and Qwen Code (right; 0.15 draws it in a box, 0.24
//! may draw its scrollbar, a column of `█`, at the right edge).

use std::time::Duration;

use bytes::Bytes;
use tracing::warn;

use crate::session::terminal::output::Output;
use crate::session::terminal::Terminal;

/// One choice of the dialog on screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Choice {
    /// The digit that picks it.
    pub(crate) key: char,
    /// Its words, without the `(esc)` hint; a label wrapped onto the next
    /// lines is joined.
    pub(crate) label: String,
}

/// Glyphs around a dialog's lines: box sides, scrollbars, the marker of
/// the focused choice.
const FRAME: &[char] = &['│', '┃', '║', '█', '▐', '▌', '●', '›', '❯'];

/// The choices of the approval dialog on the screen, if one is shown: the
/// last run of consecutively numbered lines starting at "1. Allow…" or
/// "1. Yes…".
pub(crate) fn parse(screen: &str) -> Option<Vec<Choice>> {
    let mut found = None;
    let mut run: Option<Vec<Choice>> = None;
    for line in screen.lines() {
        let text = line.trim_matches(|c: char| c.is_whitespace() || FRAME.contains(&c));
        let numbered = text.split_once(". ").and_then(|(n, label)| {
            let mut digits = n.chars();
            let key = digits.next().filter(|c| c.is_ascii_digit())?;
            digits.next().is_none().then(|| Choice {
                key,
                label: label.trim_end_matches(" (esc)").trim().to_string(),
            })
        });
        match (numbered, run.as_mut()) {
            (Some(c), None) if c.key == '1' && first(&c.label) => run = Some(vec![c]),
            (Some(c), Some(r)) if r.last().is_some_and(|l| next(l.key) == Some(c.key)) => r.push(c),
            // A label too long for the box goes on below it.
            (None, Some(r)) if !text.is_empty() && !text.starts_with(['╰', '└', '─']) => {
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

/// Whether `label` can be a dialog's first choice.
fn first(label: &str) -> bool {
    label.starts_with("Allow") || label.starts_with("Yes")
}

fn next(key: char) -> Option<char> {
    char::from_digit(key.to_digit(10)? + 1, 10)
}

/// The key that picks `label` in the dialog on screen now; a rejection is
/// Esc if its line cannot be found (it is always the dialog's last choice).
pub(crate) fn key_for(screen: &str, label: &str, reject: bool) -> Option<u8> {
    let choices = parse(screen)?;
    match choices.iter().find(|c| c.label == label) {
        Some(c) => Some(c.key as u8),
        None if reject => Some(0x1b),
        None => None,
    }
}

/// Waits (at most `limit`) until `ready` holds for the screen.
pub(crate) async fn until_screen(
    output: &Output,
    limit: Duration,
    mut ready: impl FnMut(&str) -> bool,
) -> bool {
    let mut changed = output.subscribe_screen();
    tokio::time::timeout(limit, async {
        loop {
            if ready(&output.screen_text()) {
                return;
            }
            if changed.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    })
    .await
    .is_ok()
}

/// The dialog's choices once it is on screen (at most `limit` from now).
pub(crate) async fn shown(output: &Output, limit: Duration) -> Option<Vec<Choice>> {
    let mut choices = None;
    until_screen(output, limit, |s| {
        choices = parse(s);
        choices.is_some()
    })
    .await;
    choices
}

/// How long the screen may take to show a dialog, and to take it away once
/// answered.
const SHOWN_WAIT: Duration = Duration::from_secs(5);
/// Presses per answer, at most.
const TRIES: usize = 4;

/// What answering a dialog with its key needs to know.
pub(crate) struct Answer<'a, O: Fn() -> bool> {
    /// The agent's terminal.
    pub(crate) terminal: &'a Terminal,
    /// The chosen choice's words.
    pub(crate) label: &'a str,
    /// Whether it rejects (Esc, if its line cannot be found).
    pub(crate) reject: bool,
    /// Whether the request is still waiting for an answer: no key is
    /// pressed once the agent has reported it answered, since the key would
    /// land in its input box or its next dialog.
    pub(crate) open: O,
}

/// Why a dialog could not be answered with a key.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Unanswered {
    /// The dialog on screen has no such choice (or none is shown).
    NoChoice,
    /// The terminal took no keys.
    Unwritable,
}

/// Presses the key of the chosen label while its dialog is on screen and
/// the request still open; again if the dialog stays (a dialog is drawn a
/// moment before it listens). Taken once the dialog is gone from the screen:
/// the agent's own report then settles the approval.
pub(crate) async fn answer<O: Fn() -> bool>(a: Answer<'_, O>) -> Result<(), Unanswered> {
    let output = &a.terminal.output;
    for _ in 0..TRIES {
        if !(a.open)() {
            return Ok(());
        }
        let on_screen = until_screen(output, SHOWN_WAIT, |s| parse(s).is_some()).await;
        if !(a.open)() {
            return Ok(());
        }
        let key = on_screen
            .then(|| key_for(&output.screen_text(), a.label, a.reject))
            .flatten()
            .ok_or(Unanswered::NoChoice)?;
        if let Err(e) = a.terminal.write(Bytes::from(vec![key])).await {
            warn!(?e, "answering a dialog in the agent's terminal");
            return Err(Unanswered::Unwritable);
        }
        if until_screen(output, SHOWN_WAIT, |s| parse(s).is_none()).await {
            return Ok(());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(path: &str) -> String {
        let path = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(path).unwrap()
    }

    fn labels(choices: &[Choice]) -> Vec<(char, &str)> {
        choices.iter().map(|c| (c.key, c.label.as_str())).collect()
    }

    #[test]
    fn gemini_dialogs_are_read_from_the_screen() {
        let shell = parse(&fixture("gemini-0.61.0/screen-dialog-shell.txt")).unwrap();
        assert_eq!(
            labels(&shell),
            [
                ('1', "Allow once"),
                ('2', "Allow for this session"),
                ('3', "No, suggest changes")
            ]
        );
        let edit = fixture("gemini-0.61.0/screen-dialog-edit.txt");
        assert_eq!(
            parse(&edit).unwrap()[2].label,
            "Modify with external editor"
        );
        assert_eq!(key_for(&edit, "No, suggest changes", true), Some(b'4'));
    }

    #[test]
    fn qwen_dialogs_are_read_from_the_screen_boxed_or_with_a_scrollbar() {
        let always = [
            ('1', "Yes, allow once"),
            ('2', "Always allow run 'touch *' commands in this project"),
            ('3', "Always allow run 'touch *' commands for this user"),
            ('4', "No, suggest changes"),
        ];
        // 0.24.4, default mode, its scrollbar at the right edge.
        let v24 = parse(&fixture(
            "qwen-0.24.4/approval-choices/screens/dialog-2.txt",
        ))
        .unwrap();
        assert_eq!(labels(&v24), always);
        // 0.15.10 draws the same dialog in a box.
        let v15 = parse(&fixture(
            "qwen-0.15.10/busy-submits/screens/approval_with_queue.txt",
        ))
        .unwrap();
        assert_eq!(labels(&v15), always);
        // Auto mode's fallback when its classifier cannot decide.
        let auto = parse(&fixture(
            "qwen-0.24.4/approval-choices/screens/auto-dialog-1.txt",
        ))
        .unwrap();
        assert_eq!(
            labels(&auto),
            [
                ('1', "Yes, allow once"),
                ('2', "Switch to Default Mode and allow once (recommended)"),
                ('3', "No, suggest changes")
            ]
        );
        // Answered: no dialog.
        let after = fixture("qwen-0.24.4/approval-choices/screens/dialog-5.txt");
        assert_eq!(parse(&after), None);
    }

    #[test]
    fn no_dialog_no_choices() {
        for name in [
            "screen-cancelled.txt",
            "screen-resumed.txt",
            "screen-queued.txt",
        ] {
            assert_eq!(
                parse(&fixture(&format!("gemini-0.61.0/{name}"))),
                None,
                "{name}"
            );
        }
        assert_eq!(key_for("", "Allow once", false), None);
        // A numbered list in a reply is not a dialog.
        assert_eq!(parse("1. Allow me to explain\n\nmore text"), None);
        assert_eq!(parse("1. Open the file\n2. Edit it"), None);
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
