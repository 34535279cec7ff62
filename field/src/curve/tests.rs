//! Both groups against blst (an independent implementation) on seeded random inputs, plus
//! the edge cases of the group law and of the encodings. One macro instantiates the suite
//! for G1 and for G2.

use super::{CurveField, Jacobian};
use crate::{DecodeError, Fq, Fq2, Fr};
use ff::{Field, PrimeField};
use group::{Curve, Group, GroupEncoding, UncompressedEncoding};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::format;
use subtle::ConstantTimeEq;

/// The group order r, big-endian hex.
const R_HEX: &str = "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001";
/// The field modulus p, big-endian hex.
const P_HEX: &str = "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab";

/// Little-endian bytes of a big-endian hex number (blst's scalar format).
fn le_bytes(hex_be: &str) -> std::vec::Vec<u8> {
    let mut v = hex::decode(hex_be).unwrap();
    v.reverse();
    v
}

/// A random scalar below 2^254 < r, as little-endian bytes (for blst) and as Fr.
fn random_scalar(rng: &mut ChaCha20Rng) -> ([u8; 32], Fr) {
    let mut b = [0u8; 32];
    rng.fill_bytes(&mut b);
    b[31] &= 0x3f;
    (b, Fr::from_repr(b).unwrap())
}

/// The canonical big-endian bytes of p, to plant non-canonical coordinates.
fn p_bytes() -> [u8; 48] {
    hex::decode(P_HEX).unwrap().try_into().unwrap()
}

