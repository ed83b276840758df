//! Follows one session for the board: its control news (approvals,
//! clients, warnings, its exit), new events (with the turn state) and
//! terminal output, until the session is removed (the board aborts it).

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

use super::Board;
use crate::session::{Control, Session};

/// Terminal output counts as activity at most this often: a program that
/// animates a spinner would otherwise wake every watcher at each frame.
/// The follower does not even listen to output during the grain: woken by
/// every push, it displaced the client's send task from the worker that
/// read the output, and the echo of each key hopped threads (profiled,
/// docs/benchmarks.md).
const OUTPUT_GRAIN: Duration = Duration::from_secs(1);

/// What woke the follower.
enum Wake {
    /// A sign of life (an event, an approval, the exit).
    Activity,
    /// Shown on the board, but no sign of life (a client came or went).
    Change,
    /// Terminal output.
    Output,
    /// The grain after output is over: show a title the screen parser has
    /// set since, and look at the output again.
    Trailing,
    /// One of the session's signals is gone.
    Closed(Signal),
}

#[derive(Clone, Copy)]
enum Signal {
    Control,
    Events,
    Output,
    Exited,
}

/// See the module docs.
pub(super) async fn follow(board: Weak<Board>, session: Arc<Session>) {
    let mut control = session.subscribe();
    let mut events = session.events().subscribe();
    let mut output = session.terminal.output.subscribe();
    let mut exited = session.exited();
    let (mut control_open, mut events_open, mut output_open, mut exited_open) =
        (true, true, true, true);
    // While set, output is not listened to (see `OUTPUT_GRAIN`).
    let mut trailing: Option<Instant> = None;
    loop {
        let wake = tokio::select! {
            r = control.recv(), if control_open => match r {
                Ok(Control::Clients(_) | Control::Resize { .. }) => Wake::Change,
                Ok(_) | Err(RecvError::Lagged(_)) => Wake::Activity,
                Err(RecvError::Closed) => Wake::Closed(Signal::Control),
            },
            r = events.changed(), if events_open => match r {
                Ok(()) => Wake::Activity,
                Err(_) => Wake::Closed(Signal::Events),
            },
            r = output.changed(), if output_open && trailing.is_none() => match r {
                Ok(()) => Wake::Output,
                Err(_) => Wake::Closed(Signal::Output),
            },
            r = exited.changed(), if exited_open => match r {
                Ok(()) => Wake::Activity,
                Err(_) => Wake::Closed(Signal::Exited),
            },
            () = sleep_until(trailing), if trailing.is_some() => Wake::Trailing,
        };
        let Some(board) = board.upgrade() else { return };
        match wake {
            Wake::Activity => board.touch(session.id),
            Wake::Change => board.bump(),
            Wake::Output => {
                trailing = Some(Instant::now() + OUTPUT_GRAIN);
                board.touch(session.id);
            }
            Wake::Trailing => {
                trailing = None;
                board.touch(session.id);
                // Output during the grain: another grain, still not
                // listening; otherwise wait for the next output.
                if output.has_changed().unwrap_or(false) {
                    output.borrow_and_update();
                    trailing = Some(Instant::now() + OUTPUT_GRAIN);
                }
            }
            Wake::Closed(signal) => match signal {
                Signal::Control => control_open = false,
                Signal::Events => events_open = false,
                Signal::Output => output_open = false,
                Signal::Exited => exited_open = false,
            },
        }
        if !(control_open || events_open || output_open || exited_open || trailing.is_some()) {
            return;
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
