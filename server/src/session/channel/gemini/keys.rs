//! What duet types into Gemini CLI's terminal, one action at a time and in
//! the order decided (a browser's "No" and the prompt held behind it must
//! not swap): prompts, and answers to its approval dialog.
//!
//! A prompt is a bracketed paste, then Enter once the screen shows the
//! text. Gemini turns an Enter that comes within 40 ms of a paste into a
//! newline (a timer on its event loop, which a busy machine delays: even
//! 300 ms were seen to be too few; docs/gemini-cli.md §5.1), so the input
//! box is watched after Enter: if it grew a line instead of being sent,
//! Backspace takes the newline back and Enter is pressed again. The prompt
//! counts as taken when BeforeAgent shows it (or, for a slash command,
//! which fires none, when the box no longer holds it).
//!
//! An answer is the dialog's key for the chosen label, written only while
//! that dialog is on screen and still open; pressed again if the dialog
//! stays (a dialog is drawn a moment before it listens), never once the
//! agent has reported it answered.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;
use tracing::warn;

use super::{dialog, Inner};
use crate::session::channel::screen_dialog::{self, until_screen, Unanswered};
use crate::session::WarningCode;

/// The time between the screen showing a paste and its Enter (Gemini's
/// guard is 40 ms from when it read the paste, which came before).
const PASTE_GUARD: Duration = Duration::from_millis(100);
/// How long the screen may take to show a paste, a dialog, an answer.
const SHOWN_WAIT: Duration = Duration::from_secs(5);
/// How long BeforeAgent may take after Enter before it is pressed again.
const TAKEN_WAIT: Duration = Duration::from_secs(3);
/// Enter presses per prompt, answers per dialog, at most.
const TRIES: usize = 4;

/// One thing to type.
pub(super) enum Action {
    Prompt(String),
    Answer {
        request_id: String,
        label: String,
        reject: bool,
    },
}

/// Types the queued actions until the channel ends.
pub(super) async fn run(inner: Arc<Inner>, mut queue: mpsc::Receiver<Action>) {
    while let Some(action) = queue.recv().await {
        match action {
            Action::Prompt(text) => prompt(&inner, &text).await,
            Action::Answer {
                request_id,
                label,
                reject,
            } => answer(&inner, &request_id, &label, reject).await,
        }
    }
}

async fn write(inner: &Inner, bytes: Vec<u8>) -> bool {
    match inner.terminal.write(Bytes::from(bytes)).await {
        Ok(()) => true,
        Err(e) => {
            warn!(?e, "typing into Gemini's terminal");
            false
        }
    }
}

/// A piece of the prompt the input box shows once it is pasted: the start
/// of its first line (a long paste may be folded into a placeholder).
fn snippet(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .chars()
        .take(24)
        .collect()
}

/// The lines inside Gemini's input box (between its last top border,
/// a row of `▄`, and the row of `▀` under it), when no approval dialog is
/// on screen.
fn input_box(screen: &str) -> Option<Vec<&str>> {
    if dialog::parse(screen).is_some() {
        return None;
    }
    let lines: Vec<&str> = screen.lines().collect();
    let top = lines
        .iter()
        .rposition(|l| l.trim_start().starts_with('▄'))?;
    let height = lines[top + 1..]
        .iter()
        .position(|l| l.trim_start().starts_with('▀'))?;
    Some(lines[top + 1..top + 1 + height].to_vec())
}

/// Whether the input box holds `snippet`.
fn holds(screen: &str, snippet: &str) -> bool {
    input_box(screen).is_some_and(|b| b.iter().any(|l| l.contains(snippet)))
}

/// What Enter did to a pasted prompt.
enum Entered {
    /// BeforeAgent came, or the box let go of it (a slash command).
    Taken,
    /// The box grew a line: the Enter was read as a newline.
    Newline,
    /// Nothing to be seen.
    Nothing,
}

