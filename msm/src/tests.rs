//! MSM tests against independent references: a naive sum of constant-time scalar
//! multiplications (the curves' `*`), and blst's Pippenger at larger sizes.

use alloc::vec::Vec;
use ff::Field;
use group::{Curve, Group};
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use sluice_field::{Fr, G1Projective, G2Affine, G2Projective};

use crate::{
    msm_g1_vartime, msm_g2_vartime, msm_vartime, msm_with_config_vartime, Buckets, Density,
    MsmConfig, MsmCurve, MsmError,
};

/// What the tests need beyond [`MsmCurve`]: the group's own (constant-time) arithmetic.
trait TestCurve:
    MsmCurve + Curve<AffineRepr = <Self as MsmCurve>::Affine> + Group<Scalar = Fr>
{
}
impl<C: MsmCurve + Curve<AffineRepr = <C as MsmCurve>::Affine> + Group<Scalar = Fr>> TestCurve
    for C
{
}

fn to_affine<C: TestCurve>(p: &[C]) -> Vec<C::Affine> {
    let mut out = alloc::vec![<C as MsmCurve>::affine_from_xy_unchecked(<C as MsmCurve>::Base::ZERO, <C as MsmCurve>::Base::ZERO); p.len()];
    C::batch_normalize(p, &mut out);
    out
}

fn points<C: TestCurve>(rng: &mut ChaCha20Rng, n: usize) -> Vec<C::Affine> {
    crate::random_points::<C>(n, rng)
}

/// Scalars mixing the edge values 0, 1, -1 (= r - 1), 2, -2 and small integers with
/// uniformly random ones.
fn mixed_scalars(rng: &mut ChaCha20Rng, n: usize) -> Vec<Fr> {
    (0..n)
        .map(|_| match rng.next_u32() % 8 {
            0 => Fr::ZERO,
            1 => Fr::ONE,
            2 => -Fr::ONE,
            3 => Fr::from(2u64),
            4 => -Fr::from(2u64),
            5 => Fr::from(rng.next_u64()),
            _ => Fr::random(&mut *rng),
        })
        .collect()
}

/// Prefix sums of `bases[i] * scalars[i]` (constant-time `*`): `out[n]` is the naive MSM of
/// the first `n` terms.
fn naive_prefix<C: TestCurve>(bases: &[C::Affine], scalars: &[Fr]) -> Vec<C> {
    let mut out = Vec::with_capacity(bases.len() + 1);
    let mut acc = <C as Group>::identity();
    out.push(acc);
    for (b, s) in bases.iter().zip(scalars) {
        acc += (<C as Group>::identity() + *b) * s;
        out.push(acc);
    }
    out
}

fn naive<C: TestCurve>(bases: &[C::Affine], scalars: &[Fr]) -> C {
    naive_prefix::<C>(bases, scalars)[bases.len()]
}

fn all_configs() -> Vec<MsmConfig> {
    let mut v = Vec::new();
    for buckets in [Some(Buckets::Jacobian), Some(Buckets::BatchAffine), None] {
        for small_scalar_fast_path in [false, true] {
            v.push(MsmConfig {
                window_bits: None,
                buckets,
                small_scalar_fast_path,
            });
        }
    }
    v
}

fn check_sizes<C: TestCurve>(seed: u64, max_k: u32) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let max = (1usize << max_k) + 1;
    let bases = points::<C>(&mut rng, max);
    let scalars = mixed_scalars(&mut rng, max);
    let reference = naive_prefix::<C>(&bases, &scalars);
    let mut sizes = alloc::vec![0usize, 1, 2, 3];
    for k in 2..=max_k {
        sizes.extend([(1 << k) - 1, 1 << k, (1 << k) + 1]);
    }
    for n in sizes {
        for cfg in all_configs() {
            let got: C = msm_with_config_vartime(&bases[..n], &scalars[..n], None, &cfg).unwrap();
            assert_eq!(got, reference[n], "seed {seed}, n {n}, {cfg:?}");
        }
    }
}

#[test]
fn g1_sizes_against_naive() {
    check_sizes::<G1Projective>(1, 10);
}

#[test]
fn g2_sizes_against_naive() {
    check_sizes::<G2Projective>(2, 6);
}

