//! The skim: a screen fed through the skimmer (which skips what scrolls
//! away unseen) is, after every run of output, the same as one fed every
//! byte: text, attributes, cursor, modes, scrollback and title.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use bytes::Bytes;
use proptest::prelude::*;

use super::screen::{piece, state};
use crate::session::terminal::parser::{parse_run, Run};
use crate::session::terminal::screen::Screen;
use crate::session::terminal::skim::{Skim, SkimLimits};

/// Output that scrolls: lines of text, with and without colour, and now
/// and then anything else a program prints.
fn flood_piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => "[ -~]{0,14}".prop_map(|t| format!("{t}\r\n").into_bytes()),
        2 => (30u8..38, "[ -~é中\u{301}]{0,10}", prop::sample::select(&["\x1b[m", "\x1b[0m", "\x1b[1m", "\x1b[0;4m", ""][..]))
            .prop_map(|(c, t, end)| format!("\x1b[{c}m{t}{end}\r\n").into_bytes()),
        1 => prop::sample::select(&["\x1b[K", "\x1b[2K", "\x1b[38:2:1:2:3m", "\x1b[48;5;9m", "\r", "\n", "\x1b[3C", "\x1b[G", "\x1b[2P"][..])
            .prop_map(|s| s.as_bytes().to_vec()),
        2 => piece(),
    ]
}

/// A run of output or a resize between runs.
#[derive(Debug, Clone)]
enum Step {
    /// Output, in chunks as the PTY reader might have pushed it.
    Output(Vec<Vec<u8>>),
    Resize(u16, u16),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => prop::collection::vec(prop::collection::vec(flood_piece(), 1..40), 1..6)
            .prop_map(|chunks| Step::Output(chunks.into_iter().map(|c| c.concat()).collect())),
        1 => (2u16..30, 2u16..8).prop_map(|(c, r)| Step::Resize(c, r)),
    ]
}

static SKIPPED: AtomicU64 = AtomicU64::new(0);

/// Feeds `steps` to a skimmed screen and a fully parsed one; fails at the
/// first run after which they differ.
fn check(
    (cols, rows, scrollback): (u16, u16, usize),
    max_pen_log: usize,
    steps: &[Step],
) -> Result<(), TestCaseError> {
    let skimmed = Mutex::new(Screen::new(cols, rows, scrollback));
    let mut full = Screen::new(cols, rows, scrollback);
    let mut skim = Skim::new(SkimLimits {
        min_run: 0,
        min_skip: 1,
        max_pen_log,
    });
    let mut offset = 0u64;
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Output(chunks) => {
                let run = Run {
                    start: offset,
                    chunks: chunks.iter().cloned().map(Bytes::from).collect(),
                };
                let parsed = parse_run(&skimmed, &mut skim, &run);
                SKIPPED.fetch_add(parsed.skipped, Ordering::Relaxed);
                for c in chunks {
                    full.process(c);
                }
                offset = run.end();
                prop_assert_eq!(parsed.offset, offset);
            }
            Step::Resize(c, r) => {
                if skimmed.lock().unwrap().set_size(*c, *r) {
                    skim.resized();
                }
                full.set_size(*c, *r);
            }
        }
        let mut skimmed = skimmed.lock().unwrap();
        // vt100 panicked and the screen was redrawn (`Screen::feed`): the
        // two are cut at different places then, so they need not agree.
        prop_assume!(skimmed.recovered == 0 && full.recovered == 0);
        let (got, got_title) = skimmed.vt();
        let (want, want_title) = full.vt();
        prop_assert_eq!(got_title, want_title, "title differs after step {}", i);
        let (got, want) = (state(got), state(want));
        prop_assert_eq!(&got.0, &want.0, "text differs after step {}", i);
        prop_assert_eq!(got.2, want.2, "cursor differs after step {}", i);
        prop_assert_eq!(&got.1, &want.1, "attributes differ after step {}", i);
        prop_assert_eq!(&got.5, &want.5, "scrollback differs after step {}", i);
        prop_assert_eq!((got.3, got.4), (want.3, want.4), "modes differ");
        prop_assert_eq!(skimmed.render(), full.render(), "snapshots differ");
    }
    Ok(())
}

