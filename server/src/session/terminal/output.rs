//! Terminal output of one session: a bounded ring of recent bytes that every
//! client reads with its own cursor. The screen (`screen.rs`) and flow
//! control (`flow.rs`) are fed from the same ring.
//!
//! The screen is off the forwarding path: clients are woken as soon as bytes
//! land in the ring, whatever the parser is doing. The ring keeps everything
//! the parser has not consumed yet (plus some slack), so a snapshot taken at
//! the parser's offset can always be continued from the ring. The only
//! coupling is a cap on how far the parser may lag; past it the PTY reader
//! waits ([`Output::make_room`]), which slows the program down but never
//! loses a byte. A flood rarely reaches it: the parser skims what scrolls
//! away unseen (`skim.rs`, ~230-280 MB/s against vt100's 26-120).

use std::collections::VecDeque;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use tokio::sync::{watch, Notify};

use super::flow::Reader;
use super::recording::Recording;
use super::screen::{Screen, Snapshot};
use crate::sync::lock;

/// Sizes that bound the memory of one session's output.
#[derive(Debug, Clone, Copy)]
pub struct OutputLimits {
    /// The most kept behind the newest output, for clients that are a
    /// little behind; a client further behind gets a snapshot instead.
    pub window: usize,
    /// What is kept behind the screen parser and the oldest client when no
    /// client needs more: a snapshot taken a moment ago can still be
    /// continued from the ring. The ring holds `keep`, not `window`, for
    /// every session whose clients keep up (or that has none).
    pub keep: usize,
    /// How far (bytes) the screen parser may fall behind before the PTY
    /// reader waits for it (see [`Output::make_room`]).
    pub max_parser_lag: usize,
    /// Lines of scrollback kept in the server-side screen.
    pub scrollback: usize,
    /// The longest a client holds the program back in a row (flow
    /// control, see the module docs).
    pub stall_after: Duration,
}

impl Default for OutputLimits {
    fn default() -> Self {
        Self {
            window: 4 << 20,
            keep: 256 << 10,
            max_parser_lag: 8 << 20,
            scrollback: 2000,
            stall_after: Duration::from_millis(200),
        }
    }
}

#[derive(Clone)]
pub(super) enum Item {
    Data(Bytes),
    /// The PTY was resized here; the screen must change size at this point
    /// of the stream, not when the resize request arrived.
    Resize {
        cols: u16,
        rows: u16,
    },
}

pub(super) struct Ring {
    /// `(byte offset of the item, item)`, oldest first.
    pub(super) items: VecDeque<(u64, Item)>,
    /// Item number of `items[0]`; the parser tracks items by number.
    pub(super) first_item: u64,
    /// Offset of the first byte still held.
    pub(super) start: u64,
    /// Offset one past the newest byte.
    pub(super) end: u64,
    /// Offset up to which the screen has consumed the stream.
    pub(super) parsed: u64,
    pub(super) closed: bool,
    /// What the parser thread is doing; decides whether a push wakes it.
    pub(super) parser: ParserState,
}

/// The screen parser's state, as [`Output::push`] sees it (under the ring
/// lock).
///
/// Waking the parser for every push put a futex call and a thread switch
/// on every echoed key (profiled in docs/benchmarks.md). The screen serves
/// snapshots, titles and `/screen`, none of which needs sub-millisecond
/// freshness, so while output trickles in the parser naps and takes it in
/// batches; whoever needs the screen current ([`Output::settle`]) wakes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ParserState {
    /// Working through a batch: it looks at the ring again before it waits.
    Busy,
    /// Parsed something recently; looks again after [`PARSER_NAP`] (or,
    /// lingering, [`PARSER_LINGER_NAP`]) by itself.
    Napping,
    /// Nothing came for [`PARSER_LINGER`]: only a wake-up brings it back.
    Idle,
}

/// How long the parser naps between batches while output keeps coming.
pub(super) const PARSER_NAP: Duration = Duration::from_millis(10);
/// Once output stops, the parser keeps looking by itself this long...
pub(super) const PARSER_LINGER: Duration = Duration::from_secs(5);
/// ...this often, so that a person's next keystroke finds it napping and
/// the echo need not wake it: a woken parser thread was a futex call before
/// every echo of a typist's keys, and cost ~85 µs at p50 on this VM
/// (`duet-bench --echo --echo-gap-ms 30`, docs/benchmarks.md). An idle
/// session's parser still sleeps until output comes.
pub(super) const PARSER_LINGER_NAP: Duration = Duration::from_millis(100);
/// A napping parser is woken early once this much output waits for it, so a
/// flood is parsed as it comes and the backlog stays small.
const WAKE_NAPPING_AT: u64 = 64 << 10;