fn check_windows<C: TestCurve>(seed: u64, n: usize, windows: &[usize]) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let bases = points::<C>(&mut rng, n);
    let mut scalars: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
    // Extremes of the recoding: the largest scalar, and its neighbours.
    scalars[0] = -Fr::ONE;
    scalars[1] = -Fr::from(2u64);
    let expected = naive::<C>(&bases, &scalars);
    for &c in windows {
        for buckets in [Buckets::Jacobian, Buckets::BatchAffine] {
            let cfg = MsmConfig {
                window_bits: Some(c),
                buckets: Some(buckets),
                small_scalar_fast_path: true,
            };
            let got: C = msm_with_config_vartime(&bases, &scalars, None, &cfg).unwrap();
            assert_eq!(got, expected, "seed {seed}, n {n}, {cfg:?}");
        }
    }
}

#[test]
fn g1_every_window_width() {
    check_windows::<G1Projective>(3, 150, &(4..=20).collect::<Vec<_>>());
}

#[test]
fn g2_some_window_widths() {
    check_windows::<G2Projective>(4, 40, &[4, 5, 8, 13, 16, 20]);
}

/// Inputs that stress the special cases of the additions: repeated bases, opposite bases,
/// identity bases, one repeated digit (every point in the same bucket), all-zero, all-one
/// and all-minus-one scalars.
fn check_special<C: TestCurve>(seed: u64, n: usize) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let p = points::<C>(&mut rng, 3);
    let mixed = points::<C>(&mut rng, n);
    let id = <C as MsmCurve>::affine_from_xy_unchecked(
        <C as MsmCurve>::Base::ZERO,
        <C as MsmCurve>::Base::ZERO,
    );
    let neg = |a: &C::Affine| to_affine::<C>(&[-(<C as Group>::identity() + *a)])[0];
    let same: Vec<_> = (0..n).map(|_| p[0]).collect();
    let opposite: Vec<_> = (0..n)
        .map(|i| if i % 2 == 0 { p[0] } else { neg(&p[0]) })
        .collect();
    let with_identity: Vec<_> = mixed
        .iter()
        .enumerate()
        .map(|(i, b)| if i % 3 == 0 { id } else { *b })
        .collect();
    let few: Vec<_> = (0..n).map(|i| p[i % 3]).collect();
    let random: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
    let constant = |s: Fr| (0..n).map(|_| s).collect::<Vec<_>>();
    let scalar_sets = [
        ("random", random.clone()),
        ("mixed", mixed_scalars(&mut rng, n)),
        ("zero", constant(Fr::ZERO)),
        ("one", constant(Fr::ONE)),
        ("minus one", constant(-Fr::ONE)),
        ("three", constant(Fr::from(3u64))),
        ("one repeated random", constant(random[0])),
    ];
    let base_sets = [
        ("random", mixed),
        ("same", same),
        ("opposite", opposite),
        ("with identity", with_identity),
        ("three distinct", few),
    ];
    for (bname, bases) in &base_sets {
        for (sname, scalars) in &scalar_sets {
            let expected = naive::<C>(bases, scalars);
            for cfg in all_configs() {
                let got: C = msm_with_config_vartime(bases, scalars, None, &cfg).unwrap();
                assert_eq!(
                    got, expected,
                    "seed {seed}, n {n}, bases {bname}, scalars {sname}, {cfg:?}"
                );
            }
        }
    }
}

#[test]
fn g1_special_inputs() {
    check_special::<G1Projective>(5, 700);
}

#[test]
fn g2_special_inputs() {
    check_special::<G2Projective>(6, 60);
}

fn check_density<C: TestCurve>(seed: u64, n: usize) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let scalars = mixed_scalars(&mut rng, n);
    let masks = [
        (
            "random",
            (0..n).map(|_| rng.next_u32() % 3 != 0).collect::<Density>(),
        ),
        ("all set", Density::full(n)),
        ("none set", Density::new(n)),
        (
            "first and last",
            (0..n).map(|i| i == 0 || i + 1 == n).collect(),
        ),
    ];
    for (name, d) in &masks {
        let bases = points::<C>(&mut rng, d.count_ones());
        let used: Vec<Fr> = (0..n).filter(|&i| d.get(i)).map(|i| scalars[i]).collect();
        let expected = naive::<C>(&bases, &used);
        for cfg in all_configs() {
            let got: C = msm_with_config_vartime(&bases, &scalars, Some(d), &cfg).unwrap();
            assert_eq!(got, expected, "seed {seed}, n {n}, density {name}, {cfg:?}");
        }
    }
}

