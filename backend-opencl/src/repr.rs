//! Host values as the 32-bit words the kernels read: the same bytes, no conversion.

use sluice_field::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

#[cfg(target_endian = "big")]
compile_error!("sluice-backend-opencl shares buffers byte for byte with little-endian devices");

/// A host type whose bytes are exactly `WORDS` little-endian 32-bit words of the device
/// layout.
///
/// # Safety
/// Implementors must be plain data (no padding, no pointers), `size_of == 4 * WORDS`,
/// aligned to at least 4, and every word pattern the kernels write must be a valid value
/// (fully reduced Montgomery limbs; sluice-field documents these layouts as fixed and shared
/// with the kernels).
pub(crate) unsafe trait DeviceRepr: Copy {
    const WORDS: usize;
}

macro_rules! device_repr {
    ($($t:ty => $words:expr),* $(,)?) => {$(
        const _: () = assert!(
            core::mem::size_of::<$t>() == 4 * $words && core::mem::align_of::<$t>() >= 4
        );
        // SAFETY: sluice-field's layout contract: repr(transparent)/repr(C) wrappers of
        // [u64; N] limbs (Fr 4, Fq 6; affine x, y; Jacobian x, y, z), checked above in size.
        unsafe impl DeviceRepr for $t {
            const WORDS: usize = $words;
        }
    )*};
}

device_repr! {
    Fr => 8,
    sluice_field::Fq => 12,
    sluice_field::Fq2 => 24,
    G1Affine => 24,
    G2Affine => 48,
    G1Projective => 36,
    G2Projective => 72,
}

/// The words of a slice.
pub(crate) fn as_words<T: DeviceRepr>(s: &[T]) -> &[u32] {
    // SAFETY: DeviceRepr guarantees plain data of 4 * WORDS bytes, aligned to 4.
    unsafe { core::slice::from_raw_parts(s.as_ptr().cast::<u32>(), s.len() * T::WORDS) }
}

/// The words of a mutable slice (the kernels only write valid values; see DeviceRepr).
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
