//! The server-side screen of one session: a vt100 parser that a thread of
//! its own feeds from the output ring (`parser.rs`, off the forwarding
//! path), and the snapshots rendered from it for clients that attach or
//! fall behind.
//!
//! Rendering a snapshot (screen plus scrollback, ~120 KiB) is the costliest
//! thing here, so the last one is kept and handed to every client that needs
//! one while the ring still holds the stream from its offset: a hundred
//! lagging clients cost one render, not a hundred (measured: without it a
//! fan-out of 100 clients fell into a resync storm, where rendering took 60 %
//! of the CPU and made more clients lag).

use std::sync::Arc;

use bytes::Bytes;

use super::output::Output;
use super::resize;
use crate::sync::lock;

/// How far the stream may have moved past the cached snapshot for it still
/// to be handed out.
const REUSE_WITHIN: u64 = 256 << 10;

/// A full screen image and the stream offset it corresponds to.
pub(crate) struct Snapshot {
    pub bytes: Bytes,
    pub offset: u64,
    pub cols: u16,
    pub rows: u16,
}

/// The smallest screen the server keeps, whatever the PTY's size: vt100
/// 0.16 panics on a one-row screen when a line wraps (`Grid::col_wrap`
/// steps back a row above the top) and on a one-column screen when a wide
/// character comes (`Screen::text`), which would end the parser thread and
/// stall the session's output. A client may resize to 1x1 (found by
/// fuzzing; regression test below); the screen then keeps a row or column
/// the program never sees.
pub(crate) const MIN_ROWS: u16 = 2;
/// See [`MIN_ROWS`].
pub(crate) const MIN_COLS: u16 = 2;

pub(crate) struct Screen {
    /// Made by the first output, not with the session: vt100 allocates the
    /// whole grid up front (32 bytes a cell, ~94 KiB at 100x30), which an
    /// idle session need not hold (`duet-bench --many-sessions`).
    parser: Option<vt100::Parser<Callbacks>>,
    rows: u16,
    cols: u16,
    scrollback: usize,
    offset: u64,
    /// Times the parser failed and the screen was redrawn (see `feed`).
    pub(crate) recovered: u32,
}

/// What vt100 leaves to its caller: the window title, and erasing the
/// scrollback (`CSI 3 J`, see `resize::clear_scrollback`).
struct Callbacks {
    title: Option<String>,
    /// Lines of scrollback the screen keeps.
    scrollback: usize,
}

impl vt100::Callbacks for Callbacks {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title = Some(String::from_utf8_lossy(title).into_owned());
    }

    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        _: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        // ED 3 (or DECSED 3): the scrollback goes.
        if c == 'J' && matches!(i1, None | Some(b'?')) && params == [&[3][..]] {
            resize::clear_scrollback(screen, self.scrollback);
        }
    }
}

impl Callbacks {
    fn new(scrollback: usize) -> Self {
        Callbacks {
            title: None,
            scrollback,
        }
    }
}

impl Screen {
    pub(crate) fn new(cols: u16, rows: u16, scrollback: usize) -> Self {
        Screen {
            parser: None,
            rows: rows.max(MIN_ROWS),
            cols: cols.max(MIN_COLS),
            scrollback,
            offset: 0,
            recovered: 0,
        }
    }

    fn parser(&mut self) -> &mut vt100::Parser<Callbacks> {
        let (rows, cols, scrollback) = (self.rows, self.cols, self.scrollback);
        self.parser.get_or_insert_with(|| {
            vt100::Parser::new_with_callbacks(rows, cols, scrollback, Callbacks::new(scrollback))
        })
    }

    pub(crate) fn process(&mut self, bytes: &[u8]) {
        self.feed(bytes);
        self.offset += bytes.len() as u64;
    }

    /// Passes over `len` bytes of output unparsed, applying `pen` (the
    /// SGRs among them) instead; see `skim.rs` for when that is exact.
    pub(crate) fn skip(&mut self, len: u64, pen: &[u8]) {
        self.feed(pen);
        self.offset += len;
    }

    /// Parses `bytes`, and after each erase of the screen's first line ends
    /// the wrap of the scrollback into it, as xterm does (`resize/erase.rs`).
    fn feed(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some((end, erase)) = resize::next_erase(rest) {
            self.feed_part(&rest[..end]);
            let scrollback = self.scrollback;
            let screen = self.parser().screen_mut();
            if erase == resize::Erase::Always || screen.cursor_position() == (0, 0) {
                resize::unwrap_top(screen, scrollback);
            }
            rest = &rest[end..];
        }
        self.feed_part(rest);
    }

