//! Skimming a flood: the screen parser skips output that scrolls out of the
//! screen and the scrollback before anyone could see it, and the screen it
//! keeps is still exactly the one a full parse gives.
//!
//! vt100 parses ~85-100 MB/s on this machine (`duet-bench --throughput`
//! times it alone), while a PTY delivers 140-200 MB/s: parsing every byte
//! made the server screen, not the forwarding path, the bound on a flood
//! (`cat big.log`). Most of such a flood lands in cells that are scrolled
//! away again a few thousand lines later.
//!
//! Why skipping is exact. A *stretch* of output that holds only text,
//! C0 controls, SGR and the row-local CSIs (`K X C D G @ P`) changes
//! nothing but the rows the cursor visits, the cursor and the pen (SGR).
//! With no scroll region, every line feed moves the cursor down one row or,
//! at the bottom, scrolls one row into the scrollback. So after `2 × rows +
//! scrollback + 2` line feeds the cursor has reached the bottom, and every
//! row on screen and in the scrollback was made during those feeds. Two
//! parsers that start such a stretch in different states therefore agree
//! once those feeds are behind them, provided the stream they parse from
//! there is the same and their pens, cursor columns and modes agree when
//! it starts. The parser skips from a line start `s` to a later line start
//! `c` (both just after `\r\n`, so both parsers are at column 0), replays
//! the SGRs it skipped so the pens agree, and parses `[c, e)` — the
//! feeds that make the screens agree — under one hold of the screen lock,
//! so no snapshot ever sees the screen in between.
//!
//! The scanner follows every byte with its own `vte` parser (the one vt100
//! uses, ~10× faster than vt100 with nothing to draw), so it knows where
//! escape sequences end; a property test (`fuzz/skim.rs`) checks skimmed
//! screens against fully parsed ones.

use std::collections::VecDeque;
use std::io::Write as _;

use super::parser::Run;

/// One stretch to skip: the parser jumps from `from` to `to`, applies
/// `pen`, and parses `[to, settled)` before anyone may look at the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Skip {
    pub(super) from: u64,
    pub(super) to: u64,
    pub(super) settled: u64,
    /// The SGR sequences that bring the pen at `from` to the pen at `to`.
    pub(super) pen: Vec<u8>,
}

/// When skimming pays.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SkimLimits {
    /// Runs shorter than this are parsed whole.
    pub(crate) min_run: u64,
    /// A skip shorter than this is not worth a long hold of the screen lock.
    pub(crate) min_skip: u64,
    /// The SGR log of a stretch is compacted past this; a stretch that
    /// sets the pen this often without a reset ends, and a new one starts.
    pub(crate) max_pen_log: usize,
}

impl Default for SkimLimits {
    fn default() -> Self {
        Self {
            // About six times the bytes a 2,000-line scrollback needs parsed
            // after a skip (~2,100 lines of ~80 bytes).
            min_run: 1 << 20,
            min_skip: 256 << 10,
            max_pen_log: 64 << 10,
        }
    }
}

/// A place just after `\r\n` in the ground state.
#[derive(Debug, Clone, Copy)]
struct LineStart {
    at: u64,
    /// Line feeds in the stretch before it.
    feeds: u64,
    /// Length of the stretch's SGR log there...
    log_len: usize,
    /// ...and where the last SGR that reset the pen starts in it.
    reset_at: Option<usize>,
}

/// A stretch of simple output being scanned.
#[derive(Default)]
struct Stretch {
    /// Its first line start: where a skip can begin.
    first: Option<LineStart>,
    feeds: u64,
    /// Line starts not yet followed by enough feeds, oldest first.
    waiting: VecDeque<LineStart>,
    /// The newest line start followed by enough feeds, and where they end.
    best: Option<(LineStart, u64)>,
    /// Every SGR of the stretch, re-encoded.
    log: Vec<u8>,
    reset_at: Option<usize>,
}

impl Stretch {
    /// Where the pen replay of a skip to `to` starts in the log: the last
    /// reset before `to`, or the stretch's first line start.
    fn replay_from(&self, to: &LineStart) -> usize {
        let first = self.first.map_or(0, |f| f.log_len);
        match to.reset_at {
            Some(r) if r >= first => r,
            _ => first,
        }
    }

    /// Drops the part of the SGR log no skip can need any more: what comes
    /// before the replay of the oldest line start that may still become
    /// the skip's end. False if that frees nothing (the pen was never
    /// reset): the stretch must end.
    fn compact(&mut self) -> bool {
        let oldest = self.best.map(|(b, _)| b).or(self.waiting.front().copied());
        let drop = match oldest {
            Some(o) => self.replay_from(&o),
            // No line start after the first yet: only the first's own
            // position matters.
            None => self
                .first
                .map_or(self.log.len(), |f| f.log_len.min(self.log.len())),
        };
        if drop < self.log.len() / 2 {
            return false;
        }
        self.log.drain(..drop);
        let shift = |l: &mut LineStart| {
            l.log_len = l.log_len.saturating_sub(drop);
            l.reset_at = l.reset_at.and_then(|r| r.checked_sub(drop));
        };
        self.first.iter_mut().for_each(shift);
        self.waiting.iter_mut().for_each(shift);
        self.best.iter_mut().for_each(|(b, _)| shift(b));
        self.reset_at = self.reset_at.and_then(|r| r.checked_sub(drop));
        true
    }
}

