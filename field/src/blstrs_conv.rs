//! Interop with blstrs 0.7 (feature `blstrs`), the types bellperson 0.27 and Filecoin's
//! circuits use.
//!
//! blstrs wraps blst's types (`#[repr(transparent)]`), and this crate keeps blst's layouts
//! (see `blst_conv`): `blstrs::Scalar` is four Montgomery limbs like [`Fr`], affine points are
//! two coordinates of Montgomery limbs, and both store the affine identity as (0, 0) (blst's
//! `blst_p1_affine_is_inf` tests for all-zero bytes). So every conversion here is a copy of
//! limbs or a reinterpretation of memory, never a reduction.
//!
//! Points from blstrs are trusted like points from blst: blstrs keeps coordinates reduced,
//! and a point it built unchecked (`from_raw_unchecked`) arrives as unchecked as it was.

use crate::fr_compatible::{FrCompatible, Sealed};
use crate::{Fr, G1Affine, G2Affine};
use core::mem::{align_of, size_of};
use group::prime::PrimeCurveAffine;

impl Sealed for blstrs::Scalar {}
/// blstrs' scalar is blst's `blst_fr`: `Fr`'s limbs, Montgomery form and reduction.
impl FrCompatible for blstrs::Scalar {}

// The point conversions copy coordinates, but the slice views of `FrCompatible` need the
// whole layouts to agree (checked again where they are used): checked here at compile time,
// the points' too so a blstrs release that changed them fails to build.
const _: () = {
    assert!(size_of::<blstrs::Scalar>() == size_of::<Fr>());
    assert!(align_of::<blstrs::Scalar>() == align_of::<Fr>());
    assert!(size_of::<blstrs::G1Affine>() == size_of::<G1Affine>());
    assert!(align_of::<blstrs::G1Affine>() == align_of::<G1Affine>());
    assert!(size_of::<blstrs::G2Affine>() == size_of::<G2Affine>());
    assert!(align_of::<blstrs::G2Affine>() == align_of::<G2Affine>());
};

impl From<blstrs::Scalar> for Fr {
    #[inline(always)]
    fn from(s: blstrs::Scalar) -> Self {
        s.to_fr()
    }
}

impl From<Fr> for blstrs::Scalar {
    #[inline(always)]
    fn from(x: Fr) -> Self {
        blstrs::Scalar::from_fr(x)
    }
}

/// `From` both ways between one group's affine type and blstrs', through blst's (which
/// blstrs exposes by `AsRef`/`AsMut` and this crate converts by coordinate copies).
macro_rules! blstrs_affine_conversions {
    ($affine:ident) => {
        impl From<blstrs::$affine> for $affine {
            #[inline(always)]
            fn from(p: blstrs::$affine) -> Self {
                $affine::from(*p.as_ref())
            }
        }

        impl From<$affine> for blstrs::$affine {
            #[inline(always)]
            fn from(p: $affine) -> Self {
                let mut out = blstrs::$affine::identity();
                *out.as_mut() = p.into();
                out
            }
        }
    };
}

