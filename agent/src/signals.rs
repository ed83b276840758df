//! Termination signals (SIGTERM, SIGHUP, SIGINT, SIGQUIT): the main loop is
//! asked to end the session cleanly; if it has not managed within a grace
//! period (it may be blocked writing to a PTY nobody reads), the signal
//! thread writes `session_end`, leaves raw mode and exits the process itself.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
use signal_hook::iterator::Signals;

/// How long the main loop gets to exit cleanly after a signal.
pub(crate) const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Starts handling the signals. `deliver` must not block; `emergency` runs
/// only if `finished` is still false after [`EXIT_GRACE`].
pub(crate) fn spawn(
    deliver: impl Fn(i32) + Send + 'static,
    emergency: impl FnOnce(i32) + Send + 'static,
    finished: Arc<AtomicBool>,
) -> io::Result<()> {
    let mut signals = Signals::new([SIGTERM, SIGHUP, SIGINT, SIGQUIT])?;
    thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                deliver(signal);
                // A grace period, not a wait for readiness: a clean exit ends
                // the process before this sleep does.
                thread::sleep(EXIT_GRACE);
                if !finished.load(Ordering::SeqCst) {
                    emergency(signal);
                }
            }
        })
        .map(|_| ())
}
