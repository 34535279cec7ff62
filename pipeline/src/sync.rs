//! The one lock helper of the crate's threads.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks, recovering from poisoning: every critical section in this crate leaves its state
/// consistent (counters set by single assignments, queues pushed or popped whole), so a
/// panic elsewhere must not stop the pipeline serving.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
