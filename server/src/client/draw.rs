//! Drawing the server's screen snapshots (the binary frame after each
//! `resync`) on a local terminal that is not the fresh xterm.js they are
//! made for.
//!
//! A snapshot starts with a full reset (RIS), which in many terminals also
//! wipes the user's scrollback, and then replays the session's scrollback
//! before its screen. So for `duet attach` the first snapshot goes in
//! after the user's screen was scrolled up into the scrollback (nothing of
//! theirs is lost), with a reset that keeps the scrollback; the session's
//! history then lands in the local scrollback. For `duet run` the program
//! has only just started: what it drew so far is written below the shell's
//! prompt, line by line, as if it had been run directly, and its output
//! goes on from there. Every later snapshot (after a resize, a reconnect,
//! a client that fell behind) redraws the screen alone, so the history is
//! not written into the scrollback again each time.

use super::size::Size;
use super::tty::{LEAVE_ALTERNATE, RESTORE_MODES};

/// A reset that keeps the screen and the scrollback: the modes a program
/// may have set, DECSTR (soft reset: margins, origin, charsets,
/// attributes), and line wrapping on (DECSTR may turn it off), as after
/// the RIS the snapshot was made for. Leaves the cursor at the top left.
fn soft_reset(out: &mut Vec<u8>) {
    out.extend_from_slice(LEAVE_ALTERNATE);
    out.extend_from_slice(RESTORE_MODES);
    out.extend_from_slice(b"\x1b[!p\x1b[?7h\x1b[r\x1b[H");
}

/// How far this client has taken the local screen.
#[derive(Debug, Default)]
pub(crate) struct Drawer {
    /// The first snapshot goes below the prompt (`duet run`).
    inline: bool,
    /// The user's screen has been scrolled away: the session owns it.
    owns_screen: bool,
    /// The session's history is in the local scrollback (drawn from the
    /// first snapshot, or written as it came).
    history_shown: bool,
}

impl Drawer {
    /// A drawer for a session started here (`inline`) or attached to.
    pub(crate) fn new(inline: bool) -> Self {
        Drawer {
            inline,
            ..Drawer::default()
        }
    }

    /// The bytes that draw `snapshot`, a screen of `size`, on a local
    /// terminal of `local_rows` rows, and whether the session's screen is
    /// the alternate one.
    pub(crate) fn snapshot(&mut self, snapshot: &[u8], size: Size, local_rows: u16) -> Drawn {
        let (cols, rows) = size;
        let mut screen = vt100::Parser::new(rows.max(2), cols.max(2), 0);
        screen.process(snapshot);
        let s = screen.screen();
        let alt = s.alternate_screen();
        if self.inline && !self.history_shown && !alt {
            self.history_shown = true;
            return Drawn {
                bytes: below_the_prompt(s),
                alt,
            };
        }
        let mut out = Vec::new();
        soft_reset(&mut out);
        if !self.owns_screen {
            self.owns_screen = true;
            // Down to the last row, then as many new lines as the window is
            // high: everything on it scrolls up into the scrollback.
            let local_rows = local_rows.max(1);
            out.extend_from_slice(format!("\x1b[{local_rows};1H").as_bytes());
            out.extend(std::iter::repeat_n(b'\n', usize::from(local_rows)));
            out.extend_from_slice(b"\x1b[H");
        }
        if !self.history_shown {
            self.history_shown = true;
            out.extend_from_slice(snapshot.strip_prefix(b"\x1bc").unwrap_or(snapshot));
            return Drawn { bytes: out, alt };
        }
        if alt {
            out.extend_from_slice(b"\x1b[?1049h");
        }
        out.extend_from_slice(&s.state_formatted());
        Drawn { bytes: out, alt }
    }
}

/// The screen's rows down to the cursor (or the last that is not blank),
/// written from where the cursor is, one line after another; the cursor
/// then goes where the program had it, relative to them, so the program's
/// next moves (up a few lines, clear, redraw) land where it means.
fn below_the_prompt(s: &vt100::Screen) -> Vec<u8> {
    let (_, cols) = s.size();
    let (row, col) = s.cursor_position();
    let last = s
        .rows(0, cols)
        .enumerate()
        .filter(|(_, text)| !text.is_empty())
        .map(|(i, _)| i)
        .max()
        .unwrap_or(0)
        .max(usize::from(row));
    let mut out = Vec::new();
    for (i, drawn) in s.rows_formatted(0, cols).take(last + 1).enumerate() {
        if i > 0 {
            out.extend_from_slice(b"\x1b[m\r\n");
        }
        out.extend_from_slice(&drawn);
    }
    out.extend_from_slice(b"\x1b[m\r");
    let up = last - usize::from(row);
    if up > 0 {
        out.extend_from_slice(format!("\x1b[{up}A").as_bytes());
    }
    if col > 0 {
        out.extend_from_slice(format!("\x1b[{col}C").as_bytes());
    }
    out.extend_from_slice(&s.attributes_formatted());
    out.extend_from_slice(&s.input_mode_formatted());
    if s.hide_cursor() {
        out.extend_from_slice(b"\x1b[?25l");
    }
    out
}

/// A snapshot, ready for the local terminal.
pub(crate) struct Drawn {
    pub(crate) bytes: Vec<u8>,
    /// The session's screen is the alternate one.
    pub(crate) alt: bool,
}

