//! Field arithmetic against blst (an independent implementation) on seeded random inputs and
//! edge values. Every failure message carries the seed and case index.

use ff::{Field, PrimeField, PrimeFieldBits};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use sluice_field::{Fq, Fq2, Fr};

const CASES: usize = 2000;

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// Big-endian bytes of little-endian limbs.
fn limbs_be<const N: usize>(limbs: &[u64]) -> Vec<u8> {
    limbs.iter().rev().flat_map(|l| l.to_be_bytes()).collect()
}

/// Tests shared by Fr and Fq, instantiated inside a module that defines the blst bridge
/// (`F`, `B`, `to_b`, `from_b`, `b_add`, `b_sub`, `b_mul`, `b_sqr`, `b_inv`, `b_neg`,
/// `b_bytes_le`, `N`, `NB`).
macro_rules! prime_field_tests {
    () => {
        use super::*;

        /// `x^e` with blst multiplications only (square and multiply, MSB first).
        fn b_pow(x: &B, e: &[u64]) -> B {
            let mut acc = to_b(&F::ONE);
            for limb in e.iter().rev() {
                for i in (0..64).rev() {
                    acc = b_sqr(&acc);
                    if (limb >> i) & 1 == 1 {
                        acc = b_mul(&acc, x);
                    }
                }
            }
            acc
        }

        /// `x^(2^n)` with blst squarings.
        fn b_sqr_n(x: &B, n: u32) -> B {
            (0..n).fold(*x, |acc, _| b_sqr(&acc))
        }

        /// Euler's criterion through blst: is `x` a nonzero square?
        fn b_is_square(x: &B) -> bool {
            let half = shr1(F::MODULUS_LIMBS);
            from_b(&b_pow(x, &half)) == F::ONE
        }

        fn shr1(a: [u64; N]) -> [u64; N] {
            let mut out = [0u64; N];
            for i in 0..N {
                out[i] = a[i] >> 1 | if i + 1 < N { a[i + 1] << 63 } else { 0 };
            }
            out
        }

        /// Canonical limbs -> element, through blst's own conversion (multiply by R^2).
        fn from_canonical(limbs: [u64; N]) -> F {
            let r2 = from_b(&to_b(&F::from_mont_limbs_unchecked(F::R2_LIMBS)));
            let raw = F::from_mont_limbs_unchecked(limbs);
            from_b(&b_mul(&to_b(&raw), &to_b(&r2)))
        }

        /// 0, 1, 2, -1, -2, (m-1)/2, (m+1)/2, and values with extreme limbs below m.
        fn edge_values() -> Vec<F> {
            let m = F::MODULUS_LIMBS;
            let mut v = vec![F::ZERO, F::ONE, F::from(2u64), -F::ONE, -F::from(2u64)];
            let half = shr1(m);
            v.push(from_canonical(half));
            let mut half1 = half;
            half1[0] += 1;
            v.push(from_canonical(half1));
            let mut top = [0u64; N];
            top[N - 1] = m[N - 1];
            v.push(from_canonical(top));
            let mut ones = [u64::MAX; N];
            ones[N - 1] = m[N - 1] - 1;
            v.push(from_canonical(ones));
            v.push(F::from(u64::MAX));
            v.push(F::from_mont_limbs_unchecked(F::R_LIMBS));
            v
        }

        /// Random elements followed by the edge values and all their pairs' mixes.
        fn inputs(seed: u64) -> Vec<F> {
            let mut r = rng(seed);
            let mut v: Vec<F> = (0..CASES).map(|_| F::random(&mut r)).collect();
            v.extend(edge_values());
            v
        }

        #[test]
        fn binary_ops_match_blst() {
            let seed = 11;
            let xs = inputs(seed);
            let ys = inputs(seed + 1);
            let edges = edge_values();
            let pairs = xs.iter().zip(ys.iter()).map(|(a, b)| (*a, *b)).chain(
                edges
                    .iter()
                    .flat_map(|a| edges.iter().map(move |b| (*a, *b))),
            );
            let mut n = 0;
            for (i, (a, b)) in pairs.enumerate() {
                let (ba, bb) = (to_b(&a), to_b(&b));
                let ctx = format!("seed {seed} case {i}: a = {a}, b = {b}");
                assert_eq!(from_b(&b_add(&ba, &bb)), a + b, "add, {ctx}");
                assert_eq!(from_b(&b_sub(&ba, &bb)), a - b, "sub, {ctx}");
                assert_eq!(from_b(&b_mul(&ba, &bb)), a * b, "mul, {ctx}");
                let mut c = a;
                c *= &b;
                c += a;
                c -= b;
                let bc = b_sub(&b_add(&b_mul(&ba, &bb), &ba), &bb);
                assert_eq!(from_b(&bc), c, "assign ops, {ctx}");
                // Outputs stay fully reduced (the layout contract).
                for r in [a + b, a - b, a * b] {
                    assert!(
                        bool::from(F::from_canonical_limbs(&r.mont_limbs()).is_some()),
                        "reduced, {ctx}"
                    );
                }
                n += 1;
            }
            assert!(n >= CASES);
        }

        #[test]
        fn unary_ops_match_blst() {
            let seed = 12;
            for (i, a) in inputs(seed).into_iter().enumerate() {
                let ba = to_b(&a);
                let ctx = format!("seed {seed} case {i}: a = {a}");
                assert_eq!(from_b(&b_neg(&ba)), -a, "neg, {ctx}");
                assert_eq!(from_b(&b_add(&ba, &ba)), a.double(), "double, {ctx}");
                assert_eq!(from_b(&b_sqr(&ba)), a.square(), "square, {ctx}");
                let inv = a.invert();
                assert_eq!(
                    bool::from(inv.is_some()),
                    a != F::ZERO,
                    "invert some, {ctx}"
                );
                // blst maps 0 to 0.
                assert_eq!(from_b(&b_inv(&ba)), inv.unwrap_or(F::ZERO), "invert, {ctx}");
            }
        }

        #[test]
        fn pow_matches_blst() {
            let seed = 13;
            let mut r = rng(seed);
            for (i, a) in inputs(seed).into_iter().enumerate() {
                let e = [r.next_u64(), r.next_u64()];
                let ctx = format!("seed {seed} case {i}: a = {a}, e = {e:x?}");
                assert_eq!(
                    from_b(&b_pow(&to_b(&a), &e)),
                    a.pow_vartime(e),
                    "pow_vartime, {ctx}"
                );
                assert_eq!(from_b(&b_pow(&to_b(&a), &e)), a.pow(e), "pow, {ctx}");
            }
        }

        #[test]
        fn sqrt_matches_euler_criterion() {
            let seed = 14;
            let xs = inputs(seed);
            // Squares and (typically) non-squares alike: both roots checked.
            let cases = xs.iter().map(|x| x.square()).chain(xs.iter().copied());
            let (mut squares, mut non_squares) = (0, 0);
            for (i, a) in cases.enumerate() {
                let ctx = format!("seed {seed} case {i}: a = {a}");
                let expect = a == F::ZERO || b_is_square(&to_b(&a));
                let s = a.sqrt();
                assert_eq!(bool::from(s.is_some()), expect, "sqrt existence, {ctx}");
                if expect {
                    let s = s.unwrap();
                    assert_eq!(from_b(&b_sqr(&to_b(&s))), a, "sqrt value, {ctx}");
                    squares += 1;
                } else {
                    non_squares += 1;
                }
            }
            assert!(
                squares >= CASES && non_squares >= CASES / 4,
                "{squares} {non_squares}"
            );
        }

        #[test]
        fn sqrt_ratio_contract() {
            let seed = 15;
            let mut r = rng(seed);
            for i in 0..CASES / 4 {
                let num = F::random(&mut r);
                let div = F::random(&mut r);
                let ctx = format!("seed {seed} case {i}");
                let (is_sq, root) = F::sqrt_ratio(&num, &div);
                let q = num * div.invert().unwrap();
                assert_eq!(bool::from(is_sq), b_is_square(&to_b(&q)), "{ctx}");
                let target = if bool::from(is_sq) {
                    q
                } else {
                    q * F::ROOT_OF_UNITY
                };
                assert_eq!(root.square(), target, "{ctx}");
            }
            assert_eq!(F::sqrt_ratio(&F::ZERO, &F::ONE).0.unwrap_u8(), 1);
            assert_eq!(F::sqrt_ratio(&F::ONE, &F::ZERO).0.unwrap_u8(), 0);
        }

        #[test]
        fn bytes_match_blst() {
            let seed = 16;
            for (i, a) in inputs(seed).into_iter().enumerate() {
                let ctx = format!("seed {seed} case {i}: a = {a}");
                let le = b_bytes_le(&to_b(&a));
                assert_eq!(a.to_bytes_le().to_vec(), le, "to_bytes_le, {ctx}");
                let mut be = le.clone();
                be.reverse();
                assert_eq!(a.to_bytes_be().to_vec(), be, "to_bytes_be, {ctx}");
                let le_arr: [u8; NB] = le.clone().try_into().unwrap();
                let be_arr: [u8; NB] = be.clone().try_into().unwrap();
                assert_eq!(
                    F::from_bytes_le(&le_arr).unwrap(),
                    a,
                    "from_bytes_le, {ctx}"
                );
                assert_eq!(
                    F::from_bytes_be(&be_arr).unwrap(),
                    a,
                    "from_bytes_be, {ctx}"
                );
                assert_eq!(F::from_repr(a.to_repr()).unwrap(), a, "repr, {ctx}");
                assert_eq!(a.to_repr().as_ref(), &le[..], "repr bytes, {ctx}");
                assert_eq!(
                    format!("{a}"),
                    format!("0x{}", hex::encode(&be)),
                    "display, {ctx}"
                );
                let canon = a.to_le_bits();
                let bits: Vec<bool> = (0..NB * 8)
                    .map(|j| (le[j / 8] >> (j % 8)) & 1 == 1)
                    .collect();
                assert!(canon.iter().by_vals().eq(bits.into_iter()), "bits, {ctx}");
                assert_eq!(bool::from(a.is_odd()), le[0] & 1 == 1, "is_odd, {ctx}");
            }
        }

        #[test]
        fn non_canonical_bytes_rejected() {
            let seed = 17;
            let m = F::MODULUS_LIMBS;
            let mut bad: Vec<[u64; N]> = vec![m, [u64::MAX; N]];
            let mut m1 = m;
            m1[0] += 1;
            bad.push(m1);
            let mut top = [0u64; N];
            top[N - 1] = m[N - 1] + 1;
            bad.push(top);
            let mut r = rng(seed);
            for _ in 0..CASES {
                // Uniform in [m, 2^(64N)): top limb at or above the modulus' top limb + 1.
                let mut l = [0u64; N];
                for x in l.iter_mut() {
                    *x = r.next_u64();
                }
                l[N - 1] = l[N - 1].max(m[N - 1] + 1);
                bad.push(l);
            }
            for (i, l) in bad.iter().enumerate() {
                let le: Vec<u8> = l.iter().flat_map(|x| x.to_le_bytes()).collect();
                let le: [u8; NB] = le.try_into().unwrap();
                let mut be = le;
                be.reverse();
                let ctx = format!("seed {seed} case {i}: {l:x?}");
                assert!(bool::from(F::from_bytes_le(&le).is_none()), "le, {ctx}");
                assert!(bool::from(F::from_bytes_be(&be).is_none()), "be, {ctx}");
                assert!(
                    bool::from(F::from_canonical_limbs(l).is_none()),
                    "limbs, {ctx}"
                );
            }
            // m - 1 is the largest accepted value.
            let mut mm1 = m;
            mm1[0] -= 1;
            assert_eq!(F::from_canonical_limbs(&mm1).unwrap(), -F::ONE);
        }

        #[test]
        fn montgomery_constants() {
            let m = F::MODULUS_LIMBS;
            assert_eq!(F::INV.wrapping_mul(m[0]), u64::MAX, "INV * m = -1 mod 2^64");
            assert_eq!(F::R_LIMBS, b_from_u64(1).mont_limbs(), "R");
            let mut r = rng(18);
            for i in 0..CASES {
                let v = if i < 3 {
                    [0, 1, u64::MAX][i]
                } else {
                    r.next_u64()
                };
                assert_eq!(
                    F::from_u64(v),
                    b_from_u64(v),
                    "from_u64 (R2), seed 18 case {i}"
                );
                assert_eq!(F::from(v), b_from_u64(v));
            }
            assert_eq!(F::MODULUS, format!("0x{}", hex::encode(limbs_be::<N>(&m))));
            // The top bit is free: required by the no-carry Montgomery multiplication.
            assert!(m[N - 1] < (u64::MAX >> 1) - 1);
            assert_eq!(F::ZERO, F::default());
            assert_eq!(F::ONE.to_canonical_limbs()[0], 1);
            let n_bits = 64 * N as u32 - m[N - 1].leading_zeros();
            assert_eq!(F::NUM_BITS, n_bits);
            assert_eq!(F::CAPACITY, n_bits - 1);
            assert!(F::char_le_bits()
                .iter()
                .by_vals()
                .eq((0..64 * N).map(|j| (m[j / 64] >> (j % 64)) & 1 == 1)));
        }

        #[test]
        fn prime_field_constants() {
            let g = F::MULTIPLICATIVE_GENERATOR;
            assert!(!b_is_square(&to_b(&g)), "generator must be a non-residue");
            assert_eq!(F::TWO_INV.double(), F::ONE);
            // t = (m - 1) >> S, odd.
            let mut t = F::MODULUS_LIMBS;
            t[0] -= 1;
            for _ in 0..F::S {
                t = shr1(t);
            }
            assert_eq!(t[0] & 1, 1);
            let root = from_b(&b_pow(&to_b(&g), &t));
            assert_eq!(F::ROOT_OF_UNITY, root, "ROOT_OF_UNITY = g^t");
            assert_eq!(F::ROOT_OF_UNITY * F::ROOT_OF_UNITY_INV, F::ONE);
            // Order exactly 2^S.
            let x = b_sqr_n(&to_b(&F::ROOT_OF_UNITY), F::S - 1);
            assert_ne!(from_b(&x), F::ONE, "ROOT_OF_UNITY^(2^(S-1)) != 1");
            assert_eq!(from_b(&b_sqr(&x)), F::ONE, "ROOT_OF_UNITY^(2^S) == 1");
            let d = b_sqr_n(&to_b(&g), F::S);
            assert_eq!(F::DELTA, from_b(&d), "DELTA = g^(2^S)");
        }

        #[test]
        fn batch_invert_with_zeros() {
            let seed = 19;
            let mut r = rng(seed);
            for len in [0usize, 1, 2, 3, 17, 300] {
                let mut v: Vec<F> = (0..len)
                    .map(|_| {
                        if r.next_u32() % 4 == 0 {
                            F::ZERO
                        } else {
                            F::random(&mut r)
                        }
                    })
                    .collect();
                let expect: Vec<F> = v.iter().map(|x| from_b(&b_inv(&to_b(x)))).collect();
                let all = !v.iter().any(|x| *x == F::ZERO);
                let ok = F::batch_invert(&mut v);
                assert_eq!(v, expect, "seed {seed} len {len}");
                assert_eq!(bool::from(ok), all, "seed {seed} len {len}");
            }
        }

        #[test]
        fn traits_and_layout() {
            let mut r = rng(20);
            let xs: Vec<F> = (0..50).map(|_| F::random(&mut r)).collect();
            let mut s = to_b(&F::ZERO);
            let mut p = to_b(&F::ONE);
            for x in &xs {
                s = b_add(&s, &to_b(x));
                p = b_mul(&p, &to_b(x));
            }
            assert_eq!(xs.iter().sum::<F>(), from_b(&s));
            assert_eq!(xs.iter().copied().sum::<F>(), from_b(&s));
            assert_eq!(xs.iter().product::<F>(), from_b(&p));
            assert_eq!(xs.iter().copied().product::<F>(), from_b(&p));
            use subtle::{Choice, ConditionallySelectable, ConstantTimeEq};
            assert_eq!(
                F::conditional_select(&xs[0], &xs[1], Choice::from(1)),
                xs[1]
            );
            assert_eq!(
                F::conditional_select(&xs[0], &xs[1], Choice::from(0)),
                xs[0]
            );
            assert!(bool::from(xs[0].ct_eq(&xs[0])) && !bool::from(xs[0].ct_eq(&xs[1])));
            assert_eq!(core::mem::size_of::<F>(), 8 * N);
            assert_eq!(F::from_mont_limbs_unchecked(xs[2].mont_limbs()), xs[2]);
            assert!(format!("{:?}", xs[0]).contains(&format!("{}", xs[0])));
        }
    };
}