macro_rules! group_tests {
    (
        mod $m:ident,
        affine: $affine:ident,
        projective: $proj:ident,
        field: $field:ty,
        clen: $clen:literal,
        ulen: $ulen:literal,
        b: $b:expr,
        generator_compressed_hex: $gen_hex:literal,
        cofactor_hex: $cofactor:literal,
        cases: $cases:literal,
        blst: (
            $bp:ident, $ba:ident, $generator:ident, $add_or_double:ident,
            $add_or_double_affine:ident, $double:ident, $mult:ident, $cneg:ident,
            $to_affine:ident, $is_equal:ident, $is_inf:ident, $compress:ident,
            $serialize:ident, $uncompress:ident, $deserialize:ident, $in_g:ident,
            $on_curve:ident $(,)?
        ) $(,)?
    ) => {
        mod $m {
            use super::*;
            use crate::{$affine, $proj};
            use blst::{
                $add_or_double, $add_or_double_affine, $bp, $ba, $cneg, $compress,
                $deserialize, $double, $generator, $in_g, $is_equal, $is_inf, $mult,
                $on_curve, $serialize, $to_affine, $uncompress, BLST_ERROR,
            };

            fn b_gen() -> $bp {
                unsafe { *$generator() }
            }
            fn b_mul(p: &$bp, k: &[u8]) -> $bp {
                let mut out = $bp::default();
                unsafe { $mult(&mut out, p, k.as_ptr(), 8 * k.len()) };
                out
            }
            fn b_add(a: &$bp, b: &$bp) -> $bp {
                let mut out = $bp::default();
                unsafe { $add_or_double(&mut out, a, b) };
                out
            }
            fn b_add_affine(a: &$bp, b: &$ba) -> $bp {
                let mut out = $bp::default();
                unsafe { $add_or_double_affine(&mut out, a, b) };
                out
            }
            fn b_double(a: &$bp) -> $bp {
                let mut out = $bp::default();
                unsafe { $double(&mut out, a) };
                out
            }
            fn b_neg(a: &$bp) -> $bp {
                let mut out = *a;
                unsafe { $cneg(&mut out, true) };
                out
            }
            fn b_affine(a: &$bp) -> $ba {
                let mut out = $ba::default();
                unsafe { $to_affine(&mut out, a) };
                out
            }
            fn b_eq(a: &$bp, b: &$bp) -> bool {
                unsafe { $is_equal(a, b) }
            }
            fn b_is_inf(a: &$bp) -> bool {
                unsafe { $is_inf(a) }
            }
            fn b_compress(a: &$ba) -> [u8; $clen] {
                let mut out = [0u8; $clen];
                unsafe { $compress(out.as_mut_ptr(), a) };
                out
            }
            fn b_serialize(a: &$ba) -> [u8; $ulen] {
                let mut out = [0u8; $ulen];
                unsafe { $serialize(out.as_mut_ptr(), a) };
                out
            }
            fn b_uncompress(bytes: &[u8; $clen]) -> Result<$ba, BLST_ERROR> {
                let mut out = $ba::default();
                match unsafe { $uncompress(&mut out, bytes.as_ptr()) } {
                    BLST_ERROR::BLST_SUCCESS => Ok(out),
                    e => Err(e),
                }
            }
            fn b_deserialize(bytes: &[u8; $ulen]) -> Result<$ba, BLST_ERROR> {
                let mut out = $ba::default();
                match unsafe { $deserialize(&mut out, bytes.as_ptr()) } {
                    BLST_ERROR::BLST_SUCCESS => Ok(out),
                    e => Err(e),
                }
            }
            fn b_in_group(a: &$ba) -> bool {
                unsafe { $in_g(a) }
            }
            fn b_on_curve(a: &$ba) -> bool {
                unsafe { $on_curve(a) }
            }
            /// Limb-exact equality of affine points (both sides reduced).
            fn same_affine(a: &$affine, b: &$ba) -> bool {
                $ba::from(*a) == *b
            }
            /// Our point as blst sees it (a coordinate copy).
            fn to_b(p: &$proj) -> $bp {
                $bp::from(*p)
            }

            /// A random multiple of blst's generator, with blst's (random) Z.
            fn random_point(rng: &mut ChaCha20Rng) -> $bp {
                b_mul(&b_gen(), &random_scalar(rng).0)
            }

            /// A random curve point that is (with overwhelming probability) outside the
            /// prime-order subgroup: random x until x^3 + b is a square; no cofactor
            /// clearing.
            fn random_non_subgroup_point(rng: &mut ChaCha20Rng) -> $affine {
                loop {
                    let x = <$field>::random(&mut *rng);
                    let rhs = x.square() * x + <$field as CurveField>::B;
                    if let Some(y) = Option::<$field>::from(rhs.sqrt()) {
                        return $affine::from_xy_unchecked(x, y);
                    }
                }
            }

            #[test]
            fn constants_match_blst() {
                let g = $proj::generator();
                assert!(b_eq(&to_b(&g), &b_gen()), "generator");
                assert!(same_affine(&$affine::generator(), &b_affine(&b_gen())));
                assert!(bool::from($affine::generator().is_on_curve()));
                assert!(bool::from($affine::generator().is_torsion_free()));
                assert!(<$field as CurveField>::B == $b, "curve coefficient b");
                assert_eq!(
                    hex::encode($affine::generator().to_compressed()),
                    $gen_hex,
                    "known compressed generator (ZCash serialization spec)"
                );
            }

            #[test]
            fn group_law_against_blst() {
                const SEED: u64 = 0x6701;
                let mut rng = ChaCha20Rng::seed_from_u64(SEED);
                for i in 0..$cases {
                    let (ba, bb) = (random_point(&mut rng), random_point(&mut rng));
                    let (a, b) = ($proj::from(ba), $proj::from(bb));
                    let bb_aff = b_affine(&bb);
                    let b_aff = $affine::from(bb_aff);
                    let msg = format!("seed {SEED:#x}, case {i}");

                    let sum = b_add(&ba, &bb);
                    assert!(b_eq(&to_b(&(a + b)), &sum), "add: {msg}");
                    assert!(b_eq(&to_b(&a.add_vartime(&b)), &sum), "add_vartime: {msg}");
                    assert!(b_eq(&to_b(&(a + b_aff)), &b_add_affine(&ba, &bb_aff)), "mixed: {msg}");
                    assert!(b_eq(&to_b(&a.add_mixed_vartime(&b_aff)), &sum), "mixed vartime: {msg}");
                    assert!(b_eq(&to_b(&(b_aff + a)), &sum), "affine + proj: {msg}");
                    let mut acc = a;
                    acc += &b;
                    assert!(b_eq(&to_b(&acc), &sum), "add_assign: {msg}");

                    let diff = b_add(&ba, &b_neg(&bb));
                    assert!(b_eq(&to_b(&(a - b)), &diff), "sub: {msg}");
                    assert!(b_eq(&to_b(&(a - b_aff)), &diff), "sub mixed: {msg}");
                    assert!(b_eq(&to_b(&(-a)), &b_neg(&ba)), "neg: {msg}");
                    assert!(same_affine(&(-b_aff), &b_affine(&b_neg(&bb))), "affine neg: {msg}");
                    assert!(b_eq(&to_b(&a.double()), &b_double(&ba)), "double: {msg}");

                    assert!(same_affine(&a.to_affine(), &b_affine(&ba)), "to_affine: {msg}");
                    assert!(a == $proj::from(a.to_affine()), "ct_eq across Z: {msg}");
                    assert!(a != b, "distinct points: {msg}");
                }
            }

            #[test]
            fn scalar_mul_against_blst() {
                const SEED: u64 = 0x6702;
                let mut rng = ChaCha20Rng::seed_from_u64(SEED);
                for i in 0..$cases {
                    let bp = random_point(&mut rng);
                    let (kb, k) = random_scalar(&mut rng);
                    let expected = b_mul(&bp, &kb);
                    let p = $proj::from(bp);
                    assert!(b_eq(&to_b(&(p * k)), &expected), "proj * Fr: seed {SEED:#x}, case {i}");
                    assert!(b_eq(&to_b(&(p.to_affine() * &k)), &expected), "affine * Fr: seed {SEED:#x}, case {i}");
                    let mut q = p;
                    q *= k;
                    assert!(b_eq(&to_b(&q), &expected), "mul_assign: seed {SEED:#x}, case {i}");
                }
                // Full-width scalars (above 2^254) through Fr's canonical bytes.
                for i in 0..16 {
                    let p = $proj::from(random_point(&mut rng));
                    let k = Fr::random(&mut rng);
                    let expected = b_mul(&to_b(&p), &k.to_repr());
                    assert!(b_eq(&to_b(&(p * k)), &expected), "full scalar: seed {SEED:#x}, case {i}");
                }
            }

            #[test]
            fn scalar_mul_edges() {
                const SEED: u64 = 0x6703;
                let mut rng = ChaCha20Rng::seed_from_u64(SEED);
                let p = $proj::from(random_point(&mut rng));
                assert!(bool::from((p * Fr::ZERO).is_identity()), "P * 0");
                assert!(b_eq(&to_b(&(p * Fr::ONE)), &to_b(&p)), "P * 1");
                assert!(b_eq(&to_b(&(p * -Fr::ONE)), &b_neg(&to_b(&p))), "P * (r - 1)");
                assert!(b_eq(&to_b(&(p * Fr::from(2u64))), &b_double(&to_b(&p))), "P * 2");
                assert!(bool::from(($proj::identity() * Fr::random(&mut rng)).is_identity()), "O * k");
                assert!(bool::from(($affine::identity() * Fr::random(&mut rng)).is_identity()), "affine O * k");
                let g = $proj::generator();
                let r_minus_one = -Fr::ONE;
                assert!(bool::from((g * r_minus_one + g).is_identity()), "[r]G = O");
            }

            #[test]
            fn group_law_edge_cases() {
                const SEED: u64 = 0x6704;
                let mut rng = ChaCha20Rng::seed_from_u64(SEED);
                let o = $proj::identity();
                let o_aff = $affine::identity();
                for i in 0..8 {
                    let msg = format!("seed {SEED:#x}, case {i}");
                    let bp = random_point(&mut rng);
                    let p = $proj::from(bp);
                    let p_aff = p.to_affine();
                    // The same point with another Z, so equality must be projective.
                    let lambda = <$field>::random(&mut rng);
                    let p2 = $proj(Jacobian {
                        x: p.0.x * lambda.square(),
                        y: p.0.y * lambda.square() * lambda,
                        z: p.0.z * lambda,
                    });
                    assert!(b_eq(&to_b(&p2), &bp), "rescaled point: {msg}");
                    let dbl = b_double(&bp);

                    // identity + P, P + identity
                    for (name, q) in [
                        ("O + P", o + p),
                        ("P + O", p + o),
                        ("O + P vt", o.add_vartime(&p)),
                        ("P + O vt", p.add_vartime(&o)),
                        ("O + P_aff", o + p_aff),
                        ("P + O_aff", p + o_aff),
                        ("O + P_aff vt", o.add_mixed_vartime(&p_aff)),
                        ("P + O_aff vt", p.add_mixed_vartime(&o_aff)),
                    ] {
                        assert!(b_eq(&to_b(&q), &bp), "{name}: {msg}");
                    }
                    // P + P through the addition formulas
                    for (name, q) in [
                        ("P + P", p + p2),
                        ("P + P vt", p.add_vartime(&p2)),
                        ("P + P_aff", p + p_aff),
                        ("P + P_aff vt", p.add_mixed_vartime(&p_aff)),
                        ("P_aff + P", p_aff + p2),
                    ] {
                        assert!(b_eq(&to_b(&q), &dbl), "{name}: {msg}");
                    }
                    // P + (-P)
                    for (name, q) in [
                        ("P - P", p - p2),
                        ("P + -P", p + (-p2)),
                        ("P + -P vt", p.add_vartime(&-p2)),
                        ("P + -P_aff", p + (-p_aff)),
                        ("P + -P_aff vt", p.add_mixed_vartime(&-p_aff)),
                    ] {
                        assert!(bool::from(q.is_identity()), "{name}: {msg}");
                        assert!(b_is_inf(&to_b(&q)), "{name} (blst): {msg}");
                    }
                }
                for (name, q) in [
                    ("O + O", o + o),
                    ("O + O vt", o.add_vartime(&o)),
                    ("O + O_aff", o + o_aff),
                    ("O + O_aff vt", o.add_mixed_vartime(&o_aff)),
                    ("2 O", o.double()),
                    ("-O", -o),
                ] {
                    assert!(bool::from(q.is_identity()), "{name}");
                }
                assert!(bool::from($proj::from(o_aff).is_identity()));
                assert!(bool::from(o.to_affine().is_identity()));
                assert!(bool::from((-o_aff).is_identity()), "-O_aff");
                assert!(same_affine(&o.to_affine(), &$ba::default()), "identity is (0, 0)");
                assert!(o == $proj::default() && o_aff == $affine::default());
                assert!(o != $proj::generator());
                assert!(bool::from(o_aff.is_on_curve() & o_aff.is_torsion_free()));
            }

            #[test]
            fn batch_normalize_against_blst() {
                const SEED: u64 = 0x6705;
                let mut rng = ChaCha20Rng::seed_from_u64(SEED);
                let mut points: std::vec::Vec<$proj> =
                    (0..67).map(|_| $proj::from(random_point(&mut rng))).collect();
                for i in [0, 13, 14, 66] {
                    points[i] = $proj::identity();
                }
                let mut out = std::vec![$affine::generator(); points.len()];
                $proj::batch_normalize(&points, &mut out);
                for (i, (p, q)) in points.iter().zip(&out).enumerate() {
                    assert!(same_affine(q, &b_affine(&to_b(p))), "seed {SEED:#x}, index {i}");
                }
                $proj::batch_normalize(&[], &mut []);
                let mut one = [$affine::generator()];
                $proj::batch_normalize(&[$proj::identity()], &mut one);
                assert!(bool::from(one[0].is_identity()), "lone identity");
            }

            #[test]
            fn encodings_against_blst() {
                const SEED: u64 = 0x6706;
                let mut rng = ChaCha20Rng::seed_from_u64(SEED);
                let mut points: std::vec::Vec<$ba> =
                    (0..$cases).map(|_| b_affine(&random_point(&mut rng))).collect();
                points.push($ba::default());
                points.push(b_affine(&b_gen()));
                for (i, bp) in points.iter().enumerate() {
                    let msg = format!("seed {SEED:#x}, case {i}");
                    let p = $affine::from(*bp);
                    let c = p.to_compressed();
                    let u = p.to_uncompressed();
                    assert_eq!(c, b_compress(bp), "compressed: {msg}");
                    assert_eq!(u, b_serialize(bp), "uncompressed: {msg}");
                    assert!(same_affine(&$affine::from_compressed(&c).unwrap(), &b_uncompress(&c).unwrap()), "decompress: {msg}");
                    assert!(same_affine(&$affine::from_uncompressed(&u).unwrap(), &b_deserialize(&u).unwrap()), "deserialize: {msg}");
                    assert_eq!($affine::decode_compressed(&c), Ok(p), "{msg}");
                    assert_eq!($affine::decode_uncompressed(&u, true), Ok(p), "{msg}");
                    assert_eq!($affine::decode_uncompressed(&u, false), Ok(p), "{msg}");
                    assert_eq!(Option::from($affine::from_compressed_unchecked(&c)), Some(p), "{msg}");
                    assert_eq!(Option::from($affine::from_uncompressed_unchecked(&u)), Some(p), "{msg}");
                    assert_eq!(p.to_bytes().0, c, "GroupEncoding: {msg}");
                    assert_eq!(Option::from($affine::from_bytes(&p.to_bytes())), Some(p), "{msg}");
                    assert_eq!(Option::from($proj::from_bytes(&p.to_bytes())), Some($proj::from(p)), "{msg}");
                    assert_eq!(<$affine as UncompressedEncoding>::to_uncompressed(&p).0, u, "{msg}");
                }
                let mut c = [0u8; $clen];
                c[0] = 0xc0;
                let mut u = [0u8; $ulen];
                u[0] = 0x40;
                assert_eq!($affine::identity().to_compressed(), c, "identity compressed");
                assert_eq!($affine::identity().to_uncompressed(), u, "identity uncompressed");
                assert_eq!($proj::identity().to_bytes().0, c);
                assert_eq!($affine::decode_compressed(&c), Ok($affine::identity()));
                assert_eq!($affine::decode_uncompressed(&u, true), Ok($affine::identity()));
            }

            #[test]
            fn decoding_rejections() {
                const SEED: u64 = 0x6707;
                let mut rng = ChaCha20Rng::seed_from_u64(SEED);
                let p = $proj::from(random_point(&mut rng)).to_affine();
                let c = p.to_compressed();
                let u = p.to_uncompressed();
                let dc = |b: &[u8]| $affine::decode_compressed(b);
                let du = |b: &[u8], checked| $affine::decode_uncompressed(b, checked);
                let with = |bytes: &[u8], i: usize, v: u8| {
                    let mut b = bytes.to_vec();
                    b[i] = v;
                    b
                };
                let inv = Err(DecodeError::InvalidFlags);

                // Compression flag wrong for the form.
                assert_eq!(dc(&with(&c, 0, c[0] & !0x80)), inv, "compressed without 0x80");
                assert_eq!(du(&with(&u, 0, u[0] | 0x80), true), inv, "uncompressed with 0x80");
                assert_eq!(du(&with(&u, 0, u[0] | 0x80), false), inv, "uncompressed with 0x80, unchecked");
                // Infinity with the sign bit, or with anything else set.
                let mut ci = [0u8; $clen];
                ci[0] = 0xc0;
                let mut ui = [0u8; $ulen];
                ui[0] = 0x40;
                assert_eq!(dc(&with(&ci, 0, 0xe0)), inv, "compressed infinity with sign");
                assert_eq!(dc(&with(&ci, 0, 0xc1)), inv, "compressed infinity, x bits in byte 0");
                assert_eq!(dc(&with(&ci, $clen - 1, 1)), inv, "compressed infinity, non-zero rest");
                assert_eq!(du(&with(&ui, 0, 0x60), false), inv, "uncompressed infinity with sign");
                assert_eq!(du(&with(&ui, 5, 1), false), inv, "uncompressed infinity, non-zero x");
                assert_eq!(du(&with(&ui, $ulen - 1, 1), false), inv, "uncompressed infinity, non-zero y");
                assert_eq!(dc(&with(&c, 0, c[0] | 0x40)), inv, "point with infinity flag");
                // Sign bit in the uncompressed form.
                assert_eq!(du(&with(&u, 0, u[0] | 0x20), true), inv, "uncompressed with sign");
                for bad in [with(&c, 0, c[0] & !0x80), with(&ci, 0, 0xe0), with(&ci, $clen - 1, 1)] {
                    let arr: [u8; $clen] = bad.try_into().unwrap();
                    assert!(bool::from($affine::from_compressed(&arr).is_none()), "CtOption form");
                    assert!(b_uncompress(&arr).is_err(), "blst agrees");
                }
                for bad in [with(&u, 0, u[0] | 0x20), with(&ui, 0, 0x60), with(&ui, $ulen - 1, 1)] {
                    let arr: [u8; $ulen] = bad.try_into().unwrap();
                    assert!(bool::from($affine::from_uncompressed(&arr).is_none()), "CtOption form");
                    assert!(bool::from($affine::from_uncompressed_unchecked(&arr).is_none()), "CtOption form");
                    assert!(b_deserialize(&arr).is_err(), "blst agrees");
                }

                // Non-canonical coordinates: p itself in each 48-byte slot (keeping flags).
                let nc = Err(DecodeError::NonCanonicalCoordinate);
                for slot in 0..$clen / 48 {
                    let mut b = c;
                    b[48 * slot..48 * slot + 48].copy_from_slice(&p_bytes());
                    b[0] |= 0x80;
                    assert_eq!(dc(&b), nc, "compressed, slot {slot} = p");
                    assert!(b_uncompress(&b).is_err(), "blst agrees, slot {slot}");
                }
                for slot in 0..$ulen / 48 {
                    let mut b = u;
                    b[48 * slot..48 * slot + 48].copy_from_slice(&p_bytes());
                    assert_eq!(du(&b, true), nc, "uncompressed, slot {slot} = p");
                    assert_eq!(du(&b, false), nc, "uncompressed unchecked, slot {slot} = p");
                    assert!(b_deserialize(&b.try_into().unwrap()).is_err(), "blst agrees, slot {slot}");
                }
                // A coordinate plus p (still below 2^381): x + p with x = 0 is p, so use the
                // all-ones 381-bit value as well.
                let mut b = c;
                b[..48].fill(0xff);
                b[0] = 0x9f;
                assert_eq!(dc(&b), nc, "compressed, 2^381 - 1 in the first slot");

                // Off the curve.
                let noc = Err(DecodeError::NotOnCurve);
                let off = loop {
                    let x = <$field>::random(&mut rng);
                    if bool::from((x.square() * x + <$field as CurveField>::B).sqrt().is_none()) {
                        break $affine::from_xy_unchecked(x, <$field>::ONE);
                    }
                };
                let off_c = off.to_compressed();
                assert_eq!(dc(&off_c), noc, "compressed x without a y");
                assert_eq!(b_uncompress(&off_c).err(), Some(BLST_ERROR::BLST_POINT_NOT_ON_CURVE));
                assert!(bool::from($affine::from_compressed_unchecked(&off_c).is_none()));
                let off_u = $affine::from_xy_unchecked(p.x(), p.y() + <$field>::ONE).to_uncompressed();
                assert_eq!(du(&off_u, true), noc, "uncompressed y + 1");
                // Unchecked skips the subgroup check alone, as blst's (blstrs') does.
                assert_eq!(du(&off_u, false), noc, "uncompressed y + 1, unchecked");
                assert_eq!($affine::decode_uncompressed_on_curve(&off_u), noc, "on-curve decoder");
                assert!(bool::from($affine::from_uncompressed_unchecked(&off_u).is_none()), "CtOption form");
                assert!(bool::from(
                    <$affine as UncompressedEncoding>::from_uncompressed_unchecked(
                        &<$affine as UncompressedEncoding>::Uncompressed::from(off_u)
                    ).is_none()
                ), "UncompressedEncoding form");
                assert_eq!(b_deserialize(&off_u).err(), Some(BLST_ERROR::BLST_POINT_NOT_ON_CURVE), "blst agrees");
                assert_eq!(du(&[0u8; $ulen], true), noc, "(0, 0) without the infinity flag");

                // On the curve, outside the subgroup.
                let nis = Err(DecodeError::NotInSubgroup);
                let q = random_non_subgroup_point(&mut rng);
                let (qc, qu) = (q.to_compressed(), q.to_uncompressed());
                assert_eq!(dc(&qc), nis, "compressed, not in subgroup");
                assert_eq!(du(&qu, true), nis, "uncompressed, not in subgroup");
                assert_eq!(Option::from($affine::from_compressed_unchecked(&qc)), Some(q));
                assert_eq!(du(&qu, false), Ok(q));
                assert!(bool::from($affine::from_compressed(&qc).is_none()));
                assert!(bool::from($affine::from_uncompressed(&qu).is_none()));
                assert!(bool::from($affine::from_xy(q.x(), q.y()).is_none()), "from_xy");
                assert!(bool::from($affine::from_xy(p.x(), p.y()).is_some()), "from_xy");
                assert!(bool::from($affine::from_xy(p.x(), p.y().double()).is_none()), "from_xy off curve");
                assert!(same_affine(&q, &b_uncompress(&qc).unwrap()), "blst decodes it unchecked");

                // Wrong lengths.
                for len in [0, 1, $clen - 1, $clen + 1, $ulen] {
                    let b = std::vec![0xc0u8; len];
                    assert_eq!(dc(&b), Err(DecodeError::WrongLength { expected: $clen, got: len }), "compressed length {len}");
                }
                for len in [0, $clen, $ulen - 1, $ulen + 1] {
                    let b = std::vec![0x40u8; len];
                    assert_eq!(du(&b, true), Err(DecodeError::WrongLength { expected: $ulen, got: len }), "uncompressed length {len}");
                }
            }

            /// x = 0: blst refuses it even unchecked (`BLST_POINT_NOT_IN_GROUP` on G1, where
            /// (0, ±2) is on the curve with order 3); on G2 no point has x = 0, since
            /// 4 (1 + i) is not a square in Fq2. Every decoder here refuses it the same way.
            #[test]
            fn zero_x_is_refused_as_blst_refuses_it() {
                let zero = <$field>::ZERO;
                let rhs = zero.square() * zero + <$field as CurveField>::B;
                let root = Option::<$field>::from(rhs.sqrt());
                assert_eq!(root.is_some(), $clen == 48, "(0, y) on the curve exactly on G1");
                let mut cases = std::vec::Vec::new();
                match root {
                    Some(y) => {
                        for y in [y, -y] {
                            let p = $affine::from_xy_unchecked(zero, y);
                            assert!(bool::from(p.is_on_curve()), "(0, {y:?}) is on the curve");
                            assert!(!bool::from(p.is_torsion_free()), "(0, {y:?}) is not in the subgroup");
                            assert!(bool::from(($proj::from(p).double() + p).is_identity()), "order 3");
                            cases.push((p, DecodeError::NotInSubgroup, BLST_ERROR::BLST_POINT_NOT_IN_GROUP));
                        }
                        assert!(cases[0].0.y() == <$field>::ONE.double() || cases[1].0.y() == <$field>::ONE.double(), "the square roots of 4 are ±2");
                    }
                    None => {
                        let p = $affine::from_xy_unchecked(zero, <$field>::ONE.double());
                        cases.push((p, DecodeError::NotOnCurve, BLST_ERROR::BLST_POINT_NOT_ON_CURVE));
                    }
                }
                for (p, want, blst_says) in cases {
                    let (c, u) = (p.to_compressed(), p.to_uncompressed());
                    let msg = format!("(0, {:?})", p.y());
                    assert_eq!($affine::decode_uncompressed(&u, false), Err(want), "unchecked: {msg}");
                    assert_eq!($affine::decode_uncompressed(&u, true), Err(want), "checked: {msg}");
                    assert_eq!($affine::decode_uncompressed_on_curve(&u), Err(want), "on curve: {msg}");
                    assert!(bool::from($affine::from_uncompressed_unchecked(&u).is_none()), "{msg}");
                    assert!(bool::from(
                        <$affine as UncompressedEncoding>::from_uncompressed_unchecked(
                            &<$affine as UncompressedEncoding>::Uncompressed::from(u)
                        ).is_none()
                    ), "UncompressedEncoding: {msg}");
                    assert!(bool::from($affine::from_uncompressed(&u).is_none()), "{msg}");
                    assert_eq!(b_deserialize(&u).err(), Some(blst_says), "blst deserialize: {msg}");
                    // Compressed, x = 0 with either sign: blst's uncompress refuses it too.
                    for c in [c, { let mut c = c; c[0] ^= 0x20; c }] {
                        assert_eq!($affine::decode_compressed(&c), Err(want), "compressed: {msg}");
                        assert!(bool::from($affine::from_compressed_unchecked(&c).is_none()), "{msg}");
                        assert!(bool::from(
                            <$affine as GroupEncoding>::from_bytes_unchecked(
                                &<$affine as GroupEncoding>::Repr::from(c)
                            ).is_none()
                        ), "GroupEncoding: {msg}");
                        assert_eq!(b_uncompress(&c).err(), Some(blst_says), "blst uncompress: {msg}");
                    }
                }
            }

            #[test]
            fn subgroup_check_against_reference() {
                const SEED: u64 = 0x6708;
                let mut rng = ChaCha20Rng::seed_from_u64(SEED);
                let r = le_bytes(R_HEX);
                let h = le_bytes($cofactor);
                for i in 0..100 {
                    let msg = format!("seed {SEED:#x}, case {i}");
                    // In the subgroup: generator multiples.
                    let bp = b_affine(&random_point(&mut rng));
                    let p = $affine::from(bp);
                    assert!(b_is_inf(&b_mul(&to_b(&p.into()), &r)), "reference [r]P = O: {msg}");
                    assert!(bool::from(p.is_torsion_free()), "torsion-free point: {msg}");
                    // Not in the subgroup: hashed to the curve, no cofactor clearing.
                    let q = random_non_subgroup_point(&mut rng);
                    let bq = $ba::from(q);
                    assert!(b_on_curve(&bq), "hashed point on curve: {msg}");
                    assert!(bool::from(q.is_on_curve()), "hashed point on curve: {msg}");
                    let rq = b_mul(&to_b(&q.into()), &r);
                    assert!(!b_is_inf(&rq), "reference [r]Q != O: {msg}");
                    assert!(!b_in_group(&bq), "blst: not in group: {msg}");
                    assert!(!bool::from(q.is_torsion_free()), "non-subgroup point: {msg}");
                    // [h]Q is in the subgroup (another source of subgroup points).
                    let hq = $proj::from(b_mul(&to_b(&q.into()), &h)).to_affine();
                    assert!(b_in_group(&$ba::from(hq)), "blst: [h]Q in group: {msg}");
                    assert!(bool::from(hq.is_torsion_free()), "[h]Q torsion-free: {msg}");
                }
            }

            #[test]
            fn traits_and_conversions() {
                const SEED: u64 = 0x6709;
                let mut rng = ChaCha20Rng::seed_from_u64(SEED);
                let mut expected = $bp::default();
                let mut points = std::vec::Vec::new();
                for _ in 0..20 {
                    let bp = random_point(&mut rng);
                    expected = b_add(&expected, &bp);
                    points.push($proj::from(bp));
                    // Coordinate copies both ways.
                    assert!($bp::from($proj::from(bp)) == bp, "seed {SEED:#x}");
                    let ba = b_affine(&bp);
                    assert!($ba::from($affine::from(ba)) == ba, "seed {SEED:#x}");
                }
                assert!(b_eq(&to_b(&points.iter().sum()), &expected), "Sum<&>: seed {SEED:#x}");
                assert!(b_eq(&to_b(&points.into_iter().sum()), &expected), "Sum: seed {SEED:#x}");
                for _ in 0..8 {
                    let p = <$proj as Group>::random(&mut rng);
                    assert!(!bool::from(p.is_identity()));
                    assert!(b_in_group(&$ba::from(p.to_affine())), "seed {SEED:#x}");
                    assert!(bool::from(p.ct_eq(&p)));
                }
                let g = <$affine as group::prime::PrimeCurveAffine>::generator();
                assert_eq!(group::prime::PrimeCurveAffine::to_curve(&g), $proj::generator());
                assert!(!format!("{:?}", $proj::generator()).is_empty());
                assert_eq!(format!("{:?}", $affine::identity()), concat!(stringify!($affine), "(identity)"));
            }
        }
    };
}

