//! The live area below the conversation: the streaming reply's last row,
//! an approval box, a status row and the input prompt, laid out as rows of
//! spans with the cursor's place in them.

use std::io::Write;

use unicode_width::UnicodeWidthChar;

use super::line::{self, styles, width, Line, Span};
use super::{wrap, Ui, MARKER_WIDTH};

/// What the live area shows besides the streaming reply.
pub(crate) struct Live<'a> {
    /// The approval question, when a tool call waits for a decision.
    pub approval: Option<&'a str>,
    /// One dim row saying what the agent is doing.
    pub status: Line,
    /// The input line and the cursor's byte offset in it.
    pub input: &'a str,
    pub cursor: usize,
    /// Shown dimmed while the input line is empty.
    pub placeholder: &'a str,
}

impl<W: Write> Ui<W> {
    /// The rows of the live area and the cursor's (row, column) in them.
    pub(super) fn live_rows(&self, live: &Live) -> (Vec<Vec<Span>>, (usize, usize)) {
        let usable = self.usable();
        let mut rows: Vec<Vec<Span>> = Vec::new();
        if let Some(view) = &self.stream {
            let avail = usable - MARKER_WIDTH;
            for (i, range) in wrap::wrap(&view.text, avail, avail).iter().enumerate() {
                let marker = if i == 0 && view.first {
                    Span::new("✦ ", styles::agent_marker())
                } else {
                    Span::plain("  ")
                };
                rows.push(vec![
                    marker,
                    Span::new(wrap::row_text(&view.text, range), styles::agent_text()),
                ]);
            }
        }
        if let Some(question) = live.approval {
            rows.extend(approval_box(question, usable));
        }
        // A blank row keeps the status apart from the conversation above.
        rows.push(Vec::new());
        rows.push(truncate(&live.status, usable));

        let (prompt_rows, cursor) = prompt_rows(live, usable);
        let cursor = (rows.len() + cursor.0, cursor.1);
        rows.extend(prompt_rows);
        (rows, cursor)
    }
}

/// The input prompt, hard-wrapped by character (word wrapping would move the
/// cursor around as the user types), and the cursor's (row, column) in it.
pub(super) fn prompt_rows(live: &Live, usable: usize) -> (Vec<Vec<Span>>, (usize, usize)) {
    let marker = Span::new("> ", styles::user_marker());
    if live.input.is_empty() {
        let hint = live.placeholder.chars().take(usable - MARKER_WIDTH);
        let row = vec![marker, Span::new(&hint.collect::<String>(), styles::dim())];
        return (vec![row], (0, MARKER_WIDTH));
    }
    let avail = usable - MARKER_WIDTH;
    let mut rows = vec![String::new()];
    let mut used = 0;
    let mut cursor = None;
    for (i, c) in live.input.char_indices() {
        let c = line::sanitize(c.encode_utf8(&mut [0; 4]));
        let w = width(&c);
        if used + w > avail {
            rows.push(String::new());
            used = 0;
        }
        if i == live.cursor {
            cursor = Some((rows.len() - 1, MARKER_WIDTH + used));
        }
        if let Some(row) = rows.last_mut() {
            row.push_str(&c);
        }
        used += w;
    }
    let cursor = cursor.unwrap_or_else(|| {
        if used >= avail {
            rows.push(String::new());
            (rows.len() - 1, MARKER_WIDTH)
        } else {
            (rows.len() - 1, MARKER_WIDTH + used)
        }
    });
    let rows = rows
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let lead = if i == 0 {
                marker.clone()
            } else {
                Span::plain("  ")
            };
            vec![lead, Span::plain(text)]
        })
        .collect();
    (rows, cursor)
}

/// The approval question in a box, keys on the same row when they fit.
fn approval_box(question: &str, usable: usize) -> Vec<Vec<Span>> {
    const KEYS: &str = "[y] yes  [n] no";
    let inner = usable.saturating_sub(4).max(4);
    let one_row = format!("{question} {KEYS}");
    let mut content: Vec<String> = if width(&one_row) <= inner {
        vec![one_row]
    } else {
        let mut rows: Vec<String> = wrap::wrap(question, inner, inner)
            .iter()
            .map(|r| wrap::row_text(question, r).to_string())
            .collect();
        rows.push(KEYS.to_string());
        rows
    };
    for row in &mut content {
        if width(row) > inner {
            *row = fit(row, inner);
        }
    }
    let box_width = content.iter().map(|r| width(r)).max().unwrap_or(0);
    let border = |l: &str, r: &str| {
        vec![Span::new(
            &format!("{l}{}{r}", "─".repeat(box_width + 2)),
            styles::approval(),
        )]
    };
    let mut rows = vec![border("╭", "╮")];
    for row in content {
        let pad = " ".repeat(box_width - width(&row));
        rows.push(vec![
            Span::new("│ ", styles::approval()),
            Span::new(&row, styles::approval_text()),
            Span::plain(&pad),
            Span::new(" │", styles::approval()),
        ]);
    }
    rows.push(border("╰", "╯"));
    rows
}

/// `line` cut to `max` columns.
fn truncate(line: &Line, max: usize) -> Vec<Span> {
    let mut left = max;
    let mut out = Vec::new();
    for span in &line.spans {
        if left == 0 {
            break;
        }
        let text = fit(&span.text, left);
        left -= width(&text);
        out.push(Span {
            text,
            style: span.style,
        });
    }
    out
}

/// `text` cut to `max` columns, with an ellipsis when something was cut.
pub(crate) fn fit(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}
