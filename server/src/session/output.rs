//! Terminal output of one session: a bounded ring of recent bytes that every
//! client reads with its own cursor, and a server-side screen (vt100) that a
//! separate thread feeds from the same ring.
//!
//! The screen is off the forwarding path: clients are woken as soon as bytes
//! land in the ring, whatever the parser is doing. The ring keeps everything
//! the parser has not consumed yet (plus some slack), so a snapshot taken at
//! the parser's offset can always be continued from the ring. The only
//! coupling is a cap on how far the parser may lag; past it the PTY reader
//! waits ([`Output::make_room`]), which slows the program down but never
//! loses a byte.
//!
//! Flow control: the reader also waits while the slowest client that is
//! keeping up is more than `FLOW_AHEAD` behind, so that a client reading
//! as fast as it can gets every byte, as on a real terminal, where a slow
//! terminal slows the program. A client that has held the program back for
//! `stall_after` in a row (it stopped reading, or reads slower than the
//! program writes), or that pauses, no longer holds anyone back: it falls
//! out of the window and gets a snapshot.
//!
//! Rendering a snapshot (screen plus scrollback, ~120 KiB) is the costliest
//! thing here, so the last one is kept and handed to every client that needs
//! one while the ring still holds the stream from its offset: a hundred
//! lagging clients cost one render, not a hundred (measured: without it a
//! fan-out of 100 clients fell into a resync storm, where rendering took 60 %
//! of the CPU and made more clients lag).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use tokio::sync::{watch, Notify};

/// Sizes that bound the memory of one session's output.
#[derive(Debug, Clone, Copy)]
pub struct OutputLimits {
    /// Bytes kept behind the newest output for clients that are a little
    /// behind; a client further behind gets a snapshot instead.
    pub window: usize,
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
            max_parser_lag: 8 << 20,
            scrollback: 2000,
            stall_after: Duration::from_millis(200),
        }
    }
}

/// How far the stream may have moved past the cached snapshot for it still
/// to be handed out.
const REUSE_WITHIN: u64 = 256 << 10;

/// How far a client that keeps reading may be behind before the PTY reader
/// waits for it: enough to stream at full speed, little enough that Ctrl-C
/// in a flood shows within milliseconds (what is behind still arrives).
const FLOW_AHEAD: u64 = 512 << 10;

/// Bytes the parser takes from the ring per batch.
const PARSE_BATCH: u64 = 256 << 10;

/// Bytes parsed per hold of the screen lock.
const PARSE_SLICE: usize = 16 << 10;

#[derive(Clone)]
enum Item {
    Data(Bytes),
    /// The PTY was resized here; the screen must change size at this point
    /// of the stream, not when the resize request arrived.
    Resize {
        cols: u16,
        rows: u16,
    },
}

struct Ring {
    /// `(byte offset of the item, item)`, oldest first.
    items: VecDeque<(u64, Item)>,
    /// Item number of `items[0]`; the parser tracks items by number.
    first_item: u64,
    /// Offset of the first byte still held.
    start: u64,
    /// Offset one past the newest byte.
    end: u64,
    /// Offset up to which the screen has consumed the stream.
    parsed: u64,
    closed: bool,
}

