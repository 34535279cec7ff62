//! The radix-2 kernels: natural -> bit-reversed (Cooley-Tukey butterflies) and bit-reversed ->
//! natural (Gentleman-Sande butterflies), both with the forward twiddle table in bit-reversed
//! order (see [`Domain::twiddles`](crate::Domain::twiddles)).
//!
//! With that table every butterfly block uses a single twiddle, and the block with global index
//! `k` at any stage uses `T[k]`: sub-blocks of block `k` are `2k` and `2k + 1`, so a depth-first
//! recursion reads a contiguous slice of `T` at every depth. Blocks above [`BASE_LEN`] take two
//! stages per pass over memory (radix-4) and recurse into their quarters (in parallel), so large
//! transforms make `log4` passes over data that does not fit in cache; blocks of at most
//! `BASE_LEN` elements run their remaining stages entirely in L1.

use ff::Field;

use crate::par::{join, MaybeSync};

/// Blocks of at most this many elements (32 KiB for a 256-bit field) finish in place.
const BASE_LEN: usize = 1 << 10;
/// Butterfly loops over longer quarter-ranges are split across threads.
const SPLIT_LEN: usize = 1 << 10;

/// A butterfly kind, so the stage loops are written once and still monomorphised (inlined).
trait Butterfly {
    /// Applies the butterfly with twiddle `z`; `UNIT` means `z = 1` (the multiplication is skipped).
    fn apply<F: Field, const UNIT: bool>(a: &mut F, b: &mut F, z: &F);
}

/// Cooley-Tukey butterfly `(a, b) -> (a + z b, a - z b)`.
struct Ct;
/// Gentleman-Sande butterfly `(a, b) -> (a + b, z (a - b))`, the transpose of [`Ct`].
struct Gs;

impl Butterfly for Ct {
    #[inline(always)]
    fn apply<F: Field, const UNIT: bool>(a: &mut F, b: &mut F, z: &F) {
        let t = if UNIT { *b } else { *b * z };
        *b = *a - t;
        *a += t;
    }
}

impl Butterfly for Gs {
    #[inline(always)]
    fn apply<F: Field, const UNIT: bool>(a: &mut F, b: &mut F, z: &F) {
        let t = *a - *b;
        *a += *b;
        *b = if UNIT { t } else { t * z };
    }
}

/// Forward transform, natural-order input to bit-reversed-order output: position `p` ends up
/// holding `sum_j x_j omega^(j * bitrev(p))`.
pub(crate) fn natural_to_bit_reversed<F: Field>(data: &mut [F], twiddles: &[F]) {
    debug_assert!(data.len().is_power_of_two() && twiddles.len() == data.len() / 2);
    ct_block(data, twiddles, 0);
}

/// Forward transform, bit-reversed-order input to natural-order output (the transpose of
/// [`natural_to_bit_reversed`], which is the same map because the DFT matrix is symmetric).
pub(crate) fn bit_reversed_to_natural<F: Field>(data: &mut [F], twiddles: &[F]) {
    debug_assert!(data.len().is_power_of_two() && twiddles.len() == data.len() / 2);
    gs_block(data, twiddles, 0);
}

/// Splits a block into its four quarters.
fn quarters<F>(data: &mut [F]) -> [&mut [F]; 4] {
    let q = data.len() / 4;
    let (a, rest) = data.split_at_mut(q);
    let (b, rest) = rest.split_at_mut(q);
    let (c, d) = rest.split_at_mut(q);
    [a, b, c, d]
}

/// All remaining stages of the block with global index `k` (Cooley-Tukey, top down).
fn ct_block<F: Field>(data: &mut [F], tw: &[F], k: usize) {
    if data.len() <= BASE_LEN {
        ct_base(data, tw, k);
        return;
    }
    let (z, z0, z1) = (tw[k], tw[2 * k], tw[2 * k + 1]);
    let q = quarters(data);
    if k == 0 {
        radix4_ct::<F, true>(q, &z, &z0, &z1);
    } else {
        radix4_ct::<F, false>(q, &z, &z0, &z1);
    }
    let [a, b, c, d] = quarters(data);
    join(
        || join(|| ct_block(a, tw, 4 * k), || ct_block(b, tw, 4 * k + 1)),
        || join(|| ct_block(c, tw, 4 * k + 2), || ct_block(d, tw, 4 * k + 3)),
    );
}

