//! Parameters, keys and proofs: their types and bellperson's byte formats ([`keys`]), the
//! point encodings those formats use ([`encoding`]), and where a proof's bases come from
//! ([`source`]: in memory, memory-mapped, or resident in a backend; [`partly_resident`]:
//! some queries resident, the others streamed, as [`residency`] says).

pub(crate) mod encoding;
pub(crate) mod keys;
pub(crate) mod partly_resident;
pub(crate) mod residency;
pub(crate) mod source;
