//! The memory layout sluice's device kernels share with the host types: plain 64-bit limbs.

use crate::{Fq, Fq2, Fr, G1Affine, G1Projective, G2Affine, G2Projective};

/// A type whose value is exactly [`LIMBS`](Self::LIMBS) little-endian `u64` limbs: no
/// padding, no pointers, aligned to 8, every limb pattern a valid Rust value. Buffers of
/// these types cross to and from a device as their bytes, with no conversion.
///
/// Field elements are their Montgomery limbs (`Fr` 4, `Fq` 6, `Fq2` `c0` then `c1`), affine
/// points `x` then `y` with the identity as `(0, 0)`, Jacobian points `x`, `y`, `z` with the
/// identity at `z = 0`. Kernels rely on this, so it is part of the types' contract.
///
/// # Safety
/// An implementor must have the layout above: `size_of::<Self>() == 8 * LIMBS`, alignment
/// at least 8, and any limb pattern must be a valid value (a wrong field element is a wrong
/// result, never undefined behaviour). Implemented here for sluice-field's own types only.
pub unsafe trait PlainLimbs: Copy + Send + Sync + 'static {
    /// The number of 64-bit limbs of one value.
    const LIMBS: usize;
}

macro_rules! plain_limbs {
    ($($t:ty => $limbs:expr),* $(,)?) => {$(
        const _: () = assert!(
            core::mem::size_of::<$t>() == 8 * $limbs && core::mem::align_of::<$t>() >= 8
        );
        // SAFETY: repr(transparent)/repr(C) wrappers of `[u64; N]` limbs (Fr 4, Fq 6; Fq2
        // c0, c1; affine x, y; Jacobian x, y, z), their size checked above; every field is
        // a `u64` array, so no padding and no invalid bit pattern.
        unsafe impl PlainLimbs for $t {
            const LIMBS: usize = $limbs;
        }
    )*};
}

plain_limbs! {
    Fr => 4,
    Fq => 6,
    Fq2 => 12,
    G1Affine => 12,
    G2Affine => 24,
    G1Projective => 18,
    G2Projective => 36,
}
