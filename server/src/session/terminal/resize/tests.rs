//! The resize on its own: the report of issue 27, and the cases xterm.js's
//! rules make interesting. (`fuzz::xterm` compares it with xterm.js itself.)

use crate::session::terminal::screen::Screen;

fn screen(cols: u16, rows: u16, output: &[u8]) -> Screen {
    let mut s = Screen::new(cols, rows, 100);
    s.process(output);
    s
}

fn rows(s: &mut Screen) -> Vec<String> {
    let (vt, _) = s.vt();
    let (_, cols) = vt.size();
    vt.rows(0, cols).map(|r| r.trim_end().to_string()).collect()
}

fn scrollback(s: &mut Screen) -> Vec<String> {
    let (vt, _) = s.vt();
    let (rows, cols) = vt.size();
    vt.set_scrollback(usize::MAX);
    let total = vt.scrollback();
    let mut out = Vec::new();
    for k in 0..total {
        vt.set_scrollback(total - k);
        out.extend(vt.rows(0, cols).take(1).map(|r| r.trim_end().to_string()));
    }
    vt.set_scrollback(0);
    let _ = rows;
    out
}

fn numbered(n: usize) -> Vec<u8> {
    let mut out = b"\x1b[H\x1b[2J".to_vec();
    for i in 1..=n {
        out.extend(format!("{i}\r\n").bytes());
    }
    out.extend(b"LAST-LINE-MARKER\r\n$ ");
    out
}

#[test]
fn a_shorter_screen_keeps_the_newest_rows_and_scrolls_the_top_away() {
    let mut s = screen(100, 40, &numbered(80));
    s.set_size(100, 20);
    let visible = rows(&mut s);
    assert_eq!(visible[0], "63");
    assert_eq!(visible[17], "80");
    assert_eq!(visible[18], "LAST-LINE-MARKER");
    assert_eq!(visible[19], "$");
    assert_eq!(s.vt().0.cursor_position(), (19, 2));
    assert_eq!(scrollback(&mut s).last().map(String::as_str), Some("62"));
    // Taller again: the rows come back from the scrollback.
    s.set_size(100, 40);
    let visible = rows(&mut s);
    assert_eq!(visible[0], "43");
    assert_eq!(visible[39], "$");
    assert_eq!(s.vt().0.cursor_position(), (39, 2));
}

#[test]
fn rows_below_the_cursor_go_first() {
    // A prompt at the top of a cleared screen: a shrink takes the empty
    // rows below it, and nothing scrolls away.
    let mut s = screen(20, 10, b"\x1b[H\x1b[2Jone\r\ntwo\r\n$ ");
    s.set_size(20, 4);
    assert_eq!(rows(&mut s), ["one", "two", "$", ""]);
    assert!(scrollback(&mut s).is_empty());
    // Taller with rows below the cursor: blank rows at the bottom.
    s.set_size(20, 6);
    assert_eq!(rows(&mut s), ["one", "two", "$", "", "", ""]);
}

#[test]
fn a_narrower_screen_rewraps_lines_and_a_wider_one_joins_them() {
    let mut s = screen(10, 4, b"abcdefghijklmno\r\nxyz\r\n$ ");
    assert_eq!(rows(&mut s), ["abcdefghij", "klmno", "xyz", "$"]);
    s.set_size(6, 4);
    let all: Vec<String> = scrollback(&mut s).into_iter().chain(rows(&mut s)).collect();
    // The cursor's line was the last: the new line pushes the top one up.
    assert_eq!(
        all,
        ["abcdef", "ghijkl", "mno", "xyz", "$"].map(String::from)
    );
    s.set_size(20, 4);
    assert_eq!(rows(&mut s), ["abcdefghijklmno", "xyz", "$", ""]);
    // The joined line is one wrapped line again, not two.
    assert!(!s.vt().0.row_wrapped(0));
}

#[test]
fn a_resize_keeps_the_pen_modes_title_and_saved_cursor() {
    let mut s = screen(
        20,
        6,
        b"\x1b]0;my title\x07\x1b[2;3H\x1b7\x1b[5;1H\x1b[1;31m\x1b[?2004h\x1b[?1h\x1b[?25l",
    );
    s.set_size(30, 8);
    let (vt, title) = s.vt();
    assert_eq!(title.as_deref(), Some("my title"));
    assert!(vt.bold());
    assert_eq!(vt.fgcolor(), vt100::Color::Idx(1));
    assert!(vt.bracketed_paste() && vt.application_cursor() && vt.hide_cursor());
    assert_eq!(vt.cursor_position(), (4, 0));
    s.process(b"\x1b8");
    assert_eq!(s.vt().0.cursor_position(), (1, 2));
}

#[test]
fn the_alternate_screen_and_the_normal_one_behind_it_both_resize() {
    let mut s = screen(20, 6, &numbered(10));
    s.process(b"\x1b[?1049h\x1b[Hfull screen\x1b[6;1Hbottom");
    s.set_size(20, 4);
    assert_eq!(rows(&mut s), ["", "", "", "bottom"]);
    // Back on the normal screen: the newest rows, the cursor restored.
    s.process(b"\x1b[?1049l");
    assert_eq!(rows(&mut s), ["9", "10", "LAST-LINE-MARKER", "$"]);
    assert_eq!(s.vt().0.cursor_position(), (3, 2));
}