mod fr {
    use blst::*;
    type F = Fr;
    type B = blst_fr;
    const N: usize = 4;
    const NB: usize = 32;
    fn to_b(x: &F) -> B {
        blst_fr { l: x.mont_limbs() }
    }
    fn from_b(x: &B) -> F {
        F::from_mont_limbs_unchecked(x.l)
    }
    macro_rules! wrap2 {
        ($name:ident, $f:ident) => {
            fn $name(a: &B, b: &B) -> B {
                let mut out = B::default();
                unsafe { $f(&mut out, a, b) };
                out
            }
        };
    }
    wrap2!(b_add, blst_fr_add);
    wrap2!(b_sub, blst_fr_sub);
    wrap2!(b_mul, blst_fr_mul);
    fn b_sqr(a: &B) -> B {
        let mut out = B::default();
        unsafe { blst_fr_sqr(&mut out, a) };
        out
    }
    fn b_inv(a: &B) -> B {
        let mut out = B::default();
        unsafe { blst_fr_inverse(&mut out, a) };
        out
    }
    fn b_neg(a: &B) -> B {
        let mut out = B::default();
        unsafe { blst_fr_cneg(&mut out, a, true) };
        out
    }
    fn b_from_u64(v: u64) -> F {
        let mut out = B::default();
        let limbs = [v, 0, 0, 0];
        unsafe { blst_fr_from_uint64(&mut out, limbs.as_ptr()) };
        from_b(&out)
    }
    fn b_bytes_le(a: &B) -> Vec<u8> {
        let mut s = blst_scalar::default();
        let mut out = [0u8; 32];
        unsafe {
            blst_scalar_from_fr(&mut s, a);
            blst_lendian_from_scalar(out.as_mut_ptr(), &s);
        }
        out.to_vec()
    }
    prime_field_tests!();