#[test]
fn a_skimmed_screen_is_the_fully_parsed_screen() {
    let steps = prop::collection::vec(step(), 1..12);
    // A small SGR log limit, so the log is compacted (and stretches end)
    // often.
    proptest!(super::config(), |(cols in 2u16..30, rows in 2u16..8, scrollback in 0usize..12, max_pen_log in 8usize..200, steps in steps)| {
        check((cols, rows, scrollback), max_pen_log, &steps)?;
    });
    // The property is only worth something if skips happened.
    assert!(
        SKIPPED.load(Ordering::Relaxed) > 0,
        "no case skipped anything"
    );
}

/// A colourful flood on a small screen: most of it is skipped, and the
/// screen is still exact.
#[test]
fn a_flood_is_mostly_skipped_and_exact() {
    let mut lines = Vec::new();
    for i in 0..3000 {
        lines.push(format!(
            "\x1b[3{}mline {i} \x1b[1mbold\x1b[m and \u{4e2d}\r\n",
            i % 8
        ));
    }
    let chunk: Vec<u8> = lines.concat().into_bytes();
    let screen = Mutex::new(Screen::new(40, 6, 20));
    let mut skim = Skim::new(SkimLimits {
        min_run: 0,
        min_skip: 1,
        max_pen_log: 4096,
    });
    let run = Run {
        start: 0,
        chunks: vec![Bytes::from(chunk.clone())],
    };
    let parsed = parse_run(&screen, &mut skim, &run);
    assert!(
        parsed.skipped > chunk.len() as u64 * 9 / 10,
        "skipped {} of {}",
        parsed.skipped,
        chunk.len()
    );
    let mut full = Screen::new(40, 6, 20);
    full.process(&chunk);
    assert_eq!(screen.lock().unwrap().render(), full.render());
    assert!(String::from_utf8_lossy(&full.render()).contains("line 2999"));
}

/// Not a test: how fast a skimmed screen takes a flood (`cargo test
/// --release -p duet-server --lib skim_rate -- --ignored --nocapture`).
#[test]
#[ignore]
fn skim_rate() {
    let yes = "y\r\n".repeat(1 << 20).into_bytes();
    let mut mixed = Vec::new();
    for i in 0..40_000 {
        mixed.extend(format!("\x1b[3{}mline {i}: the quick brown fox \x1b[1mjumps\x1b[m over the lazy dog, \u{4e2d}\u{6587} and more text to fill a line\r\n", i % 8).into_bytes());
    }
    for (name, text) in [("yes", &yes), ("mixed", &mixed)] {
        let screen = Mutex::new(Screen::new(120, 36, 2000));
        let mut skim = Skim::new(SkimLimits::default());
        let t0 = std::time::Instant::now();
        let mut offset = 0;
        let mut total = 0;
        while total < 256 << 20 {
            let run = Run {
                start: offset,
                chunks: text.chunks(64 << 10).map(Bytes::copy_from_slice).collect(),
            };
            offset = parse_run(&screen, &mut skim, &run).offset;
            total += text.len();
        }
        let secs = t0.elapsed().as_secs_f64();
        let mut full = Screen::new(120, 36, 2000);
        let t1 = std::time::Instant::now();
        for c in text.chunks(64 << 10) {
            full.process(c);
        }
        let full_rate = text.len() as f64 / 1e6 / t1.elapsed().as_secs_f64();
        eprintln!(
            "{name}: skimmed {:.0} MB/s, vt100 alone {full_rate:.0} MB/s",
            total as f64 / 1e6 / secs
        );
    }
}