#[test]
fn a_wide_character_moves_to_the_next_line_and_back() {
    let mut s = screen(6, 4, "ab\u{4e2d}\u{6587}x\r\n$ ".as_bytes());
    assert_eq!(rows(&mut s)[0], "ab\u{4e2d}\u{6587}");
    s.set_size(5, 4);
    // The second wide character no longer fits: the line ends one short.
    let all: Vec<String> = scrollback(&mut s).into_iter().chain(rows(&mut s)).collect();
    assert_eq!(all[0], "ab\u{4e2d}");
    assert_eq!(all[1], "\u{6587}x");
    s.set_size(8, 4);
    let all: Vec<String> = scrollback(&mut s).into_iter().chain(rows(&mut s)).collect();
    assert_eq!(all[0], "ab\u{4e2d}\u{6587}x");
}

/// A partly received escape sequence survives a resize: the new screen
/// takes the old one's place in the same parser.
#[test]
fn an_escape_sequence_cut_by_a_resize_goes_on_after_it() {
    let mut s = screen(20, 5, b"plain \x1b[3");
    s.set_size(30, 6);
    s.process(b"1mred");
    let (vt, _) = s.vt();
    assert_eq!(vt.contents(), "plain red");
    assert_eq!(
        vt.cell(0, 6).map(vt100::Cell::fgcolor),
        Some(vt100::Color::Idx(1))
    );
}

/// Not a test: what a resize costs with a full scrollback (`cargo test
/// --release -p duet-server --lib resize_cost -- --ignored --nocapture`).
/// CPU time of this thread (`/proc/thread-self/schedstat`), so a loaded
/// machine's waits are left out.
#[test]
#[ignore]
fn resize_cost() {
    fn cpu() -> std::time::Duration {
        let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
        let ns = stat.split_whitespace().next().and_then(|n| n.parse().ok());
        std::time::Duration::from_nanos(ns.unwrap_or(0))
    }
    let mut s = Screen::new(120, 40, 2000);
    for i in 0..2100 {
        let tail = "x".repeat(i % 170);
        s.process(
            format!(
                "\x1b[3{}mline {i}: the quick brown fox \x1b[1mjumps\x1b[m {tail}\r\n",
                i % 8
            )
            .as_bytes(),
        );
    }
    let sizes = [
        ("rows only", (120, 40), (120, 20)),
        ("columns too", (120, 40), (80, 30)),
    ];
    for (name, a, b) in sizes {
        let (t0, c0) = (std::time::Instant::now(), cpu());
        let n = 20;
        for _ in 0..n {
            s.set_size(b.0, b.1);
            s.set_size(a.0, a.1);
        }
        let (wall, used) = (t0.elapsed() / (2 * n), (cpu() - c0) / (2 * n));
        eprintln!("resize, {name}: {used:?} CPU each ({wall:?} wall)");
    }
    let (t0, c0) = (std::time::Instant::now(), cpu());
    let mut bytes = 0;
    for _ in 0..20 {
        bytes = s.render().len();
    }
    let (wall, used) = (t0.elapsed() / 20, (cpu() - c0) / 20);
    eprintln!("render: {used:?} CPU each ({wall:?} wall), {bytes} bytes");
}

/// `CSI 3 J` (what `clear` prints after erasing the screen) drops the
/// scrollback, as xterm does; vt100 ignores it, so a client that attached
/// later got back the lines the live ones had dropped.
#[test]
fn erasing_the_scrollback_drops_it_and_keeps_the_screen() {
    let mut s = screen(10, 3, b"\x1b]0;t\x07one\r\ntwo\r\nthree\r\nfour\r\nfive");
    assert_eq!(scrollback(&mut s), ["one", "two"]);
    s.process(b"\x1b[3J");
    assert!(scrollback(&mut s).is_empty());
    assert_eq!(rows(&mut s), ["three", "four", "five"]);
    let (vt, title) = s.vt();
    assert_eq!(
        (vt.cursor_position(), title.as_deref()),
        ((2, 4), Some("t"))
    );
    // A snapshot has no scrollback either.
    let mut replay = vt100::Parser::new(3, 10, 100);
    replay.process(&s.render());
    replay.screen_mut().set_scrollback(usize::MAX);
    assert_eq!(replay.screen().scrollback(), 0);
}

/// Erasing the screen (Ctrl+L in bash) ends the wrap of the newest
/// scrollback line into the first row, as in xterm; vt100 kept it, and a
/// wider screen joined that line with the prompt drawn there since.
#[test]
fn erasing_the_screen_ends_the_wrap_from_the_scrollback() {
    let mut s = screen(10, 3, b"0123456789abcdef\r\nx\r\n\x1b[H\x1b[2J$ \r\nls\r\n");
    assert_eq!(scrollback(&mut s), ["0123456789"]);
    s.set_size(20, 3);
    assert_eq!(rows(&mut s), ["$", "ls", ""]);
    assert_eq!(scrollback(&mut s), ["0123456789"]);
}