impl Ring {
    /// Drops what nobody can need: the oldest client's cursor (never more
    /// than `window` behind the end) and `keep` behind the parser and the
    /// end bound what stays; what the parser has not taken always stays.
    fn trim(&mut self, limits: &OutputLimits, oldest_reader: Option<u64>) {
        let keep = limits.keep as u64;
        let for_clients = oldest_reader
            .unwrap_or(self.end)
            .min(self.end.saturating_sub(keep))
            .max(self.end.saturating_sub(limits.window as u64));
        let keep_from = for_clients.min(self.parsed.saturating_sub(keep));
        while let Some((offset, item)) = self.items.front() {
            let item_end = offset + item_len(item);
            if item_end >= keep_from || item_end > self.parsed {
                break;
            }
            self.items.pop_front();
            self.first_item += 1;
            self.start = item_end;
        }
    }
}

pub(super) fn item_len(item: &Item) -> u64 {
    match item {
        Item::Data(b) => b.len() as u64,
        Item::Resize { .. } => 0,
    }
}

/// What a client's cursor gets from [`Output::read`].
pub(crate) enum ReadResult {
    /// Bytes from the cursor on, and the cursor after them.
    Data(Bytes, u64),
    /// Nothing new yet.
    UpToDate,
    /// The cursor fell out of the ring: resynchronise from a snapshot.
    Lagged,
}

/// One session's terminal output.
pub(crate) struct Output {
    pub(super) ring: Mutex<Ring>,
    /// Wakes the parser when items arrive.
    pub(super) data_cv: Condvar,
    /// The ring's end offset; clients wait for it to change.
    pub(super) head: watch::Sender<u64>,
    /// The offset the screen has consumed; changes after each parsed batch.
    pub(super) parsed: watch::Sender<u64>,
    /// Ring items (data and resizes) the screen has consumed, set before
    /// `parsed` changes: a resize adds no bytes, so only this count tells
    /// whether the screen has taken it.
    pub(super) parsed_items: AtomicU64,
    pub(super) screen: Mutex<Screen>,
    /// The last snapshot; see the module docs. Cleared when the screen
    /// changes size, taken and filled under the screen lock.
    pub(super) cached: Mutex<Option<Arc<Snapshot>>>,
    pub(super) readers: Mutex<Vec<Weak<Reader>>>,
    /// Signalled when a client reads; the PTY reader may be waiting for it.
    pub(super) progress: Notify,
    pub(super) epoch: Instant,
    pub(super) limits: OutputLimits,
    /// The session's recording: the PTY reader records into it, the
    /// parser thread writes out what it buffered (see `recording.rs`).
    pub(super) recording: OnceLock<Arc<Recording>>,
    /// Counts the times the PTY reader waits for a client (`flow.rs`).
    pub(crate) flow_holds: std::sync::OnceLock<prometheus_client::metrics::counter::Counter>,
}

impl Output {
    /// An empty output for a `cols`×`rows` terminal.
    pub(crate) fn new(cols: u16, rows: u16, limits: OutputLimits) -> Self {
        Self {
            ring: Mutex::new(Ring {
                items: VecDeque::new(),
                first_item: 0,
                start: 0,
                end: 0,
                parsed: 0,
                closed: false,
                parser: ParserState::Idle,
            }),
            data_cv: Condvar::new(),
            head: watch::channel(0).0,
            parsed: watch::channel(0).0,
            parsed_items: AtomicU64::new(0),
            screen: Mutex::new(Screen::new(cols, rows, limits.scrollback)),
            cached: Mutex::new(None),
            readers: Mutex::new(Vec::new()),
            progress: Notify::new(),
            epoch: Instant::now(),
            limits,
            recording: OnceLock::new(),
            flow_holds: Default::default(),
        }
    }

