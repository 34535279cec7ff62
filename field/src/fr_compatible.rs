//! Prime fields that are `Fr` in another crate's clothes: the same field, stored the same way.
//!
//! Circuits from the ecosystem are written against a concrete scalar type (Filecoin's against
//! `blstrs::Scalar`). Where that type keeps elements exactly as [`Fr`] does (four
//! little-endian 64-bit Montgomery limbs, R = 2^256, always fully reduced), its values and
//! slices are `Fr` values and slices already, and crossing over is a reinterpretation: no
//! copy, no reduction, no allocation.

use crate::Fr;
use core::mem::{align_of, size_of};
use ff::PrimeField;

mod sealed {
    /// Only this crate implements [`FrCompatible`](super::FrCompatible): every
    /// implementation is a claim about memory layout that the crate checks.
    pub trait Sealed {}
}
pub(crate) use sealed::Sealed;

/// A prime field with exactly `Fr`'s representation: the scalar field of BLS12-381, stored as
/// four little-endian 64-bit limbs in Montgomery form (R = 2^256 mod r), always fully
/// reduced, with `Fr`'s size and alignment.
///
/// Implemented for [`Fr`] and, with the `blstrs` feature, for `blstrs::Scalar`. Sealed: each
/// implementation is checked against `Fr`'s layout (sizes and alignments at compile time,
/// values against the other crate's arithmetic in tests), so the conversions below are
/// reinterpretations that cost nothing.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a scalar sluice proves circuits over",
    note = "sluice proves circuits over its `Fr` and, with the feature `blstrs` of sluice (or sluice-groth16), over `blstrs::Scalar`: add `features = [\"blstrs\"]` to the dependency"
)]
pub trait FrCompatible: PrimeField + Sealed + Send + Sync + 'static {
    /// This element as an `Fr`.
    #[inline(always)]
    fn to_fr(self) -> Fr {
        *self.as_fr()
    }

    /// `value` as an element of this field.
    #[inline(always)]
    fn from_fr(value: Fr) -> Self {
        Self::from_fr_slice(core::slice::from_ref(&value))[0]
    }

    /// A view of this element as an `Fr`.
    #[inline(always)]
    fn as_fr(&self) -> &Fr {
        &Self::as_fr_slice(core::slice::from_ref(self))[0]
    }

    /// A view of `values` as `Fr`s (same length, same memory).
    #[inline(always)]
    fn as_fr_slice(values: &[Self]) -> &[Fr] {
        assert_same_layout::<Self>();
        // SAFETY: sealed; every implementor has Fr's size, alignment and value invariant
        // (asserted above, tested against the other crate's arithmetic), so the same
        // memory holds valid `Fr`s, for the same lifetime.
        unsafe { core::slice::from_raw_parts(values.as_ptr().cast::<Fr>(), values.len()) }
    }

    /// A mutable view of `values` as `Fr`s: every `Fr` written is a valid element of this
    /// field, since both keep the same reduced limbs.
    #[inline(always)]
    fn as_fr_slice_mut(values: &mut [Self]) -> &mut [Fr] {
        assert_same_layout::<Self>();
        // SAFETY: as in `as_fr_slice`; the borrow is exclusive and the invariant is shared
        // both ways, so writes through either view keep both valid.
        unsafe { core::slice::from_raw_parts_mut(values.as_mut_ptr().cast::<Fr>(), values.len()) }
    }

    /// A view of `values` as elements of this field.
    #[inline(always)]
    fn from_fr_slice(values: &[Fr]) -> &[Self] {
        assert_same_layout::<Self>();
        // SAFETY: as in `as_fr_slice`, the other way.
        unsafe { core::slice::from_raw_parts(values.as_ptr().cast::<Self>(), values.len()) }
    }

    /// A mutable view of `values` as elements of this field.
    #[inline(always)]
    fn from_fr_slice_mut(values: &mut [Fr]) -> &mut [Self] {
        assert_same_layout::<Self>();
        // SAFETY: as in `as_fr_slice_mut`, the other way.
        unsafe { core::slice::from_raw_parts_mut(values.as_mut_ptr().cast::<Self>(), values.len()) }
    }
}

/// Fails to compile (post-monomorphization) for a type whose size or alignment is not `Fr`'s.
#[inline(always)]
const fn assert_same_layout<T>() {
    const {
        assert!(size_of::<T>() == size_of::<Fr>() && align_of::<T>() == align_of::<Fr>());
    }
}

impl Sealed for Fr {}
impl FrCompatible for Fr {}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    /// Views share memory: a write through one is seen through the other, and lengths agree.
    #[test]
    fn views_of_fr_are_the_same_memory() {
        let seed = 31;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut values: [Fr; 5] = core::array::from_fn(|_| Fr::random(&mut rng));
        let copy = values;
        assert_eq!(Fr::as_fr_slice(&values), &copy, "seed {seed}");
        assert_eq!(
            Fr::as_fr_slice(&values).as_ptr(),
            values.as_ptr(),
            "seed {seed}"
        );
        Fr::as_fr_slice_mut(&mut values)[3] = Fr::ONE;
        assert_eq!(values[3], Fr::ONE);
        Fr::from_fr_slice_mut(&mut values)[1] = Fr::ZERO;
        assert_eq!(values[1], Fr::ZERO);
        assert_eq!(Fr::from_fr(copy[0]).to_fr(), copy[0], "seed {seed}");
        assert_eq!(Fr::from_fr_slice(&[]).len(), 0);
    }
}
