//! Fixed-base multiplication for the setup: the [`FixedBaseMul`] trait both of its tables
//! implement (the constant-time one in `generator.rs`), and the variable-time table of
//! [`generate_parameters_vartime`](crate::generate_parameters_vartime), for test
//! parameters only.
//!
//! The variable-time table has wide signed windows (up to [`VartimeCurve::MAX_WIDTH`] bits)
//! and looks each digit's point up by its index, adding it with an addition that branches on
//! its special cases: memory access and time depend on the secret scalar.

use group::Curve;
use rayon::prelude::*;
use sluice_field::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};
use std::ops::Neg;

/// `s·base` for a base fixed when the table was made.
pub(crate) trait FixedBaseMul {
    /// The group of the base.
    type Point: Curve<Scalar = Fr>;

    /// `s·base`.
    fn multiply(&self, s: &Fr) -> Self::Point;
}

/// A group with a variable-time mixed addition, and the widest window its table may have.
pub(crate) trait VartimeCurve: Curve<Scalar = Fr> + Send + Sync {
    /// The widest window: its table is `ceil(256 / w)·2^(w-1)` affine points.
    const MAX_WIDTH: usize;

    /// `self + rhs`, branching on the identity, equal and opposite cases.
    fn add_affine_vartime(&self, rhs: &Self::AffineRepr) -> Self;
}

impl VartimeCurve for G1Projective {
    /// 96-byte points: 14 MiB at 14 bits (wider tables measured no faster on 2 cores).
    const MAX_WIDTH: usize = 14;

    fn add_affine_vartime(&self, rhs: &G1Affine) -> Self {
        self.add_mixed_vartime(rhs)
    }
}

impl VartimeCurve for G2Projective {
    /// 192-byte points: 28.5 MiB at 14 bits. Twice G1's bytes at the same width: its
    /// additions cost about three times G1's, so one fewer is worth the cache misses
    /// (measured: 14 bits about 8% faster than 13).
    const MAX_WIDTH: usize = 14;

    fn add_affine_vartime(&self, rhs: &G2Affine) -> Self {
        self.add_mixed_vartime(rhs)
    }
}

/// The narrowest window a table is made with.
const MIN_WIDTH: usize = 4;

/// The window width for multiplying `points` scalars with one base: the fewest additions,
/// counting a table entry as one and a half (an addition, and its share of normalizing),
/// up to `G::MAX_WIDTH` (wider tables outgrow the caches).
pub(crate) fn width_for<G: VartimeCurve>(points: usize) -> usize {
    (MIN_WIDTH..=G::MAX_WIDTH.max(MIN_WIDTH))
        .min_by_key(|&w| {
            let windows = 256usize.div_ceil(w);
            points
                .saturating_mul(windows)
                .saturating_add((3 * windows) << (w - 2))
        })
        .unwrap_or(MIN_WIDTH)
}

/// A fixed-base table for variable-time multiplication: signed windows of `width` bits
/// (digits in (-2^(width-1), 2^(width-1)]), row j holding `k·2^(width·j)·base` for
/// `k = 1..=2^(width-1)` in affine form, one row after the other.
pub(crate) struct VartimeTable<G: Curve> {
    points: Vec<G::AffineRepr>,
    width: usize,
    windows: usize,
}

impl<G> VartimeTable<G>
where
    G: VartimeCurve,
    G::AffineRepr: Copy + Default + Neg<Output = G::AffineRepr> + Send + Sync,
{
    /// The table of `base` with windows of `width` bits (clamped to
    /// `MIN_WIDTH..=G::MAX_WIDTH`), its rows made in parallel.
    pub(crate) fn new(base: G, width: usize) -> Self {
        let width = width.clamp(MIN_WIDTH, G::MAX_WIDTH.max(MIN_WIDTH));
        // Signed digits of a scalar below 2^255 need width·windows >= 256 for the last carry.
        let windows = 256usize.div_ceil(width);
        let half = 1usize << (width - 1);
        let mut row_bases = Vec::with_capacity(windows);
        let mut p = base;
        for _ in 0..windows {
            row_bases.push(p);
            for _ in 0..width {
                p = p.double();
            }
        }
        let mut points = vec![G::AffineRepr::default(); windows * half];
        points
            .par_chunks_mut(half)
            .zip(row_bases.par_iter())
            .for_each(|(row, b)| {
                let b_affine = b.to_affine();
                let mut multiples = Vec::with_capacity(half);
                let mut acc = *b;
                for _ in 0..half {
                    multiples.push(acc);
                    acc = acc.add_affine_vartime(&b_affine);
                }
                G::batch_normalize(&multiples, row);
            });
        VartimeTable {
            points,
            width,
            windows,
        }
    }

    /// The window width.
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// How many points the table holds.
    pub(crate) fn table_len(&self) -> usize {
        self.points.len()
    }
}

