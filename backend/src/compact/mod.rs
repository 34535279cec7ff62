//! Compact host storage of scalar vectors: one byte per small value.
//!
//! The witness of the circuits Filecoin proves is mostly bits and small integers: in a
//! SHA-256 circuit every auxiliary value is 0 or 1 and 99.9% of the A and B evaluations lie
//! in [-127, 127]; in a bit decomposition 98.5% do (BENCHMARKS.md#c2, measured with
//! `cargo run --release -p sluice-groth16 --example witness_sizes`). Stored as 32-byte field
//! elements, a, b and the witness of a waiting partition hold three full vectors; stored
//! here, about a tenth of one.
//!
//! # Encoding
//! A [`CompactVec`] is a sequence of pages of [`PAGE_LEN`] entries. An entry is one code
//! byte: the value itself as an `i8` in [-127, 127] (negative codes stand for `p - |k|`),
//! or [`ESCAPE`], for which the page lists the entry's position and its full element, in
//! ascending order: 1 byte for a small value, 35 for another. A page that would list more
//! than half of its entries becomes 32-byte elements instead, so no page holds more than a
//! raw one would (plus one page's conversion, for a moment).
//!
//! Pages are allocated whole as the vector grows (only the first one grows, by doubling),
//! so the vector never copies itself into a larger buffer, and every byte is asked of the
//! vector's [`HostBudget`] before it is allocated. A full page never changes again: other
//! threads may read it ([`CompactVec::sealed_page`], [`SealedPages`]) while the vector
//! goes on growing.
//!
//! A vector dense from the start ([`Storage::Auto`]: more than half of its first
//! [`PROBE_LEN`] values are exceptions, as in a MiMC-like chain) switches to one raw
//! [`FrVec`](crate::FrVec), made at the expected capacity ahead of synthesis in memory a
//! backend lends where it lends any: what it held before compaction existed.
//!
//! # Security
//! Storing a value compactly depends on the value: how long the write takes and which
//! memory it touches reveal whether it is small. The witness already flows through
//! variable-time MSMs on the prover's own machine, and proofs are blinded by `r` and `s`.
//! Where synthesis must not branch on the witness, use [`Storage::Raw`].

mod code;
mod format;
mod page;
mod raw;
#[cfg(test)]
mod tests;
mod vec;

pub use code::{small_code_vartime, small_values, Entry};
// The host-side upload of a compact vector is the backend trait's default, defined there.
pub use crate::compute_backend::{upload_on_host, write_on_host};
pub use format::{ESCAPE, PAGE_LEN};
pub use page::{CodePage, Piece};
pub use vec::{
    max_host_bytes, CompactConfig, CompactVec, HostBudget, SealedPage, SealedPages, Storage,
    MIN_PROBE_LEN, PROBE_LEN,
};
