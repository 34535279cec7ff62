//! [`MemoryKind`]: which memory an allocation lives in. Below both the tracker
//! (`memory.rs`) and the error type (`error.rs`), which name it.

use std::fmt;

/// Which memory an allocation lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryKind {
    /// Host RAM.
    Host,
    /// Memory of the compute device. For the CPU backend this is host RAM too, but it is
    /// counted separately so that "what the backend holds" and "what the caller holds" stay
    /// distinguishable.
    Device,
}

impl fmt::Display for MemoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemoryKind::Host => "host",
            MemoryKind::Device => "device",
        })
    }
}
