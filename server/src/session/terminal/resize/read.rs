//! Reading a vt100 screen's lines into the model of `grid.rs`: the active
//! grid's scrollback and screen, cell by cell (or only where they are),
//! with xterm's wrap flags.

use super::grid::{blank, is_placeholder, Line};

/// How [`read_lines`] reads.
#[derive(Clone, Copy)]
pub(in crate::session::terminal) struct Reading {
    /// The scrollback too (without it the first line continues none).
    pub(in crate::session::terminal) scrollback: bool,
    /// Cell by cell, for a rewrap. Else a line only names its row of the
    /// screen, and `draw.rs` draws that row as vt100 formats it: a tenth
    /// of the cost, for a snapshot or a resize that keeps the width
    /// (`Screen::cell` finds its row anew for every cell).
    pub(in crate::session::terminal) cells: bool,
}

/// The active grid's lines, scrollback first. vt100 flags a row that wraps
/// *into* the next one; xterm, and the model, a line that continues the
/// one above. Leaves the screen scrolled to the bottom.
pub(in crate::session::terminal) fn read_lines(
    screen: &mut vt100::Screen,
    how: Reading,
) -> Vec<Line> {
    let (rows, cols) = screen.size();
    screen.set_scrollback(usize::MAX);
    let total = screen.scrollback();
    let first = if how.scrollback { 0 } else { total };
    let mut lines = Vec::with_capacity(total - first + usize::from(rows));
    let mut wraps = false;
    let mut read = |screen: &vt100::Screen, r: u16, wrapped: bool| {
        let k = first + lines.len();
        lines.push(if how.cells {
            row(screen, r, cols, wrapped)
        } else {
            Line {
                cells: Vec::new(),
                wrapped,
                old: Some(k),
            }
        });
    };
    // A scrollback line is read as the top row of a view scrolled back to
    // it: vt100 finds row 0 of a view at once, deeper rows step by step.
    for k in first..total {
        screen.set_scrollback(total - k);
        read(screen, 0, wraps);
        wraps = screen.row_wrapped(0);
    }
    screen.set_scrollback(0);
    for r in 0..rows {
        read(screen, r, wraps);
        wraps = screen.row_wrapped(r);
    }
    lines
}

/// Row `r` of the view; the spaces `draw.rs` wrote to hold a wrap are
/// null cells again.
fn row(screen: &vt100::Screen, r: u16, cols: u16, wrapped: bool) -> Line {
    Line {
        cells: (0..cols)
            .map(|c| match screen.cell(r, c) {
                Some(cell) if !is_placeholder(cell) => cell.clone(),
                _ => blank().clone(),
            })
            .collect(),
        wrapped,
        old: None,
    }
}
