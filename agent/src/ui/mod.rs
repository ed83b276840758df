//! The terminal view, drawn inline in the normal screen buffer like an Ink app:
//! finished conversation lines are printed once and scroll into the
//! scrollback; below them a small "live area" (the reply being streamed, an
//! approval box, a status row and the input prompt) is erased and redrawn on
//! every change.
//!
//! The live area is redrawn from the row count we drew last time, never from
//! a cursor-position query: under duet there may be no terminal emulator
//! attached to answer one, and a query nobody answers hangs the program.

pub(crate) mod line;
pub(crate) mod wrap;

use std::io::{self, Write};

use crossterm::cursor::{Hide, MoveTo, MoveToColumn, MoveUp, Show};
use crossterm::queue;
use crossterm::style::{Print, PrintStyledContent, StyledContent};
use crossterm::terminal::{BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate};
use unicode_width::UnicodeWidthChar;

use line::{styles, width, Line, Span};

/// Width of the role markers ("> ", "✦ ") that start conversation lines.
const MARKER_WIDTH: usize = 2;
/// Narrowest layout we attempt; a narrower terminal gets ragged rows.
const MIN_COLUMNS: usize = 8;

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

/// The reply being streamed: rows are committed as soon as they are complete,
/// so only the last, still-growing row lives in the live area.
struct StreamView {
    /// No row committed yet, so the next one carries the agent marker.
    first: bool,
    text: String,
}

/// The terminal view. All output is buffered and written with one `write_all`
/// per [`Ui::flush`].
pub(crate) struct Ui<W: Write> {
    out: W,
    cols: usize,
    rows: usize,
    /// Lines to print above the live area at the next flush.
    pending: Vec<Line>,
    clear: bool,
    /// Display width of every live row drawn last time, to erase them even
    /// after the terminal rewrapped them on a resize.
    drawn: Vec<usize>,
    cursor_row: usize,
    cursor_col: usize,
    stream: Option<StreamView>,
}

impl<W: Write> Ui<W> {
    /// A view of a `cols` x `rows` terminal writing to `out`.
    pub(crate) fn new(out: W, cols: u16, rows: u16) -> Self {
        Ui {
            out,
            cols: cols.into(),
            rows: rows.into(),
            pending: Vec::new(),
            clear: false,
            drawn: Vec::new(),
            cursor_row: 0,
            cursor_col: 0,
            stream: None,
        }
    }

    /// Columns we fill: one less than the terminal has, so the cursor never
    /// sits in the deferred-wrap state at the right edge, where terminals
    /// disagree about what a following newline does.
    fn usable(&self) -> usize {
        self.cols.saturating_sub(1).max(MIN_COLUMNS)
    }

    /// Prints `line` above the live area at the next flush.
    pub(crate) fn push(&mut self, line: Line) {
        self.pending.push(line);
    }

    /// The terminal changed size.
    pub(crate) fn resize(&mut self, cols: u16, rows: u16) {
        self.cols = cols.into();
        self.rows = rows.into();
    }

    /// Clears the screen and the scrollback at the next flush.
    pub(crate) fn clear_screen(&mut self) {
        self.clear = true;
        self.pending.clear();
    }

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

    /// Erases the live area, prints pending lines, and draws the live area.
    pub(crate) fn flush(&mut self, live: &Live) -> io::Result<()> {
        let mut buf = Vec::new();
        queue!(buf, BeginSynchronizedUpdate, Hide)?;
        if self.clear {
            self.clear = false;
            queue!(
                buf,
                Clear(ClearType::All),
                Clear(ClearType::Purge),
                MoveTo(0, 0)
            )?;
        } else {
            self.erase(&mut buf)?;
        }
        for line in std::mem::take(&mut self.pending) {
            for row in self.layout(&line) {
                write_row(&mut buf, &row)?;
                buf.extend_from_slice(b"\r\n");
            }
        }

        let (mut rows, mut cursor) = self.live_rows(live);
        // Never draw more than fits: rows above the top of the screen could
        // not be erased again.
        let max = self.rows.saturating_sub(1).max(1);
        if rows.len() > max {
            let cut = rows.len() - max;
            rows.drain(..cut);
            cursor.0 = cursor.0.saturating_sub(cut);
        }
        self.drawn.clear();
        for (i, row) in rows.iter().enumerate() {
            if i > 0 {
                buf.extend_from_slice(b"\r\n");
            }
            write_row(&mut buf, row)?;
            self.drawn
                .push(row.iter().map(|s| width(&s.text)).sum::<usize>());
        }
        let up = rows.len().saturating_sub(1) - cursor.0.min(rows.len().saturating_sub(1));
        if up > 0 {
            queue!(buf, MoveUp(clamp_u16(up)))?;
        }
        queue!(
            buf,
            MoveToColumn(clamp_u16(cursor.1)),
            Show,
            EndSynchronizedUpdate
        )?;
        self.cursor_row = cursor.0;
        self.cursor_col = cursor.1;
        self.out.write_all(&buf)?;
        self.out.flush()
    }

