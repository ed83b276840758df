//! xterm.js as the reference for resizes: the same output and resizes, fed
//! to duet's server screen and to xterm.js 6 (the browser's terminal, run
//! headless in Node, `xterm_node.rs`), leave the same text on the screen
//! and in the scrollback, the same wrap flags and the same cursor, after
//! every resize and at the end.
//!
//! The output is what shells and line-oriented programs print: text (some
//! of it wide CJK, lines long enough to wrap), CR, LF, CRLF, colours,
//! erasing, cursor moves, `clear`, the alternate screen; the resizes go up
//! and down in both directions, down to 2×2.
//!
//! vt100 (duet's parser) and xterm disagree on a few things that have
//! nothing to do with resizing, and a resize can meet a state vt100 cannot
//! hold. The generator leaves those out, as each piece of output is
//! checked against the screen it is about to be written to (`allowed`):
//! - anything but text and CR at a pending wrap (cursor past the last
//!   column): xterm first pulls the cursor back to the last column for an
//!   erase, a cursor move, LF, a mode change; vt100 acts from past it;
//! - a wide character at the last column (xterm wraps it and marks the
//!   line wrapped; vt100 wraps it unmarked);
//! - a narrow character over the first half of a wide one (vt100 leaves a
//!   space in the second half, xterm a null cell: the line's length
//!   differs, so does its rewrapping), and a wide one whose second half
//!   lands on a wide character that ends in the last column (vt100 then
//!   clears the line's wrap);
//! - erasing or a line feed that would break a wrap: xterm records a
//!   wrap on the line below (its `isWrapped`) and clears it on a line feed
//!   onto it, on erasing it from column 0, on erasing the screen; vt100
//!   records it on the line above and clears it when that line's last
//!   column is erased. The two agree unless a wrap is cut this way (but
//!   the wrap of the newest scrollback line into the screen's first line,
//!   which duet ends itself after an erase of the screen, `erase.rs`; not
//!   after erasing the first line or inserting lines above it);
//! - erasing the screen above the cursor (ED 1) with the cursor in the
//!   last column: xterm then clears the wrap of a line counted from the top
//!   of its scrollback, or throws when there is none;
//! - a narrowing that cuts a wide character in half on a line that does
//!   not reflow (the alternate screen, the cursor's line): xterm keeps and
//!   shows the half, vt100 cannot hold a wide character in the last column;
//! - widening the alternate screen after narrowing it: xterm keeps the
//!   cut cells and shows them again, vt100 has nowhere to keep them;
//! - scrolling the alternate screen after the terminal was taller while
//!   it was off: xterm's alternate buffer then keeps up to that many lines
//!   above its screen (its length limit only grows while it holds no
//!   lines) and brings them back when it grows; vt100's has no scrollback.
//!   (A browser resets its terminal on every resync, which ends this.)

use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;

use super::xterm_node::{replay, State, Step};
use crate::session::terminal::resize;
use crate::session::terminal::screen::Screen;

/// A piece of output, before it is checked against the screen.
#[derive(Debug, Clone)]
enum Piece {
    Text(String),
    Cr,
    Lf,
    CrLf,
    Sgr(String),
    /// EL 0, 1, 2.
    EraseLine(u8),
    /// ED 0, 1, 2, 3.
    EraseScreen(u8),
    /// A cursor move (CUP, CUU, CUD, CUF, CUB, CHA).
    Move(String),
    /// What `clear` prints.
    Clear,
    /// `?1049h` or `?1049l`.
    Alternate(bool),
}

fn piece() -> impl Strategy<Value = Piece> {
    let n = || 1u16..12;
    prop_oneof![
        5 => "[ -~]{1,30}".prop_map(Piece::Text),
        2 => "[a-z \u{4e2d}\u{6587}\u{5b57}]{1,16}".prop_map(Piece::Text),
        1 => ("[a-z]{0,3}", 20usize..90).prop_map(|(t, n)| Piece::Text(format!("{t}{}", "x".repeat(n)))),
        4 => Just(Piece::CrLf),
        1 => Just(Piece::Cr),
        1 => Just(Piece::Lf),
        2 => prop::sample::select(&["1", "0", "31", "42", "1;33", "38;5;200", "48;2;1;2;3", "7", ""][..])
            .prop_map(|p| Piece::Sgr(format!("\x1b[{p}m"))),
        1 => (0u8..3).prop_map(Piece::EraseLine),
        1 => (0u8..4).prop_map(Piece::EraseScreen),
        2 => (n(), n(), prop::sample::select(&["H", "A", "B", "C", "D", "G"][..])).prop_map(|(a, b, f)| {
            Piece::Move(if f == "H" { format!("\x1b[{a};{b}H") } else { format!("\x1b[{a}{f}") })
        }),
        1 => Just(Piece::Clear),
        1 => any::<bool>().prop_map(Piece::Alternate),
    ]
}