    #[test]
    fn fr_specific_constants() {
        assert_eq!(F::MULTIPLICATIVE_GENERATOR, F::from(7u64));
        assert_eq!(F::S, 32);
        assert_eq!(F::NUM_BITS, 255);
        // blst agrees the modulus is what we say: r - 1 + 1 wraps to 0 in blst.
        let m1 = from_canonical({
            let mut m = F::MODULUS_LIMBS;
            m[0] -= 1;
            m
        });
        assert_eq!(from_b(&b_add(&to_b(&m1), &to_b(&F::ONE))), F::ZERO);
    }
}

mod fq {
    use blst::*;
    use sluice_field::FqRepr;
    type F = Fq;
    type B = blst_fp;
    const N: usize = 6;
    const NB: usize = 48;
    fn to_b(x: &F) -> B {
        blst_fp { l: x.mont_limbs() }
    }
    fn from_b(x: &B) -> F {
        F::from_mont_limbs_unchecked(x.l)
    }
    macro_rules! wrap2 {
        ($name:ident, $f:ident) => {
            fn $name(a: &B, b: &B) -> B {
                let mut out = B::default();
                unsafe { $f(&mut out, a, b) };
                out
            }
        };
    }
    wrap2!(b_add, blst_fp_add);
    wrap2!(b_sub, blst_fp_sub);
    wrap2!(b_mul, blst_fp_mul);
    fn b_sqr(a: &B) -> B {
        let mut out = B::default();
        unsafe { blst_fp_sqr(&mut out, a) };
        out
    }
    fn b_inv(a: &B) -> B {
        let mut out = B::default();
        unsafe { blst_fp_inverse(&mut out, a) };
        out
    }
    fn b_neg(a: &B) -> B {
        let mut out = B::default();
        unsafe { blst_fp_cneg(&mut out, a, true) };
        out
    }
    fn b_from_u64(v: u64) -> F {
        let mut out = B::default();
        let limbs = [v, 0, 0, 0, 0, 0];
        unsafe { blst_fp_from_uint64(&mut out, limbs.as_ptr()) };
        from_b(&out)
    }
    fn b_bytes_le(a: &B) -> Vec<u8> {
        let mut out = [0u8; 48];
        unsafe { blst_lendian_from_fp(out.as_mut_ptr(), a) };
        out.to_vec()
    }
    prime_field_tests!();

