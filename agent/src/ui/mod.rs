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
mod live;
mod stream;
#[cfg(test)]
mod tests;
pub(crate) mod wrap;

use std::io::{self, Write};

use crossterm::cursor::{Hide, MoveTo, MoveToColumn, MoveUp, Show};
use crossterm::queue;
use crossterm::style::{Print, PrintStyledContent, StyledContent};
use crossterm::terminal::{BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate};

use line::{width, Line, Span};
pub(crate) use live::{fit, Live};
use stream::StreamView;

/// Width of the role markers ("> ", "✦ ") that start conversation lines.
const MARKER_WIDTH: usize = 2;
/// Narrowest layout we attempt; a narrower terminal gets ragged rows.
const MIN_COLUMNS: usize = 8;

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
