//! The tasks a channel runs (its readers, writer, heartbeat, hook server),
//! ended with the channel: a task that outlived its channel kept the
//! agent's pipes and the session's files open after a purge.

use std::future::Future;

use tokio::task::{AbortHandle, JoinHandle};
use tracing::Instrument;

use crate::sync::lock;

/// See the module docs. Aborts every task it holds when dropped.
#[derive(Default)]
pub(crate) struct Tasks(std::sync::Mutex<Vec<AbortHandle>>);

impl Tasks {
    /// Spawns `task` in the current span and keeps it.
    pub(crate) fn spawn<F>(&self, task: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let handle = tokio::spawn(task.in_current_span());
        self.add(&handle);
        handle
    }

    /// Keeps a task spawned elsewhere.
    pub(crate) fn add<T>(&self, handle: &JoinHandle<T>) {
        let mut held = lock(&self.0);
        // Finished ones need no abort: a long-lived channel that spawns
        // now and then does not pile up handles.
        held.retain(|h| !h.is_finished());
        held.push(handle.abort_handle());
    }
}

impl Tasks {
    /// Aborts every task held now (the channel finished before it is
    /// dropped).
    pub(crate) fn abort_all(&self) {
        for h in lock(&self.0).drain(..) {
            h.abort();
        }
    }
}

impl Drop for Tasks {
    fn drop(&mut self) {
        self.abort_all();
    }
}