    #[test]
    fn fq_specific() {
        assert_eq!(F::MULTIPLICATIVE_GENERATOR, F::from(2u64));
        assert_eq!(F::ROOT_OF_UNITY, -F::ONE);
        assert_eq!(F::S, 1);
        assert_eq!(FqRepr::default().0, [0u8; 48]);
        // blst's own sqrt agrees on existence and (up to sign) value.
        let seed = 21;
        for (i, a) in inputs(seed).into_iter().enumerate() {
            let mut root = B::default();
            let exists = unsafe { blst_fp_sqrt(&mut root, &to_b(&a)) };
            let ours = a.sqrt();
            assert_eq!(bool::from(ours.is_some()), exists, "seed {seed} case {i}");
            if exists {
                let s = ours.unwrap();
                assert!(
                    s == from_b(&root) || s == -from_b(&root),
                    "seed {seed} case {i}"
                );
            }
        }
    }

    #[test]
    fn lexicographically_largest() {
        let seed = 22;
        let half_be = limbs_be::<N>(&shr1(F::MODULUS_LIMBS));
        for (i, a) in inputs(seed).into_iter().enumerate() {
            let mut be = [0u8; 48];
            unsafe { blst_bendian_from_fp(be.as_mut_ptr(), &to_b(&a)) };
            let expect = be.as_slice() > half_be.as_slice();
            assert_eq!(
                bool::from(a.lexicographically_largest()),
                expect,
                "seed {seed} case {i}"
            );
        }
        assert!(!bool::from(F::ZERO.lexicographically_largest()));
        assert!(bool::from((-F::ONE).lexicographically_largest()));
    }
}

