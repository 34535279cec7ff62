//! Element-wise passes: bit-reversal permutation, power distribution, scaling.

use alloc::vec::Vec;

use ff::Field;

use crate::par::{chunk_len_for, for_each_chunk, for_each_index, MIN_PARALLEL_LEN};
use crate::NttError;

/// Reverses the low `bits` bits of `x` (higher bits of `x` must be zero).
#[inline]
pub(crate) fn reverse_bits(x: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        x.reverse_bits() >> (usize::BITS - bits)
    }
}

/// Permutes `data` in place so that the element at index `i` moves to index `bitrev(i)`,
/// where `bitrev` reverses the `log2(len)` low bits. The permutation is an involution.
///
/// Returns [`NttError::NotPowerOfTwo`] unless `data.len()` is a power of two (an empty slice
/// is refused too). Works on any element type; parallel under the `parallel` feature.
pub fn bit_reverse_permute<T: Send>(data: &mut [T]) -> Result<(), NttError> {
    if !data.len().is_power_of_two() {
        return Err(NttError::NotPowerOfTwo { len: data.len() });
    }
    bit_reverse_unchecked(data);
    Ok(())
}

/// A raw pointer that may cross threads: the tiles of [`bit_reverse_unchecked`] touch disjoint
/// elements, which the borrow checker cannot see through a strided pattern.
struct SharedMut<T>(*mut T);

// SAFETY: only used to hand disjoint element sets to different threads; `T: Send` makes moving
// those elements' access across threads sound.
unsafe impl<T: Send> Send for SharedMut<T> {}
// SAFETY: as above; the pointer is never used to create overlapping accesses.
unsafe impl<T: Send> Sync for SharedMut<T> {}

impl<T> SharedMut<T> {
    /// Accessor, so closures capture the whole wrapper (not just the raw-pointer field).
    fn get(&self) -> *mut T {
        self.0
    }
}

/// Bits per side of a bit-reversal tile: a tile pair (2 x 2^(2*TILE_BITS) elements) stays in L1.
const TILE_BITS: u32 = 4;

/// [`bit_reverse_permute`] for a length already known to be a power of two.
///
/// Cache-blocked (COBRA style): write an index as `hi | mid | lo` with `TILE_BITS`-bit `hi`
/// and `lo`. Then `bitrev(hi|mid|lo) = rev(lo)|rev(mid)|rev(hi)`, so the 2^(2*TILE_BITS)
/// elements with middle bits `m` swap exactly with those with middle bits `rev(m)`; each such
/// tile pair is independent work and touches few cache lines.
pub(crate) fn bit_reverse_unchecked<T: Send>(data: &mut [T]) {
    let n = data.len();
    debug_assert!(n.is_power_of_two());
    if n <= 2 {
        return;
    }
    let log_n = n.trailing_zeros();
    let b = TILE_BITS.min(log_n / 2);
    let mid_bits = log_n - 2 * b;
    let side = 1usize << b;
    let base = SharedMut(data.as_mut_ptr());
    let tile_pair = |m: usize| {
        let m_rev = reverse_bits(m, mid_bits);
        if m_rev < m {
            return; // handled from the other tile of the pair
        }
        for hi in 0..side {
            for lo in 0..side {
                let i = (hi << (mid_bits + b)) | (m << b) | lo;
                let j =
                    (reverse_bits(lo, b) << (mid_bits + b)) | (m_rev << b) | reverse_bits(hi, b);
                // Within a self-paired tile swap each pair once; across tiles every element of
                // tile `m` has its partner in tile `m_rev`.
                if m_rev != m || i < j {
                    // SAFETY: i, j < n (both are log_n-bit indices); i != j. Tile pairs
                    // {m, rev(m)} partition the indices, and only the call for min(m, rev(m))
                    // touches a pair, so no two threads access the same element.
                    unsafe { core::ptr::swap(base.get().add(i), base.get().add(j)) };
                }
            }
        }
    };
    for_each_index(1 << mid_bits, n >= MIN_PARALLEL_LEN, tile_pair);
}

/// Multiplies `data[i]` by `g^i`, in parallel chunks that each start from their own power.
///
/// This is the coset shift of a coefficient vector: `p(X) -> p(g X)`. Running time depends
/// only on `data.len()`, not on the values.
pub fn distribute_powers<F: Field>(data: &mut [F], g: F) {
    distribute_powers_from(data, g, F::ONE);
}

/// `data[i] *= c * g^i`; the constant `c` lets callers fold a scaling into the same pass.
pub(crate) fn distribute_powers_from<F: Field>(data: &mut [F], g: F, c: F) {
    let chunk = chunk_len_for(data.len());
    for_each_chunk(data, chunk, |t, part| {
        let mut power = c * g.pow_vartime([(t * chunk) as u64]);
        for x in part {
            *x *= power;
            power *= g;
        }
    });
}

