//! The a·b = c check every synthesis and the matrices' evaluation run per constraint.

use ff::Field;
use sluice_field::Fr;
use subtle::ConstantTimeEq;

/// Whether a·b = c. `uniform` (raw storage) keeps the check constant time, so branching
/// reveals only whether the witness is valid; otherwise it is variable time, as compact
/// storage is, and skips the product where a or b is 0 or 1 (most gadget constraints).
#[inline]
pub(crate) fn satisfies(a: &Fr, b: &Fr, c: &Fr, uniform: bool) -> bool {
    match uniform {
        true => bool::from((*a * b).ct_eq(c)),
        false => product_is_vartime(a, b, c),
    }
}

/// Whether a·b = c, without the product where a or b is 0 or 1.
///
/// # Security
/// Variable time in a and b.
#[inline]
pub(crate) fn product_is_vartime(a: &Fr, b: &Fr, c: &Fr) -> bool {
    const ZERO: [u64; 4] = Fr::ZERO.mont_limbs();
    const ONE: [u64; 4] = Fr::ONE.mont_limbs();
    match (a.mont_limbs(), b.mont_limbs()) {
        (ZERO, _) | (_, ZERO) => c.mont_limbs() == ZERO,
        (ONE, _) => b.mont_limbs() == c.mont_limbs(),
        (_, ONE) => a.mont_limbs() == c.mont_limbs(),
        _ => (*a * b).mont_limbs() == c.mont_limbs(),
    }
}
