//! The snapshot: any terminal byte stream, drawn on the server's vt100
//! screen and rendered, replays on a fresh parser of the same size to the
//! same screen: the same text, scrollback (wrapped lines still wrapped),
//! attributes, cursor and modes, and behind an alternate screen the same
//! normal one.

use proptest::prelude::*;

use crate::session::terminal::screen::{render, MIN_COLS, MIN_ROWS};

const CONTROLS: &[&str] = &[
    "\r\n", "\n", "\r", "\x08", "\t", "\x07", "\x1b7", "\x1b8", "\x1bM", "\x1bD", "\x1bE", "\x1b=",
    "\x1b>",
];

/// Pieces of terminal output: text (wide and combining characters too),
/// line ends, and the escape sequences TUIs use, with random parameters.
pub(super) fn piece() -> impl Strategy<Value = Vec<u8>> {
    let n = || 0u16..30;
    prop_oneof![
        4 => "[ -~]{1,12}".prop_map(String::into_bytes),
        1 => "[é€中😀\u{301}\u{200b}]{1,4}".prop_map(String::into_bytes),
        2 => prop::sample::select(CONTROLS).prop_map(|c| c.as_bytes().to_vec()),
        // Cursor motion and erasing.
        2 => (n(), n(), prop::sample::select(&["H", "f", "A", "B", "C", "D", "E", "F", "G", "d", "J", "K", "X", "@", "P", "L", "M", "S", "T", "r"][..]))
            .prop_map(|(a, b, f)| format!("\x1b[{a};{b}{f}").into_bytes()),
        1 => (n(), prop::sample::select(&["J", "K", "A", "H", "r"][..])).prop_map(|(a, f)| format!("\x1b[{a}{f}").into_bytes()),
        // Attributes and colours.
        2 => prop::collection::vec(prop_oneof![0u16..110, Just(38), Just(48)], 1..5).prop_map(|ps| {
            let ps: Vec<String> = ps.iter().map(u16::to_string).collect();
            format!("\x1b[{}m", ps.join(";")).into_bytes()
        }),
        1 => (prop::sample::select(&["38;5", "48;5", "38;2", "48;2"][..]), any::<u8>(), any::<u8>(), any::<u8>())
            .prop_map(|(k, r, g, b)| if k.ends_with('5') { format!("\x1b[{k};{r}m") } else { format!("\x1b[{k};{r};{g};{b}m") }.into_bytes()),
        // Private modes: alternate screen, cursor, wrap, mouse, paste, origin.
        1 => (prop::sample::select(&[1u16, 6, 7, 9, 25, 47, 1000, 1002, 1003, 1005, 1006, 1047, 1049, 2004][..]), any::<bool>())
            .prop_map(|(m, on)| format!("\x1b[?{m}{}", if on { 'h' } else { 'l' }).into_bytes()),
        1 => "[a-z ]{0,8}".prop_map(|t| format!("\x1b]0;{t}\x07").into_bytes()),
        // Anything at all.
        1 => prop::collection::vec(any::<u8>(), 1..8),
    ]
}

/// Everything a client sees of a screen: the text (lines that wrap are
/// joined in it), the formatted screen, cursor, modes and the scrollback's
/// rows (with their wraps: `rows` joins no lines, so a wrap is kept as a
/// `\u{2028}` after the row).
pub(super) type State = (String, Vec<u8>, (u16, u16), bool, bool, Vec<String>);

pub(super) fn state(screen: &mut vt100::Screen) -> State {
    let (rows, cols) = screen.size();
    let visible = (
        screen.contents(),
        screen.contents_formatted(),
        screen.cursor_position(),
        screen.hide_cursor(),
        screen.alternate_screen(),
    );
    screen.set_scrollback(usize::MAX);
    let total = screen.scrollback();
    let mut back = Vec::new();
    let mut line = 0;
    while line < total {
        screen.set_scrollback(total - line);
        let n = (rows as usize).min(total - line);
        for (i, row) in screen.rows(0, cols).take(n).enumerate() {
            let wraps = screen.row_wrapped(i as u16);
            back.push(if wraps { format!("{row}\u{2028}") } else { row });
        }
        line += n;
    }
    screen.set_scrollback(0);
    (visible.0, visible.1, visible.2, visible.3, visible.4, back)
}

#[test]
fn a_snapshot_replays_to_the_same_screen() {
    let stream = prop::collection::vec(piece(), 0..60);
    proptest!(super::config(), |(cols in 1u16..100, rows in 1u16..30, scrollback in 0usize..40, stream in stream)| {
        // As duet's screen is made (see `MIN_ROWS`).
        let (rows, cols) = (rows.max(MIN_ROWS), cols.max(MIN_COLS));
        let mut server = vt100::Parser::new(rows, cols, scrollback);
        for p in &stream {
            server.process(p);
        }
        let bytes = render(server.screen_mut());
        let mut client = vt100::Parser::new(rows, cols, scrollback);
        client.process(&bytes);
        let want = state(server.screen_mut());
        let got = state(client.screen_mut());
        prop_assert_eq!(&got.0, &want.0, "text differs");
        prop_assert_eq!(got.2, want.2, "cursor differs");
        prop_assert_eq!(got.4, want.4, "alternate screen differs");
        prop_assert_eq!(got.3, want.3, "cursor visibility differs");
        prop_assert_eq!(&got.1, &want.1, "attributes differ");
        prop_assert_eq!(&got.5, &want.5, "scrollback differs");
        if want.4 {
            // The normal screen behind an alternate one, which the program
            // comes back to: the snapshot draws it too.
            let (want, got) = (behind(server.screen()), behind(client.screen()));
            prop_assert_eq!(&got.0, &want.0, "text behind the alternate screen differs");
            prop_assert_eq!(&got.1, &want.1, "attributes behind the alternate screen differ");
            prop_assert_eq!(&got.5, &want.5, "scrollback behind the alternate screen differs");
        }
    });
}

/// The state of the normal screen kept behind `screen`'s alternate one.
fn behind(screen: &vt100::Screen) -> State {
    let mut p = vt100::Parser::new(2, 2, 0);
    *p.screen_mut() = screen.clone();
    p.process(b"\x1b[?47l");
    state(p.screen_mut())
}
