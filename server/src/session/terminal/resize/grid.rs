//! The buffer a resize works on, modelled on xterm.js 6's `Buffer`: all
//! lines (scrollback, then the screen), each a row of vt100 cells and
//! whether it continues the line above; the cursor; the saved cursor. Here
//! are xterm's rules for the rows and the cursor (`Buffer.resize`);
//! `reflow.rs` rewraps lines when the width changes.
//!
//! Cells are xterm's in vt100's dress: a cell without contents is xterm's
//! null cell (width 1), a wide character is a cell of width 2 followed by
//! its continuation (width 0, no contents).

use std::sync::OnceLock;

/// A cell without contents or attributes (vt100 makes cells only itself,
/// so this one is taken from a fresh screen).
pub(super) fn blank() -> &'static vt100::Cell {
    static BLANK: OnceLock<vt100::Cell> = OnceLock::new();
    BLANK.get_or_init(|| {
        let parser = vt100::Parser::new(2, 2, 0);
        parser
            .screen()
            .cell(0, 0)
            .cloned()
            .expect("a 2x2 screen has a cell")
    })
}

/// The colour of the space `draw.rs` writes where xterm has a null cell
/// that must hold a wrap (vt100 wraps a line only past a written last
/// column): a foreground no program sets with `\e[38;2;…m` on a space by
/// chance, and that a space never shows.
pub(super) const PLACEHOLDER_FG: vt100::Color = vt100::Color::Rgb(1, 2, 3);

/// Whether `cell` is such a space.
pub(super) fn is_placeholder(cell: &vt100::Cell) -> bool {
    // (Cheapest test first: this runs for every cell a rewrap reads.)
    cell.italic() && cell.fgcolor() == PLACEHOLDER_FG && cell.contents() == " "
}

#[derive(Clone, Default, Debug)]
pub(in crate::session::terminal) struct Line {
    pub(super) cells: Vec<vt100::Cell>,
    /// The line continues the one above it (xterm's `isWrapped`).
    pub(super) wrapped: bool,
    /// Not read out (`cells` is empty): line `k` of the screen it was read
    /// from, counted from the top of its scrollback, drawn as it is there.
    /// Only what touches no cells gets such lines: a snapshot, a resize
    /// that keeps the width, erasing the scrollback.
    pub(super) old: Option<usize>,
}

impl Line {
    pub(super) fn blank(cols: usize, wrapped: bool) -> Self {
        Line {
            cells: vec![blank().clone(); cols],
            wrapped,
            old: None,
        }
    }

    /// xterm's `getWidth`: 2 for a wide character, 0 for its second half
    /// and outside the line, else 1.
    pub(super) fn width(&self, col: usize) -> usize {
        match self.cells.get(col) {
            Some(c) if c.is_wide() => 2,
            Some(c) if c.is_wide_continuation() => 0,
            Some(_) => 1,
            None => 0,
        }
    }

    pub(super) fn has_content(&self, col: usize) -> bool {
        self.cells.get(col).is_some_and(vt100::Cell::has_contents)
    }

    /// xterm's `getTrimmedLength`: up to the end of the last cell with
    /// contents.
    pub(super) fn trimmed_len(&self) -> usize {
        (0..self.cells.len())
            .rev()
            .find(|&i| self.has_content(i))
            .map_or(0, |i| i + self.width(i).max(1))
    }

    pub(super) fn set_blank(&mut self, col: usize) {
        if let Some(c) = self.cells.get_mut(col) {
            *c = blank().clone();
        }
    }

    /// Cuts or pads the line to `cols`; a wide character whose second half
    /// is cut goes too (vt100 cannot hold one in the last column).
    pub(super) fn fit(&mut self, cols: usize) {
        self.cells.resize(cols, blank().clone());
        if cols > 0 && self.width(cols - 1) == 2 {
            self.set_blank(cols - 1);
        }
    }
}

/// xterm's `getWrappedLineTrimmedLength`: the cells line `i` of a wrapped
/// group gives the logical line. A line that ends in a null cell before a
/// line that starts with a wide character gave that cell up to the wrap.
pub(super) fn wrapped_len(group: &[Line], i: usize, cols: usize) -> usize {
    if i + 1 == group.len() {
        return group[i].trimmed_len();
    }
    let ends_in_null = !group[i].has_content(cols - 1) && group[i].width(cols - 1) == 1;
    if ends_in_null && group[i + 1].width(0) == 2 {
        cols - 1
    } else {
        cols
    }
}

/// xterm's `copyCellsFrom` within one group of lines, back to front when
/// `reverse` (so a copy within one line does not overwrite its source).
pub(super) fn copy_cells(
    group: &mut [Line],
    from: (usize, usize),
    to: (usize, usize),
    n: usize,
    reverse: bool,
) {
    let step = |i: usize, group: &mut [Line]| {
        let cell = group[from.0].cells.get(from.1 + i).cloned();
        let dest = group[to.0].cells.get_mut(to.1 + i);
        if let (Some(cell), Some(dest)) = (cell, dest) {
            *dest = cell;
        }
    };
    if reverse {
        (0..n).rev().for_each(|i| step(i, group));
    } else {
        (0..n).for_each(|i| step(i, group));
    }
}

