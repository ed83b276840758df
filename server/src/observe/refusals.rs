//! A bound on the audit lines that refusals for a role write. The caller of
//! a 403 is known (it got past authentication, so a flood of strangers
//! writes nothing: a 401 is never audited), but a script holding a
//! viewer's token or a share link could repeat a refused request for as
//! long as it likes, and each refusal would grow the audit file.
//!
//! So each principal gets at most [`LINES_PER_WINDOW`] refusal lines per
//! audit file per [`WINDOW`]; the refusals past that are counted, and the
//! principal's next refusal line says how many were left out
//! (`suppressed`). A person who clicks a hidden button now and then is
//! never held back; a loop costs at most 20 lines a minute.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use duet_protocol::ws::ErrorCode;

use super::record::{Record, Refusal};
use super::{Actor, Observer, SessionObserver};
use crate::auth::Action;
use crate::sync::lock;

/// Refusal lines one principal may write to one file per [`WINDOW`].
pub(crate) const LINES_PER_WINDOW: u32 = 20;
/// See [`LINES_PER_WINDOW`].
pub(crate) const WINDOW: Duration = Duration::from_secs(60);
/// Principals tracked per file. Principals are credentials (the config's
/// named tokens, at most 256 share links), so this is rarely reached;
/// past it, the ones not tracked share one window.
const MAX_PRINCIPALS: usize = 64;

#[derive(Default)]
struct Window {
    start: Option<Instant>,
    written: u32,
    /// Refusals not written since this principal's last line.
    suppressed: u64,
}

impl Window {
    fn admit(&mut self, now: Instant) -> Option<u64> {
        if self.start.is_none_or(|s| now.duration_since(s) >= WINDOW) {
            self.start = Some(now);
            self.written = 0;
        }
        if self.written >= LINES_PER_WINDOW {
            self.suppressed += 1;
            return None;
        }
        self.written += 1;
        Some(std::mem::take(&mut self.suppressed))
    }

    fn ended(&self, now: Instant) -> bool {
        self.start.is_none_or(|s| now.duration_since(s) >= WINDOW)
    }
}

#[derive(Default)]
struct Windows {
    by_name: HashMap<String, Window>,
    /// For principals past [`MAX_PRINCIPALS`].
    others: Window,
}

/// See the module docs. One per audit file.
#[derive(Default)]
pub(crate) struct Refusals {
    windows: Mutex<Windows>,
}

impl Refusals {
    /// Whether a refusal of principal `name` gets its audit line now:
    /// `Some(n)`, `n` being its refusals left out since its last line, or
    /// `None` (counted, and reported with its next line).
    pub(crate) fn admit(&self, name: &str, now: Instant) -> Option<u64> {
        let mut w = lock(&self.windows);
        if !w.by_name.contains_key(name) && w.by_name.len() >= MAX_PRINCIPALS {
            // Windows that ended have nothing to hold back; their count
            // of suppressed lines, if any, is dropped with them.
            w.by_name.retain(|_, win| !win.ended(now));
            if w.by_name.len() >= MAX_PRINCIPALS {
                return w.others.admit(now);
            }
        }
        w.by_name.entry(name.to_string()).or_default().admit(now)
    }
}

/// The audit line of `who` refused `action` for its role, `kind` being the
/// kind the line of the action itself has (`submit`, `approval`,
/// `session_delete`, ...), unless the principal is over its limit.
fn line(
    refusals: &Refusals,
    kind: &'static str,
    action: Action,
    who: &Actor,
) -> Option<Record<'static>> {
    let suppressed = refusals.admit(who.name.as_deref().unwrap_or(""), Instant::now())?;
    Some(Record::Refused(Refusal {
        kind,
        who: who.json(),
        action: action.as_str(),
        outcome: "refused",
        error: ErrorCode::Forbidden.as_str(),
        suppressed: (suppressed > 0).then_some(suppressed),
    }))
}

impl Observer {
    /// `who` was refused `action` (tried as `kind`) on no session in
    /// particular (creating one, the metrics): a line in the server's file.
    pub(crate) fn forbidden(&self, kind: &'static str, action: Action, who: &Actor) {
        if let Some(line) = line(&self.refusals, kind, action, who) {
            self.record(line);
        }
    }
}

impl SessionObserver {
    /// `who` was refused `action` (tried as `kind`) on this session: a
    /// line in the session's file.
    pub(crate) fn forbidden(&self, kind: &'static str, action: Action, who: &Actor) {
        if let Some(line) = line(&self.refusals, kind, action, who) {
            self.record(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_cut_to_the_limit_and_the_rest_is_counted() {
        let r = Refusals::default();
        let t0 = Instant::now();
        for _ in 0..LINES_PER_WINDOW {
            assert_eq!(r.admit("vw", t0), Some(0));
        }
        for _ in 0..5 {
            assert_eq!(r.admit("vw", t0), None);
        }
        // Another principal has a window of its own.
        assert_eq!(r.admit("drv", t0), Some(0));
        // The next window's first line says what was left out.
        let t1 = t0 + WINDOW;
        assert_eq!(r.admit("vw", t1), Some(5));
        assert_eq!(r.admit("vw", t1), Some(0));
    }

    #[test]
    fn principals_past_the_limit_share_a_window() {
        let r = Refusals::default();
        let t0 = Instant::now();
        for i in 0..MAX_PRINCIPALS {
            assert_eq!(r.admit(&format!("share:{i}"), t0), Some(0));
        }
        for _ in 0..LINES_PER_WINDOW {
            assert_eq!(r.admit("late", t0), Some(0));
        }
        assert_eq!(r.admit("later", t0), None);
        // Once the tracked windows end, there is room again.
        assert_eq!(r.admit("later", t0 + WINDOW), Some(0));
        assert_eq!(lock(&r.windows).by_name.len(), 1);
    }
}
