//! Small helpers of the backend's modules: driver errors, poisoned locks, parallel copies.

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

/// A parallel copy (a single thread copies far below the DMA's speed), on the device's
/// host pool. Plain stores: streaming (non-temporal) ones made the 2^27 partition slower
/// on an H200 (BENCHMARKS.md#partition).
pub(crate) fn copy_words(dst: &mut [u32], src: &[u32]) {
    use rayon::prelude::*;
    crate::host_pool::install(|| {
        dst.par_chunks_mut(1 << 16)
            .zip(src.par_chunks(1 << 16))
            .for_each(|(d, s)| d.copy_from_slice(s))
    });
}
