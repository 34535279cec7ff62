//! Miller loops over precomputed G2 lines, on blst's field arithmetic.
//!
//! A Miller loop's G2 side (the line functions along the loop over BLS12-381's x) depends
//! on the G2 point alone, so a verifying key's fixed G2 points are turned into their 68
//! lines once ([`G2Lines::new`]), as blst's `blst_precompute_lines` makes them. The loop
//! over several pairs then shares its Fp12 squarings: one squaring per bit of x for the
//! whole product, not one per pair, and each pair costs only the evaluation of its lines at
//! its G1 point and a sparse multiplication per line. The order of the lines and their
//! evaluation are those of blst's `miller_loop_lines` (`pairing.c`), so the result equals
//! the product of blst's per-pair Miller loops exactly.

use blst::{
    blst_fp, blst_fp12, blst_fp12_conjugate, blst_fp12_mul_by_xy00z0, blst_fp12_sqr, blst_fp6,
    blst_fp_mul, blst_p1_affine, blst_p2_affine, blst_precompute_lines,
};
use ff::Field;
use sluice_field::{G1Affine, G2Affine};

/// Lines per Miller loop: 63 doublings and 5 additions along x = -0xd201000000010000.
const LINES: usize = 68;

/// The loop after its first doubling line: (index of the addition line, doublings after it),
/// one entry per set bit of |x| below the top one.
const SEGMENTS: [(usize, usize); 5] = [(1, 2), (4, 3), (8, 9), (18, 32), (51, 16)];

/// The 68 line functions of a G2 point's Miller loop, independent of the G1 point.
#[derive(Clone)]
pub(crate) struct G2Lines(Box<[blst_fp6; LINES]>);

impl std::fmt::Debug for G2Lines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("G2Lines(68 lines)")
    }
}

impl G2Lines {
    /// The lines of `q`, or `None` for the identity (whose pairings are all one).
    pub(crate) fn new(q: &G2Affine) -> Option<Self> {
        if bool::from(q.is_identity()) {
            return None;
        }
        let q = blst_p2_affine::from(*q);
        let mut lines = Box::new([blst_fp6::default(); LINES]);
        // SAFETY: `lines` holds the 68 elements blst writes; `q` is a valid affine point.
        unsafe { blst_precompute_lines(lines.as_mut_ptr(), &q) };
        Some(G2Lines(lines))
    }
}

/// A G1 point as the line evaluation wants it: (-2 x, 2 y), blst's `Px2`.
struct Px2 {
    x: blst_fp,
    y: blst_fp,
}

impl Px2 {
    fn new(p: &G1Affine) -> Self {
        let (x, y) = (p.x(), p.y());
        Px2 {
            x: blst_fp {
                l: (-x.double()).mont_limbs(),
            },
            y: blst_fp {
                l: y.double().mont_limbs(),
            },
        }
    }

    /// `line` evaluated at this point: its second coefficient times -2x, its third times
    /// 2y (blst's `post_line_by_Px2`).
    fn evaluate(&self, line: &blst_fp6) -> blst_fp6 {
        let mut out = *line;
        for (c, by) in [(1, &self.x), (2, &self.y)] {
            for k in 0..2 {
                // SAFETY: valid field elements in and out; blst allows `ret` to alias `a`.
                unsafe { blst_fp_mul(&mut out.fp2[c].fp[k], &line.fp2[c].fp[k], by) };
            }
        }
        out
    }
}