    /// Appends program output. The reader calls [`make_room`](Self::make_room)
    /// before it reads more, so the parser's backlog stays bounded.
    pub(crate) fn push(&self, data: Bytes) {
        let oldest_reader = self.oldest_reader();
        let mut ring = lock(&self.ring);
        let offset = ring.end;
        ring.end += data.len() as u64;
        ring.items.push_back((offset, Item::Data(data)));
        ring.trim(&self.limits, oldest_reader);
        let end = ring.end;
        let wake_parser = match ring.parser {
            ParserState::Busy => false,
            ParserState::Napping => end - ring.parsed >= WAKE_NAPPING_AT,
            ParserState::Idle => true,
        };
        drop(ring);
        // Clients first: the parser's wake-up is off the echo's path
        // (profiled: waking it first put a thread switch before every
        // echoed key).
        self.head.send_replace(end);
        if wake_parser {
            self.data_cv.notify_one();
        }
    }

    /// Brings a napping or idle parser to the ring at once.
    pub(super) fn wake_parser(&self) {
        let ring = lock(&self.ring);
        let waiting = ring.parser != ParserState::Busy;
        drop(ring);
        if waiting {
            self.data_cv.notify_one();
        }
    }

    /// Records a PTY resize at the current point of the stream.
    pub(crate) fn resize(&self, cols: u16, rows: u16) {
        let mut ring = lock(&self.ring);
        let offset = ring.end;
        ring.items.push_back((offset, Item::Resize { cols, rows }));
        drop(ring);
        self.data_cv.notify_one();
    }

    /// No more output will come (the PTY reached EOF).
    pub(crate) fn close(&self) {
        lock(&self.ring).closed = true;
        self.data_cv.notify_all();
        self.head.send_modify(|_| {});
    }

    /// Whether [`close`](Self::close) was called.
    pub(crate) fn is_closed(&self) -> bool {
        lock(&self.ring).closed
    }

    /// A receiver that changes whenever output arrives or the output closes.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.head.subscribe()
    }

    /// Up to `max` bytes from `cursor` on, copied into one buffer only when
    /// they span several chunks.
    pub(crate) fn read(&self, cursor: u64, max: usize) -> ReadResult {
        let ring = lock(&self.ring);
        if cursor < ring.start {
            return ReadResult::Lagged;
        }
        if cursor >= ring.end {
            return ReadResult::UpToDate;
        }
        let mut parts: Vec<Bytes> = Vec::new();
        let mut taken = 0usize;
        // Items are ordered by offset; skip those wholly before the cursor.
        let first = ring
            .items
            .partition_point(|(offset, item)| offset + item_len(item) <= cursor);
        for (offset, item) in ring.items.range(first..) {
            let Item::Data(bytes) = item else { continue };
            let skip = cursor.saturating_sub(*offset) as usize;
            let avail = bytes.len() - skip.min(bytes.len());
            if avail == 0 {
                continue;
            }
            let take = avail.min(max - taken);
            parts.push(bytes.slice(skip..skip + take));
            taken += take;
            if taken >= max {
                break;
            }
        }
        drop(ring);
        let data = if parts.len() == 1 {
            parts.pop().unwrap_or_default()
        } else {
            let mut buf = BytesMut::with_capacity(taken);
            for p in parts {
                buf.extend_from_slice(&p);
            }
            buf.freeze()
        };
        ReadResult::Data(data, cursor + taken as u64)
    }
}

/// What the terminal module's tests share.
#[cfg(test)]
pub(super) mod testing {
    use std::sync::Arc;
    use std::time::Duration;

    use super::{Output, OutputLimits};

    /// The parser thread of `out`, as a session runs it.
    pub(in crate::session::terminal) fn start_parser(
        out: &Arc<Output>,
    ) -> std::thread::JoinHandle<()> {
        let out = out.clone();
        std::thread::spawn(move || out.run_parser())
    }

