//! The verifier's public-base MSMs: the public inputs' bases `ic`, combined by fixed-base
//! tables of their multiples.
//!
//! # Security
//! Variable time in the scalars and the points: everything combined here is public (the
//! key's bases, public inputs) or, in batches, derived from the verifier's random
//! multipliers, which bellperson's batch verifier also feeds to a variable-time MSM.

use blst::{blst_p1, blst_p1_affine};
use group::prime::PrimeCurveAffine;
use group::Curve;
use rayon::prelude::*;
use sluice_field::{Fr, G1Affine, G1Projective};

use crate::error::Groth16Error;

/// Signed 8-bit windows: the multiples 1..=128 of each shifted base (12 KiB).
const WINDOW_BITS: u32 = 8;
const MULTIPLES: usize = 1 << (WINDOW_BITS - 1);
/// A scalar below 2^255 has a top byte below 0x80, so its signed digits need no 33rd window.
const DIGITS: usize = 32;

/// Each base is tabled as `2^(8 w q) · base` for q below its shifts (`w = 32 / shifts`
/// windows), so a combination needs 8 w doublings and each window's batch sum holds
/// `shifts` lookups per base; the additions stay at one per nonzero digit. Eight shifts
/// (96 KiB per base) measured faster than four at 16 inputs (BENCHMARKS.md#verification).
const MAX_SHIFTS: usize = 8;

/// The tables' size limit, in shifted bases of 12 KiB (48 MiB): fewer shifts for larger
/// keys, and above 4096 bases a Pippenger MSM over the bases themselves.
pub(crate) const MAX_SHIFTED_BASES: usize = 1 << 12;

/// Bases per parallel task: each task pays its own doublings, and a batch sum gains with
/// the number of points it adds.
const BASES_PER_TASK: usize = 64;

/// Fewer lookups than this in a window are added one by one: blst's batch sum adds them so
/// below 16 points, and copying them for it would not pay.
const BATCHED_SUM_MIN: usize = 16;

/// A list of public bases with what combines them fastest.
#[derive(Clone, Debug)]
pub(crate) enum FixedBases {
    /// `multiples[(i * shifts + q) * MULTIPLES + k]` is `(k + 1) 2^(8 w q) · base_i` for
    /// `w = 32 / shifts`, in blst's form: its assembly additions are faster than this
    /// crate's.
    Tables {
        count: usize,
        shifts: usize,
        multiples: Vec<blst_p1_affine>,
    },
    /// Too many for tables: a Pippenger MSM over the bases themselves.
    Plain(Vec<G1Affine>),
}

impl FixedBases {
    /// Tables with the most shifts (up to [`MAX_SHIFTS`]) that keep the bases times the
    /// shifts within `max_shifted`, else the plain bases.
    pub(crate) fn new(bases: &[G1Affine], max_shifted: usize) -> Self {
        let Some(shifts) = (0..=MAX_SHIFTS.trailing_zeros())
            .rev()
            .map(|log| 1 << log)
            .find(|shifts| bases.len().saturating_mul(*shifts) <= max_shifted)
        else {
            return FixedBases::Plain(bases.to_vec());
        };
        let shift_bits = DIGITS / shifts * WINDOW_BITS as usize;
        let projective: Vec<G1Projective> = bases
            .par_iter()
            .flat_map_iter(|base| {
                let shifted = std::iter::successors(Some(base.to_curve()), move |b| {
                    Some((0..shift_bits).fold(*b, |b, _| b.double()))
                });
                shifted.take(shifts).flat_map(|shifted| {
                    let first = shifted.to_affine();
                    std::iter::successors(Some(shifted), move |m| Some(m.add_mixed_vartime(&first)))
                        .take(MULTIPLES)
                })
            })
            .collect();
        let mut affine = vec![G1Affine::identity(); projective.len()];
        G1Projective::batch_normalize(&projective, &mut affine);
        FixedBases::Tables {
            count: bases.len(),
            shifts,
            multiples: affine.into_iter().map(blst_p1_affine::from).collect(),
        }
    }

    /// How many bases.
    pub(crate) fn len(&self) -> usize {
        match self {
            FixedBases::Tables { count, .. } => *count,
            FixedBases::Plain(bases) => bases.len(),
        }
    }

    /// `sum_i scalars[i] · base_i`; `scalars` has [`len`](Self::len) elements. Tables
    /// are combined in parallel tasks of at most [`BASES_PER_TASK`] bases.
    pub(crate) fn combine_vartime(&self, scalars: &[Fr]) -> Result<G1Projective, Groth16Error> {
        debug_assert_eq!(scalars.len(), self.len());
        let (multiples, shifts) = match self {
            FixedBases::Tables {
                multiples, shifts, ..
            } => (multiples, *shifts),
            FixedBases::Plain(bases) => {
                return Ok(sluice_msm::msm_g1_vartime(bases, scalars, None)?)
            }
        };
        if scalars.len() <= BASES_PER_TASK {
            return Ok(combine_tabled(multiples, shifts, scalars));
        }
        // Equal tasks: a short last one would leave a thread idle.
        let per_task = scalars
            .len()
            .div_ceil(scalars.len().div_ceil(BASES_PER_TASK));
        Ok(multiples
            .par_chunks(per_task * shifts * MULTIPLES)
            .zip(scalars.par_chunks(per_task))
            .map(|(multiples, scalars)| combine_tabled(multiples, shifts, scalars))
            .reduce(G1Projective::identity, |a, b| a.add_vartime(&b)))
    }
}