mod fq2 {
    use super::*;
    use blst::*;
    type B = blst_fp2;

    fn to_b(x: &Fq2) -> B {
        blst_fp2 {
            fp: [
                blst_fp {
                    l: x.c0.mont_limbs(),
                },
                blst_fp {
                    l: x.c1.mont_limbs(),
                },
            ],
        }
    }
    fn from_b(x: &B) -> Fq2 {
        Fq2::from_mont_limbs_unchecked([x.fp[0].l, x.fp[1].l])
    }
    macro_rules! wrap2 {
        ($name:ident, $f:ident) => {
            fn $name(a: &B, b: &B) -> B {
                let mut out = B::default();
                unsafe { $f(&mut out, a, b) };
                out
            }
        };
    }
    macro_rules! wrap1 {
        ($name:ident, $f:ident) => {
            fn $name(a: &B) -> B {
                let mut out = B::default();
                unsafe { $f(&mut out, a) };
                out
            }
        };
    }
    wrap2!(b_add, blst_fp2_add);
    wrap2!(b_sub, blst_fp2_sub);
    wrap2!(b_mul, blst_fp2_mul);
    wrap1!(b_sqr, blst_fp2_sqr);
    wrap1!(b_inv, blst_fp2_inverse);

    fn b_pow(x: &B, e: &[u64]) -> B {
        let mut acc = to_b(&Fq2::ONE);
        for limb in e.iter().rev() {
            for i in (0..64).rev() {
                acc = b_sqr(&acc);
                if (limb >> i) & 1 == 1 {
                    acc = b_mul(&acc, x);
                }
            }
        }
        acc
    }

