//! Throttling of token guesses: after too many wrong tokens from one address
//! (or from everyone together) within a minute, no token is looked at until
//! the minute is over.
//!
//! Only *different* wrong tokens count: a guesser must try new ones, while a
//! browser still holding the cookie of a restarted duet sends the same stale
//! one with every request, and must not lock its user out of the new start
//! URL.
//!
//! A generated token (256 bits) cannot be guessed at any rate, but one set
//! with `--token` may be as short as 16 characters. While an address is
//! blocked, even the right token gets 429: if it got in, the block would
//! tell a guesser when it had guessed right. Behind a proxy every request
//! comes from the proxy's address, so there the per-address limit acts for
//! everyone behind it, like the global one.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Wrong tokens allowed per address (an IPv6 /64 counts as one) per window.
pub(crate) const PER_ADDRESS: u32 = 10;
/// Wrong tokens allowed from all addresses together per window.
pub(crate) const GLOBAL: u32 = 100;
/// The window.
pub(crate) const WINDOW: Duration = Duration::from_secs(60);
/// Addresses remembered before expired windows are dropped; the global
/// limit bounds how many can be live at once.
const PRUNE_AT: usize = 1024;

#[derive(Clone)]
struct Window {
    start: Instant,
    failures: u32,
    /// Hashes of the wrong tokens counted in this window (at most the
    /// limit's worth: once full, the window blocks).
    seen: Vec<u64>,
}

impl Window {
    fn live(&self, now: Instant) -> bool {
        now.duration_since(self.start) < WINDOW
    }

    /// How long until the window ends, if it is full.
    fn blocked(&self, now: Instant, limit: u32) -> Option<Duration> {
        (self.live(now) && self.failures >= limit).then(|| WINDOW - now.duration_since(self.start))
    }

    fn new(now: Instant) -> Self {
        Window {
            start: now,
            failures: 0,
            seen: Vec::new(),
        }
    }

    /// Counts `token` unless this window has counted it already; whether
    /// it was new.
    fn count(&mut self, now: Instant, token: u64) -> bool {
        if !self.live(now) {
            *self = Window::new(now);
        }
        if self.seen.contains(&token) {
            return false;
        }
        if self.seen.len() < PER_ADDRESS as usize {
            self.seen.push(token);
        }
        self.failures = self.failures.saturating_add(1);
        true
    }
}

#[derive(Default)]
struct Counts {
    by_address: HashMap<IpAddr, Window>,
    global: Option<Window>,
}

/// See the module docs.
#[derive(Default)]
pub(crate) struct Throttle {
    counts: Mutex<Counts>,
    /// Keyed per process: which tokens were seen, not what they were.
    hasher: RandomState,
}

/// The address a limit applies to: IPv4 as is, IPv6 by its /64 (one
/// customer's usual allocation).
fn key(addr: IpAddr) -> IpAddr {
    match addr.to_canonical() {
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(bits.into())
        }
        v4 => v4,
    }
}

impl Throttle {
    /// `Err(retry_after)` if tokens from `addr` are not to be looked at now.
    pub(crate) fn check(&self, addr: Option<IpAddr>) -> Result<(), Duration> {
        let now = Instant::now();
        let counts = crate::sync::lock(&self.counts);
        let global = counts.global.as_ref().and_then(|w| w.blocked(now, GLOBAL));
        let own = addr
            .and_then(|a| counts.by_address.get(&key(a)))
            .and_then(|w| w.blocked(now, PER_ADDRESS));
        match global.max(own) {
            Some(wait) => Err(wait),
            None => Ok(()),
        }
    }

    /// Counts a wrong `token` from `addr`, unless the same one was counted
    /// for that address in this window already.
    pub(crate) fn failed(&self, addr: Option<IpAddr>, token: &str) {
        let now = Instant::now();
        let token = self.hasher.hash_one(token);
        let mut counts = crate::sync::lock(&self.counts);
        let new = match addr {
            Some(a) => {
                if counts.by_address.len() >= PRUNE_AT {
                    counts.by_address.retain(|_, w| w.live(now));
                }
                counts
                    .by_address
                    .entry(key(a))
                    .or_insert_with(|| Window::new(now))
                    .count(now, token)
            }
            None => true,
        };
        if new {
            let global = counts.global.get_or_insert_with(|| Window::new(now));
            if !global.live(now) {
                *global = Window::new(now);
            }
            // Distinct tokens are told apart per address only.
            global.failures = global.failures.saturating_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_address_then_global() {
        let t = Throttle::default();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        // The same wrong token again and again is one guess.
        for _ in 0..3 * PER_ADDRESS {
            t.failed(Some(a), "stale");
        }
        assert!(t.check(Some(a)).is_ok());
        for i in 1..PER_ADDRESS {
            assert!(t.check(Some(a)).is_ok());
            t.failed(Some(a), &format!("guess {i}"));
        }
        let wait = t.check(Some(a)).unwrap_err();
        assert!(wait <= WINDOW && wait > WINDOW - Duration::from_secs(5));
        assert!(t.check(Some("192.0.2.2".parse().unwrap())).is_ok());
        // One IPv6 /64 is one address.
        let v6 = |s: &str| Some(s.parse::<IpAddr>().unwrap());
        for i in 0..PER_ADDRESS {
            t.failed(v6(&format!("2001:db8::{i:x}")), &format!("guess {i}"));
        }
        assert!(t.check(v6("2001:db8::ffff")).is_err());
        assert!(t.check(v6("2001:db8:0:1::1")).is_ok());
        // Everyone together.
        for i in 0..GLOBAL {
            t.failed(
                Some(IpAddr::from([10, 0, (i / 256) as u8, i as u8])),
                "guess",
            );
        }
        assert!(t.check(Some("192.0.2.3".parse().unwrap())).is_err());
        assert!(t.check(None).is_err());
    }
}
