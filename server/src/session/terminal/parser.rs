//! The screen parser's thread: takes output from the ring in batches, as
//! it comes, and feeds the server-side screen (`screen.rs`), skimming a
//! flood (`skim.rs`); [`Output::settle`] waits for it to catch up.
//!
//! It naps between batches rather than being woken by every push, so an
//! echoed key costs no futex call (see `ParserState` in `output.rs`).

use std::sync::atomic::Ordering;
use std::sync::Mutex;

use bytes::Bytes;
use tokio::sync::watch;

use super::output::{
    item_len, Item, Output, ParserState, PARSER_LINGER, PARSER_LINGER_NAP, PARSER_NAP,
};
use super::screen::Screen;
use super::skim::{Skim, SkimLimits};
use crate::sync::lock;

/// Bytes the parser takes from the ring per batch (unless it skims).
const PARSE_BATCH: u64 = 256 << 10;

/// Bytes parsed per hold of the screen lock (a skip's settling lines are
/// parsed in one hold, see `skim.rs`).
const PARSE_SLICE: usize = 16 << 10;

/// A run of output with nothing between its chunks (no resize).
pub(crate) struct Run {
    /// Stream offset of the first byte.
    pub(crate) start: u64,
    pub(crate) chunks: Vec<Bytes>,
}

impl Run {
    pub(crate) fn end(&self) -> u64 {
        self.start + self.chunks.iter().map(|c| c.len() as u64).sum::<u64>()
    }

    /// The bytes of `[from, to)` (stream offsets within the run), as slices
    /// of the chunks.
    pub(super) fn range(&self, from: u64, to: u64) -> impl Iterator<Item = &[u8]> {
        let mut offset = self.start;
        self.chunks.iter().filter_map(move |c| {
            let (c_start, c_end) = (offset, offset + c.len() as u64);
            offset = c_end;
            let (lo, hi) = (from.max(c_start), to.min(c_end));
            (lo < hi).then(|| &c[(lo - c_start) as usize..(hi - c_start) as usize])
        })
    }
}

/// What [`parse_run`] did.
pub(crate) struct Parsed {
    /// The screen's offset after the run.
    pub(crate) offset: u64,
    /// Bytes passed over unparsed.
    pub(crate) skipped: u64,
}

/// Feeds `run` to the screen, skipping what the skim allows. The screen
/// lock is let go only where the screen is exactly what a full parse would
/// have made.
pub(crate) fn parse_run(screen: &Mutex<Screen>, skim: &mut Skim, run: &Run) -> Parsed {
    let (rows, scrollback) = lock(screen).extent();
    let skips = skim.plan(run, rows, scrollback);
    let parse = |from: u64, to: u64| {
        for piece in run.range(from, to) {
            for part in piece.chunks(PARSE_SLICE) {
                lock(screen).process(part);
            }
        }
    };
    let mut at = run.start;
    let mut skipped = 0;
    for skip in skips {
        skipped += skip.to - skip.from;
        parse(at, skip.from);
        let mut screen = lock(screen);
        screen.skip(skip.to - skip.from, &skip.pen);
        for part in run.range(skip.to, skip.settled) {
            screen.process(part);
        }
        at = skip.settled;
    }
    parse(at, run.end());
    Parsed {
        offset: lock(screen).offset(),
        skipped,
    }
}