/// Bits `pos..pos + width` of little-endian `limbs` (zero beyond them); `width < 64`.
fn window(limbs: &[u64; 4], pos: usize, width: usize) -> u64 {
    let (i, shift) = (pos / 64, pos % 64);
    let mut v = limbs.get(i).map_or(0, |l| l >> shift);
    if shift + width > 64 {
        v |= limbs.get(i + 1).map_or(0, |l| l << (64 - shift));
    }
    v & ((1u64 << width) - 1)
}

impl<G> FixedBaseMul for VartimeTable<G>
where
    G: VartimeCurve,
    G::AffineRepr: Copy + Default + Neg<Output = G::AffineRepr> + Send + Sync,
{
    type Point = G;

    /// `s·base` in variable time: one lookup and one addition per non-zero digit.
    fn multiply(&self, s: &Fr) -> G {
        let limbs = s.to_canonical_limbs();
        let half = 1u64 << (self.width - 1);
        let mut acc = G::identity();
        let mut carry = 0u64;
        for (j, row) in self.points.chunks_exact(half as usize).enumerate() {
            let d = window(&limbs, j * self.width, self.width) + carry;
            carry = u64::from(d > half);
            // The digit d - carry·2^width, in (-half, half].
            let (abs, negative) = if d > half {
                ((1u64 << self.width) - d, true)
            } else {
                (d, false)
            };
            if abs == 0 {
                continue;
            }
            let Some(e) = row.get(abs as usize - 1) else {
                continue;
            };
            acc = if negative {
                acc.add_affine_vartime(&-*e)
            } else {
                acc.add_affine_vartime(e)
            };
        }
        debug_assert_eq!(carry, 0, "{} windows of {} bits", self.windows, self.width);
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use group::Group;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    /// Scalars that exercise every digit's edge: zero, one, minus one, powers of two (at and
    /// around window boundaries), all-ones windows (carries through every window), and
    /// random ones.
    fn edge_scalars(rng: &mut ChaCha20Rng) -> Vec<Fr> {
        let mut scalars = vec![
            Fr::ZERO,
            Fr::ONE,
            -Fr::ONE,
            -Fr::from(2),
            Fr::from(u64::MAX),
        ];
        let two = Fr::from(2);
        scalars.extend((0..255u64).map(|k| two.pow_vartime([k])));
        scalars.extend((1..255u64).map(|k| two.pow_vartime([k]) - Fr::ONE));
        scalars.extend((1..255u64).map(|k| -two.pow_vartime([k])));
        scalars.extend((0..64).map(|_| Fr::random(&mut *rng)));
        scalars
    }

    #[test]
    fn vartime_table_matches_scalar_multiplication() {
        let seed = 33;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let g1 = G1Projective::random(&mut rng);
        let g2 = G2Projective::random(&mut rng);
        let scalars = edge_scalars(&mut rng);
        // Every width for G1 (so every window boundary is crossed); a few for G2.
        for width in MIN_WIDTH..=G1Projective::MAX_WIDTH {
            let t = VartimeTable::new(g1, width);
            assert_eq!(t.width(), width);
            for s in &scalars {
                assert_eq!(t.multiply(s), g1 * s, "seed {seed}, width {width}, {s:?}");
            }
        }
        for width in [MIN_WIDTH, 7, 8, G2Projective::MAX_WIDTH] {
            let t = VartimeTable::new(g2, width);
            for s in &scalars {
                assert_eq!(t.multiply(s), g2 * s, "seed {seed}, width {width}, {s:?}");
            }
        }
        // The identity as base.
        let t = VartimeTable::new(G1Projective::identity(), 5);
        assert_eq!(t.multiply(&Fr::random(&mut rng)), G1Projective::identity());
    }

    #[test]
    fn window_widths_grow_with_the_points_and_stay_capped() {
        assert_eq!(width_for::<G1Projective>(0), MIN_WIDTH);
        let mut last = MIN_WIDTH;
        for log in 0..30 {
            let w = width_for::<G1Projective>(1 << log);
            assert!(
                w >= last && w <= G1Projective::MAX_WIDTH,
                "2^{log} points: {w}"
            );
            last = w;
        }
        assert_eq!(last, G1Projective::MAX_WIDTH);
        assert_eq!(width_for::<G2Projective>(1 << 29), G2Projective::MAX_WIDTH);
        assert_eq!(window(&[u64::MAX, 0, 0, 1], 60, 8), 0xf);
        assert_eq!(window(&[0, 0, 0, 1 << 63], 250, 12), 0x20);
    }
}
