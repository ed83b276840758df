//! The reply being streamed into the view: rows are committed above the
//! live area as soon as they can no longer change, so only the last,
//! still-growing row is redrawn with every token.

use std::io::Write;

use super::line::{styles, Line, Span};
use super::{wrap, Ui, MARKER_WIDTH};

/// The reply being streamed: rows are committed as soon as they are complete,
/// so only the last, still-growing row lives in the live area.
pub(super) struct StreamView {
    /// No row committed yet, so the next one carries the agent marker.
    pub(super) first: bool,
    pub(super) text: String,
}

impl<W: Write> Ui<W> {
    /// Starts showing a streamed reply.
    pub(crate) fn stream_begin(&mut self) {
        self.stream_end();
        self.pending.push(Line::blank());
        self.stream = Some(StreamView {
            first: true,
            text: String::new(),
        });
    }

    /// Appends streamed text, committing every row that can no longer change.
    pub(crate) fn stream_push(&mut self, chunk: &str) {
        let avail = self.usable() - MARKER_WIDTH;
        let Some(view) = self.stream.as_mut() else {
            return;
        };
        view.text.push_str(chunk);
        let mut done = Vec::new();
        while let Some(nl) = view.text.find('\n') {
            let paragraph: String = view.text.drain(..=nl).collect();
            let paragraph = paragraph.trim_end_matches(['\n', '\r']);
            for range in wrap::wrap(paragraph, avail, avail) {
                done.push(wrap::row_text(paragraph, &range).to_string());
            }
        }
        // With greedy wrapping, appending text only ever changes the last
        // row, so every earlier row is final.
        let ranges = wrap::wrap(&view.text, avail, avail);
        if let Some((last, complete)) = ranges.split_last() {
            for range in complete {
                done.push(wrap::row_text(&view.text, range).to_string());
            }
            view.text = view.text[last.start..].to_string();
        }
        for row in done {
            self.commit_stream_row(&row);
        }
    }

    /// Commits what is left of the streamed reply.
    pub(crate) fn stream_end(&mut self) {
        let Some(view) = self.stream.as_ref() else {
            return;
        };
        let (text, first) = (view.text.clone(), view.first);
        let avail = self.usable() - MARKER_WIDTH;
        if !text.is_empty() || first {
            for range in wrap::wrap(&text, avail, avail) {
                self.commit_stream_row(wrap::row_text(&text, &range));
            }
        }
        self.stream = None;
    }

    fn commit_stream_row(&mut self, row: &str) {
        let Some(view) = self.stream.as_mut() else {
            return;
        };
        let marker = if view.first {
            Span::new("✦ ", styles::agent_marker())
        } else {
            Span::plain("  ")
        };
        view.first = false;
        self.pending.push(Line::from_spans(
            vec![marker, Span::new(row, styles::agent_text())],
            MARKER_WIDTH,
        ));
    }
}