impl Output {
    /// Feeds the screen until the output closes. Runs on its own thread.
    pub(crate) fn run_parser(&self) {
        let mut next_item = 0u64;
        let mut parsed = 0u64;
        let mut took_any = false;
        let skim_limits = SkimLimits::default();
        let mut skim = Skim::new(skim_limits);
        // Bytes the skim passed over (logged when the output closes).
        let mut skimmed = 0u64;
        // When the parser last took output (none yet: a session that never
        // printed leaves its parser asleep).
        let mut last_took: Option<std::time::Instant> = None;
        loop {
            let batch: Vec<(u64, Item)> = {
                let mut ring = lock(&self.ring);
                ring.parsed = parsed;
                // Parsed something just now: nap, and take whatever came
                // meanwhile in one batch (see `ParserState`).
                let mut nap = took_any;
                loop {
                    let available = ring.first_item + ring.items.len() as u64;
                    if next_item < available {
                        break;
                    }
                    if ring.closed {
                        ring.parser = ParserState::Busy;
                        tracing::debug!(parsed, skimmed, "screen parser done");
                        return;
                    }
                    let lingering = last_took.is_some_and(|t| t.elapsed() < PARSER_LINGER);
                    if nap || lingering {
                        ring.parser = ParserState::Napping;
                        let pause = if nap { PARSER_NAP } else { PARSER_LINGER_NAP };
                        let (r, _) = self
                            .data_cv
                            .wait_timeout(ring, pause)
                            .unwrap_or_else(|e| e.into_inner());
                        drop(r);
                        // The reader records a burst after it pushes it, so
                        // a burst can reach the recording's buffer after
                        // the last batch's flush: write it now, not only
                        // with the next output (a program that then went
                        // quiet kept its last lines out of the file, and a
                        // killed duet lost them).
                        if let Some(rec) = self.recording.get() {
                            rec.flush();
                        }
                        ring = lock(&self.ring);
                        nap = false;
                    } else {
                        ring.parser = ParserState::Idle;
                        ring = self.data_cv.wait(ring).unwrap_or_else(|e| e.into_inner());
                    }
                }
                ring.parser = ParserState::Busy;
                // The ring never trims past `parsed`, so our next item is held.
                // Bounded in bytes, so `parsed` (which the reader and
                // `settle` wait on) moves in steps of at most ~256 KiB,
                // unless a flood left enough behind to skim: then all of it,
                // since a skip needs the lines after it in the same batch.
                let budget = if ring.end - parsed >= skim_limits.min_run {
                    u64::MAX
                } else {
                    PARSE_BATCH
                };
                let idx = (next_item - ring.first_item) as usize;
                let mut bytes = 0u64;
                ring.items
                    .range(idx..)
                    .take_while(|(_, item)| {
                        let more = bytes < budget;
                        bytes += item_len(item);
                        more
                    })
                    .cloned()
                    .collect()
            };
            took_any = !batch.is_empty();
            if took_any {
                last_took = Some(std::time::Instant::now());
            }
            next_item += batch.len() as u64;
            let mut feed = |skim: &mut Skim, run: Run| {
                let done = parse_run(&self.screen, skim, &run);
                parsed = done.offset;
                skimmed += done.skipped;
            };
            let mut run: Option<Run> = None;
            for (offset, item) in batch {
                match item {
                    Item::Data(bytes) => run
                        .get_or_insert_with(|| Run {
                            start: offset,
                            chunks: Vec::new(),
                        })
                        .chunks
                        .push(bytes),
                    Item::Resize { cols, rows } => {
                        if let Some(run) = run.take() {
                            feed(&mut skim, run);
                        }
                        let mut screen = lock(&self.screen);
                        *lock(&self.cached) = None;
                        if screen.set_size(cols, rows) {
                            skim.resized();
                        }
                    }
                }
            }
            if let Some(run) = run.take() {
                feed(&mut skim, run);
            }
            // Output the PTY reader left in the recording's buffer (small
            // bursts, see `recording.rs`) goes to the file now, off the
            // forwarding path.
            if let Some(r) = self.recording.get() {
                r.flush();
            }
            self.parsed_items.store(next_item, Ordering::Release);
            self.parsed.send_replace(parsed);
        }
    }

    /// Waits until the screen has consumed everything output so far (what
    /// a client has already been sent) and every resize recorded so far, or
    /// the output closed.
    pub(crate) async fn settle(&self) {
        let (target, items) = {
            let ring = lock(&self.ring);
            (ring.end, ring.first_item + ring.items.len() as u64)
        };
        let mut parsed = self.parsed.subscribe();
        self.wake_parser();
        let _ = parsed
            .wait_for(|p| *p >= target && self.parsed_items.load(Ordering::Acquire) >= items)
            .await;
    }

    /// A receiver that changes whenever the screen has consumed more output.
    pub(crate) fn subscribe_screen(&self) -> watch::Receiver<u64> {
        self.parsed.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::super::output::testing::{small, start_parser};
    use super::*;
    use bytes::Bytes;
    use std::sync::Arc;

    #[test]
    fn a_burst_recorded_after_the_parser_took_it_reaches_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.cast");
        let out = Arc::new(Output::new(80, 24, small()));
        let rec = super::super::recording::Recording::create(
            &path,
            80,
            24,
            1 << 20,
            std::time::Instant::now(),
        )
        .unwrap();
        let _ = out.recording.set(Arc::new(rec));
        let _parser = start_parser(&out);
        // The reader pushes, the parser takes it (and flushes an empty
        // buffer), and only then is the burst recorded; no output follows.
        out.push(Bytes::from_static(b"last words"));
        while out.parsed_items.load(Ordering::Acquire) == 0 {
            std::thread::yield_now();
        }
        out.recording.get().unwrap().output(b"last words");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !std::fs::read_to_string(&path)
            .unwrap()
            .contains("last words")
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the burst stayed in the recording's buffer"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        out.close();
    }