impl Ring {
    fn trim(&mut self, limits: &OutputLimits) {
        let keep_from = self
            .parsed
            .saturating_sub(limits.window as u64)
            .min(self.end.saturating_sub(limits.window as u64));
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

fn item_len(item: &Item) -> u64 {
    match item {
        Item::Data(b) => b.len() as u64,
        Item::Resize { .. } => 0,
    }
}

/// What a client's cursor gets from [`Output::read`].
pub enum ReadResult {
    /// Bytes from the cursor on, and the cursor after them.
    Data(Bytes, u64),
    /// Nothing new yet.
    UpToDate,
    /// The cursor fell out of the ring: resynchronise from a snapshot.
    Lagged,
}

/// One client's place in the stream, as flow control sees it.
pub struct Reader {
    cursor: AtomicU64,
    /// When (ms since `Output::epoch`, +1 so that 0 means "not") the PTY
    /// reader first found this client too far behind in the current
    /// episode; see `Output::make_room`.
    held_since: AtomicU64,
    paused: AtomicBool,
    output: Weak<Output>,
}

impl Reader {
    /// The client read up to `cursor`.
    pub fn advance(&self, cursor: u64) {
        self.cursor.store(cursor, Ordering::Release);
        self.wake();
    }

    /// The client was resynchronised to `cursor`: a fresh start, which may
    /// hold the program again.
    pub fn resynced(&self, cursor: u64) {
        self.cursor.store(cursor, Ordering::Release);
        self.held_since.store(0, Ordering::Release);
        self.wake();
    }

    /// A paused client never holds the program back; a resumed one starts
    /// afresh.
    pub fn set_paused(&self, paused: bool) {
        self.paused.store(paused, Ordering::Release);
        self.held_since.store(0, Ordering::Release);
        self.wake();
    }

    fn wake(&self) {
        if let Some(out) = self.output.upgrade() {
            out.progress.notify_one();
        }
    }
}

/// A full screen image and the stream offset it corresponds to.
pub struct Snapshot {
    pub bytes: Bytes,
    pub offset: u64,
    pub cols: u16,
    pub rows: u16,
}

struct Screen {
    parser: vt100::Parser<TitleCallbacks>,
    offset: u64,
}

#[derive(Default)]
struct TitleCallbacks {
    title: Option<String>,
}

impl vt100::Callbacks for TitleCallbacks {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title = Some(String::from_utf8_lossy(title).into_owned());
    }
}

/// One session's terminal output.
pub struct Output {
    ring: Mutex<Ring>,
    /// Wakes the parser when items arrive.
    data_cv: Condvar,
    /// The ring's end offset; clients wait for it to change.
    head: watch::Sender<u64>,
    /// The offset the screen has consumed; changes after each parsed batch.
    parsed: watch::Sender<u64>,
    screen: Mutex<Screen>,
    /// The last snapshot; see the module docs. Cleared when the screen
    /// changes size, taken and filled under the screen lock.
    cached: Mutex<Option<Arc<Snapshot>>>,
    readers: Mutex<Vec<Weak<Reader>>>,
    /// Signalled when a client reads; the PTY reader may be waiting for it.
    progress: Notify,
    epoch: Instant,
    limits: OutputLimits,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding these locks leaves plain data behind, still
    // consistent enough to serve; don't take the whole session down with it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Output {
    /// An empty output for a `cols`×`rows` terminal.
    pub fn new(cols: u16, rows: u16, limits: OutputLimits) -> Self {
        Self {
            ring: Mutex::new(Ring {
                items: VecDeque::new(),
                first_item: 0,
                start: 0,
                end: 0,
                parsed: 0,
                closed: false,
            }),
            data_cv: Condvar::new(),
            head: watch::channel(0).0,
            parsed: watch::channel(0).0,
            screen: Mutex::new(Screen {
                parser: vt100::Parser::new_with_callbacks(
                    rows,
                    cols,
                    limits.scrollback,
                    TitleCallbacks::default(),
                ),
                offset: 0,
            }),
            cached: Mutex::new(None),
            readers: Mutex::new(Vec::new()),
            progress: Notify::new(),
            epoch: Instant::now(),
            limits,
        }
    }

    /// Appends program output. The reader calls [`make_room`](Self::make_room)
    /// before it reads more, so the parser's backlog stays bounded.
    pub fn push(&self, data: Bytes) {
        let mut ring = lock(&self.ring);
        let offset = ring.end;
        ring.end += data.len() as u64;
        ring.items.push_back((offset, Item::Data(data)));
        ring.trim(&self.limits);
        let end = ring.end;
        drop(ring);
        self.data_cv.notify_one();
        self.head.send_replace(end);
    }

