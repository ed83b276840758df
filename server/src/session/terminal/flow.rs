//! Flow control of one session's output: while a client keeps reading, the
//! program waits for it (as on a real terminal, where a slow terminal slows
//! the program), but no client holds the program back for longer than
//! `stall_after` in a row, and a paused one not at all. Such a client falls
//! out of the ring's window and later gets a snapshot instead.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::output::Output;
use crate::sync::lock;

/// How far a client that keeps reading may be behind before the PTY reader
/// waits for it: enough to stream at full speed, little enough that Ctrl-C
/// in a flood shows within milliseconds (what is behind still arrives).
const FLOW_AHEAD: u64 = 512 << 10;

/// One client's place in the stream, as flow control sees it.
pub(crate) struct Reader {
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
    pub(crate) fn advance(&self, cursor: u64) {
        self.cursor.store(cursor, Ordering::Release);
        self.wake();
    }

    /// The client was resynchronised to `cursor`: a fresh start, which may
    /// hold the program again.
    pub(crate) fn resynced(&self, cursor: u64) {
        self.cursor.store(cursor, Ordering::Release);
        self.held_since.store(0, Ordering::Release);
        self.wake();
    }

    /// A paused client never holds the program back; a resumed one starts
    /// afresh.
    pub(crate) fn set_paused(&self, paused: bool) {
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

impl Output {
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Registers a client at `cursor` for flow control; it counts until the
    /// returned handle is dropped.
    #[cfg(test)]
    pub(crate) fn reader(self: &Arc<Self>, cursor: u64) -> Arc<Reader> {
        self.register(cursor, false)
    }

    fn register(self: &Arc<Self>, cursor: u64, paused: bool) -> Arc<Reader> {
        let reader = Arc::new(Reader {
            cursor: AtomicU64::new(cursor),
            held_since: AtomicU64::new(0),
            paused: AtomicBool::new(paused),
            output: Arc::downgrade(self),
        });
        let mut readers = lock(&self.readers);
        readers.retain(|r| r.strong_count() > 0);
        readers.push(Arc::downgrade(&reader));
        reader
    }

    /// A reader that keeps everything the ring holds now (up to `window`)
    /// until its first [`Reader::resynced`], without holding the program
    /// back: a new client registers it before its first snapshot, so the
    /// bytes after that snapshot cannot be trimmed before it reads them.
    pub(crate) fn pinned_reader(self: &Arc<Self>) -> Arc<Reader> {
        let start = lock(&self.ring).start;
        self.register(start, true)
    }

    /// The cursor of the client furthest behind (paused ones included),
    /// if any client is attached.
    pub(super) fn oldest_reader(&self) -> Option<u64> {
        lock(&self.readers)
            .iter()
            .filter_map(Weak::upgrade)
            .map(|r| r.cursor.load(Ordering::Acquire))
            .min()
    }

    /// Waits while the screen parser is more than `max_parser_lag` bytes
    /// behind, and while a client that keeps up is more than `FLOW_AHEAD`
    /// behind (see the module docs). The PTY reader calls it before
    /// each read, so a program that outruns either is slowed down (its
    /// writes block on a full PTY), and nothing grows without bound.
    pub(crate) async fn make_room(&self) {
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
        let mut held = false;
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
            if !std::mem::replace(&mut held, true) {
                if let Some(c) = self.flow_holds.get() {
                    c.inc();
                }
            }
            let _ = tokio::time::timeout(
                Duration::from_millis(until_released),
                self.progress.notified(),
            )
            .await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::output::testing::start_parser;
    use super::super::output::OutputLimits;
    use super::*;
    use bytes::Bytes;

    fn flow(stall_after: Duration) -> OutputLimits {
        OutputLimits {
            window: 1024,
            keep: 1024,
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
}