    /// Parses `bytes`, surviving vt100's panics. vt100 0.16 panics when a
    /// character is written over a wide one cut in half at the right edge
    /// (`Screen::text` clears a continuation cell that is gone; found by
    /// `fuzz::skim` when vt100's own resize cut such characters), which
    /// would end the parser thread and stall the session's output for
    /// good. The screen is then redrawn from its own snapshot on a fresh
    /// parser: what the broken write was drawing is lost, the rest of the
    /// screen is kept.
    fn feed_part(&mut self, bytes: &[u8]) {
        let parser = self.parser();
        let fed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parser.process(bytes)));
        if fed.is_err() {
            self.recover();
        }
    }

    fn recover(&mut self) {
        self.recovered += 1;
        tracing::warn!("the screen parser failed on this output; redrawing the screen");
        let (rows, cols, scrollback) = (self.rows, self.cols, self.scrollback);
        let mut fresh =
            vt100::Parser::new_with_callbacks(rows, cols, scrollback, Callbacks::new(scrollback));
        if let Some(mut old) = self.parser.take() {
            fresh.callbacks_mut().title = old.callbacks().title.clone();
            let drawn =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| render(old.screen_mut())));
            if let Ok(drawn) = drawn {
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    fresh.process(&drawn)
                }));
            }
        }
        self.parser = Some(fresh);
    }

    /// Rows and scrollback lines: what a skim needs to know.
    pub(super) fn extent(&self) -> (u16, usize) {
        (self.rows, self.scrollback)
    }

    /// The stream offset the screen has consumed.
    pub(super) fn offset(&self) -> u64 {
        self.offset
    }

    /// Resizes the screen as xterm.js resizes its buffer (`resize/`): the
    /// newest output stays, rows pushed off the top go to the scrollback,
    /// soft-wrapped lines rewrap. False if the size was the same already.
    pub(crate) fn set_size(&mut self, cols: u16, rows: u16) -> bool {
        let (rows, cols) = (rows.max(MIN_ROWS), cols.max(MIN_COLS));
        if (rows, cols) == (self.rows, self.cols) {
            // xterm in the browser ignores a resize to its own size too.
            return false;
        }
        self.rows = rows;
        self.cols = cols;
        if let Some(p) = &mut self.parser {
            resize::resize(p.screen_mut(), cols, rows, self.scrollback);
        }
        true
    }

    /// The screen as [`render`] draws it; a blank one before any output.
    pub(crate) fn render(&mut self) -> Vec<u8> {
        match &mut self.parser {
            Some(p) => render(p.screen_mut()),
            None => render(vt100::Parser::new(self.rows, self.cols, 0).screen_mut()),
        }
    }

    /// The vt100 screen and the title, made if need be (tests compare
    /// screens).
    #[cfg(test)]
    pub(crate) fn vt(&mut self) -> (&mut vt100::Screen, Option<String>) {
        let parser = self.parser();
        let title = parser.callbacks().title.clone();
        (parser.screen_mut(), title)
    }

    /// Whether the grid exists (tests: it is made by output, not before).
    #[cfg(test)]
    fn allocated(&self) -> bool {
        self.parser.is_some()
    }
}

impl Output {
    /// The screen (with scrollback) as bytes that redraw it on a reset
    /// terminal, and the stream offset to continue from: the last one
    /// rendered while the ring can still continue it, else a fresh one.
    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        let start = lock(&self.ring).start;
        let mut screen = lock(&self.screen);
        let mut cached = lock(&self.cached);
        // Within the ring, and not so far behind that a client would replay
        // more than it saves: 256 KiB is ~25 ms of a 10 MB/s flood.
        let reusable =
            |c: &&Arc<Snapshot>| c.offset >= start && screen.offset - c.offset <= REUSE_WITHIN;
        if let Some(snap) = cached.as_ref().filter(reusable) {
            return snap.clone();
        }
        let snap = Arc::new(Snapshot {
            bytes: Bytes::from(screen.render()),
            offset: screen.offset,
            cols: screen.cols,
            rows: screen.rows,
        });
        *cached = Some(snap.clone());
        snap
    }

    /// The visible screen as plain text.
    pub(crate) fn screen_text(&self) -> String {
        let screen = lock(&self.screen);
        let text = screen.parser.as_ref().map(|p| p.screen().contents());
        text.unwrap_or_default()
    }

    /// The window title the program set, if any.
    pub(crate) fn title(&self) -> Option<String> {
        let title = lock(&self.screen)
            .parser
            .as_ref()?
            .callbacks()
            .title
            .clone()?;
        Some(clean_title(&title)).filter(|t| !t.is_empty())
    }
}

