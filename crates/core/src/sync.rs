//! Locks that outlive a panic: a task that panicked while holding a lock leaves data that is
//! still whole (every critical section here writes it in one step), so the next holder takes
//! it as it is instead of panicking in turn.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, taking it over from a holder that panicked.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