    /// Records a PTY resize at the current point of the stream.
    pub fn resize(&self, cols: u16, rows: u16) {
        let mut ring = lock(&self.ring);
        let offset = ring.end;
        ring.items.push_back((offset, Item::Resize { cols, rows }));
        drop(ring);
        self.data_cv.notify_one();
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Registers a client at `cursor` for flow control; it counts until the
    /// returned handle is dropped.
    pub fn reader(self: &Arc<Self>, cursor: u64) -> Arc<Reader> {
        let reader = Arc::new(Reader {
            cursor: AtomicU64::new(cursor),
            held_since: AtomicU64::new(0),
            paused: AtomicBool::new(false),
            output: Arc::downgrade(self),
        });
        let mut readers = lock(&self.readers);
        readers.retain(|r| r.strong_count() > 0);
        readers.push(Arc::downgrade(&reader));
        reader
    }

    /// Waits while the screen parser is more than `max_parser_lag` bytes
    /// behind, and while a client that keeps up is more than `FLOW_AHEAD`
    /// behind (see the module docs). The PTY reader calls it before
    /// each read, so a program that outruns either is slowed down (its
    /// writes block on a full PTY), and nothing grows without bound.
    pub async fn make_room(&self) {
        let mut parsed = self.parsed.subscribe();
        loop {
            let done = *parsed.borrow_and_update();
            {
                let ring = lock(&self.ring);
                if ring.closed || ring.end - done <= self.limits.max_parser_lag as u64 {
                    break;
                }
            }
            if parsed.changed().await.is_err() {
                break;
            }
        }
        let ahead = (self.limits.window as u64 / 2).min(FLOW_AHEAD);
        loop {
            let (end, closed) = {
                let ring = lock(&self.ring);
                (ring.end, ring.closed)
            };
            if closed {
                return;
            }
            let now = self.now_ms();
            let stall = self.limits.stall_after.as_millis() as u64;
            // Among the clients too far behind, the one that may hold the
            // program longest. A client holds it for at most `stall` ms in a
            // row: one that keeps up catches up well within that; one that
            // stopped reading, or reads slower than the program writes (a
            // slow link), must not throttle everyone: it falls behind and
            // gets a snapshot instead.
            let slowest = lock(&self.readers)
                .iter()
                .filter_map(Weak::upgrade)
                .filter(|r| !r.paused.load(Ordering::Acquire))
                .filter_map(|r| {
                    let behind = end.saturating_sub(r.cursor.load(Ordering::Acquire));
                    if behind <= ahead {
                        r.held_since.store(0, Ordering::Release);
                        return None;
                    }
                    let held = match r.held_since.load(Ordering::Acquire) {
                        0 => {
                            r.held_since.store(now + 1, Ordering::Release);
                            0
                        }
                        since => now.saturating_sub(since - 1),
                    };
                    stall.checked_sub(held).filter(|left| *left > 0)
                })
                .max();
            let Some(until_released) = slowest else {
                return;
            };
            let _ = tokio::time::timeout(
                Duration::from_millis(until_released),
                self.progress.notified(),
            )
            .await;
        }
    }

    /// No more output will come (the PTY reached EOF).
    pub fn close(&self) {
        lock(&self.ring).closed = true;
        self.data_cv.notify_all();
        self.head.send_modify(|_| {});
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        lock(&self.ring).closed
    }

    /// Offset one past the newest byte.
    pub fn end(&self) -> u64 {
        lock(&self.ring).end
    }

    /// A receiver that changes whenever output arrives or the output closes.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.head.subscribe()
    }