group_tests! {
    mod g1,
    affine: G1Affine,
    projective: G1Projective,
    field: Fq,
    clen: 48,
    ulen: 96,
    b: Fq::from_u64(4),
    generator_compressed_hex: "97f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb",
    cofactor_hex: "396c8c005555e1568c00aaab0000aaab",
    cases: 300,
    blst: (
        blst_p1, blst_p1_affine, blst_p1_generator, blst_p1_add_or_double,
        blst_p1_add_or_double_affine, blst_p1_double, blst_p1_mult, blst_p1_cneg,
        blst_p1_to_affine, blst_p1_is_equal, blst_p1_is_inf, blst_p1_affine_compress,
        blst_p1_affine_serialize, blst_p1_uncompress, blst_p1_deserialize,
        blst_p1_affine_in_g1, blst_p1_affine_on_curve,
    ),
}

group_tests! {
    mod g2,
    affine: G2Affine,
    projective: G2Projective,
    field: Fq2,
    clen: 96,
    ulen: 192,
    b: Fq2 { c0: Fq::from_u64(4), c1: Fq::from_u64(4) },
    generator_compressed_hex: "93e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8",
    cofactor_hex: "05d543a95414e7f1091d50792876a202cd91de4547085abaa68a205b2e5a7ddfa628f1cb4d9e82ef21537e293a6691ae1616ec6e786f0c70cf1c38e31c7238e5",
    cases: 200,
    blst: (
        blst_p2, blst_p2_affine, blst_p2_generator, blst_p2_add_or_double,
        blst_p2_add_or_double_affine, blst_p2_double, blst_p2_mult, blst_p2_cneg,
        blst_p2_to_affine, blst_p2_is_equal, blst_p2_is_inf, blst_p2_affine_compress,
        blst_p2_affine_serialize, blst_p2_uncompress, blst_p2_deserialize,
        blst_p2_affine_in_g2, blst_p2_affine_on_curve,
    ),
}