    fn edge_values() -> Vec<Fq2> {
        let fq = [Fq::ZERO, Fq::ONE, -Fq::ONE, Fq::from(2u64), Fq::TWO_INV];
        fq.iter()
            .flat_map(|a| fq.iter().map(move |b| Fq2 { c0: *a, c1: *b }))
            .collect()
    }

    fn inputs(seed: u64) -> Vec<Fq2> {
        let mut r = rng(seed);
        let mut v: Vec<Fq2> = (0..CASES).map(|_| Fq2::random(&mut r)).collect();
        v.extend(edge_values());
        v
    }

    #[test]
    fn ops_match_blst() {
        let seed = 31;
        let xs = inputs(seed);
        let ys = inputs(seed + 1);
        let nr = to_b(&Fq2 {
            c0: Fq::ONE,
            c1: Fq::ONE,
        });
        for (i, (a, b)) in xs.iter().zip(ys.iter()).enumerate() {
            let (ba, bb) = (to_b(a), to_b(b));
            let ctx = format!("seed {seed} case {i}: a = {a}, b = {b}");
            assert_eq!(from_b(&b_add(&ba, &bb)), a + b, "add, {ctx}");
            assert_eq!(from_b(&b_sub(&ba, &bb)), a - b, "sub, {ctx}");
            assert_eq!(from_b(&b_mul(&ba, &bb)), a * b, "mul, {ctx}");
            assert_eq!(from_b(&b_sqr(&ba)), a.square(), "square, {ctx}");
            assert_eq!(from_b(&b_add(&ba, &ba)), a.double(), "double, {ctx}");
            assert_eq!(from_b(&b_sub(&to_b(&Fq2::ZERO), &ba)), -a, "neg, {ctx}");
            assert_eq!(
                from_b(&b_inv(&ba)),
                a.invert().unwrap_or(Fq2::ZERO),
                "invert, {ctx}"
            );
            assert_eq!(bool::from(a.invert().is_some()), *a != Fq2::ZERO, "{ctx}");
            assert_eq!(
                from_b(&b_mul(&ba, &nr)),
                a.mul_by_nonresidue(),
                "nonresidue, {ctx}"
            );
            // a * conj(a) = norm(a).
            let n = from_b(&b_mul(&ba, &to_b(&a.conjugate())));
            assert_eq!(
                n,
                Fq2 {
                    c0: a.norm(),
                    c1: Fq::ZERO
                },
                "norm/conjugate, {ctx}"
            );
            let e = [(i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)];
            assert_eq!(from_b(&b_pow(&ba, &e)), a.pow_vartime(e), "pow, {ctx}");
        }
    }