    /// Up to `max` bytes from `cursor` on, copied into one buffer only when
    /// they span several chunks.
    pub fn read(&self, cursor: u64, max: usize) -> ReadResult {
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

    /// Feeds the screen until the output closes. Runs on its own thread.
    pub fn run_parser(&self) {
        let mut next_item = 0u64;
        let mut parsed = 0u64;
        loop {
            let batch: Vec<Item> = {
                let mut ring = lock(&self.ring);
                ring.parsed = parsed;
                loop {
                    let available = ring.first_item + ring.items.len() as u64;
                    if next_item < available {
                        break;
                    }
                    if ring.closed {
                        return;
                    }
                    ring = self.data_cv.wait(ring).unwrap_or_else(|e| e.into_inner());
                }
                // The ring never trims past `parsed`, so our next item is held.
                // Bounded in bytes, so `parsed` (which the reader and
                // `settle` wait on) moves in steps of at most ~256 KiB.
                let idx = (next_item - ring.first_item) as usize;
                let mut bytes = 0u64;
                ring.items
                    .range(idx..)
                    .take_while(|(_, item)| {
                        let more = bytes < PARSE_BATCH;
                        bytes += item_len(item);
                        more
                    })
                    .map(|(_, item)| item.clone())
                    .collect()
            };
            for item in batch {
                next_item += 1;
                match item {
                    Item::Data(bytes) => {
                        // The screen lock is taken per slice so that
                        // snapshots and `/screen` never wait long for it.
                        for part in bytes.chunks(PARSE_SLICE) {
                            let mut screen = lock(&self.screen);
                            screen.parser.process(part);
                            screen.offset += part.len() as u64;
                            parsed = screen.offset;
                        }
                    }
                    Item::Resize { cols, rows } => {
                        let mut screen = lock(&self.screen);
                        *lock(&self.cached) = None;
                        screen.parser.screen_mut().set_size(rows, cols);
                    }
                }
            }
            self.parsed.send_replace(parsed);
        }
    }

    /// Waits until the screen has consumed everything output so far (what
    /// a client has already been sent), or the output closed.
    pub async fn settle(&self) {
        let target = self.end();
        let mut parsed = self.parsed.subscribe();
        let _ = parsed.wait_for(|p| *p >= target).await;
    }

    /// A receiver that changes whenever the screen has consumed more output.
    pub fn subscribe_screen(&self) -> watch::Receiver<u64> {
        self.parsed.subscribe()
    }

    /// The screen (with scrollback) as bytes that redraw it on a reset
    /// terminal, and the stream offset to continue from: the last one
    /// rendered while the ring can still continue it, else a fresh one.
    pub fn snapshot(&self) -> Arc<Snapshot> {
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
        let (rows, cols) = screen.parser.screen().size();
        let snap = Arc::new(Snapshot {
            bytes: Bytes::from(render(screen.parser.screen_mut())),
            offset: screen.offset,
            cols,
            rows,
        });
        *cached = Some(snap.clone());
        snap
    }

    /// The visible screen as plain text.
    pub fn screen_text(&self) -> String {
        lock(&self.screen).parser.screen().contents()
    }

    /// The window title the program set, if any.
    pub fn title(&self) -> Option<String> {
        lock(&self.screen).parser.callbacks().title.clone()
    }
}

/// Draws `screen` from a full reset: scrollback lines first (so they land in
/// the client's scrollback), then the visible screen, cursor and modes.
fn render(screen: &mut vt100::Screen) -> Vec<u8> {
    let (rows, cols) = screen.size();
    let mut out = b"\x1bc".to_vec();
    if screen.alternate_screen() {
        out.extend_from_slice(b"\x1b[?1049h");
    } else {
        screen.set_scrollback(usize::MAX);
        let total = screen.scrollback();
        let mut line = 0usize;
        while line < total {
            // With scrollback offset k the top visible row is line total-k.
            screen.set_scrollback(total - line);
            let n = (rows as usize).min(total - line);
            for row in screen.rows_formatted(0, cols).take(n) {
                out.extend_from_slice(&row);
                out.extend_from_slice(b"\x1b[m\r\n");
            }
            line += n;
        }
        screen.set_scrollback(0);
        if total > 0 {
            // Scroll what is still visible up into the scrollback.
            out.extend_from_slice(format!("\x1b[{rows};1H").as_bytes());
            let pushes = total.min(rows as usize - 1);
            out.extend(std::iter::repeat_n(b'\n', pushes));
        }
    }
    out.extend_from_slice(&screen.state_formatted());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start_parser(out: &Arc<Output>) -> std::thread::JoinHandle<()> {
        let out = out.clone();
        std::thread::spawn(move || out.run_parser())
    }

    fn small() -> OutputLimits {
        OutputLimits {
            window: 16,
            max_parser_lag: 64,
            scrollback: 100,
            stall_after: Duration::from_millis(200),
        }
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

    fn flow(stall_after: Duration) -> OutputLimits {
        OutputLimits {
            window: 1024,
            max_parser_lag: 1 << 20,
            scrollback: 10,
            stall_after,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_reading_client_holds_the_program_until_it_catches_up() {
        let out = Arc::new(Output::new(80, 24, flow(Duration::from_secs(30))));
        let parser = start_parser(&out);
        let reader = out.reader(0);
        out.push(Bytes::from(vec![b'x'; 4096]));
        let waiting = tokio::spawn({
            let out = out.clone();
            async move { out.make_room().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "waits for the client");
        reader.advance(4096);
        waiting.await.unwrap();
        out.close();
        parser.join().unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_client_slower_than_the_program_holds_it_only_briefly() {
        let out = Arc::new(Output::new(80, 24, flow(Duration::from_millis(100))));
        let parser = start_parser(&out);
        let reader = out.reader(0);
        out.push(Bytes::from(vec![b'x'; 4096]));
        // It keeps reading, but a byte at a time: never stalled, never
        // caught up.
        let slow = tokio::spawn({
            let reader = reader.clone();
            async move {
                for i in 1.. {
                    reader.advance(i);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        });
        tokio::time::timeout(Duration::from_secs(20), out.make_room())
            .await
            .expect("the program is let go");
        slow.abort();
        out.close();
        parser.join().unwrap();
    }

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
}
