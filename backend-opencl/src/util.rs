//! Small helpers every module of the backend uses: driver errors and poisoned locks.

use std::sync::{Mutex, MutexGuard};

use sluice_backend::BackendError;

/// Maps a driver error, keeping the OpenCL status code.
pub(crate) fn driver_error(what: &str, e: &ocl::core::Error) -> BackendError {
    BackendError::Driver {
        code: e.api_status().map_or(0, |s| s as i32),
        message: format!("{what}: {e}"),
        build_log: None,
    }
}

/// Locks a mutex, ignoring poisoning (the guarded caches stay consistent on panic).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