/// Whether output that ends with `tail` leaves the cursor at the start of
/// a line (its last character a line feed, whatever escapes follow): then
/// a message after it needs no new line of its own.
pub(crate) fn ends_at_line_start(tail: &[u8]) -> bool {
    let mut end = tail.len();
    // Strip trailing CSI sequences (ESC [ params final) and lone escapes.
    while let Some(esc) = tail[..end].iter().rposition(|b| *b == 0x1b) {
        let seq = &tail[esc..end];
        let is_csi = seq.len() >= 3
            && seq[1] == b'['
            && seq[seq.len() - 1].is_ascii_alphabetic()
            && seq[2..seq.len() - 1]
                .iter()
                .all(|b| b.is_ascii_digit() || b";?<>=!".contains(b));
        if !is_csi && seq.len() > 2 {
            break;
        }
        end = esc;
    }
    tail[..end].ends_with(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scrollback's lines, then the screen's, as text.
    fn every_line(term: &mut vt100::Parser) -> Vec<String> {
        term.screen_mut().set_scrollback(usize::MAX);
        let total = term.screen().scrollback();
        let mut lines = Vec::new();
        for up in (1..=total).rev() {
            term.screen_mut().set_scrollback(up);
            lines.push(
                term.screen()
                    .contents()
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string(),
            );
        }
        term.screen_mut().set_scrollback(0);
        let rows = term.screen().size().0 as usize;
        let screen = term.screen().contents();
        let mut visible: Vec<String> = screen.lines().map(str::to_string).collect();
        visible.resize(rows, String::new());
        lines.extend(visible);
        lines
    }

    fn snapshot_of(output: &[u8], size: Size) -> Vec<u8> {
        let mut p = vt100::Parser::new(size.1, size.0, 100);
        p.process(output);
        crate::session::terminal::screen::render(p.screen_mut())
    }

    #[test]
    fn the_first_snapshot_brings_the_history_and_later_ones_the_screen_alone() {
        let mut d = Drawer::new(false);
        let lines: Vec<u8> = (0..12)
            .flat_map(|i| format!("l{i}\r\n").into_bytes())
            .collect();
        let snap = snapshot_of(&lines, (20, 5));
        let first = d.snapshot(&snap, (20, 5), 5);
        // Drawn without a RIS, which may wipe the user's scrollback.
        assert!(!first.bytes.windows(2).any(|w| w == b"\x1bc"));
        let mut term = vt100::Parser::new(5, 20, 100);
        term.process(b"$ duet attach\r\n");
        term.process(&first.bytes);
        assert_eq!(term.screen().contents(), "l8\nl9\nl10\nl11");
        let all = every_line(&mut term);
        assert_eq!(all[0], "$ duet attach");
        let l0 = all.iter().position(|l| l == "l0").expect("the history");
        assert_eq!(
            all[l0..l0 + 12].join(" "),
            "l0 l1 l2 l3 l4 l5 l6 l7 l8 l9 l10 l11"
        );
        term.screen_mut().set_scrollback(usize::MAX);
        let history = term.screen().scrollback();
        term.screen_mut().set_scrollback(0);
        // The next one redraws the screen alone: the history is not
        // written into the scrollback again.
        let again = d.snapshot(&snap, (20, 5), 5);
        term.process(&again.bytes);
        assert_eq!(term.screen().contents(), "l8\nl9\nl10\nl11");
        term.screen_mut().set_scrollback(usize::MAX);
        assert_eq!(term.screen().scrollback(), history);
    }

    #[test]
    fn a_session_started_here_goes_on_below_the_prompt() {
        let mut d = Drawer::new(true);
        let mut term = vt100::Parser::new(6, 20, 100);
        term.process(b"old\r\n$ duet run\r\n");
        // What the program drew before the first snapshot: two lines, the
        // cursor after "two".
        let drawn = b"one\r\n\x1b[1mtwo\x1b[m";
        let first = d.snapshot(&snapshot_of(drawn, (20, 6)), (20, 6), 6);
        term.process(&first.bytes);
        // Then the program goes on: up a line, rewrite it, a new line.
        let more = b"\r\x1b[1A\x1b[2KONE\r\n\x1b[2Ktwo!\r\nthree";
        term.process(more);
        assert_eq!(
            term.screen().contents(),
            "old\n$ duet run\nONE\ntwo!\nthree"
        );
        // A later snapshot (a resize) scrolls it all up and redraws the
        // program's screen.
        let mut all = drawn.to_vec();
        all.extend_from_slice(more);
        let later = d.snapshot(&snapshot_of(&all, (20, 6)), (20, 6), 6);
        term.process(&later.bytes);
        assert_eq!(term.screen().contents(), "ONE\ntwo!\nthree");
        assert_eq!(
            every_line(&mut term)[..5],
            ["old", "$ duet run", "ONE", "two!", "three"]
        );
    }

    #[test]
    fn the_alternate_screen_is_redrawn_as_such() {
        // Full-screen from the start: drawn as such even for `duet run`.
        let mut d = Drawer::new(true);
        let snap = snapshot_of(b"shell\r\n\x1b[?1049h\x1b[2;3Hfull", (20, 5));
        let first = d.snapshot(&snap, (20, 5), 5);
        assert!(first.alt);
        let later = d.snapshot(&snap, (20, 5), 5);
        let mut term = vt100::Parser::new(5, 20, 0);
        term.process(&later.bytes);
        assert!(term.screen().alternate_screen());
        assert_eq!(term.screen().contents().trim(), "full");
    }

    #[test]
    fn line_starts() {
        assert!(ends_at_line_start(b"bye\r\n"));
        assert!(ends_at_line_start(b"bye\r\n\x1b[?25h\x1b[m"));
        assert!(!ends_at_line_start(b"$ "));
        assert!(!ends_at_line_start(b"\r\nprompt\x1b[0m"));
        assert!(!ends_at_line_start(b""));
    }
}
