//! Rewrapping the normal buffer's lines when the width changes, by the
//! rules of xterm.js 6 (`Buffer._reflowLarger`, `_reflowSmaller` and
//! `BufferReflow.ts`), quirks included: a resize must leave the server's
//! screen cell for cell as the browser's xterm would have it.
//!
//! A group is a line and the lines that continue it. Widening joins a
//! group's lines and drops the ones left empty; narrowing splits lines
//! longer than the new width, inserting lines below them. A wide character
//! that would straddle the edge moves to the next line, leaving a null cell
//! behind. The group holding the cursor is left alone (xterm's default
//! `reflowCursorLine: false`: the program redraws it). Lines that leave or
//! enter move the screen (`ybase`), the cursor and the saved cursor as
//! xterm moves them.

use super::departed;
use super::grid::{copy_cells, wrapped_len, Buffer, Line};

/// Where each line of a group narrowed to `cols` ends: `cols`, or one less
/// where a wide character would straddle the edge; the last one takes the
/// rest (`reflowSmallerGetNewLineLengths`).
fn new_line_lengths(group: &[Line], old_cols: usize, cols: usize) -> Vec<usize> {
    let needed: usize = (0..group.len())
        .map(|i| wrapped_len(group, i, old_cols))
        .sum();
    let mut lengths = Vec::new();
    let (mut src_col, mut src_line, mut available) = (0usize, 0usize, 0usize);
    while available < needed {
        if needed - available < cols {
            lengths.push(needed - available);
            break;
        }
        src_col += cols;
        let old_len = wrapped_len(group, src_line, old_cols);
        if src_col > old_len {
            src_col -= old_len;
            src_line += 1;
        }
        let ends_wide = src_col > 0
            && group
                .get(src_line)
                .is_some_and(|l| l.width(src_col - 1) == 2);
        if ends_wide {
            src_col -= 1;
        }
        let len = if ends_wide { cols - 1 } else { cols };
        lengths.push(len);
        available += len;
    }
    lengths
}

impl Buffer {
    /// The cursor's line, counted from the top of the scrollback.
    fn cursor_line(&self) -> usize {
        self.ybase + self.y
    }

    /// Widening: each wrapped group (but the cursor's) is packed into as
    /// few lines as its cells need; the lines left over go.
    pub(super) fn reflow_larger(&mut self, cols: usize, rows: usize) {
        let old_cols = self.cols;
        let cursor = self.cursor_line();
        let mut remove: Vec<(usize, usize)> = Vec::new();
        let mut y = 0;
        while y + 1 < self.lines.len() {
            let mut end = y + 1;
            while end < self.lines.len() && self.lines[end].wrapped {
                end += 1;
            }
            if end == y + 1 || (cursor >= y && cursor < end) {
                y = end;
                continue;
            }
            let group = &mut self.lines[y..end];
            let count = pack(group, old_cols, cols);
            if count > 0 {
                remove.push((end - count, count));
            }
            y = end;
        }
        let removed: usize = remove.iter().map(|r| r.1).sum();
        if removed == 0 {
            return;
        }
        // Lines that go below the cursor's line leave the screen where it
        // is (the ones below come up, `settle` pads the bottom); xterm
        // moves the screen or the cursor for them as for lines above it,
        // and the cursor lands on another line.
        let above: usize = remove.iter().filter(|r| r.0 < cursor).map(|r| r.1).sum();
        if above < removed {
            departed();
        }
        let mut next = remove.iter().peekable();
        let mut index = 0;
        self.lines.retain(|_| {
            let i = index;
            index += 1;
            while next.peek().is_some_and(|r| i >= r.0 + r.1) {
                next.next();
            }
            next.peek().is_none_or(|r| i < r.0)
        });
        for _ in 0..above {
            if self.ybase == 0 {
                self.y = self.y.saturating_sub(1);
                if self.lines.len() < rows {
                    self.lines.push(Line::blank(cols, false));
                }
            } else {
                self.ybase -= 1;
            }
        }
        self.saved_y = self.saved_y.saturating_sub(removed);
    }