    #[test]
    fn a_one_row_terminal_does_not_stop_the_parser() {
        let out = Arc::new(Output::new(1, 1, small()));
        let parser = start_parser(&out);
        out.push(Bytes::from_static(b"a0"));
        out.push(Bytes::from("\u{4e2d}".as_bytes()));
        out.resize(5, 1);
        out.push(Bytes::from_static(b"wraps around\r\nand on"));
        out.close();
        parser.join().expect("the parser thread panicked");
        assert!(out.screen_text().ends_with("and on"));
    }

    /// vt100 0.16 panics when a character is written over a wide one cut
    /// in half at the right edge (its own `set_size` left such halves;
    /// found by `fuzz::skim`). A narrowing now blanks a wide character it
    /// cuts (on the cursor's line, which does not rewrap), so writing there
    /// is plain drawing.
    #[test]
    fn a_wide_character_cut_by_a_resize_does_not_stop_the_parser() {
        let out = Arc::new(Output::new(14, 7, small()));
        let parser = start_parser(&out);
        out.push(Bytes::from("\x1b[30m\u{4e2d}\u{4e2d}\x1b[m".as_bytes()));
        out.resize(3, 6);
        out.push(Bytes::from_static(b"\x1b[Haaa\r\nmore"));
        out.close();
        parser.join().expect("the parser thread panicked");
        assert_eq!(out.screen_text(), "aaa\nmore");
        assert_eq!(lock(&out.screen).recovered, 0);
    }

    /// Should vt100 panic all the same, the parser thread survives it: the
    /// screen is redrawn and goes on.
    #[test]
    fn a_panic_in_vt100_does_not_stop_the_parser() {
        let out = Arc::new(Output::new(14, 7, small()));
        let parser = start_parser(&out);
        out.push(Bytes::from("\x1b[30m\u{4e2d}\u{4e2d}\x1b[m\r\n".as_bytes()));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(out.settle());
        // vt100's own narrowing cuts the second character in half...
        lock(&out.screen).vt().0.set_size(6, 3);
        // ...and the third character lands on it: vt100 panics, and what
        // the rest of this write drew is lost...
        out.push(Bytes::from_static(b"\x1b[Haaa lost"));
        // ...but the screen goes on.
        out.push(Bytes::from_static(b"\r\nmore"));
        out.close();
        parser.join().expect("the parser thread panicked");
        assert!(
            out.screen_text().contains("more"),
            "{:?}",
            out.screen_text()
        );
        assert_eq!(lock(&out.screen).recovered, 1);
    }

    #[test]
    fn settle_waits_for_a_resize_that_adds_no_bytes() {
        let out = Arc::new(Output::new(20, 5, small()));
        let parser = start_parser(&out);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        out.push(Bytes::from_static(b"x"));
        rt.block_on(out.settle());
        // The byte offset is already reached: only the item count says
        // whether the screen has taken the resize.
        out.resize(40, 9);
        rt.block_on(out.settle());
        let snap = out.snapshot();
        assert_eq!((snap.cols, snap.rows), (40, 9));
        out.close();
        parser.join().unwrap();
    }

    #[test]
    fn resize_applies_at_its_place_in_the_stream() {
        let out = Arc::new(Output::new(10, 3, small()));
        let parser = start_parser(&out);
        out.push(Bytes::from_static(b"abc"));
        out.resize(30, 4);
        out.close();
        parser.join().unwrap();
        let snap = out.snapshot();
        assert_eq!((snap.cols, snap.rows), (30, 4));
    }

    #[test]
    fn a_parser_that_took_output_lately_keeps_looking_by_itself() {
        // A typist's next key must find the parser napping (a push then
        // does not wake it, and the echo goes out without a futex call):
        // for PARSER_LINGER after output it never waits for a wake-up.
        let out = Arc::new(Output::new(20, 5, small()));
        let parser = start_parser(&out);
        out.push(Bytes::from_static(b"a"));
        // Parsed: the parser naps after a batch.
        while lock(&out.ring).parsed < 1 {
            std::thread::yield_now();
        }
        let watch_for = PARSER_NAP * 10;
        let t0 = std::time::Instant::now();
        while t0.elapsed() < watch_for {
            assert_ne!(
                lock(&out.ring).parser,
                ParserState::Idle,
                "the parser went idle {:?} after output",
                t0.elapsed()
            );
            std::thread::sleep(PARSER_NAP / 4);
        }
        out.close();
        parser.join().unwrap();
    }
}