    /// Limits small enough that a test's few bytes reach them.
    pub(in crate::session::terminal) fn small() -> OutputLimits {
        OutputLimits {
            window: 16,
            keep: 16,
            max_parser_lag: 64,
            scrollback: 100,
            stall_after: Duration::from_millis(200),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{small, start_parser};
    use super::*;

    /// The ring holds `window` only for a client that is behind: a session
    /// whose clients keep up (or that has none) keeps `keep`. It held the
    /// whole window (4 MiB) for every session that had ever printed that
    /// much, needed or not.
    #[test]
    fn the_ring_keeps_only_what_a_client_behind_needs() {
        let limits = OutputLimits {
            window: 64,
            keep: 16,
            ..small()
        };
        let out = Arc::new(Output::new(80, 24, limits));
        let parser = start_parser(&out);
        let settled = |out: &Output, end: u64| {
            // The parser has taken everything: only the clients count.
            while lock(&out.ring).parsed < end {
                out.wake_parser();
                std::thread::yield_now();
            }
        };
        let chunk = Bytes::from_static(b"0123456789abcdef");
        for _ in 0..8 {
            out.push(chunk.clone());
        }
        settled(&out, 128);
        out.push(chunk.clone());
        assert_eq!(
            lock(&out.ring).start,
            128 - 16 - 16, // the chunk that ends at the cut stays too
            "no client: `keep` behind the parser"
        );

        // A client at 144 that falls behind: kept back to its cursor...
        let behind = out.reader(144);
        for _ in 0..3 {
            out.push(chunk.clone());
        }
        settled(&out, 192);
        out.push(chunk.clone());
        assert_eq!(
            lock(&out.ring).start,
            144 - 16,
            "kept for the client behind"
        );
        assert!(matches!(out.read(144, 1024), ReadResult::Data(_, 208)));
        // ...but never more than `window`: then it gets a snapshot.
        for _ in 0..3 {
            out.push(chunk.clone());
        }
        settled(&out, 256);
        out.push(chunk.clone());
        assert_eq!(lock(&out.ring).start, 272 - 64 - 16);
        assert!(matches!(out.read(144, 1024), ReadResult::Lagged));
        drop(behind);

        // Nobody behind any more: back to `keep`.
        let end = lock(&out.ring).end;
        settled(&out, end);
        out.push(chunk.clone());
        assert_eq!(lock(&out.ring).start, end - 32, "`keep` behind the parser");
        // A new client pins what the ring holds until its first resync.
        let end = end + 16;
        settled(&out, end);
        let pinned = out.pinned_reader();
        let start = lock(&out.ring).start;
        out.push(chunk.clone());
        out.push(chunk.clone());
        assert_eq!(lock(&out.ring).start, start);
        pinned.resynced(end + 32);
        settled(&out, end + 32);
        out.push(chunk.clone());
        assert_eq!(
            lock(&out.ring).start,
            end,
            "`keep` behind the resynced client"
        );
        out.close();
        parser.join().unwrap();
    }

    #[test]
    fn cursor_reads_what_was_pushed_and_lags_out_of_the_window() {
        let out = Arc::new(Output::new(80, 24, small()));
        let parser = start_parser(&out);
        out.push(Bytes::from_static(b"hello "));
        out.push(Bytes::from_static(b"world"));
        match out.read(0, 1024) {
            ReadResult::Data(b, c) => {
                assert_eq!(&b[..], b"hello world");
                assert_eq!(c, 11);
            }
            _ => panic!("expected data"),
        }
        match out.read(3, 4) {
            ReadResult::Data(b, c) => {
                assert_eq!(&b[..], b"lo w");
                assert_eq!(c, 7);
            }
            _ => panic!("expected data"),
        }
        assert!(matches!(out.read(11, 10), ReadResult::UpToDate));
        for _ in 0..20 {
            out.push(Bytes::from_static(b"0123456789"));
        }
        // Wait for the parser to consume everything, then the ring trims.
        out.close();
        parser.join().unwrap();
        out.push(Bytes::from_static(b"x"));
        assert!(matches!(out.read(0, 10), ReadResult::Lagged));
        let snap = out.snapshot();
        assert_eq!(snap.offset, 211);
        assert!(matches!(out.read(snap.offset, 10), ReadResult::Data(..)));
    }

    #[tokio::test]
    async fn the_reader_waits_while_the_parser_is_too_far_behind() {
        let out = Arc::new(Output::new(80, 24, small()));
        // No parser yet: 100 bytes pushed is over the 64-byte lag cap.
        for _ in 0..10 {
            out.push(Bytes::from_static(b"0123456789"));
        }
        let waiting = tokio::spawn({
            let out = out.clone();
            async move { out.make_room().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "must wait for the parser");
        let parser = start_parser(&out);
        waiting.await.unwrap();
        out.settle().await;
        assert!(out.screen_text().starts_with("0123456789"));
        out.close();
        parser.join().unwrap();
    }
}
