//! Reading a vt100 screen's lines into the model of `grid.rs`: the active
//! grid's scrollback and screen, cell by cell, with xterm's wrap flags.

use super::grid::{blank, is_placeholder, Line};

/// The active grid's lines, the scrollback first if `scrollback` (without
/// it the first line continues none). vt100 flags a row that wraps *into*
/// the next one; xterm, and the model, a line that continues the one
/// above. Leaves the screen scrolled to the bottom.
pub(in crate::session::terminal) fn read_lines(
    screen: &mut vt100::Screen,
    scrollback: bool,
) -> Vec<Line> {
    let (rows, cols) = screen.size();
    screen.set_scrollback(if scrollback { usize::MAX } else { 0 });
    let total = screen.scrollback();
    let mut lines = Vec::with_capacity(total + usize::from(rows));
    let mut wraps = false;
    // A scrollback line is read as the top row of a view scrolled back to
    // it: vt100 finds row 0 of a view at once, deeper rows step by step.
    for k in 0..total {
        screen.set_scrollback(total - k);
        lines.push(row(screen, 0, cols, wraps));
        wraps = screen.row_wrapped(0);
    }
    screen.set_scrollback(0);
    for r in 0..rows {
        lines.push(row(screen, r, cols, wraps));
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
    }
}
