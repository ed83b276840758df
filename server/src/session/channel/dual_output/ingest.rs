//! Lines of a dual-output events file into the session: each line gets its
//! seq (its line number), valid events go to the log and the conversation,
//! and whatever is wrong with a line becomes a warning, never a stop.

use super::tail::{Batch, Line};
use crate::session::channel::conversation::validate;
use crate::session::channel::Conversation;
use crate::session::WarningCode;

/// Takes in one batch read from the events file.
pub(crate) fn batch(conversation: &Conversation, batch: Batch, max_line: usize) {
    if batch.truncated {
        conversation.log.file_truncated();
        conversation.warn(
            WarningCode::EventsFileTruncated,
            "the events file was truncated; reading it again from the start".into(),
            None,
        );
    }
    let count = batch.lines.len();
    for (i, line) in batch.lines.into_iter().enumerate() {
        if batch.replaced_at == Some(i) {
            replaced(conversation);
        }
        self::line(conversation, line, max_line);
    }
    // Replaced by a file with nothing in it yet.
    if batch.replaced_at == Some(count) {
        replaced(conversation);
    }
}

fn replaced(conversation: &Conversation) {
    // Earlier lines were in the old file: from now on only memory can
    // serve them, never the new file at their old offsets.
    conversation.log.file_truncated();
    conversation.warn(
        WarningCode::EventsFileReplaced,
        "the program put a new file in place of the events file; following the new one from its start".into(),
        None,
    );
}

/// Takes in one line.
pub(crate) fn line(conversation: &Conversation, line: Line, max_line: usize) {
    let log = &conversation.log;
    let (offset, text) = match line {
        Line::Text { offset, text } => (offset, text),
        Line::NotUtf8 { .. } => {
            let seq = log.skip_line();
            conversation.warn(
                WarningCode::InvalidLine,
                format!("events line {seq} is not UTF-8; skipped"),
                Some(seq),
            );
            return;
        }
        Line::TooLong { len, .. } => {
            let seq = log.skip_line();
            conversation.warn(
                WarningCode::LineTooLong,
                format!(
                    "events line {seq} is {len} bytes, over the {max_line} byte limit; skipped"
                ),
                Some(seq),
            );
            return;
        }
    };
    if text.trim().is_empty() {
        log.skip_line();
        return;
    }
    if let Err(e) = validate(&text) {
        let seq = log.skip_line();
        conversation.warn(
            WarningCode::InvalidLine,
            format!("events line {seq} is not a JSON object ({e}); skipped"),
            Some(seq),
        );
        return;
    }
    log.push(offset, &text, |seq| conversation.ingest(seq, &text));
}