/// The signed base-256 digits of `s`, least significant first, each in -127..=128.
fn signed_digits(s: &Fr) -> [i16; DIGITS] {
    let mut digits = [0i16; DIGITS];
    let mut carry = 0;
    for (digit, byte) in digits.iter_mut().zip(s.to_bytes_le()) {
        let value = i16::from(byte) + carry;
        carry = i16::from(value > 128);
        *digit = value - (carry << WINDOW_BITS);
    }
    debug_assert_eq!(carry, 0, "a scalar's top byte is below 0x80");
    digits
}

/// One thread's share: the windows from the top, eight doublings per window and one table
/// lookup per shifted base and window. A window's lookups are summed by blst's batch affine
/// addition (one inversion per halving, about 6 products per addition against 11) where
/// there are enough of them, else added one by one.
fn combine_tabled(multiples: &[blst_p1_affine], shifts: usize, scalars: &[Fr]) -> G1Projective {
    let windows = DIGITS / shifts;
    let digits: Vec<[i16; DIGITS]> = scalars.iter().map(signed_digits).collect();
    let mut picked: Vec<blst_p1_affine> = Vec::with_capacity(scalars.len() * shifts);
    let mut acc = blst_p1::default();
    for window in (0..windows).rev() {
        let shifted_digits = digits
            .iter()
            .flat_map(|d| (0..shifts).map(move |q| d[q * windows + window]));
        picked.clear();
        for (table, digit) in multiples.chunks_exact(MULTIPLES).zip(shifted_digits) {
            if digit != 0 {
                let mut multiple = table[usize::from(digit.unsigned_abs()) - 1];
                // SAFETY: a valid field element; blst allows `out` to alias the input.
                unsafe { blst::blst_fp_cneg(&mut multiple.y, &multiple.y, digit < 0) };
                picked.push(multiple);
            }
        }
        // SAFETY: valid points in and out, and blst allows `out` to alias an
        // input; blst's additions handle the identity and equal or opposite points, and
        // `list` names `picked.len()` contiguous points (a null second entry means
        // "contiguous from the first").
        unsafe {
            for _ in 0..WINDOW_BITS {
                blst::blst_p1_double(&mut acc, &acc);
            }
            if picked.len() < BATCHED_SUM_MIN {
                for multiple in &picked {
                    blst::blst_p1_add_or_double_affine(&mut acc, &acc, multiple);
                }
            } else {
                let mut sum = blst_p1::default();
                let list = [picked.as_ptr(), std::ptr::null()];
                blst::blst_p1s_add(&mut sum, list.as_ptr(), picked.len());
                blst::blst_p1_add_or_double(&mut acc, &acc, &sum);
            }
        }
    }
    G1Projective::from(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use group::Group;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    /// The digits recompose to the scalar, for edge scalars (0, 1, -1, 128, 255, 2^255-ish
    /// values with bytes of 0x80 and 0xff) and random ones.
    #[test]
    fn signed_digits_recompose() {
        let seed = 251;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut scalars = vec![Fr::ZERO, Fr::ONE, -Fr::ONE, Fr::from(128), Fr::from(129)];
        scalars.push(Fr::from(0x80ff_80ff_80ff_80ff));
        scalars.extend((0..64).map(|_| Fr::random(&mut rng)));
        for s in scalars {
            let digits = signed_digits(&s);
            assert!(
                digits.iter().all(|d| (-127..=128).contains(d)),
                "seed {seed}"
            );
            let back = digits.iter().rev().fold(Fr::ZERO, |acc, digit| {
                let magnitude = Fr::from(u64::from(digit.unsigned_abs()));
                acc * Fr::from(256) + if *digit < 0 { -magnitude } else { magnitude }
            });
            assert_eq!(back, s, "seed {seed}");
        }
    }

    /// Tables (whole, in parallel tasks, and in ranges) and the plain Pippenger path equal
    /// the naive sum, for 0, 1, 5, 33 and 70 bases (the last two summing their windows by
    /// batches), scalars 0, 1, -1 and random, with a base at the identity and repeated
    /// bases whose lookups are equal or opposite points.
    #[test]
    fn combinations_equal_the_naive_sum() {
        let seed = 248;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        for n in [0usize, 1, 5, 33, 70] {
            let mut bases: Vec<G1Affine> = (0..n)
                .map(|_| G1Projective::random(&mut rng).to_affine())
                .collect();
            let mut scalars: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
            if n > 6 {
                bases[1] = G1Affine::identity();
                (bases[2], scalars[2]) = (bases[0], scalars[0]);
                (bases[3], scalars[3]) = (bases[0], -scalars[0]);
                (scalars[4], scalars[5], scalars[6]) = (Fr::ZERO, Fr::ONE, -Fr::ONE);
            }
            let naive: G1Projective = scalars.iter().zip(&bases).map(|(s, p)| *p * s).sum();
            // Eight shifts, four, one, and none (plain); no bases fit any budget.
            let budgets = [usize::MAX, 4 * n, n, n.saturating_sub(1)];
            for (max_shifted, expected) in budgets.into_iter().zip([8, 4, 1, 0]) {
                let fixed = FixedBases::new(&bases, max_shifted);
                assert_eq!(fixed.len(), n);
                let shifts = match &fixed {
                    FixedBases::Tables { shifts, .. } => *shifts,
                    FixedBases::Plain(_) => 0,
                };
                assert_eq!(shifts, if n == 0 { 8 } else { expected }, "{n} bases");
                assert_eq!(
                    fixed.combine_vartime(&scalars).unwrap(),
                    naive,
                    "seed {seed}, {n} bases, {shifts} shifts (0: plain)"
                );
            }
        }
    }
}
