//! Lines of cells to bytes: what a reset terminal (a fresh vt100 parser, a
//! browser's xterm) must be fed to hold the same cells, attributes and
//! wrap flags. Lines are drawn one after the other from the top, so the
//! ones above the screen scroll into the terminal's scrollback.
//!
//! A line that continues the one above is drawn by letting the terminal
//! wrap: the line above is written up to its last column, and the next
//! character goes on. Both terminals mark a line wrapped only when a
//! character is written past a full last column, so a line that wraps but
//! ends in a null cell (xterm leaves one where a wide character moved to
//! the next line) gets a space there, in a colour of its own that
//! `read.rs` knows it by and takes back for a null cell.

use std::io::Write as _;

use super::grid::{Line, PLACEHOLDER_FG};

/// The attributes vt100 keeps for a cell, and the pen that draws them.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
struct Pen {
    fg: vt100::Color,
    bg: vt100::Color,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
    inverse: bool,
}

impl Pen {
    fn of(cell: &vt100::Cell) -> Self {
        Pen {
            fg: cell.fgcolor(),
            bg: cell.bgcolor(),
            bold: cell.bold(),
            dim: cell.dim(),
            italic: cell.italic(),
            underline: cell.underline(),
            inverse: cell.inverse(),
        }
    }

    /// An SGR that sets this pen from any other.
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"\x1b[0");
        for (on, code) in [
            (self.bold, "1"),
            (self.dim, "2"),
            (self.italic, "3"),
            (self.underline, "4"),
            (self.inverse, "7"),
        ] {
            if on {
                out.push(b';');
                out.extend_from_slice(code.as_bytes());
            }
        }
        colour(out, self.fg, 30, 90, 38);
        colour(out, self.bg, 40, 100, 48);
        out.push(b'm');
    }
}

fn colour(out: &mut Vec<u8>, c: vt100::Color, base: u8, bright: u8, extended: u8) {
    let _ = match c {
        vt100::Color::Default => Ok(()),
        vt100::Color::Idx(i) if i < 8 => write!(out, ";{}", base + i),
        vt100::Color::Idx(i) if i < 16 => write!(out, ";{}", bright + i - 8),
        vt100::Color::Idx(i) => write!(out, ";{extended};5;{i}"),
        vt100::Color::Rgb(r, g, b) => write!(out, ";{extended};2;{r};{g};{b}"),
    };
}

/// The rows of the screen unread lines name, as vt100 formats them: each
/// assumes the default pen, and the cursor at its start (or past the end
/// of the row above, which it continues) and moves only within the row.
struct Source<'a> {
    screen: &'a mut vt100::Screen,
    scrollback: usize,
    visible: Option<Vec<Vec<u8>>>,
}

impl Source<'_> {
    fn row(&mut self, k: usize) -> Vec<u8> {
        let cols = self.screen.size().1;
        if k < self.scrollback {
            self.screen.set_scrollback(self.scrollback - k);
            return self
                .screen
                .rows_formatted(0, cols)
                .next()
                .unwrap_or_default();
        }
        let screen = &mut *self.screen;
        let visible = self.visible.get_or_insert_with(|| {
            screen.set_scrollback(0);
            screen.rows_formatted(0, cols).collect()
        });
        visible
            .get(k - self.scrollback)
            .cloned()
            .unwrap_or_default()
    }
}

/// The drawing state: the pen the terminal holds (`None`: not known) and
/// the cursor's column.
struct Drawer<'a> {
    out: &'a mut Vec<u8>,
    pen: Option<Pen>,
    at: usize,
}

impl Drawer<'_> {
    fn pen(&mut self, pen: Pen) {
        if self.pen != Some(pen) {
            pen.write(self.out);
            self.pen = Some(pen);
        }
    }

    fn move_to(&mut self, col: usize) {
        if col > self.at {
            let _ = write!(self.out, "\x1b[{}C", col - self.at);
        } else if col < self.at {
            let _ = write!(self.out, "\x1b[{}G", col + 1);
        }
        self.at = col;
    }

    /// One line; `wraps` when the next line continues it, so it must end
    /// with the cursor past a written last column.
    fn line(&mut self, line: &Line, cols: usize, wraps: bool, source: &mut Source) {
        if let Some(k) = line.old {
            // As the screen has it (the same width: a row that wraps there
            // is written up to its last column).
            self.pen(Pen::default());
            self.out.extend_from_slice(&source.row(k));
            self.pen = None;
            return;
        }
        let cells = &line.cells[..line.cells.len().min(cols)];
        let mut c = 0;
        while c < cells.len() {
            let cell = &cells[c];
            let wide = cell.is_wide();
            if cell.has_contents() && !(wide && c + 1 >= cols) {
                self.move_to(c);
                self.pen(Pen::of(cell));
                self.out.extend_from_slice(cell.contents().as_bytes());
                let width = if wide { 2 } else { 1 };
                self.at = c + width;
                c += width;
                continue;
            }
            let pen = Pen::of(cell);
            if cell.has_contents() || cell.is_wide_continuation() || pen == Pen::default() {
                c += 1;
                continue;
            }
            // Erased with a colour: erase the run with that pen.
            let run = cells[c..]
                .iter()
                .take_while(|k| !k.has_contents() && !k.is_wide_continuation() && Pen::of(k) == pen)
                .count();
            self.move_to(c);
            self.pen(pen);
            let _ = write!(self.out, "\x1b[{run}X");
            c += run;
        }
        if wraps && self.at < cols {
            // Nothing was written in the last column: a space there, in
            // the placeholder's colour, lets the next line wrap.
            self.move_to(cols - 1);
            self.pen(Pen {
                fg: PLACEHOLDER_FG,
                italic: true,
                ..Pen::default()
            });
            self.out.push(b' ');
            self.at = cols;
        }
    }
}

/// Draws `lines` from the cursor's position on a reset terminal `cols`
/// wide, leaving the cursor on the last line. `screen` is the one they
/// were read from, its grid still active (for lines not read out). Returns
/// with the pen reset and `screen` scrolled to the bottom.
pub(in crate::session::terminal) fn draw_lines(
    out: &mut Vec<u8>,
    lines: &[Line],
    cols: usize,
    screen: &mut vt100::Screen,
) {
    screen.set_scrollback(usize::MAX);
    let mut source = Source {
        scrollback: screen.scrollback(),
        screen,
        visible: None,
    };
    let mut d = Drawer {
        out,
        pen: Some(Pen::default()),
        at: 0,
    };
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            if line.wrapped {
                if line.old.is_some() || !line.cells.first().is_some_and(vt100::Cell::has_contents)
                {
                    // Wrap onto the line with a space, then blank it.
                    d.pen(Pen::default());
                    d.out.extend_from_slice(b" \x08\x1b[X");
                }
            } else {
                // A default pen first: xterm fills a line a feed scrolls
                // in with the pen's background.
                d.pen(Pen::default());
                d.out.extend_from_slice(b"\r\n");
            }
            d.at = 0;
        }
        let wraps = lines.get(i + 1).is_some_and(|l| l.wrapped);
        d.line(line, cols, wraps, &mut source);
    }
    d.pen(Pen::default());
    source.screen.set_scrollback(0);
}

/// A cursor position (0-based) as CUP.
pub(super) fn cup(out: &mut Vec<u8>, row: usize, col: usize) {
    let _ = write!(out, "\x1b[{};{}H", row + 1, col + 1);
}
