//! Constant-time modular inversion by Bernstein and Yang's safegcd ("Fast constant-time gcd
//! computation and modular inversion", TCHES 2019), in the 62-bit batched form that
//! libsecp256k1 documents (`doc/safegcd_implementation.md`).
//!
//! The state is `(delta, f, g, d, e)` with `f = m`, `g = x`, `d = 0`, `e = 1` at the start and
//! `d * x = f`, `e * x = g (mod m)` throughout. Each batch runs 62 divsteps on the low 64 bits of
//! `f` and `g` alone, recording them as a 2x2 matrix scaled by 2^62, then applies the matrix to
//! the full `f`, `g` (an exact division by 2^62) and to `d`, `e` (a division by 2^62 mod m).
//! After the paper's bound on the number of divsteps (Theorem 11.2: `(49 d + 57) / 17` for
//! `d >= 46`-bit inputs), `g = 0` and `f = +-1`, so `x^-1 = +-d`.
//!
//! Numbers are signed, in `L` limbs of 62 bits (two's complement in the top limb), so the
//! matrix products fit `i128` with room for the carries. Every step is branch-free in the
//! values and the number of batches depends only on the modulus' size: the inversion takes
//! the same time for every input, zero included (its "inverse" is 0).

/// The low 62 bits of a limb.
const M62: u64 = u64::MAX >> 2;

/// The divsteps of one batch, recorded as the matrix `[u v; q r]` scaled by 2^62:
/// `2^62 [f'; g'] = [u v; q r] [f; g]`. `|u| + |v|` and `|q| + |r|` are at most 2^62.
#[derive(Clone, Copy)]
struct Transition {
    u: i64,
    v: i64,
    q: i64,
    r: i64,
}

/// A modulus prepared for [`invert`]: odd, below `2^(62 L - 2)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SafegcdModulus<const L: usize> {
    /// The modulus in signed-62 limbs.
    limbs: [i64; L],
    /// `m^-1 mod 2^62` (as `m^-1 mod 2^64`: only its low 62 bits are used).
    inv62: u64,
    /// Batches of 62 divsteps that bring `g` to zero for any input below the modulus.
    batches: usize,
}

impl<const L: usize> SafegcdModulus<L> {
    /// Prepares the odd modulus `m` of `bits` bits (`bits >= 46`).
    pub(crate) const fn new<const N: usize>(m: &[u64; N], bits: usize) -> Self {
        assert!(m[0] & 1 == 1, "safegcd needs an odd modulus");
        assert!(
            bits >= 46 && bits + 2 <= 62 * L,
            "the limbs must hold 2m with a sign bit"
        );
        // Newton's iteration doubles the correct low bits of m^-1 mod 2^64 each round
        // (m * m = 1 mod 8 for odd m gives three to start with).
        let mut inv = m[0];
        let mut i = 0;
        while i < 5 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(m[0].wrapping_mul(inv)));
            i += 1;
        }
        let divsteps = (49 * bits + 57) / 17;
        SafegcdModulus {
            limbs: to_signed62(m),
            inv62: inv,
            batches: divsteps.div_ceil(62),
        }
    }
}

/// `x` (below 2^(62 L - 1)) in signed-62 limbs.
const fn to_signed62<const N: usize, const L: usize>(x: &[u64; N]) -> [i64; L] {
    let mut out = [0i64; L];
    let mut i = 0;
    while i < L {
        let bit = 62 * i;
        let (limb, shift) = (bit / 64, bit % 64);
        let mut v = 0u64;
        if limb < N {
            v = x[limb] >> shift;
            if shift > 2 && limb + 1 < N {
                v |= x[limb + 1] << (64 - shift);
            }
        }
        out[i] = (v & M62) as i64;
        i += 1;
    }
    out
}

/// Normalised signed-62 limbs (all in `[0, 2^62)`) of a value below 2^(64 N), back in u64 limbs.
fn from_signed62<const N: usize, const L: usize>(x: &[i64; L]) -> [u64; N] {
    let mut out = [0u64; N];
    for (i, &limb) in x.iter().enumerate() {
        let bit = 62 * i;
        let (word, shift) = (bit / 64, bit % 64);
        if word < N {
            out[word] |= (limb as u64) << shift;
        }
        if shift > 2 && word + 1 < N {
            out[word + 1] |= (limb as u64) >> (64 - shift);
        }
    }
    out
}

