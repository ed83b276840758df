//! Resizing the server's screen as the browser's terminal, xterm.js 6,
//! resizes: every client redraws from this screen after a resize (a
//! `resync` with reason `resize`), so it must keep what xterm keeps.
//!
//! vt100 0.16's own `set_size` cuts rows at the bottom and columns at the
//! right: a shorter terminal lost its newest output for every viewer, for
//! good (issue 27). xterm instead drops rows below the cursor, then pushes
//! the top rows into the scrollback, so the cursor's row and what is above
//! it stay; a taller terminal brings scrollback rows back while the cursor
//! is on the last row; a width change rewraps soft-wrapped lines of the
//! normal buffer (the alternate buffer has neither scrollback nor reflow).
//!
//! vt100's grid is private, so a resize reads the old screen out
//! (`read.rs`: the scrollback and screen of each buffer, cell by cell where
//! lines may rewrap, else only where each line is; the cursors, the saved
//! cursor, the pen and modes), applies xterm's rules to that model
//! (`grid.rs`, `reflow.rs`), and draws the result on a fresh vt100 screen of
//! the new size (`draw.rs`), which takes the old one's place in the same
//! parser: a partly received escape sequence and the window title stay.
//! Erasing the scrollback (`CSI 3 J`, which vt100 ignores) is the same
//! redraw without the scrollback, and the same reading and drawing render
//! the snapshots clients attach with ([`super::screen::render`]).
//!
//! What vt100 cannot hold is approximated: a wide character cut in half by
//! a narrowing goes (xterm shows half of it); cells the alternate buffer
//! cut off do not come back when it widens again (xterm keeps them); origin
//! mode is not kept (the scroll region is reset, as xterm resets it). Where
//! xterm 6 loses the cursor's line or lines it holds (`reflow.rs`), duet
//! keeps them ([`departed`]).

mod draw;
mod erase;
mod grid;
mod read;
mod reflow;
#[cfg(test)]
mod tests;

use std::panic::{catch_unwind, AssertUnwindSafe};

use draw::cup;
use grid::Buffer;

pub(in crate::session::terminal) use draw::draw_lines;
pub(in crate::session::terminal) use erase::{next_erase, Erase};
pub(in crate::session::terminal) use read::{read_lines, Reading};