    /// Narrowing: every line longer than the new width, and every wrapped
    /// group (but the cursor's), is rewrapped; the lines it gains are
    /// inserted below it, the oldest lines of the scrollback go if the
    /// buffer is full.
    pub(super) fn reflow_smaller(&mut self, cols: usize, rows: usize) {
        let old_cols = self.cols;
        // (index it was computed for, lines): applied at the end in one pass.
        let mut to_insert: Vec<(usize, Vec<Line>)> = Vec::new();
        let mut count_to_insert = 0usize;
        // A group below the cursor's line gained lines.
        let mut below = false;
        let mut y = self.lines.len();
        while y > 0 {
            y -= 1;
            let Some(last) = self.lines.get(y) else {
                continue;
            };
            if !last.wrapped && last.trimmed_len() <= cols {
                continue;
            }
            let end = y + 1;
            while self.lines[y].wrapped && y > 0 {
                y -= 1;
            }
            let len = end - y;
            let cursor = self.cursor_line();
            if cursor >= y && cursor < end {
                continue;
            }
            let lengths = new_line_lengths(&self.lines[y..end], old_cols, cols);
            let Some(add) = lengths.len().checked_sub(len) else {
                // Never seen: xterm itself would fail on it.
                continue;
            };
            let trimmed = if self.ybase == 0 && self.y + 1 != self.lines.len() {
                (self.y + add).saturating_sub(self.max_len)
            } else {
                (self.lines.len() + add).saturating_sub(self.max_len)
            };
            let mut group: Vec<Line> = self.lines[y..end].iter_mut().map(std::mem::take).collect();
            group.extend((0..add).map(|_| Line::blank(cols, true)));
            spread(&mut group, &lengths, len, old_cols, cols);
            let new_lines = group.split_off(len);
            for (slot, line) in self.lines[y..end].iter_mut().zip(group) {
                *slot = line;
            }
            if add > 0 {
                to_insert.push((end + count_to_insert, new_lines));
                count_to_insert += add;
            }
            if y > cursor {
                // Below the cursor's line: the lines it gains push the ones
                // under it off the screen (`settle`), as a shorter screen
                // drops the lines below the cursor. xterm moves the cursor
                // down or the screen up as for a group above the cursor,
                // and pops lines from the bottom while it still reads them.
                below = true;
                departed();
            } else {
                self.make_room(add.saturating_sub(trimmed), rows, count_to_insert);
            }
            self.saved_y = (self.saved_y + add).min(self.ybase + rows - 1);
        }
        if !to_insert.is_empty() {
            self.insert(to_insert, count_to_insert);
        }
        if below {
            self.lines.truncate(self.ybase + rows);
        }
        let over = self.lines.len().saturating_sub(self.max_len);
        self.lines.drain(..over);
    }

    /// Moves the screen down `n` lines over lines a narrowing inserted
    /// above the cursor: the cursor goes down while blank lines at the
    /// bottom can go, else the top goes into the scrollback.
    fn make_room(&mut self, n: usize, rows: usize, count_to_insert: usize) {
        for _ in 0..n {
            if self.ybase == 0 && self.y + 1 < rows {
                if self
                    .lines
                    .last()
                    .is_some_and(|l| !l.wrapped && l.trimmed_len() == 0)
                {
                    self.y += 1;
                    self.lines.pop();
                    continue;
                }
                // xterm pops the line anyway, and its text is lost.
                departed();
                self.ybase += 1;
            } else if self.ybase == 0
                || self.ybase + rows < self.max_len.min(self.lines.len() + count_to_insert)
            {
                self.ybase += 1;
            }
        }
    }