/// What the scanner's `vte` callbacks see.
#[derive(Default)]
struct Tracker {
    /// Outside any escape sequence, as far as the callbacks tell.
    ground: bool,
    /// The last callback was a carriage return in the ground state.
    after_cr: bool,
    /// Stream offset just past the piece being parsed (pieces end at every
    /// `\n` and every ESC, so a line feed is always a piece's last byte).
    piece_end: u64,
    /// The newest line start seen (planning or not): a run that begins
    /// there can skip from its first byte.
    last_line_start: Option<u64>,
    /// Text without escapes is being parsed (`Skim::text`): it accounts
    /// for its line feeds from the bytes, the callbacks do nothing.
    bulk: bool,
    /// A scroll region may be set (on the main or the alternate screen).
    region: [bool; 2],
    alternate: bool,
    /// Rows of the screen, for DECSTBM and the feeds a skip needs.
    rows: u16,
    /// Line feeds that make two screens agree (see the module docs).
    needed: u64,
    min_skip: u64,
    max_pen_log: usize,
    /// Planning a skip in this run (else only following).
    planning: bool,
    stretch: Stretch,
    skips: Vec<Skip>,
}

impl Tracker {
    /// Output that is not simple ends the stretch.
    fn complex(&mut self) {
        if self.planning {
            self.close_stretch();
        }
    }

    fn close_stretch(&mut self) {
        let stretch = std::mem::take(&mut self.stretch);
        let (Some(first), Some((to, settled))) = (stretch.first, stretch.best) else {
            return;
        };
        if to.at < first.at + self.min_skip {
            return;
        }
        // The pen at `to`: the SGRs since the last reset before it, or all
        // of them since `first` if none reset it there.
        let since = stretch.replay_from(&to);
        self.skips.push(Skip {
            from: first.at,
            to: to.at,
            settled,
            pen: stretch.log[since..to.log_len].to_vec(),
        });
    }

    fn line_start(&mut self) {
        let s = &mut self.stretch;
        let here = LineStart {
            at: self.piece_end,
            feeds: s.feeds,
            log_len: s.log.len(),
            reset_at: s.reset_at,
        };
        if s.first.is_none() {
            if !self.region[usize::from(self.alternate)] {
                s.first = Some(here);
            }
        } else {
            s.waiting.push_back(here);
        }
    }

    fn line_feed(&mut self) {
        let s = &mut self.stretch;
        s.feeds += 1;
        while let Some(w) = s.waiting.front() {
            if w.feeds + self.needed > s.feeds {
                break;
            }
            s.best = Some((*w, self.piece_end));
            s.waiting.pop_front();
        }
    }

    fn sgr(&mut self, params: &vte::Params) {
        let s = &mut self.stretch;
        let resets = params.iter().next().is_none_or(|p| p.first() == Some(&0));
        if resets {
            s.reset_at = Some(s.log.len());
        }
        s.log.extend_from_slice(b"\x1b[");
        for (i, param) in params.iter().enumerate() {
            if i > 0 {
                s.log.push(b';');
            }
            for (j, sub) in param.iter().enumerate() {
                if j > 0 {
                    s.log.push(b':');
                }
                let _ = write!(s.log, "{sub}");
            }
        }
        s.log.push(b'm');
        if s.log.len() > self.max_pen_log && !s.compact() {
            self.close_stretch();
        }
    }

    fn modes(&mut self, params: &vte::Params, set: bool) {
        for p in params.iter() {
            if matches!(p.first(), Some(47 | 1049)) {
                self.alternate = set;
            }
        }
    }
}

impl vte::Perform for Tracker {
    fn print(&mut self, _c: char) {
        if !self.bulk {
            self.ground = true;
            self.after_cr = false;
        }
    }

    fn execute(&mut self, byte: u8) {
        if self.bulk {
            return;
        }
        if byte == b'\n' {
            let starts_line = self.ground && self.after_cr;
            if starts_line {
                self.last_line_start = Some(self.piece_end);
            }
            if self.planning {
                self.line_feed();
                if starts_line {
                    self.line_start();
                }
            }
        }
        self.after_cr = byte == b'\r' && self.ground;
    }