#[cfg(test)]
thread_local! {
    static DEPARTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The resize meets a case where xterm.js 6 loses track of the cursor's
/// line or of lines it holds (`reflow.rs`), and duet does the sane thing
/// instead of the same.
fn departed() {
    #[cfg(test)]
    DEPARTED.with(|d| d.set(true));
}

/// Whether a resize on this thread met [`departed`] since the last call
/// (`fuzz::xterm` has nothing to compare with xterm then).
#[cfg(test)]
pub(crate) fn take_departed() -> bool {
    DEPARTED.with(|d| d.replace(false))
}

/// What a redraw makes of a screen.
struct Target {
    cols: u16,
    rows: u16,
    /// Lines of scrollback the screen keeps at most.
    scrollback: usize,
    /// A resize keeps the scrollback; `CSI 3 J` drops it.
    keep_scrollback: bool,
    /// The screen's first line no longer continues the scrollback's last.
    unwrap_top: bool,
}

impl Target {
    /// A redraw of `screen` at its own size that changes nothing.
    fn in_place(screen: &vt100::Screen, scrollback: usize) -> Self {
        let (rows, cols) = screen.size();
        Target {
            cols,
            rows,
            scrollback,
            keep_scrollback: true,
            unwrap_top: false,
        }
    }
}

/// Resizes `screen` to `cols`×`rows` as xterm.js would, keeping up to
/// `scrollback` lines above it.
pub(super) fn resize(screen: &mut vt100::Screen, cols: u16, rows: u16, scrollback: usize) {
    let target = Target {
        cols,
        rows,
        scrollback,
        keep_scrollback: true,
        unwrap_top: false,
    };
    rebuild(screen, &target);
}

/// Drops the scrollback, as xterm does on `CSI 3 J` (which `clear` prints,
/// and agents' TUIs when they clear the terminal). vt100 ignores it, so a
/// tab that attached later, or every tab after a resize, got back lines the
/// live tabs had dropped. The alternate screen has no scrollback.
pub(super) fn clear_scrollback(screen: &mut vt100::Screen, scrollback: usize) {
    screen.set_scrollback(usize::MAX);
    let kept = screen.scrollback();
    screen.set_scrollback(0);
    if kept == 0 || screen.alternate_screen() {
        return;
    }
    let target = Target {
        keep_scrollback: false,
        ..Target::in_place(screen, scrollback)
    };
    rebuild(screen, &target);
}

/// Ends the wrap of the newest scrollback line into the screen's first
/// line, after an erase that reset that line (`erase.rs`); a look at one
/// row unless there is such a wrap.
pub(super) fn unwrap_top(screen: &mut vt100::Screen, scrollback: usize) {
    screen.set_scrollback(1);
    let wrapped = screen.scrollback() == 1 && screen.row_wrapped(0);
    screen.set_scrollback(0);
    if !wrapped || screen.alternate_screen() {
        return;
    }
    let target = Target {
        unwrap_top: true,
        ..Target::in_place(screen, scrollback)
    };
    rebuild(screen, &target);
}

/// Replaces `screen` with a fresh one redrawn from it (`redraw`).
fn rebuild(screen: &mut vt100::Screen, target: &Target) {
    // The old screen is read through a parser of its own: reading the
    // saved cursor means restoring it (DECRC), and the session's parser
    // may be in the middle of an escape sequence.
    let mut old = vt100::Parser::new(2, 2, 0);
    std::mem::swap(old.screen_mut(), screen);
    match catch_unwind(AssertUnwindSafe(|| redraw(&mut old, target))) {
        Ok(mut fresh) => std::mem::swap(fresh.screen_mut(), screen),
        Err(_) => {
            tracing::warn!("redrawing the screen failed; keeping it as vt100 has it");
            std::mem::swap(old.screen_mut(), screen);
            let (rows, cols) = (target.rows, target.cols);
            if screen.size() != (rows, cols) {
                let _ = catch_unwind(AssertUnwindSafe(|| screen.set_size(rows, cols)));
            }
        }
    }
}

/// The old screen's cursor and saved cursor, as `(row, col)`, read from
/// its active grid (the saved cursor by restoring it: the pen becomes the
/// saved one).
fn cursors(old: &mut vt100::Parser) -> ((u16, u16), (u16, u16)) {
    let cursor = old.screen().cursor_position();
    old.process(b"\x1b8");
    (cursor, old.screen().cursor_position())
}

fn redraw(old: &mut vt100::Parser, target: &Target) -> vt100::Parser {
    let screen = old.screen();
    let (old_rows, old_cols) = screen.size();
    let size = (usize::from(old_cols), usize::from(old_rows));
    let hidden = screen.hide_cursor();
    let pen = screen.attributes_formatted();
    let modes = screen.input_mode_formatted();
    // Where the cursor is, past the last column too (kept when the size
    // is).
    let cursor_state = screen.cursor_state_formatted();
    let alternate = screen.alternate_screen().then(|| {
        let how = Reading {
            scrollback: false,
            cells: true,
        };
        let lines = read_lines(old.screen_mut(), how);
        let (cursor, saved) = cursors(old);
        // The normal grid, kept behind the alternate one, comes to the
        // front (mode 47 switches without clearing or saving anything).
        old.process(b"\x1b[?47l");
        Buffer::new(lines, cursor, saved, size, None)
    });
    // Only a rewrap looks at cells.
    let how = Reading {
        scrollback: target.keep_scrollback,
        cells: target.cols != old_cols,
    };
    let lines = read_lines(old.screen_mut(), how);
    let (cursor, saved) = cursors(old);
    let saved_pen = old.screen().attributes_formatted();
    let mut normal = Buffer::new(lines, cursor, saved, size, Some(target.scrollback));
    if target.unwrap_top {
        if let Some(first) = normal.lines.get_mut(normal.ybase) {
            first.wrapped = false;
        }
    }
    let (cols, rows) = (usize::from(target.cols), usize::from(target.rows));
    let same_size = (cols, rows) == size;
    if !same_size {
        normal.resize(cols, rows);
    }
    normal.settle();

    let mut out = Vec::new();
    draw_lines(&mut out, &normal.lines, cols, old.screen_mut());
    let save = |out: &mut Vec<u8>, b: &Buffer| {
        let row = b.saved_y.saturating_sub(b.ybase).min(rows - 1);
        cup(out, row, b.saved_x);
        out.extend_from_slice(&saved_pen);
        out.extend_from_slice(b"\x1b7");
        cup(out, b.y, b.x);
    };
    save(&mut out, &normal);
    if let Some(mut alt) = alternate {
        alt.resize(cols, rows);
        alt.settle();
        out.extend_from_slice(b"\x1b[?47h\x1b[H");
        draw_lines(&mut out, &alt.lines, cols, old.screen_mut());
        save(&mut out, &alt);
    } else if same_size {
        out.extend_from_slice(&cursor_state);
    }
    out.extend_from_slice(&pen);
    out.extend_from_slice(&modes);
    if hidden {
        out.extend_from_slice(b"\x1b[?25l");
    }
    let mut fresh = vt100::Parser::new(target.rows, target.cols, target.scrollback);
    fresh.process(&out);
    fresh
}

/// Draws the normal grid kept behind `screen`'s alternate one, cursor and
/// all, then switches to a blank alternate screen as the program did
/// (`?1049h`, which saves that cursor for the program's return): what a
/// snapshot of an alternate screen starts with, so a client that attached
/// meanwhile has the same normal screen as one that watched.
pub(super) fn draw_behind_alternate(screen: &mut vt100::Screen, out: &mut Vec<u8>) {
    let mut scratch = vt100::Parser::new(2, 2, 0);
    std::mem::swap(scratch.screen_mut(), screen);
    scratch.process(b"\x1b[?47l");
    let how = Reading {
        scrollback: true,
        cells: false,
    };
    let lines = read_lines(scratch.screen_mut(), how);
    let cols = usize::from(scratch.screen().size().1);
    draw_lines(out, &lines, cols, scratch.screen_mut());
    // (It places a cursor past the last column by writing that cell.)
    out.extend_from_slice(&scratch.screen().cursor_state_formatted());
    // Back as it was: ?47h neither clears nor saves.
    scratch.process(b"\x1b[?47h");
    std::mem::swap(scratch.screen_mut(), screen);
    out.extend_from_slice(b"\x1b[m\x1b[?1049h\x1b[H");
}