/// The product of the Miller loops of `pairs` (before the final exponentiation): equal to
/// the product of blst's `blst_miller_loop_lines` over the pairs. Pairs whose G1 point or
/// G2 lines are the identity contribute one, as their pairings do; an empty product is one.
pub(crate) fn multi_miller_loop(pairs: &[(G1Affine, Option<&G2Lines>)]) -> blst_fp12 {
    let pairs: Vec<(Px2, &G2Lines)> = pairs
        .iter()
        .filter(|(p, _)| !bool::from(p.is_identity()))
        .filter_map(|(p, lines)| lines.map(|l| (Px2::new(p), l)))
        .collect();
    let mut f = blst_fp12::default();
    let Some(((first_p, first_lines), rest)) = pairs.split_first() else {
        // SAFETY: blst's constant one, read once.
        return unsafe { *blst::blst_fp12_one() };
    };
    // The loop starts from f = 1, squared, times the first line: the first line itself, a
    // sparse element (blst's `miller_loop_lines`).
    let line = first_p.evaluate(&first_lines.0[0]);
    f.fp6[0].fp2[0] = line.fp2[0];
    f.fp6[0].fp2[1] = line.fp2[1];
    f.fp6[1].fp2[1] = line.fp2[2];
    let times_lines = |f: &mut blst_fp12, index: usize, pairs: &[(Px2, &G2Lines)]| {
        for (p, lines) in pairs {
            let line = p.evaluate(&lines.0[index]);
            // SAFETY: valid elements; blst allows `ret` to alias `a`.
            unsafe { blst_fp12_mul_by_xy00z0(f, f, &line) };
        }
    };
    times_lines(&mut f, 0, rest);
    for (add, doublings) in SEGMENTS {
        times_lines(&mut f, add, &pairs);
        for index in add + 1..=add + doublings {
            // SAFETY: valid element; blst allows `ret` to alias `a`.
            unsafe { blst_fp12_sqr(&mut f, &f) };
            times_lines(&mut f, index, &pairs);
        }
    }
    // SAFETY: valid element. x is negative: the loop computed the conjugate.
    unsafe { blst_fp12_conjugate(&mut f) };
    f
}

/// `f` is one (after a final exponentiation: the pairing product is the identity of GT).
pub(crate) fn is_one(f: &blst_fp12) -> bool {
    // SAFETY: a valid element, read only.
    unsafe { blst::blst_fp12_is_one(f) }
}

/// The affine point blst's pairings take.
pub(crate) fn to_blst(p: &G1Affine) -> blst_p1_affine {
    blst_p1_affine::from(*p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use group::Group;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;
    use sluice_field::{Fr, G1Projective, G2Projective};

    /// The shared loop over 1, 2, 3 and 5 pairs equals the product of blst's Miller loops
    /// per pair (computing the lines on the fly), exactly; identities drop out.
    #[test]
    fn equals_the_product_of_blsts_miller_loops() {
        let seed = 243;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        for n in [1, 2, 3, 5] {
            let pairs: Vec<(G1Affine, G2Affine)> = (0..n)
                .map(|_| {
                    (
                        G1Projective::random(&mut rng).to_affine(),
                        G2Projective::random(&mut rng).to_affine(),
                    )
                })
                .collect();
            let lines: Vec<_> = pairs.iter().map(|(_, q)| G2Lines::new(q)).collect();
            let with_lines: Vec<_> = pairs
                .iter()
                .zip(&lines)
                .map(|((p, _), l)| (*p, l.as_ref()))
                .collect();
            let ours = multi_miller_loop(&with_lines);
            let mut theirs = blst_fp12::miller_loop(&pairs[0].1.into(), &to_blst(&pairs[0].0));
            for (p, q) in &pairs[1..] {
                theirs *= blst_fp12::miller_loop(&(*q).into(), &to_blst(p));
            }
            assert_eq!(ours, theirs, "seed {seed}, {n} pairs");

            let mut with_identities = with_lines.clone();
            with_identities.push((G1Affine::identity(), lines[0].as_ref()));
            with_identities.push((pairs[0].0, None));
            assert_eq!(multi_miller_loop(&with_identities), ours, "seed {seed}");
        }
        assert!(G2Lines::new(&G2Affine::identity()).is_none());
        assert!(is_one(&multi_miller_loop(&[])));
    }

    /// Bilinearity through the final exponentiation: e(aP, Q) e(-P, aQ) = 1.
    #[test]
    fn a_product_of_inverse_pairings_is_one() {
        let seed = 244;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let a = Fr::random(&mut rng);
        let p = G1Projective::random(&mut rng);
        let q = G2Projective::random(&mut rng);
        let (ap, neg_p) = ((p * a).to_affine(), (-p).to_affine());
        let (q_lines, aq_lines) = (
            G2Lines::new(&q.to_affine()),
            G2Lines::new(&(q * a).to_affine()),
        );
        let f = multi_miller_loop(&[(ap, q_lines.as_ref()), (neg_p, aq_lines.as_ref())]);
        assert!(is_one(&f.final_exp()), "seed {seed}");
        let f = multi_miller_loop(&[(ap, q_lines.as_ref()), (p.to_affine(), aq_lines.as_ref())]);
        assert!(!is_one(&f.final_exp()), "seed {seed}");
    }
}