/// 62 divsteps of `(delta, f, g)` on the low bits `f0`, `g0`, with `eta = -delta`; returns the
/// new `eta` and the batch's matrix. Branch-free: the masks select every case.
#[inline(always)]
fn divsteps_62(mut eta: i64, f0: u64, g0: u64) -> (i64, Transition) {
    let (mut u, mut v, mut q, mut r) = (1u64, 0u64, 0u64, 1u64);
    let (mut f, mut g) = (f0, g0);
    for _ in 0..62 {
        // delta > 0 (eta < 0): the step may swap; g odd: it adds or subtracts f.
        let positive = (eta >> 63) as u64;
        let odd = (g & 1).wrapping_neg();
        // Negate f, u, v where delta > 0, then add them to g, q, r where g is odd:
        // g - f in the swapping case, g + f in the other.
        let x = (f ^ positive).wrapping_sub(positive);
        let y = (u ^ positive).wrapping_sub(positive);
        let z = (v ^ positive).wrapping_sub(positive);
        g = g.wrapping_add(x & odd);
        q = q.wrapping_add(y & odd);
        r = r.wrapping_add(z & odd);
        // The swapping case: delta' = 1 - delta (eta' = -eta - 1), f' = g (the old g is
        // the new g plus the old f); otherwise delta' = 1 + delta (eta' = eta - 1).
        let swap = positive & odd;
        eta = (eta ^ swap as i64) - (swap as i64 + 1);
        f = f.wrapping_add(g & swap);
        u = u.wrapping_add(q & swap);
        v = v.wrapping_add(r & swap);
        // g' = g / 2: the f row doubles instead, so the matrix stays integral.
        g >>= 1;
        u <<= 1;
        v <<= 1;
    }
    (
        eta,
        Transition {
            u: u as i64,
            v: v as i64,
            q: q as i64,
            r: r as i64,
        },
    )
}

#[inline(always)]
fn mul(a: i64, b: i64) -> i128 {
    i128::from(a) * i128::from(b)
}

/// `[f; g] = [u v; q r] [f; g] / 2^62`, exact (the divsteps cleared the low 62 bits).
#[inline(always)]
fn update_fg<const L: usize>(f: &mut [i64; L], g: &mut [i64; L], t: &Transition) {
    let mut cf = mul(t.u, f[0]) + mul(t.v, g[0]);
    let mut cg = mul(t.q, f[0]) + mul(t.r, g[0]);
    cf >>= 62;
    cg >>= 62;
    for i in 1..L {
        cf += mul(t.u, f[i]) + mul(t.v, g[i]);
        cg += mul(t.q, f[i]) + mul(t.r, g[i]);
        f[i - 1] = (cf as u64 & M62) as i64;
        g[i - 1] = (cg as u64 & M62) as i64;
        cf >>= 62;
        cg >>= 62;
    }
    f[L - 1] = cf as i64;
    g[L - 1] = cg as i64;
}

/// `[d; e] = [u v; q r] [d; e] / 2^62 mod m`: a multiple of `m` makes each sum divisible by
/// 2^62. Keeps `d`, `e` in `(-2m, m)` (libsecp256k1's range argument, which needs
/// `|u| + |v| <= 2^62`).
#[inline(always)]
fn update_de<const L: usize>(
    d: &mut [i64; L],
    e: &mut [i64; L],
    t: &Transition,
    m: &SafegcdModulus<L>,
) {
    let (sd, se) = (d[L - 1] >> 63, e[L - 1] >> 63);
    // Start from m times the matrix entries of negative inputs, which keeps the outputs
    // above -2m; then subtract what makes the low 62 bits cancel.
    let mut md = (t.u & sd) + (t.v & se);
    let mut me = (t.q & sd) + (t.r & se);
    let mut cd = mul(t.u, d[0]) + mul(t.v, e[0]);
    let mut ce = mul(t.q, d[0]) + mul(t.r, e[0]);
    md -= (m.inv62.wrapping_mul(cd as u64).wrapping_add(md as u64) & M62) as i64;
    me -= (m.inv62.wrapping_mul(ce as u64).wrapping_add(me as u64) & M62) as i64;
    cd += mul(m.limbs[0], md);
    ce += mul(m.limbs[0], me);
    cd >>= 62;
    ce >>= 62;
    for i in 1..L {
        cd += mul(t.u, d[i]) + mul(t.v, e[i]) + mul(m.limbs[i], md);
        ce += mul(t.q, d[i]) + mul(t.r, e[i]) + mul(m.limbs[i], me);
        d[i - 1] = (cd as u64 & M62) as i64;
        e[i - 1] = (ce as u64 & M62) as i64;
        cd >>= 62;
        ce >>= 62;
    }
    d[L - 1] = cd as i64;
    e[L - 1] = ce as i64;
}

/// Carries every limb's bits above 62 into the next one.
#[inline(always)]
fn propagate<const L: usize>(x: &mut [i64; L]) {
    for i in 0..L - 1 {
        x[i + 1] += x[i] >> 62;
        x[i] &= M62 as i64;
    }
}

/// Brings `x` in `(-2m, m)` to `[0, m)`, negated first when `sign` is negative.
#[inline(always)]
fn normalize<const L: usize>(x: &mut [i64; L], sign: i64, m: &SafegcdModulus<L>) {
    let add = x[L - 1] >> 63;
    for (limb, &ml) in x.iter_mut().zip(&m.limbs) {
        *limb += ml & add;
    }
    let negate = sign >> 63;
    for limb in x.iter_mut() {
        *limb = (*limb ^ negate) - negate;
    }
    propagate(x);
    let add = x[L - 1] >> 63;
    for (limb, &ml) in x.iter_mut().zip(&m.limbs) {
        *limb += ml & add;
    }
    propagate(x);
}