#[derive(Debug, Clone)]
enum Gen {
    Out(Vec<Piece>),
    Resize(u16, u16),
}

fn gen_step() -> impl Strategy<Value = Gen> {
    prop_oneof![
        3 => prop::collection::vec(piece(), 1..12).prop_map(Gen::Out),
        2 => (2u16..40, 2u16..14).prop_map(|(c, r)| Gen::Resize(c, r)),
        1 => (2u16..5, 2u16..4).prop_map(|(c, r)| Gen::Resize(c, r)),
    ]
}

/// Whether row `r` continues the row above (for row 0: the newest
/// scrollback line).
fn continues(vt: &mut vt100::Screen, r: u16) -> bool {
    if r > 0 {
        return vt.row_wrapped(r - 1);
    }
    if vt.alternate_screen() {
        return false;
    }
    vt.set_scrollback(1);
    let wrapped = vt.scrollback() == 1 && vt.row_wrapped(0);
    vt.set_scrollback(0);
    wrapped
}

/// Whether `piece` may be written to `vt` as it stands (see the module
/// docs for what is left out and why); `no_scroll`: not if it scrolls.
fn allowed(vt: &mut vt100::Screen, piece: &Piece, no_scroll: bool) -> bool {
    let (rows, cols) = vt.size();
    let (r, c) = vt.cursor_position();
    let pending = c >= cols;
    let into_next = vt.row_wrapped(r);
    let from_above = continues(vt, r);
    // Erasing up to the cursor takes the line's last cell (or the wide
    // character in it), where vt100 keeps the wrap: it clears it.
    let wide_last = vt.cell(r, cols - 2).is_some_and(vt100::Cell::is_wide);
    let reaches_last = c + 1 >= cols || (c + 2 == cols && wide_last);
    match piece {
        Piece::Text(_) | Piece::Cr => true,
        _ if pending => false,
        Piece::Lf | Piece::CrLf if r + 1 == rows => !no_scroll,
        Piece::Lf | Piece::CrLf => !into_next,
        Piece::Sgr(_) | Piece::Move(_) => true,
        Piece::EraseLine(0) => !(into_next || c == 0 && from_above),
        Piece::EraseLine(1) => !(into_next && reaches_last),
        Piece::EraseLine(_) => !into_next && !from_above,
        // (The wrap of the scrollback into the first line ends with the
        // erase on both: `resize/erase.rs`.)
        Piece::EraseScreen(0) => !(c == 0 && r > 0 && from_above),
        // xterm 6 clears the wrap of line `row + 1` of the whole buffer,
        // not of the screen, and throws if there is none.
        Piece::EraseScreen(1) if c + 1 >= cols => false,
        Piece::EraseScreen(1) => !(into_next && reaches_last),
        Piece::EraseScreen(_) | Piece::Clear => true,
        Piece::Alternate(on) => *on != vt.alternate_screen(),
    }
}

/// Whether character `ch` may be written at the cursor (the generator's
/// only characters outside ASCII are wide CJK ones).
fn char_allowed(vt: &vt100::Screen, ch: char, no_scroll: bool) -> bool {
    let (rows, cols) = vt.size();
    let (r, c) = vt.cursor_position();
    // Where it lands: past the last column it wraps first.
    let (r, c) = if c < cols {
        (r, c)
    } else if r + 1 < rows {
        (r + 1, 0)
    } else if no_scroll {
        return false;
    } else {
        // A new, blank line.
        return true;
    };
    let wide_at = |col: u16| vt.cell(r, col).is_some_and(vt100::Cell::is_wide);
    if ch.is_ascii() {
        !wide_at(c)
    } else {
        // vt100 clears the line's wrap when a wide character's second half
        // lands on one whose second half is in the last column.
        c + 1 != cols && !(c + 3 == cols && wide_at(c + 1))
    }
}