/// A window title without the status glyphs agents put in front of it
/// (Qwen Code 0.24: `◐︎ ` while it works, `✳︎ ` while it waits for an
/// approval; braille spinners elsewhere) and the padding after it (Qwen
/// pads titles to 80 columns).
pub(crate) fn clean_title(title: &str) -> String {
    let is_glyph = |c: char| {
        matches!(c, '\u{2800}'..='\u{28FF}' // braille spinners
            | '\u{25D0}'..='\u{25D3}'       // ◐ ◑ ◒ ◓
            | '\u{2722}'..='\u{2734}'       // ✢ ✳ ✶ …
            | '\u{273B}' | '\u{273D}' | '\u{00B7}' | '\u{2219}' | '*'
            | '\u{FE0E}' | '\u{FE0F}') // text / emoji presentation
    };
    title
        .trim_start_matches(|c: char| is_glyph(c) || c.is_whitespace())
        .trim_end()
        .to_string()
}

/// Draws `screen` from a full reset: the lines above the screen first, so
/// they land in the client's scrollback, then the screen, each line wrapped
/// into the next where it was (`resize/draw.rs`); the cursor, pen and modes.
/// An alternate screen is drawn over the normal one it hides.
pub(crate) fn render(screen: &mut vt100::Screen) -> Vec<u8> {
    let cols = usize::from(screen.size().1);
    let mut out = b"\x1bc".to_vec();
    if screen.alternate_screen() {
        resize::draw_behind_alternate(screen, &mut out);
    }
    let how = resize::Reading {
        scrollback: true,
        cells: false,
    };
    let lines = resize::read_lines(screen, how);
    resize::draw_lines(&mut out, &lines, cols, screen);
    out.extend_from_slice(&screen.cursor_state_formatted());
    out.extend_from_slice(&screen.attributes_formatted());
    out.extend_from_slice(&screen.input_mode_formatted());
    out
}

#[cfg(test)]
mod tests {
    use super::super::output::testing::{small, start_parser};
    use super::*;

    #[test]
    fn lagging_clients_share_one_snapshot_until_the_screen_resizes() {
        let out = Arc::new(Output::new(20, 5, small()));
        let parser = start_parser(&out);
        out.push(Bytes::from_static(b"hello"));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(out.settle());
        let a = out.snapshot();
        let b = out.snapshot();
        assert!(Arc::ptr_eq(&a, &b), "one render for both");
        out.resize(30, 6);
        out.push(Bytes::from_static(b" world"));
        rt.block_on(out.settle());
        let c = out.snapshot();
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!((c.cols, c.rows), (30, 6));
        out.close();
        parser.join().unwrap();
    }

    #[test]
    fn snapshot_redraws_screen_and_scrollback() {
        let out = Arc::new(Output::new(20, 5, small()));
        let parser = start_parser(&out);
        for i in 0..12 {
            out.push(Bytes::from(format!("line {i}\r\n")));
        }
        out.push(Bytes::from_static(b"\x1b[1mbold\x1b[m tail"));
        out.close();
        parser.join().unwrap();
        let snap = out.snapshot();
        let mut replay = vt100::Parser::new(5, 20, 100);
        replay.process(&snap.bytes);
        assert_eq!(replay.screen().contents(), out.screen_text());
        assert!(replay.screen().contents().ends_with("bold tail"));
        replay.screen_mut().set_scrollback(usize::MAX);
        assert_eq!(replay.screen().scrollback(), 8);
        assert!(replay.screen().contents().starts_with("line 0"));
    }

    #[test]
    fn the_grid_is_made_by_the_first_output_not_before() {
        let out = Arc::new(Output::new(20, 5, small()));
        let parser = start_parser(&out);
        // An idle session: a client attaches (snapshot), asks for the text.
        let blank = out.snapshot();
        assert_eq!(
            out.screen_text(),
            vt100::Parser::new(5, 20, 0).screen().contents()
        );
        assert_eq!(out.title(), None);
        assert!(!lock(&out.screen).allocated(), "no grid before output");
        let mut replay = vt100::Parser::new(5, 20, 100);
        replay.process(&blank.bytes);
        assert_eq!(replay.screen().contents(), "");
        // A resize before any output is kept for the grid made later.
        out.resize(30, 6);
        out.push(Bytes::from_static(b"hi"));
        out.close();
        parser.join().unwrap();
        assert!(lock(&out.screen).allocated());
        assert_eq!(out.screen_text(), "hi");
        let snap = out.snapshot();
        assert_eq!((snap.cols, snap.rows), (30, 6));
    }

    #[test]
    fn titles_lose_spinner_glyphs_and_padding() {
        assert_eq!(
            clean_title("\u{25D0}\u{FE0E} Qwen - work        "),
            "Qwen - work"
        );
        assert_eq!(clean_title("\u{2733}\u{FE0E} Qwen - work"), "Qwen - work");
        assert_eq!(clean_title("\u{280B} Working"), "Working");
        assert_eq!(clean_title("Plain title"), "Plain title");
        assert_eq!(clean_title("   "), "");
    }
}