/// `x^-1 mod m` for canonical `x < m` (0 for `x = 0`), in constant time.
pub(crate) fn invert<const N: usize, const L: usize>(
    x: &[u64; N],
    m: &SafegcdModulus<L>,
) -> [u64; N] {
    let mut f = m.limbs;
    let mut g = to_signed62::<N, L>(x);
    let mut d = [0i64; L];
    let mut e = [0i64; L];
    e[0] = 1;
    let mut eta = -1; // delta = 1
    for _ in 0..m.batches {
        let (next, t) = divsteps_62(eta, f[0] as u64, g[0] as u64);
        eta = next;
        update_de(&mut d, &mut e, &t, m);
        update_fg(&mut f, &mut g, &t);
    }
    // Now g = 0 and f = +-1 (x and m are coprime), so d = +-x^-1.
    debug_assert!(
        g.iter().all(|&l| l == 0),
        "g is not zero after the divstep bound"
    );
    normalize(&mut d, f[L - 1], m);
    from_signed62(&d)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.
    extern crate std;
    use super::*;
    use crate::{Fq, Fr};
    use ff::{Field, PrimeField};
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use std::{vec, vec::Vec};

    /// `x^-1 = x^(m - 2)`, the reference.
    fn fermat<F: Field, const N: usize>(x: &F, modulus: [u64; N]) -> F {
        x.pow_vartime(crate::arith::sub_small(modulus, 2))
    }

    /// Elements that stress the divsteps: small values, powers of two, values next to the
    /// modulus and its halves, and all-ones patterns.
    fn edge_cases<F: PrimeField>() -> Vec<F> {
        let mut v = vec![
            F::ONE,
            -F::ONE,
            F::ONE.double(),
            -F::ONE.double(),
            F::TWO_INV,
        ];
        let mut p = F::ONE;
        for _ in 0..F::NUM_BITS {
            p = p.double();
            v.extend([p, -p, p - F::ONE, p + F::ONE]);
        }
        for k in [3u64, 5, 7, 255, 65537, u64::MAX] {
            v.extend([F::from(k), -F::from(k), F::from(k).invert().unwrap()]);
        }
        v
    }

    fn check<F: PrimeField>(
        name: &str,
        seed: u64,
        random: usize,
        invert: impl Fn(&F) -> F,
        reference: impl Fn(&F) -> F,
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let cases = edge_cases::<F>()
            .into_iter()
            .chain((0..random).map(|_| F::random(&mut rng)));
        for (i, x) in cases.enumerate() {
            let got = invert(&x);
            assert_eq!(got, reference(&x), "{name}: case {i} ({x:?}), seed {seed}");
            assert_eq!(got * x, F::ONE, "{name}: case {i}, seed {seed}");
        }
    }

    #[test]
    fn inverses_match_fermat() {
        check::<Fr>(
            "Fr",
            0x5afe_9cd0,
            2000,
            |x| x.invert().unwrap(),
            |x| fermat(x, Fr::MODULUS_LIMBS),
        );
        check::<Fq>(
            "Fq",
            0x5afe_9cd1,
            2000,
            |x| x.invert().unwrap(),
            |x| fermat(x, Fq::MODULUS_LIMBS),
        );
    }

    #[test]
    fn zero_has_no_inverse_and_maps_to_zero() {
        assert!(bool::from(Fr::ZERO.invert().is_none()));
        assert!(bool::from(Fq::ZERO.invert().is_none()));
        assert_eq!(invert(&[0u64; 6], &Fq::SAFEGCD), [0; 6]);
        assert_eq!(invert(&[0u64; 4], &Fr::SAFEGCD), [0; 4]);
    }

    #[test]
    fn canonical_integers_invert_modulo_the_modulus() {
        // 2 * 2^-1 = 1 as plain integers, outside Montgomery form.
        let two = {
            let mut t = [0u64; 4];
            t[0] = 2;
            t
        };
        let half = invert(&two, &Fr::SAFEGCD);
        let expected = Fr::TWO_INV.to_canonical_limbs();
        assert_eq!(half, expected);
    }

    #[test]
    fn the_batch_counts_follow_the_divstep_bound() {
        // (49 d + 57) / 17 divsteps: 738 for 255 bits, 1101 for 381.
        assert_eq!(Fr::SAFEGCD.batches, 12);
        assert_eq!(Fq::SAFEGCD.batches, 18);
    }

    #[test]
    fn signed62_round_trips() {
        let x = Fq::MODULUS_LIMBS;
        let s: [i64; 7] = to_signed62(&x);
        assert!(s.iter().all(|&l| (0..=M62 as i64).contains(&l)));
        assert_eq!(from_signed62::<6, 7>(&s), x);
        let y = [u64::MAX, 1, 2, u64::MAX >> 3];
        assert_eq!(from_signed62::<4, 5>(&to_signed62::<4, 5>(&y)), y);
    }
}