fn bytes(piece: &Piece) -> Vec<u8> {
    match piece {
        Piece::Text(t) | Piece::Sgr(t) | Piece::Move(t) => t.clone().into_bytes(),
        Piece::Cr => b"\r".to_vec(),
        Piece::Lf => b"\n".to_vec(),
        Piece::CrLf => b"\r\n".to_vec(),
        Piece::EraseLine(k) => format!("\x1b[{k}K").into_bytes(),
        Piece::EraseScreen(k) => format!("\x1b[{k}J").into_bytes(),
        Piece::Clear => b"\x1b[H\x1b[2J\x1b[3J".to_vec(),
        // Programs home the cursor on the alternate screen: xterm starts it
        // where the normal screen's was, vt100 at the top left.
        Piece::Alternate(true) => b"\x1b[?1049h\x1b[H".to_vec(),
        Piece::Alternate(false) => b"\x1b[?1049l".to_vec(),
    }
}

/// The rows of the cursor's wrapped line, and every row of the alternate
/// screen: what a narrowing cuts rather than rewraps. True if one of them
/// has a wide character across column `cols`.
fn cuts_wide(vt: &mut vt100::Screen, cols: u16) -> bool {
    let (rows, _) = vt.size();
    let wide_at =
        |vt: &vt100::Screen, r: u16| vt.cell(r, cols - 1).is_some_and(vt100::Cell::is_wide);
    if vt.alternate_screen() {
        if (0..rows).any(|r| wide_at(vt, r)) {
            return true;
        }
        // The normal screen behind it resizes too.
        let mut behind = vt100::Parser::new(2, 2, 0);
        *behind.screen_mut() = vt.clone();
        behind.process(b"\x1b[?47l");
        return cuts_wide(behind.screen_mut(), cols);
    }
    let (row, _) = vt.cursor_position();
    let (mut top, mut bottom) = (row, row);
    while top > 0 && vt.row_wrapped(top - 1) {
        top -= 1;
    }
    while bottom + 1 < rows && vt.row_wrapped(bottom) {
        bottom += 1;
    }
    if (top..=bottom).any(|r| wide_at(vt, r)) {
        return true;
    }
    // The cursor's line may begin in the scrollback.
    let mut back = 0;
    while top == 0 && continues(vt, 0) {
        back += 1;
        vt.set_scrollback(back);
        let hit = vt.scrollback() == back && wide_at(vt, 0);
        let more = vt.scrollback() == back;
        vt.set_scrollback(0);
        if hit {
            return true;
        }
        if !more {
            break;
        }
        vt.set_scrollback(back + 1);
        let goes_on = vt.scrollback() == back + 1 && vt.row_wrapped(0);
        vt.set_scrollback(0);
        if !goes_on {
            break;
        }
    }
    false
}

/// What duet's screen holds, in the terms of [`State`].
fn state(screen: &mut Screen) -> State {
    let (vt, _) = screen.vt();
    let (rows, cols) = vt.size();
    let trimmed = |s: String| s.trim_end().to_string();
    let mut rows_text: Vec<String> = vt.rows(0, cols).map(trimmed).collect();
    rows_text.truncate(usize::from(rows));
    let mut scrollback = Vec::new();
    vt.set_scrollback(usize::MAX);
    let total = vt.scrollback();
    let mut wraps = false;
    for k in 0..total {
        vt.set_scrollback(total - k);
        let text = vt.rows(0, cols).next().map(trimmed).unwrap_or_default();
        scrollback.push((text, wraps));
        wraps = vt.row_wrapped(0);
    }
    vt.set_scrollback(0);
    let screen_rows = rows_text
        .into_iter()
        .enumerate()
        .map(|(r, text)| {
            let above = if r == 0 {
                wraps && !vt.alternate_screen()
            } else {
                vt.row_wrapped(r as u16 - 1)
            };
            (text, above)
        })
        .collect();
    let (r, c) = vt.cursor_position();
    State {
        broken: false,
        cols,
        rows,
        cursor: [c, r],
        alt: vt.alternate_screen(),
        screen: screen_rows,
        scrollback,
    }
}