    /// Puts the lines a narrowing gained below their groups (in one pass,
    /// from the bottom up, as xterm does). Where the buffer cannot hold
    /// them all, the oldest lines go (`reflow_smaller`); if some of the
    /// inserted ones are among them, xterm writes them over the newest ones
    /// (its circular list wraps around) and loses its screen.
    fn insert(&mut self, to_insert: Vec<(usize, Vec<Line>)>, count: usize) {
        let mut original = std::mem::take(&mut self.lines).into_iter().rev();
        let original_len = original.len();
        let mut out: Vec<(Line, bool)> = Vec::with_capacity(original_len + count);
        let mut original_index = original_len as isize - 1;
        let mut inserted = 0usize;
        let mut pending = to_insert.into_iter().peekable();
        loop {
            match pending.peek() {
                Some((start, _)) if *start as isize > original_index + inserted as isize => {
                    let (_, lines) = pending.next().expect("peeked");
                    inserted += lines.len();
                    out.extend(lines.into_iter().rev().map(|l| (l, true)));
                }
                _ => {
                    let Some(line) = original.next() else { break };
                    out.push((line, false));
                    original_index -= 1;
                }
            }
        }
        out.reverse();
        let over = out.len().saturating_sub(self.max_len);
        if out[..over].iter().any(|(_, new)| *new) {
            departed();
        }
        self.lines = out.into_iter().map(|(l, _)| l).collect();
    }
}

/// Packs a wrapped group of lines `old_cols` wide into lines `cols` wide
/// (`cols` > `old_cols`, the lines already padded to it), in place; returns
/// how many lines at its end are left over (`reflowLargerGetLinesToRemove`).
fn pack(group: &mut [Line], old_cols: usize, cols: usize) -> usize {
    let (mut dest, mut dest_col) = (0usize, wrapped_len(group, 0, old_cols));
    let (mut src, mut src_col) = (1usize, 0usize);
    while src < group.len() {
        let src_len = wrapped_len(group, src, old_cols);
        let n = src_len.saturating_sub(src_col).min(cols - dest_col);
        copy_cells(group, (src, src_col), (dest, dest_col), n, false);
        dest_col += n;
        if dest_col == cols {
            dest += 1;
            dest_col = 0;
        }
        src_col += n;
        if src_col >= src_len {
            src += 1;
            src_col = 0;
        }
        // A wide character in the last column moves to the next line.
        if dest_col == 0 && dest != 0 && dest < group.len() && group[dest - 1].width(cols - 1) == 2
        {
            copy_cells(group, (dest - 1, cols - 1), (dest, 0), 1, false);
            dest_col = 1;
            group[dest - 1].set_blank(cols - 1);
        }
    }
    if let Some(line) = group.get_mut(dest) {
        (dest_col..cols).for_each(|c| line.set_blank(c));
    }
    let mut count = 0;
    for i in (1..group.len()).rev() {
        if i > dest || group[i].trimmed_len() == 0 {
            count += 1;
        } else {
            break;
        }
    }
    count
}

/// Spreads the cells of a group (its `len` old lines, then the new blank
/// ones) over lines of `lengths`, back to front, in place (the copy loop of
/// `_reflowSmaller`).
fn spread(group: &mut [Line], lengths: &[usize], len: usize, old_cols: usize, cols: usize) {
    let mut dest = lengths.len() as isize - 1;
    let mut dest_col = lengths[dest as usize];
    if dest_col == 0 {
        dest -= 1;
        dest_col = if dest >= 0 { lengths[dest as usize] } else { 0 };
    }
    let mut src = len as isize - 1;
    let mut src_col = group[src as usize].trimmed_len();
    while src >= 0 {
        if dest < 0 {
            break;
        }
        let n = src_col.min(dest_col);
        copy_cells(
            group,
            (src as usize, src_col - n),
            (dest as usize, dest_col - n),
            n,
            true,
        );
        dest_col -= n;
        if dest_col == 0 {
            dest -= 1;
            dest_col = if dest >= 0 { lengths[dest as usize] } else { 0 };
        }
        src_col -= n;
        if src_col == 0 {
            src -= 1;
            src_col = wrapped_len(group, src.max(0) as usize, old_cols);
        }
    }
    // A line that gave its last cell to a wide character ends in null.
    for (line, &l) in group.iter_mut().zip(lengths) {
        if l < cols {
            line.set_blank(l);
        }
    }
}