    fn csi_dispatch(&mut self, params: &vte::Params, intermediates: &[u8], _: bool, c: char) {
        self.ground = true;
        self.after_cr = false;
        match (intermediates, c) {
            ([], 'm') if self.planning => self.sgr(params),
            // Row-local: they change the cursor's row only.
            ([], 'm' | 'K' | 'X' | 'C' | 'D' | 'G' | '@' | 'P') => {}
            ([], 'r') => {
                let mut it = params.iter().map(|p| p.first().copied().unwrap_or(0));
                let (top, bottom) = (it.next().unwrap_or(0), it.next().unwrap_or(0));
                let whole = top <= 1 && (bottom == 0 || bottom >= self.rows);
                self.region[usize::from(self.alternate)] = !whole;
                self.complex();
            }
            ([b'?'], 'h') => {
                self.modes(params, true);
                self.complex();
            }
            ([b'?'], 'l') => {
                self.modes(params, false);
                self.complex();
            }
            _ => self.complex(),
        }
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], _: bool, byte: u8) {
        self.ground = true;
        self.after_cr = false;
        if intermediates.is_empty() && byte == b'c' {
            // RIS: a new screen, no region, main screen.
            self.region = [false; 2];
            self.alternate = false;
        }
        self.complex();
    }

    fn osc_dispatch(&mut self, _: &[&[u8]], _: bool) {
        self.ground = true;
        self.after_cr = false;
        self.complex();
    }

    fn hook(&mut self, _: &vte::Params, _: &[u8], _: bool, _: char) {
        self.complex();
    }

    fn unhook(&mut self) {
        self.ground = true;
        self.after_cr = false;
        self.complex();
    }
}

/// The scanner: follows every byte the screen is given (or skips), so it
/// knows the parser state at any offset.
pub(crate) struct Skim {
    vte: vte::Parser,
    tracker: Tracker,
    limits: SkimLimits,
}

impl Skim {
    /// `text` (no ESC in it) at `start`, in the ground state: `vte` takes
    /// it whole (it keeps a UTF-8 sequence cut by a chunk's end), and the
    /// line feeds and line starts are found in the bytes. A `yes` flood is
    /// a line every 2 bytes; a callback per line cost more than vt100
    /// itself there.
    fn text(&mut self, text: &[u8], start: u64) {
        let t = &mut self.tracker;
        t.bulk = true;
        self.vte.advance(t, text);
        t.bulk = false;
        // In the ground state a `\r` right before a `\n` is always the
        // callback right before it.
        let cr_before = |i: usize, after_cr: bool| {
            if i == 0 {
                after_cr
            } else {
                text[i - 1] == b'\r'
            }
        };
        if t.planning {
            for nl in memchr::memchr_iter(b'\n', text) {
                t.piece_end = start + nl as u64 + 1;
                t.line_feed();
                if cr_before(nl, t.after_cr) {
                    t.line_start();
                }
            }
        }
        let len = text.len();
        if text[len - 1] == b'\n' && cr_before(len - 1, t.after_cr) {
            t.last_line_start = Some(start + len as u64);
        }
        t.after_cr = text[len - 1] == b'\r';
    }

    /// The screen changed size: a resize drops any scroll region (as
    /// xterm's does, `resize/`), so stretches may start again at once.
    pub(crate) fn resized(&mut self) {
        self.tracker.region = [false; 2];
    }

    pub(crate) fn new(limits: SkimLimits) -> Self {
        Skim {
            vte: vte::Parser::new(),
            tracker: Tracker {
                ground: true,
                ..Tracker::default()
            },
            limits,
        }
    }

    /// Scans `run` (the bytes that follow everything scanned so far) and
    /// returns the stretches of it the parser may skip on a screen of
    /// `rows` rows and `scrollback` lines. Short runs are followed only.
    pub(super) fn plan(&mut self, run: &Run, rows: u16, scrollback: usize) -> Vec<Skip> {
        let t = &mut self.tracker;
        t.rows = rows;
        t.needed = 2 * u64::from(rows) + scrollback as u64 + 2;
        t.min_skip = self.limits.min_skip;
        t.max_pen_log = self.limits.max_pen_log;
        t.planning = run.end() - run.start >= self.limits.min_run;
        t.stretch = Stretch::default();
        if t.planning && t.last_line_start == Some(run.start) {
            t.piece_end = run.start;
            t.line_start();
        }
        let mut offset = run.start;
        for chunk in &run.chunks {
            let mut rest: &[u8] = chunk;
            while !rest.is_empty() {
                // In the ground state, nothing but ESC leaves it: the text up
                // to the next ESC is taken in one go.
                if self.tracker.ground {
                    let end = memchr::memchr(0x1b, rest).unwrap_or(rest.len());
                    if end > 0 {
                        let (text, tail) = rest.split_at(end);
                        self.text(text, offset);
                        offset += end as u64;
                        rest = tail;
                        continue;
                    }
                }
                // Otherwise a piece at a time, each ending at `\n` or ESC, so
                // a line feed's place is always its piece's end.
                let cut = memchr::memchr2(b'\n', 0x1b, rest).map_or(rest.len(), |i| i + 1);
                let (piece, tail) = rest.split_at(cut);
                offset += piece.len() as u64;
                self.tracker.piece_end = offset;
                self.vte.advance(&mut self.tracker, piece);
                if piece.last() == Some(&0x1b) {
                    // An escape sequence begins (or a string ends): no
                    // line starts until a callback says it is over.
                    self.tracker.ground = false;
                    self.tracker.after_cr = false;
                }
                rest = tail;
            }
        }
        let t = &mut self.tracker;
        if t.planning {
            t.close_stretch();
        }
        t.planning = false;
        std::mem::take(&mut t.skips)
    }
}