async fn prompt(inner: &Inner, text: &str) {
    let mut taken = inner.prompts.subscribe();
    taken.mark_unchanged();
    let snippet = snippet(text);
    let output = &inner.terminal.output;
    if !paste(inner, text, &snippet).await {
        return;
    }
    for _ in 0..TRIES {
        let before = input_box(&output.screen_text()).map_or(0, |b| b.len());
        // Past the guard, counted from when the screen showed the paste.
        tokio::time::sleep(PASTE_GUARD).await;
        if !write(inner, b"\r".to_vec()).await {
            return;
        }
        let entered = tokio::time::timeout(TAKEN_WAIT, async {
            let mut changed = output.subscribe_screen();
            loop {
                tokio::select! {
                    _ = taken.changed() => return Entered::Taken,
                    c = changed.changed() => {
                        if c.is_err() {
                            return Entered::Nothing;
                        }
                    }
                }
                let screen = output.screen_text();
                match input_box(&screen) {
                    Some(b) if !b.iter().any(|l| l.contains(&snippet)) => return Entered::Taken,
                    Some(b) if b.len() > before => return Entered::Newline,
                    _ => {}
                }
            }
        })
        .await
        .unwrap_or(Entered::Nothing);
        match entered {
            Entered::Taken => return,
            Entered::Newline => {
                if !write(inner, b"\x7f".to_vec()).await {
                    return;
                }
                until_screen(output, SHOWN_WAIT, |s| {
                    input_box(s).is_some_and(|b| b.len() <= before)
                })
                .await;
            }
            Entered::Nothing if !holds(&output.screen_text(), &snippet) => return,
            Entered::Nothing => {}
        }
    }
    inner.conversation.warn(
        WarningCode::SubmitUnshown,
        format!("Gemini did not take the prompt {snippet:?} after {TRIES} Enter presses; it is left in its input box"),
        None,
    );
}

/// Pastes `text` until the input box shows it: a paste Gemini reads while
/// it redraws a resumed conversation is lost. Pasted again only into an
/// empty box, so it is never doubled. False if the terminal is gone or it
/// never showed.
async fn paste(inner: &Inner, text: &str, snippet: &str) -> bool {
    let output = &inner.terminal.output;
    let mut bytes = Vec::with_capacity(text.len() + 12);
    bytes.extend_from_slice(b"\x1b[200~");
    bytes.extend_from_slice(text.as_bytes());
    bytes.extend_from_slice(b"\x1b[201~");
    for _ in 0..TRIES {
        if !write(inner, bytes.clone()).await {
            return false;
        }
        if until_screen(output, SHOWN_WAIT, |s| holds(s, snippet)).await {
            return true;
        }
        if !empty(&output.screen_text()) {
            break;
        }
    }
    inner.conversation.warn(
        WarningCode::SubmitUnshown,
        format!(
            "Gemini's input box did not show the prompt {snippet:?}; it may not have been taken"
        ),
        None,
    );
    false
}

/// Whether the input box shows its placeholder (holds nothing).
fn empty(screen: &str) -> bool {
    input_box(screen).is_some_and(|b| {
        b.iter()
            .any(|l| l.contains(crate::config::GEMINI_READY_TEXT))
    })
}

async fn answer(inner: &Inner, request_id: &str, label: &str, reject: bool) {
    let answered = screen_dialog::answer(screen_dialog::Answer {
        terminal: &inner.terminal,
        label,
        reject,
        open: || inner.is_open(request_id),
    })
    .await;
    if answered == Err(Unanswered::NoChoice) {
        inner.conversation.warn(
            WarningCode::ApprovalUnanswered,
            format!(
                "the dialog on Gemini's screen has no choice {label:?}; answer it in the terminal"
            ),
            None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_input_box_is_told_from_the_history_above_it() {
        let bar = |c: char| c.to_string().repeat(20);
        let screen = |inside: &str| {
            format!(
                "{top}\n > hello there\n{bottom}\n✦ Mock reply\n{top}\n{inside}\n{bottom}\n workspace",
                top = bar('▄'),
                bottom = bar('▀')
            )
        };
        let typed = screen(" > hello again");
        assert_eq!(input_box(&typed), Some(vec![" > hello again"]));
        assert!(holds(&typed, "hello again"));
        assert!(!holds(&typed, "hello there"));
        let newline = screen(" > hello again\n   ");
        assert_eq!(input_box(&newline).map(|b| b.len()), Some(2));
        let sent = screen(" >   Type your message or @path/to/file");
        assert!(!holds(&sent, "hello again"));
        assert_eq!(
            snippet("\n  first line of a long prompt\nsecond"),
            "first line of a long pro"
        );
    }
}