    /// Erases the live area and prints pending lines, leaving the cursor on a
    /// fresh line: the last frame before handing the terminal back.
    pub(crate) fn close(&mut self) -> io::Result<()> {
        let mut buf = Vec::new();
        self.stream_end();
        self.erase(&mut buf)?;
        for line in std::mem::take(&mut self.pending) {
            for row in self.layout(&line) {
                write_row(&mut buf, &row)?;
                buf.extend_from_slice(b"\r\n");
            }
        }
        queue!(buf, Show)?;
        self.drawn.clear();
        self.cursor_row = 0;
        self.out.write_all(&buf)?;
        self.out.flush()
    }

    /// Moves to the top of the live area and clears to the end of the screen.
    /// After a resize the terminal may have rewrapped our rows (xterm.js
    /// does when narrowing), so the distance is estimated from the widths we
    /// drew and the current width; without a resize this is exact.
    fn erase(&self, buf: &mut Vec<u8>) -> io::Result<()> {
        let cols = self.cols.max(1);
        let rows_of = |w: usize| w.max(1).div_ceil(cols);
        let mut up: usize = self
            .drawn
            .iter()
            .take(self.cursor_row)
            .map(|&w| rows_of(w))
            .sum();
        up += self.cursor_col / cols;
        let up = up.min(self.rows.saturating_sub(1));
        buf.push(b'\r');
        if up > 0 {
            queue!(buf, MoveUp(clamp_u16(up)))?;
        }
        queue!(buf, Clear(ClearType::FromCursorDown))
    }

    /// Splits a logical line into rows that fit the terminal.
    fn layout(&self, line: &Line) -> Vec<Vec<Span>> {
        let text = line.text();
        let usable = self.usable();
        let indent = line.indent.min(usable / 2);
        wrap::wrap(&text, usable, usable - indent)
            .into_iter()
            .enumerate()
            .map(|(i, range)| {
                let end = range.start + wrap::row_text(&text, &range).len();
                let mut row = Vec::new();
                if i > 0 && indent > 0 {
                    row.push(Span::plain(&" ".repeat(indent)));
                }
                row.extend(line.slice(range.start..end));
                row
            })
            .collect()
    }

    /// The rows of the live area and the cursor's (row, column) in them.
    fn live_rows(&self, live: &Live) -> (Vec<Vec<Span>>, (usize, usize)) {
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
fn prompt_rows(live: &Live, usable: usize) -> (Vec<Vec<Span>>, (usize, usize)) {
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

fn write_row(buf: &mut Vec<u8>, row: &[Span]) -> io::Result<()> {
    for span in row {
        if span.style == Default::default() {
            queue!(buf, Print(&span.text))?;
        } else {
            queue!(
                buf,
                PrintStyledContent(StyledContent::new(span.style, &span.text))
            )?;
        }
    }
    Ok(())
}

fn clamp_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live<'a>(input: &'a str, approval: Option<&'a str>) -> Live<'a> {
        Live {
            approval,
            status: Line::styled("idle", styles::dim()),
            input,
            cursor: input.len(),
            placeholder: "type",
        }
    }

    fn strip(bytes: &[u8]) -> String {
        let text = String::from_utf8_lossy(bytes);
        let mut out = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                if chars.next_if_eq(&'[').is_some() {
                    for c in chars.by_ref() {
                        if c.is_ascii_alphabetic() {
                            break;
                        }
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn streamed_text_is_committed_row_by_row() {
        let mut ui = Ui::new(Vec::new(), 21, 10);
        ui.stream_begin();
        ui.stream_push("hello there general ");
        ui.stream_push("kenobi\nsecond");
        // usable = 20, text rows of 18 columns.
        let committed: Vec<String> = ui.pending.iter().map(Line::text).collect();
        assert_eq!(committed, ["", "✦ hello there", "  general kenobi"]);
        ui.stream_end();
        assert_eq!(
            ui.pending.last().map(Line::text).as_deref(),
            Some("  second")
        );
    }

    #[test]
    fn the_cursor_goes_back_to_the_prompt() {
        let mut ui = Ui::new(Vec::new(), 80, 10);
        ui.flush(&live("abc", Some("Allow run_shell_command: `ls`?")))
            .unwrap();
        // Box (3 rows), blank, status, prompt: cursor on the sixth row.
        assert_eq!(ui.cursor_row, 5);
        assert_eq!(ui.cursor_col, 5);
        let screen = strip(&ui.out);
        assert!(screen.contains("Allow run_shell_command: `ls`? [y] yes  [n] no"));
        assert!(screen.contains("> abc"));
    }

    #[test]
    fn long_input_wraps_and_tracks_the_cursor() {
        let ui = Ui::new(Vec::new(), 11, 10);
        // usable 10, 8 columns of input per row.
        let live = Live {
            cursor: 9,
            ..live("abcdefghijkl", None)
        };
        let (rows, cursor) = prompt_rows(&live, ui.usable());
        assert_eq!(rows.len(), 2);
        assert_eq!(cursor, (1, 3));
    }

    #[test]
    fn erase_accounts_for_rewrapping_after_a_resize() {
        let mut ui = Ui::new(Vec::new(), 40, 10);
        ui.flush(&live(&"x".repeat(30), None)).unwrap();
        assert_eq!(ui.cursor_row, 2);
        ui.resize(20, 10);
        let mut buf = Vec::new();
        ui.erase(&mut buf).unwrap();
        // The blank and status rows still fit; the 32-column prompt row
        // became two.
        assert_eq!(buf, b"\r\x1b[3A\x1b[J");
    }
}