/// `data[p] *= c * g^bitrev(p)` for a power-of-two length: [`distribute_powers_from`] for a
/// vector held in bit-reversed order.
///
/// Aligned chunks of `2^k` positions starting at `t * 2^k` share the high bits of `bitrev(p)`:
/// `bitrev(t * 2^k + q) = bitrev_{L-k}(t) + bitrev_k(q) * 2^(L-k)`. So each chunk multiplies a
/// per-chunk base by a shared table of `(g^(2^(L-k)))^bitrev_k(q)`.
pub(crate) fn distribute_powers_bit_reversed<F: Field>(data: &mut [F], g: F, c: F) {
    let n = data.len();
    debug_assert!(n.is_power_of_two());
    let log_n = n.trailing_zeros();
    let k = log_n.min(10);
    let h = g.pow_vartime([1u64 << (log_n - k)]);
    let mut table: Vec<F> = Vec::with_capacity(1 << k);
    let mut power = F::ONE;
    for _ in 0..(1usize << k) {
        table.push(power);
        power *= h;
    }
    bit_reverse_unchecked(&mut table);
    for_each_chunk(data, 1 << k, |t, part| {
        let base = c * g.pow_vartime([reverse_bits(t, log_n - k) as u64]);
        for (x, w) in part.iter_mut().zip(&table) {
            *x *= base * w;
        }
    });
}

/// `data[i] *= c` for every `i`.
pub(crate) fn scale<F: Field>(data: &mut [F], c: F) {
    for_each_chunk(data, chunk_len_for(data.len()), |_, part| {
        for x in part {
            *x *= c;
        }
    });
}

/// Maps index `i` to `(n - i) mod n`: reverses `data[1..]`. A DFT with `omega^-1` is the DFT
/// with `omega` followed (or preceded) by this map, which is how the inverse transforms reuse
/// the forward twiddle table instead of storing a second one.
pub(crate) fn negate_indices<F>(data: &mut [F]) {
    if let Some((_, tail)) = data.split_first_mut() {
        tail.reverse();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{naive_bit_reverse, random_vec, seeded};
    use alloc::vec::Vec;
    use ff::Field;
    use sluice_field::Fr;

    #[test]
    fn bit_reverse_matches_naive_index_map() {
        for log_n in 0..=14u32 {
            let n = 1usize << log_n;
            let mut data: Vec<usize> = (0..n).collect();
            bit_reverse_permute(&mut data).unwrap();
            for (i, &v) in data.iter().enumerate() {
                assert_eq!(v, naive_bit_reverse(i, log_n), "log_n {log_n}, index {i}");
            }
        }
    }

    #[test]
    fn bit_reverse_rejects_non_powers_of_two() {
        for len in [0usize, 3, 5, 6, 7, 1023, 1025] {
            let mut data = alloc::vec![0u8; len];
            assert_eq!(
                bit_reverse_permute(&mut data),
                Err(NttError::NotPowerOfTwo { len })
            );
        }
    }

    #[test]
    fn distribute_powers_matches_naive() {
        let seed = 11;
        let mut rng = seeded(seed);
        // Lengths straddle the parallel chunk size so the per-chunk start powers are exercised.
        for len in [
            0usize,
            1,
            2,
            3,
            1000,
            MIN_PARALLEL_LEN + 3,
            3 * MIN_PARALLEL_LEN + 1,
        ] {
            let g = Fr::random(&mut rng);
            let data = random_vec(&mut rng, len);
            let mut got = data.clone();
            distribute_powers(&mut got, g);
            let mut power = Fr::ONE;
            for (i, (x, y)) in data.iter().zip(&got).enumerate() {
                assert_eq!(*x * power, *y, "seed {seed}, len {len}, index {i}");
                power *= g;
            }
        }
    }

    #[test]
    fn distribute_powers_bit_reversed_matches_naive() {
        let seed = 12;
        let mut rng = seeded(seed);
        for log_n in [0u32, 1, 2, 5, 10, 11, 13] {
            let n = 1usize << log_n;
            let (g, c) = (Fr::random(&mut rng), Fr::random(&mut rng));
            let data = random_vec(&mut rng, n);
            let mut got = data.clone();
            distribute_powers_bit_reversed(&mut got, g, c);
            for (p, (x, y)) in data.iter().zip(&got).enumerate() {
                let e = naive_bit_reverse(p, log_n) as u64;
                assert_eq!(
                    *x * c * g.pow_vartime([e]),
                    *y,
                    "seed {seed}, log_n {log_n}, p {p}"
                );
            }
        }
    }
}
