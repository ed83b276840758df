//! Waiting for what no event announces: a process's death, a descriptor
//! closed, a timer inside the server, a file written by another process.
//! Everything a test can await as an event (a WebSocket message, a reply)
//! is awaited as one; these poll, every 20 ms, bounded by a deadline.

use std::future::Future;
use std::time::Duration;

use super::DEADLINE;

/// How often a condition is looked at again.
const EVERY: Duration = Duration::from_millis(20);

/// Waits until `check` holds, at most [`DEADLINE`]; the test fails with
/// `what` otherwise.
pub(crate) async fn eventually<F, Fut>(what: &str, check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    if !within(DEADLINE, check).await {
        panic!("{what}: not so within {DEADLINE:?}");
    }
}

/// Whether `check` came to hold within `limit` (for a test that says more
/// than [`eventually`] when it does not).
pub(crate) async fn within<F, Fut>(limit: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    tokio::time::timeout(limit, async {
        while !check().await {
            tokio::time::sleep(EVERY).await;
        }
    })
    .await
    .is_ok()
}

/// Whether process `pid` runs (a zombie counts as gone).
pub(crate) fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rfind(')')
                .is_some_and(|i| s[i + 1..].trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// Descriptors this process has open (an in-process server's among them).
pub(crate) fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// The value of `series` (its name and labels, as exported) in a
/// `/metrics` text.
pub(crate) fn metric(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no series {series} in\n{text}"))
        .trim()
        .parse()
        .unwrap()
}