blstrs_affine_conversions!(G1Affine);
blstrs_affine_conversions!(G2Affine);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

    use super::*;
    use crate::curve::CurveField;
    use crate::{G1Projective, G2Projective};
    use ff::{Field, PrimeField};
    use group::{Curve, Group, GroupEncoding, UncompressedEncoding};
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;
    use std::vec;
    use std::vec::Vec;

    /// 0, 1, 2, r - 1, r - 2, 2^64, 2^128, 2^254 and (r - 1) / 2: the carries and the top.
    fn edge_scalars() -> Vec<blstrs::Scalar> {
        let one = blstrs::Scalar::ONE;
        let two_64 = blstrs::Scalar::from(u64::MAX) + one;
        let two_128 = two_64.square();
        let two_254 = blstrs::Scalar::from(2u64).pow_vartime([254]);
        vec![
            blstrs::Scalar::ZERO,
            one,
            one.double(),
            -one,
            -one.double(),
            two_64,
            two_128,
            two_254,
            -one * blstrs::Scalar::TWO_INV,
        ]
    }

    fn scalars(seed: u64) -> Vec<blstrs::Scalar> {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut v = edge_scalars();
        v.extend((0..64).map(|_| blstrs::Scalar::random(&mut rng)));
        v
    }

    /// Converted scalars are the same field elements: same canonical bytes, and every
    /// operation of one side agrees with the other's on converted operands.
    #[test]
    fn scalars_convert_to_the_same_elements() {
        let seed = 40;
        let v = scalars(seed);
        for (i, &a) in v.iter().enumerate() {
            let fa = Fr::from(a);
            assert_eq!(fa.to_repr(), a.to_repr(), "seed {seed}, value {i}");
            assert_eq!(blstrs::Scalar::from(fa), a, "seed {seed}, value {i}");
            assert_eq!(Fr::from(a.square()), fa.square(), "seed {seed}, value {i}");
            assert_eq!(Fr::from(-a), -fa, "seed {seed}, value {i}");
            let inv_a: Option<blstrs::Scalar> = a.invert().into();
            let inv_fa: Option<Fr> = fa.invert().into();
            assert_eq!(inv_a.map(Fr::from), inv_fa, "seed {seed}, value {i}");
            let b = v[(i * 7 + 3) % v.len()];
            let fb = Fr::from(b);
            assert_eq!(Fr::from(a * b), fa * fb, "seed {seed}, values {i}");
            assert_eq!(Fr::from(a + b), fa + fb, "seed {seed}, values {i}");
            assert_eq!(Fr::from(a - b), fa - fb, "seed {seed}, values {i}");
        }
    }

    /// Slice views are the same memory both ways, and agree with the value conversions.
    #[test]
    fn scalar_slices_are_views_of_the_same_memory() {
        let seed = 41;
        let mut v = scalars(seed);
        let as_fr: Vec<Fr> = v.iter().map(|&s| Fr::from(s)).collect();
        assert_eq!(blstrs::Scalar::as_fr_slice(&v), &as_fr[..], "seed {seed}");
        assert_eq!(
            blstrs::Scalar::as_fr_slice(&v).as_ptr() as usize,
            v.as_ptr() as usize
        );
        assert_eq!(blstrs::Scalar::from_fr_slice(&as_fr), &v[..], "seed {seed}");
        blstrs::Scalar::as_fr_slice_mut(&mut v)[2] = Fr::from(9u64);
        assert_eq!(v[2], blstrs::Scalar::from(9u64));
        let mut frs = as_fr.clone();
        blstrs::Scalar::from_fr_slice_mut(&mut frs)[0] = blstrs::Scalar::from(5u64);
        assert_eq!(frs[0], Fr::from(5u64));
        assert_eq!(*v[3].as_fr(), as_fr[3], "seed {seed}");
    }

    /// Random points, the generator and the identity convert to the same points (same
    /// compressed encodings), both ways, and scalar multiplication agrees across the
    /// conversions.
    #[test]
    fn g1_points_convert_to_the_same_points() {
        let seed = 42;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut points = vec![blstrs::G1Affine::identity(), blstrs::G1Affine::generator()];
        points.extend((0..16).map(|_| blstrs::G1Projective::random(&mut rng).to_affine()));
        for (i, &p) in points.iter().enumerate() {
            let q = G1Affine::from(p);
            assert_eq!(
                q.to_bytes().as_ref(),
                p.to_bytes().as_ref(),
                "seed {seed}, point {i}"
            );
            assert_eq!(bool::from(q.is_identity()), bool::from(p.is_identity()));
            assert_eq!(blstrs::G1Affine::from(q), p, "seed {seed}, point {i}");
            let k = blstrs::Scalar::random(&mut rng);
            let pk = (p * k).to_affine();
            let qk = (G1Projective::from(q) * Fr::from(k)).to_affine();
            assert_eq!(G1Affine::from(pk), qk, "seed {seed}, point {i}");
        }
    }

    /// As for G1.
    #[test]
    fn g2_points_convert_to_the_same_points() {
        let seed = 43;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut points = vec![blstrs::G2Affine::identity(), blstrs::G2Affine::generator()];
        points.extend((0..8).map(|_| blstrs::G2Projective::random(&mut rng).to_affine()));
        for (i, &p) in points.iter().enumerate() {
            let q = G2Affine::from(p);
            assert_eq!(
                q.to_bytes().as_ref(),
                p.to_bytes().as_ref(),
                "seed {seed}, point {i}"
            );
            assert_eq!(bool::from(q.is_identity()), bool::from(p.is_identity()));
            assert_eq!(blstrs::G2Affine::from(q), p, "seed {seed}, point {i}");
            let k = blstrs::Scalar::random(&mut rng);
            let pk = (p * k).to_affine();
            let qk = (G2Projective::from(q) * Fr::from(k)).to_affine();
            assert_eq!(G2Affine::from(pk), qk, "seed {seed}, point {i}");
        }
    }

    /// The identity is the identity on both sides, from either side's constructor and from
    /// arithmetic (P - P): blst's affine (0, 0) and this crate's.
    #[test]
    fn identities_cross_both_ways() {
        let g = blstrs::G1Affine::generator();
        let zero_by_arith =
            (blstrs::G1Projective::from(g) - blstrs::G1Projective::from(g)).to_affine();
        assert!(bool::from(G1Affine::from(zero_by_arith).is_identity()));
        assert!(bool::from(
            blstrs::G1Affine::from(G1Affine::identity()).is_identity()
        ));
        let ours = (G1Projective::generator() - G1Projective::generator()).to_affine();
        assert!(bool::from(blstrs::G1Affine::from(ours).is_identity()));
        let h = blstrs::G2Affine::generator();
        let zero2 = (blstrs::G2Projective::from(h) - blstrs::G2Projective::from(h)).to_affine();
        assert!(bool::from(G2Affine::from(zero2).is_identity()));
        assert!(bool::from(
            blstrs::G2Affine::from(G2Affine::identity()).is_identity()
        ));
        assert!(!bool::from(G1Affine::from(g).is_identity()));
    }

    /// p - 2, big-endian: the coordinate -2.
    fn minus_two_be() -> [u8; 48] {
        let mut out = [0u8; 48];
        (-crate::Fq::from_u64(2)).write_be(&mut out);
        out
    }

    /// `from_uncompressed_unchecked` and `from_bytes_unchecked` here and in blstrs give the
    /// same verdict and point on every case: x = 0 (y = 2 and -2), off the curve, (0, 0)
    /// unflagged, a bad flag, the identity, the generator, a point outside the subgroup.
    /// `refused` names the cases both must refuse, so the test cannot pass by accepting all.
    fn unchecked_readers_agree<A, B>(valid: A, outside: A, refused: usize)
    where
        A: UncompressedEncoding + GroupEncoding + PartialEq + core::fmt::Debug,
        B: UncompressedEncoding + GroupEncoding,
    {
        let u = valid.to_uncompressed();
        let n = u.as_ref().len();
        let with = |f: &dyn Fn(&mut [u8])| {
            let mut e = <A as UncompressedEncoding>::Uncompressed::default();
            e.as_mut().copy_from_slice(u.as_ref());
            f(e.as_mut());
            e
        };
        let cases = [
            (
                "(0, 2)",
                with(&|e| {
                    e.fill(0);
                    e[n - 1] = 2;
                }),
            ),
            (
                "(0, -2)",
                with(&|e| {
                    e.fill(0);
                    e[n - 48..].copy_from_slice(&minus_two_be());
                }),
            ),
            ("y + 1", with(&|e| e[n - 1] ^= 1)),
            ("(0, 0) unflagged", with(&|e| e.fill(0))),
            ("sign flag", with(&|e| e[0] |= 0x20)),
            (
                "identity",
                with(&|e| {
                    e.fill(0);
                    e[0] = 0x40;
                }),
            ),
            ("valid", with(&|_| ())),
            ("outside the subgroup", {
                let mut e = with(&|_| ());
                e.as_mut()
                    .copy_from_slice(outside.to_uncompressed().as_ref());
                e
            }),
        ];
        let mut both_refused = 0;
        for (what, e) in &cases {
            let ours = Option::<A>::from(A::from_uncompressed_unchecked(e));
            let mut theirs_bytes = <B as UncompressedEncoding>::Uncompressed::default();
            theirs_bytes.as_mut().copy_from_slice(e.as_ref());
            let theirs = Option::<B>::from(B::from_uncompressed_unchecked(&theirs_bytes));
            match (&ours, &theirs) {
                (Some(a), Some(b)) => assert_eq!(
                    a.to_uncompressed().as_ref(),
                    b.to_uncompressed().as_ref(),
                    "{what}"
                ),
                (None, None) => both_refused += 1,
                _ => panic!("{what}: sluice {:?}, blstrs {}", ours, theirs.is_some()),
            }
            // The compressed form of the same x (where the bytes carry no flag).
            let flags = e.as_ref()[0] & 0xe0;
            if flags == 0 {
                let mut c = <A as GroupEncoding>::Repr::default();
                c.as_mut().copy_from_slice(&e.as_ref()[..n / 2]);
                c.as_mut()[0] |= 0x80;
                let mut cb = <B as GroupEncoding>::Repr::default();
                cb.as_mut().copy_from_slice(c.as_ref());
                let ours = Option::<A>::from(A::from_bytes_unchecked(&c));
                let theirs = Option::<B>::from(B::from_bytes_unchecked(&cb));
                assert_eq!(ours.is_some(), theirs.is_some(), "{what}, compressed");
            }
        }
        assert_eq!(both_refused, refused, "cases refused by both");
    }

    #[test]
    fn g1_unchecked_readers_agree_with_blstrs() {
        use crate::Fq;
        let outside = (1u64..)
            .find_map(|x| {
                let x = Fq::from_u64(x);
                let y = Option::<Fq>::from((x.square() * x + Fq::from_u64(4)).sqrt())?;
                let p = G1Affine::from_xy_unchecked(x, y);
                (!bool::from(p.is_torsion_free())).then_some(p)
            })
            .unwrap();
        // Refused: x = 0 twice, y + 1, (0, 0), the sign flag.
        unchecked_readers_agree::<G1Affine, blstrs::G1Affine>(G1Affine::generator(), outside, 5);
    }

    #[test]
    fn g2_unchecked_readers_agree_with_blstrs() {
        use crate::{Fq, Fq2};
        let b = Fq2 {
            c0: Fq::from_u64(4),
            c1: Fq::from_u64(4),
        };
        let outside = (1u64..)
            .find_map(|x| {
                let x = Fq2 {
                    c0: Fq::from_u64(x),
                    c1: Fq::ONE,
                };
                let y = Option::<Fq2>::from((x.square() * x + b).sqrt())?;
                let p = G2Affine::from_xy_unchecked(x, y);
                (!bool::from(p.is_torsion_free())).then_some(p)
            })
            .unwrap();
        // Refused: x = 0 twice (off G2's curve), y + 1, (0, 0), the sign flag.
        unchecked_readers_agree::<G2Affine, blstrs::G2Affine>(G2Affine::generator(), outside, 5);
    }
}