/// Feeds the generated steps to duet's screen, leaving out what `allowed`
/// refuses; returns the steps as sent and the states after each resize and
/// at the end.
fn run(cols: u16, rows: u16, scrollback: usize, steps: &[Gen]) -> Option<(Vec<Step>, Vec<State>)> {
    let mut screen = Screen::new(cols, rows, scrollback);
    let (mut sent, mut states) = (Vec::new(), Vec::new());
    let mut alt_narrowed = false;
    // The most lines xterm's alternate buffer may hold: its length limit
    // follows the rows while it is on, only grows while it is off.
    let mut alt_room = rows;
    for step in steps {
        match step {
            Gen::Out(pieces) => {
                let mut out = Vec::new();
                for piece in pieces {
                    let vt = screen.vt().0;
                    let no_scroll = vt.alternate_screen() && alt_room > vt.size().0;
                    if !allowed(vt, piece, no_scroll) {
                        continue;
                    }
                    if let Piece::Alternate(on) = piece {
                        alt_narrowed = false;
                        if !on {
                            alt_room = vt.size().0;
                        }
                    }
                    let Piece::Text(text) = piece else {
                        let b = bytes(piece);
                        screen.process(&b);
                        out.extend(b);
                        continue;
                    };
                    for ch in text.chars() {
                        if char_allowed(screen.vt().0, ch, no_scroll) {
                            let mut buf = [0; 4];
                            let b = ch.encode_utf8(&mut buf).as_bytes();
                            screen.process(b);
                            out.extend_from_slice(b);
                        }
                    }
                }
                sent.push(Step::Out(out));
            }
            Gen::Resize(c, r) => {
                let vt = screen.vt().0;
                let (old_rows, old_cols) = vt.size();
                let alt = vt.alternate_screen();
                if (*c, *r) == (old_cols, old_rows)
                    || (*c < old_cols && cuts_wide(vt, *c))
                    || (alt && alt_narrowed && *c > old_cols)
                {
                    continue;
                }
                alt_narrowed |= alt && *c < old_cols;
                alt_room = if alt { *r } else { alt_room.max(*r) };
                screen.set_size(*c, *r);
                if resize::take_departed() {
                    // xterm loses the cursor's line or lines it holds here,
                    // and duet does not follow it (`resize/reflow.rs`).
                    return None;
                }
                sent.push(Step::Resize(*c, *r));
                states.push(state(&mut screen));
            }
        }
    }
    states.push(state(&mut screen));
    Some((sent, states))
}

static RESIZES: AtomicU64 = AtomicU64::new(0);
static DEPARTED: AtomicU64 = AtomicU64::new(0);

#[test]
fn the_screen_resizes_as_xterm_does() {
    let steps = prop::collection::vec(gen_step(), 1..14);
    // About one case in seven meets a narrowing where xterm garbles its
    // buffer (a line outgrows it at a tiny width), and is left out.
    let config = proptest::test_runner::Config {
        max_global_rejects: super::cases(),
        ..super::config()
    };
    proptest!(config, |(cols in 2u16..30, rows in 2u16..12, scrollback in 0usize..60, steps in steps)| {
        let run = run(cols, rows, scrollback, &steps);
        if run.is_none() {
            DEPARTED.fetch_add(1, Ordering::Relaxed);
        }
        prop_assume!(run.is_some(), "duet departs from xterm's rules");
        let (sent, ours) = run.expect("assumed");
        RESIZES.fetch_add(ours.len() as u64 - 1, Ordering::Relaxed);
        let theirs = replay(cols, rows, scrollback, &sent);
        prop_assert_eq!(ours.len(), theirs.len());
        let n = ours.len();
        for (i, (ours, mut theirs)) in ours.iter().zip(theirs).enumerate() {
            // The oldest line xterm keeps may continue one it dropped (or
            // never kept, with no scrollback); vt100 keeps wraps on the
            // line above, which is gone. Nothing reads that flag: xterm
            // gathers a wrapped line from its first line kept.
            if let Some(first) = theirs.scrollback.first_mut().or(theirs.screen.first_mut()) {
                first.1 = false;
            }
            let theirs = &theirs;
            prop_assume!(!theirs.broken, "xterm lost track of its lines");
            let at = if i + 1 == n { "at the end".to_string() } else { format!("after resize {}", i + 1) };
            prop_assert_eq!(ours, theirs, "{} of {:?}", at, sent);
        }
    });
    let (resizes, departed) = (
        RESIZES.load(Ordering::Relaxed),
        DEPARTED.load(Ordering::Relaxed),
    );
    eprintln!(
        "fuzz::xterm: {resizes} resizes compared; {departed} cases where duet departs from xterm"
    );
    assert!(
        resizes > u64::from(super::cases()),
        "too few resizes were compared"
    );
}
