//! A temporary directory for the small sectors the circuits are made from.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::FilecoinError;

/// A fresh directory under the system's temporary directory, removed with everything in it
/// when dropped. storage-proofs keeps a sector's replica and Merkle trees in files (its
/// `LCTree`s read the replica back), but a circuit owns its witness once made, so nothing
/// outlives the circuit's construction.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    pub(crate) fn new(what: &str) -> Result<Self, FilecoinError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "sluice-filecoin-{what}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).map_err(|source| FilecoinError::File {
            path: path.clone(),
            source,
        })?;
        Ok(Scratch(path))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Best effort: a leftover directory of a few KiB is no reason to fail a benchmark.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