    #[test]
    fn frobenius_is_p_power() {
        let seed = 33;
        for (i, a) in inputs(seed).into_iter().take(100).enumerate() {
            let ap = from_b(&b_pow(&to_b(&a), &Fq::MODULUS_LIMBS));
            assert_eq!(a.frobenius_map(1), ap, "seed {seed} case {i}");
            assert_eq!(a.frobenius_map(3), ap, "seed {seed} case {i}");
            assert_eq!(a.frobenius_map(2), a, "seed {seed} case {i}");
        }
    }

    #[test]
    fn sqrt_matches_blst() {
        let seed = 34;
        let xs = inputs(seed);
        let cases = xs.iter().map(|x| x.square()).chain(xs.iter().copied());
        let (mut squares, mut non_squares) = (0, 0);
        for (i, a) in cases.enumerate() {
            let ctx = format!("seed {seed} case {i}: a = {a}");
            let mut root = B::default();
            let exists = unsafe { blst_fp2_sqrt(&mut root, &to_b(&a)) };
            assert_eq!(exists, unsafe { blst_fp2_is_square(&to_b(&a)) }, "{ctx}");
            let s = a.sqrt();
            assert_eq!(bool::from(s.is_some()), exists, "existence, {ctx}");
            if exists {
                let s = s.unwrap();
                assert_eq!(from_b(&b_sqr(&to_b(&s))), a, "value, {ctx}");
                squares += 1;
            } else {
                non_squares += 1;
            }
        }
        assert!(
            squares >= CASES && non_squares >= CASES / 4,
            "{squares} {non_squares}"
        );
    }

