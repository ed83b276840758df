//! The one way duet takes a std mutex.
//!
//! A panic while holding one of duet's locks leaves plain data behind,
//! still consistent enough to serve: the whole server (or a session) is
//! not taken down with it, so a poisoned lock is taken as it is. Locks are
//! never held across an `.await` (clippy's `await_holding_lock` checks).

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, poisoned or not.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