/// One buffer of a screen: the normal one (with scrollback, reflowed) or
/// the alternate one (neither).
#[derive(Debug)]
pub(super) struct Buffer {
    pub(super) lines: Vec<Line>,
    /// Lines above the screen (the scrollback): the screen is
    /// `lines[ybase..ybase + rows]`.
    pub(super) ybase: usize,
    pub(super) x: usize,
    pub(super) y: usize,
    pub(super) saved_x: usize,
    /// Absolute, as in xterm (an index into `lines`).
    pub(super) saved_y: usize,
    pub(super) cols: usize,
    pub(super) rows: usize,
    /// Scrollback lines kept; `None` for the alternate buffer.
    pub(super) scrollback: Option<usize>,
    /// xterm's `lines.maxLength` while a resize runs.
    pub(super) max_len: usize,
}

impl Buffer {
    /// A buffer of `lines` (the last `rows` of them the screen), with the
    /// cursor and saved cursor as vt100 reports them (`(row, col)` on the
    /// screen).
    pub(super) fn new(
        lines: Vec<Line>,
        cursor: (u16, u16),
        saved: (u16, u16),
        (cols, rows): (usize, usize),
        scrollback: Option<usize>,
    ) -> Self {
        let ybase = lines.len().saturating_sub(rows);
        Buffer {
            lines,
            ybase,
            x: usize::from(cursor.1),
            y: usize::from(cursor.0),
            saved_x: usize::from(saved.1),
            saved_y: ybase + usize::from(saved.0),
            cols,
            rows,
            scrollback,
            max_len: rows + scrollback.unwrap_or(0),
        }
    }

    fn capacity(&self, rows: usize) -> usize {
        rows + self.scrollback.unwrap_or(0)
    }

    /// xterm.js's `Buffer.resize`: rows leave at the bottom while they are
    /// below the cursor, then at the top into the scrollback; rows come
    /// back from the scrollback while the cursor is on the last line, else
    /// blank at the bottom; the normal buffer reflows.
    pub(super) fn resize(&mut self, cols: usize, rows: usize) {
        let new_max = self.capacity(rows);
        self.max_len = self.max_len.max(new_max);
        if self.cols < cols {
            self.lines.iter_mut().for_each(|l| l.fit(cols));
        }
        let mut add_to_y = 0;
        if self.rows < rows {
            for _ in self.rows..rows {
                if self.lines.len() >= rows + self.ybase {
                    continue;
                }
                if self.ybase > 0 && self.lines.len() <= self.ybase + self.y + add_to_y + 1 {
                    // Nothing below the cursor: the scrollback comes down.
                    self.ybase -= 1;
                    add_to_y += 1;
                } else {
                    self.lines.push(Line::blank(cols, false));
                }
            }
        } else {
            for _ in rows..self.rows {
                if self.lines.len() <= rows + self.ybase {
                    continue;
                }
                if self.lines.len() > self.ybase + self.y + 1 {
                    // A line below the cursor goes.
                    self.lines.pop();
                } else {
                    // The cursor's line is the last: the top scrolls away.
                    self.ybase += 1;
                }
            }
        }
        if new_max < self.max_len {
            let trim = self.lines.len().saturating_sub(new_max);
            if trim > 0 {
                self.lines.drain(..trim);
                self.ybase = self.ybase.saturating_sub(trim);
                self.saved_y = self.saved_y.saturating_sub(trim);
            }
            self.max_len = new_max;
        }
        self.x = self.x.min(cols - 1);
        self.y = self.y.min(rows - 1) + add_to_y;
        self.saved_x = self.saved_x.min(cols - 1);
        if self.scrollback.is_some() && cols != self.cols {
            if cols > self.cols {
                self.reflow_larger(cols, rows);
            } else {
                self.reflow_smaller(cols, rows);
            }
        }
        if cols < self.cols {
            // Cut what did not reflow: the alternate buffer, the cursor's
            // line. (xterm keeps the cut cells of the alternate buffer and
            // shows them again if it widens; vt100 has nowhere to keep them.)
            self.lines.iter_mut().for_each(|l| l.fit(cols));
        }
        self.cols = cols;
        self.rows = rows;
    }

    /// The screen's lines, padded with blank ones should a reflow have left
    /// fewer than `rows` below `ybase`.
    pub(super) fn settle(&mut self) {
        let want = self.ybase + self.rows;
        while self.lines.len() < want {
            self.lines.push(Line::blank(self.cols, false));
        }
        self.lines.truncate(want);
        self.y = self.y.min(self.rows - 1);
        self.x = self.x.min(self.cols - 1);
    }
}