#[test]
fn g1_density() {
    // Enough variables for several parallel ranges (4096 variables each).
    check_density::<G1Projective>(7, 9000);
}

#[test]
fn g2_density() {
    check_density::<G2Projective>(8, 100);
}

#[test]
fn length_mismatches_are_errors() {
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let bases = points::<G1Projective>(&mut rng, 4);
    let scalars = mixed_scalars(&mut rng, 5);
    assert!(matches!(
        msm_g1_vartime(&bases, &scalars, None),
        Err(MsmError::LengthMismatch {
            expected: 5,
            got: 4,
            ..
        })
    ));
    let d: Density = [true, false, true, true, true].into_iter().collect();
    assert!(msm_g1_vartime(&bases, &scalars, Some(&d)).is_ok());
    assert!(matches!(
        msm_g1_vartime(&bases, &scalars[..4], Some(&d)),
        Err(MsmError::LengthMismatch {
            expected: 5,
            got: 4,
            ..
        })
    ));
    assert!(matches!(
        msm_g1_vartime(&bases[..3], &scalars, Some(&d)),
        Err(MsmError::LengthMismatch {
            expected: 4,
            got: 3,
            ..
        })
    ));
    let g2: Vec<G2Affine> = alloc::vec![G2Affine::generator(); 2];
    assert!(matches!(
        msm_g2_vartime(&g2, &scalars, None),
        Err(MsmError::LengthMismatch { .. })
    ));
    for bits in [0, 3, 21] {
        let cfg = MsmConfig {
            window_bits: Some(bits),
            ..MsmConfig::default()
        };
        assert!(matches!(
            msm_with_config_vartime::<G1Projective>(&bases, &scalars[..4], None, &cfg),
            Err(MsmError::InvalidWindow { .. })
        ));
    }
    let empty: Result<G1Projective, _> = msm_vartime::<G1Projective>(&[], &[], None);
    assert_eq!(empty, Ok(G1Projective::identity()));
}

/// Against blst's Pippenger (`blst::MultiPoint::mult`, an independent implementation) at
/// sizes where the naive reference is too slow.
#[test]
fn g1_against_blst() {
    use blst::{blst_p1_affine, MultiPoint};
    for (seed, log_n) in [(10u64, 14u32), (11, 16)] {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let n = 1usize << log_n;
        let bases = points::<G1Projective>(&mut rng, n);
        let mut scalars: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
        // At 2^16 half of them 0/1, as in a prover's bit-heavy witness.
        for s in scalars
            .iter_mut()
            .step_by(2)
            .take(if log_n == 16 { n } else { 0 })
        {
            *s = if rng.next_u32() % 2 == 0 {
                Fr::ZERO
            } else {
                Fr::ONE
            };
        }
        let bytes: Vec<u8> = scalars.iter().flat_map(ff::PrimeField::to_repr).collect();
        let b_bases: Vec<blst_p1_affine> = bases.iter().map(|b| (*b).into()).collect();
        let expected = G1Projective::from(b_bases.as_slice().mult(&bytes, 255));
        let got = msm_g1_vartime(&bases, &scalars, None).unwrap();
        assert_eq!(got, expected, "seed {seed}, n 2^{log_n}");
    }
}

#[test]
fn g2_against_blst() {
    use blst::{blst_p2_affine, MultiPoint};
    let seed = 12u64;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let n = 1usize << 12;
    let bases = points::<G2Projective>(&mut rng, n);
    let scalars: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
    let bytes: Vec<u8> = scalars.iter().flat_map(ff::PrimeField::to_repr).collect();
    let b_bases: Vec<blst_p2_affine> = bases.iter().map(|b| (*b).into()).collect();
    let expected = G2Projective::from(b_bases.as_slice().mult(&bytes, 255));
    assert_eq!(
        msm_g2_vartime(&bases, &scalars, None).unwrap(),
        expected,
        "seed {seed}"
    );
}
