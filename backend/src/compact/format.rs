//! The layout every part of compact storage shares: the page length, the escape code and
//! an element's size. It imports nothing of the crate, so the pages, the codes, raw storage
//! and the vector all read it without importing one another.

use sluice_field::Fr;

/// Entries per page of a compact vector.
pub const PAGE_LEN: usize = 1 << 16;

/// The code of an entry whose value is listed as an exception.
pub const ESCAPE: u8 = 0x80;

/// Bytes of one element, as host storage holds it.
pub(super) const FR_BYTES: u64 = core::mem::size_of::<Fr>() as u64;
