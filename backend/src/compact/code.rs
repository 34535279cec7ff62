//! The code bytes: a value in [-127, 127] is its own code (as an `i8`), anything else is
//! [`ESCAPE`](super::ESCAPE).

use ff::Field;
use sluice_field::Fr;

/// Montgomery limbs of `a + b mod p`, for building [`SMALL`] at compile time.
const fn add_mod(a: [u64; 4], b: [u64; 4]) -> [u64; 4] {
    let (sum, _) = add(a, b);
    // a, b < p < 2^255: the sum has no carry out of the top limb.
    let (diff, borrow) = sub(sum, Fr::MODULUS_LIMBS);
    if borrow {
        sum
    } else {
        diff
    }
}

const fn add(a: [u64; 4], b: [u64; 4]) -> ([u64; 4], bool) {
    let (mut out, mut carry, mut i) = ([0u64; 4], 0u64, 0);
    while i < 4 {
        let t = a[i] as u128 + b[i] as u128 + carry as u128;
        out[i] = t as u64;
        carry = (t >> 64) as u64;
        i += 1;
    }
    (out, carry != 0)
}

const fn sub(a: [u64; 4], b: [u64; 4]) -> ([u64; 4], bool) {
    let (mut out, mut borrow, mut i) = ([0u64; 4], 0u64, 0);
    while i < 4 {
        let t = (a[i] as u128).wrapping_sub(b[i] as u128 + borrow as u128);
        out[i] = t as u64;
        borrow = (t >> 127) as u64;
        i += 1;
    }
    (out, borrow != 0)
}

/// The element each code stands for (the escape's entry is unused, zero).
pub(super) static SMALL: [Fr; 256] = {
    let one = Fr::ONE.mont_limbs();
    let mut table = [Fr::from_mont_limbs_unchecked([0; 4]); 256];
    let (mut k, mut acc) = (1, one);
    while k <= 127 {
        table[k] = Fr::from_mont_limbs_unchecked(acc);
        // The code of -k is the byte of -(k as i8): 256 - k.
        table[256 - k] = Fr::from_mont_limbs_unchecked(sub(Fr::MODULUS_LIMBS, acc).0);
        acc = add_mod(acc, one);
        k += 1;
    }
    table
};

/// The element each code stands for, [`ESCAPE`](super::ESCAPE)'s entry aside: the table
/// devices receive to expand codes.
pub fn small_values() -> &'static [Fr; 256] {
    &SMALL
}

/// The code of `x` when it is a small integer (|k| <= 127), else `None`.
///
/// # Security
/// Variable time in `x` (see [the module docs](super)).
#[inline]
pub fn small_code_vartime(x: &Fr) -> Option<u8> {
    const ZERO: [u64; 4] = [0; 4];
    const ONE: [u64; 4] = Fr::ONE.mont_limbs();
    let limbs = x.mont_limbs();
    // Bits and -1 (the most common values) without leaving Montgomery form.
    if limbs == ZERO {
        return Some(0);
    }
    if limbs == ONE {
        return Some(1);
    }
    if limbs == SMALL[0xFF].mont_limbs() {
        return Some(0xFF);
    }
    let c = x.to_canonical_limbs();
    let p = Fr::MODULUS_LIMBS;
    if c[1] | c[2] | c[3] == 0 && c[0] <= 127 {
        return Some(c[0] as u8);
    }
    // p - c <= 127 needs the top three limbs equal (p's low limb is above 127).
    if c[1] == p[1] && c[2] == p[2] && c[3] == p[3] && p[0] - c[0] <= 127 {
        return Some((p[0] - c[0]).wrapping_neg() as u8);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::ESCAPE;

    fn small(k: i64) -> Fr {
        match k >= 0 {
            true => Fr::from(k as u64),
            false => -Fr::from((-k) as u64),
        }
    }

    #[test]
    fn small_values_are_the_integers_of_their_codes() {
        for k in -127i64..=127 {
            let code = (k as i8) as u8;
            assert_ne!(code, ESCAPE);
            assert_eq!(SMALL[code as usize], small(k), "{k}");
            assert_eq!(small_code_vartime(&small(k)), Some(code), "{k}");
        }
        for x in [
            small(128),
            small(-128),
            Fr::from(u64::MAX),
            -Fr::from(u64::MAX),
            Fr::from(u64::MAX).square(),
            Fr::from(1u64 << 40),
        ] {
            assert_eq!(small_code_vartime(&x), None);
        }
    }
}
