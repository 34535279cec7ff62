//! The code bytes: a value in [-127, 127] is its own code (as an `i8`), anything else is
//! [`ESCAPE`](super::ESCAPE). An [`Entry`] is a value as it is stored: by its code, or in full.

use ff::Field;
use sluice_field::Fr;

use super::format::ESCAPE;

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
pub(super) static SMALL: [Fr; 256] = SMALL_TABLE;

const SMALL_TABLE: [Fr; 256] = {
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

/// log2 of the slots of [`INDEX`]: 1024 slots for 254 codes keep probes short.
const INDEX_BITS: u32 = 10;

/// The slot a value's search starts at: a multiplicative hash of its low Montgomery limb
/// (the limbs of k R mod p for consecutive k are too regular to index by their bits alone:
/// they clustered, and misses scanned long runs).
const fn slot(low_limb: u64) -> usize {
    (low_limb.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - INDEX_BITS)) as usize
}

/// The nonzero codes by their elements' low Montgomery limb, open addressing with linear
/// probing, ESCAPE in empty slots: a value's code without leaving Montgomery form (a
/// conversion to canonical form cost most of a push).
static INDEX: [u8; 1 << INDEX_BITS] = {
    let mask = (1 << INDEX_BITS) - 1;
    let mut index = [ESCAPE; 1 << INDEX_BITS];
    let mut code = 1;
    while code < 256 {
        if code != ESCAPE as usize {
            let mut at = slot(SMALL_TABLE[code].mont_limbs()[0]);
            while index[at] != ESCAPE {
                at = (at + 1) & mask;
            }
            index[at] = code as u8;
        }
        code += 1;
    }
    index
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
    // Bits (the most common values) without a lookup.
    if limbs == ZERO {
        return Some(0);
    }
    if limbs == ONE {
        return Some(1);
    }
    let mask = (1 << INDEX_BITS) - 1;
    let mut at = slot(limbs[0]);
    loop {
        let code = INDEX[at];
        if code == ESCAPE {
            return None;
        }
        if SMALL[code as usize].mont_limbs() == limbs {
            return Some(code);
        }
        at = (at + 1) & mask;
    }
}

/// One value of a compact vector as it is stored: a small integer by its code, or a full
/// element (an exception, or any value of raw storage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// The integer k in [-127, 127].
    Small(i8),
    /// Any other element (and every element of raw storage).
    Full(Fr),
}

impl Entry {
    /// The element.
    #[inline]
    pub fn to_fr(self) -> Fr {
        match self {
            Entry::Small(k) => SMALL[k as u8 as usize],
            Entry::Full(x) => x,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // Random elements and integers around the range agree with the canonical test.
        let reference = |x: &Fr| {
            let c = x.to_canonical_limbs();
            let p = Fr::MODULUS_LIMBS;
            if c[1] | c[2] | c[3] == 0 && c[0] <= 127 {
                return Some(c[0] as u8);
            }
            let top_equal = c[1] == p[1] && c[2] == p[2] && c[3] == p[3];
            (top_equal && p[0] - c[0] <= 127).then(|| (p[0] - c[0]).wrapping_neg() as u8)
        };
        let mut x = Fr::from(0x9e37_79b9_7f4a_7c15u64);
        for k in -1000i64..1000 {
            assert_eq!(small_code_vartime(&small(k)), reference(&small(k)), "{k}");
            x = x.square() + Fr::ONE;
            assert_eq!(small_code_vartime(&x), reference(&x), "{x:?}");
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