    #[test]
    fn sqrt_ratio_contract() {
        let seed = 35;
        let mut r = rng(seed);
        let nr = Fq2 {
            c0: Fq::ONE,
            c1: Fq::ONE,
        };
        for i in 0..CASES / 4 {
            let num = Fq2::random(&mut r);
            let div = Fq2::random(&mut r);
            let ctx = format!("seed {seed} case {i}");
            let (is_sq, root) = Fq2::sqrt_ratio(&num, &div);
            let q = from_b(&b_mul(&to_b(&num), &b_inv(&to_b(&div))));
            assert_eq!(
                bool::from(is_sq),
                unsafe { blst_fp2_is_square(&to_b(&q)) },
                "{ctx}"
            );
            let target = if bool::from(is_sq) { q } else { q * nr };
            assert_eq!(root.square(), target, "{ctx}");
        }
        assert!(bool::from(Fq2::sqrt_ratio(&Fq2::ZERO, &Fq2::ONE).0));
        let (ok, root) = Fq2::sqrt_ratio(&Fq2::ONE, &Fq2::ZERO);
        assert!(!bool::from(ok));
        assert_eq!(root, Fq2::ZERO);
    }

    #[test]
    fn lexicographically_largest_rule() {
        let seed = 36;
        for (i, a) in inputs(seed).into_iter().enumerate() {
            let expect = if a.c1 != Fq::ZERO {
                a.c1.lexicographically_largest()
            } else {
                a.c0.lexicographically_largest()
            };
            assert_eq!(
                bool::from(a.lexicographically_largest()),
                bool::from(expect),
                "seed {seed} case {i}"
            );
        }
    }

    #[test]
    fn batch_invert_and_layout() {
        let seed = 37;
        let mut r = rng(seed);
        let mut v: Vec<Fq2> = (0..100)
            .map(|i| {
                if i % 7 == 0 {
                    Fq2::ZERO
                } else {
                    Fq2::random(&mut r)
                }
            })
            .collect();
        let expect: Vec<Fq2> = v.iter().map(|x| from_b(&b_inv(&to_b(x)))).collect();
        assert!(!bool::from(Fq2::batch_invert(&mut v)));
        assert_eq!(v, expect, "seed {seed}");
        assert_eq!(core::mem::size_of::<Fq2>(), 96);
        assert_eq!(
            Fq2::from(5u64),
            Fq2 {
                c0: Fq::from(5u64),
                c1: Fq::ZERO
            }
        );
        assert_eq!(Fq2::default(), Fq2::ZERO);
        let x = Fq2::random(&mut r);
        assert_eq!(Fq2::from_mont_limbs_unchecked(x.mont_limbs()), x);
        assert_eq!([x, x].iter().sum::<Fq2>(), x.double());
        assert_eq!([x, x].iter().product::<Fq2>(), x.square());
    }
}

#[cfg(feature = "blst")]
mod blst_feature {
    use super::*;

    #[test]
    fn conversions_are_limb_copies() {
        let mut r = rng(41);
        for i in 0..100 {
            let (a, b, c) = (Fr::random(&mut r), Fq::random(&mut r), Fq2::random(&mut r));
            let (ba, bb, bc) = (
                blst::blst_fr::from(a),
                blst::blst_fp::from(b),
                blst::blst_fp2::from(c),
            );
            assert_eq!(ba.l, a.mont_limbs(), "case {i}");
            assert_eq!(bb.l, b.mont_limbs(), "case {i}");
            assert_eq!([bc.fp[0].l, bc.fp[1].l], c.mont_limbs(), "case {i}");
            assert_eq!(Fr::from(ba), a);
            assert_eq!(Fq::from(bb), b);
            assert_eq!(Fq2::from(bc), c);
        }
    }
}