/// All remaining stages of the block with global index `k` (Gentleman-Sande, bottom up).
fn gs_block<F: Field>(data: &mut [F], tw: &[F], k: usize) {
    if data.len() <= BASE_LEN {
        gs_base(data, tw, k);
        return;
    }
    {
        let [a, b, c, d] = quarters(data);
        join(
            || join(|| gs_block(a, tw, 4 * k), || gs_block(b, tw, 4 * k + 1)),
            || join(|| gs_block(c, tw, 4 * k + 2), || gs_block(d, tw, 4 * k + 3)),
        );
    }
    let (z, z0, z1) = (tw[k], tw[2 * k], tw[2 * k + 1]);
    let q = quarters(data);
    if k == 0 {
        radix4_gs::<F, true>(q, &z, &z0, &z1);
    } else {
        radix4_gs::<F, false>(q, &z, &z0, &z1);
    }
}

/// Splits quarter-ranges in half (in parallel) until they are at most [`SPLIT_LEN`] long, then
/// runs `leaf` on them.
fn split_quarters<F: Field>(q: [&mut [F]; 4], leaf: &(impl Fn([&mut [F]; 4]) + MaybeSync)) {
    if q[0].len() <= SPLIT_LEN {
        leaf(q);
        return;
    }
    let mid = q[0].len() / 2;
    let [a, b, c, d] = q;
    let (a0, a1) = a.split_at_mut(mid);
    let (b0, b1) = b.split_at_mut(mid);
    let (c0, c1) = c.split_at_mut(mid);
    let (d0, d1) = d.split_at_mut(mid);
    join(
        || split_quarters([a0, b0, c0, d0], leaf),
        || split_quarters([a1, b1, c1, d1], leaf),
    );
}

/// Two Cooley-Tukey stages in one pass: block `k` (twiddle `z`) pairs quarters (0,2) and (1,3);
/// its halves `2k` (`z0`) and `2k+1` (`z1`) then pair (0,1) and (2,3). `UNIT` iff `k = 0`,
/// where `z = z0 = 1`.
fn radix4_ct<F: Field, const UNIT: bool>(q: [&mut [F]; 4], z: &F, z0: &F, z1: &F) {
    split_quarters(q, &|[a, b, c, d]: [&mut [F]; 4]| {
        for (((x0, x1), x2), x3) in a.iter_mut().zip(b).zip(c).zip(d) {
            Ct::apply::<F, UNIT>(x0, x2, z);
            Ct::apply::<F, UNIT>(x1, x3, z);
            Ct::apply::<F, UNIT>(x0, x1, z0);
            Ct::apply::<F, false>(x2, x3, z1);
        }
    });
}

/// The transpose of [`radix4_ct`]: stages in reverse order with Gentleman-Sande butterflies.
fn radix4_gs<F: Field, const UNIT: bool>(q: [&mut [F]; 4], z: &F, z0: &F, z1: &F) {
    split_quarters(q, &|[a, b, c, d]: [&mut [F]; 4]| {
        for (((x0, x1), x2), x3) in a.iter_mut().zip(b).zip(c).zip(d) {
            Gs::apply::<F, UNIT>(x0, x1, z0);
            Gs::apply::<F, false>(x2, x3, z1);
            Gs::apply::<F, UNIT>(x0, x2, z);
            Gs::apply::<F, UNIT>(x1, x3, z);
        }
    });
}

/// Stage `t` (its `2^t` sub-blocks) of the block with global index `k`; sub-block `idx = 0`
/// (only reachable when `k = 0`) has twiddle 1.
#[inline(always)]
fn stage<F: Field, B: Butterfly>(data: &mut [F], tw: &[F], k: usize, t: u32) {
    let half = data.len() >> (t + 1);
    for (b, block) in data.chunks_exact_mut(2 * half).enumerate() {
        let idx = (k << t) + b;
        let (lo, hi) = block.split_at_mut(half);
        let z = &tw[idx];
        if idx == 0 {
            lo.iter_mut()
                .zip(hi)
                .for_each(|(x, y)| B::apply::<F, true>(x, y, z));
        } else {
            lo.iter_mut()
                .zip(hi)
                .for_each(|(x, y)| B::apply::<F, false>(x, y, z));
        }
    }
}

/// In-cache radix-2 Cooley-Tukey stages of a small block.
fn ct_base<F: Field>(data: &mut [F], tw: &[F], k: usize) {
    for t in 0..data.len().trailing_zeros() {
        stage::<F, Ct>(data, tw, k, t);
    }
}

/// In-cache radix-2 Gentleman-Sande stages of a small block.
fn gs_base<F: Field>(data: &mut [F], tw: &[F], k: usize) {
    for t in (0..data.len().trailing_zeros()).rev() {
        stage::<F, Gs>(data, tw, k, t);
    }
}
