//! Host values as the 32-bit words the kernels read: the same bytes, no conversion.

use sluice_field::PlainLimbs;

#[cfg(target_endian = "big")]
compile_error!("sluice-backend-opencl shares buffers byte for byte with little-endian devices");

/// A host type as the kernels see it: `WORDS` little-endian 32-bit words, its bytes
/// exactly. The layout is sluice-field's [`PlainLimbs`] contract, which the kernels share.
pub(crate) trait DeviceRepr: PlainLimbs {
    /// 32-bit words per value.
    const WORDS: usize = 2 * Self::LIMBS;
}

impl<T: PlainLimbs> DeviceRepr for T {}

/// The words of a slice.
pub(crate) fn as_words<T: DeviceRepr>(s: &[T]) -> &[u32] {
    // SAFETY: PlainLimbs guarantees plain data of 8 * LIMBS = 4 * WORDS bytes, aligned to 8.
    unsafe { core::slice::from_raw_parts(s.as_ptr().cast::<u32>(), s.len() * T::WORDS) }
}

/// The words of a mutable slice (any word pattern is a valid value: see PlainLimbs).
pub(crate) fn as_words_mut<T: DeviceRepr>(s: &mut [T]) -> &mut [u32] {
    // SAFETY: as in `as_words`; the borrow is exclusive.
    unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u32>(), s.len() * T::WORDS) }
}

/// The 32-bit words of 64-bit words (low word first: the little-endian bytes).
pub(crate) fn u64_as_words(s: &[u64]) -> &[u32] {
    // SAFETY: u64 is plain data of two 32-bit words, aligned to 8.
    unsafe { core::slice::from_raw_parts(s.as_ptr().cast::<u32>(), s.len() * 2) }
}

/// The bytes of 32-bit words (little-endian, as the device reads them).
pub(crate) fn words_as_bytes_mut(s: &mut [u32]) -> &mut [u8] {
    // SAFETY: any bytes are valid u32 bits and u8 needs no alignment; the borrow is exclusive.
    unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), s.len() * 4) }
}
