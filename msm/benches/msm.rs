//! MSM throughput: sluice against blst's Pippenger (`p1_affines`/`p2_affines::mult`, threaded)
//! and arkworks' `VariableBaseMSM` (parallel), on the same random bases and scalars.
//!
//! `cargo bench -p sluice-msm --bench msm -- --warm-up-time 1 --measurement-time 3`
//!
//! Groups: `g1/<log n>` and `g2/<log n>` with uniformly random scalars; `g1_bits/16` with a
//! prover-like witness (90% of the scalars 0 or 1) comparing sluice with and without its 0/1
//! fast path, and blst; `g1_buckets/16` (random scalars) Jacobian against batch affine
//! buckets.

// criterion_group!/criterion_main! generate undocumented items.
#![allow(missing_docs)]

use ark_ec::VariableBaseMSM;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ff::{Field, PrimeField};
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use sluice_field::{Fq, Fr, G1Affine, G1Projective, G2Affine, G2Projective};
use sluice_msm::{
    msm_g1_vartime, msm_g2_vartime, msm_with_config_vartime, random_points, Buckets, MsmConfig,
};

fn ark_fq(x: &Fq) -> ark_bls12_381::Fq {
    use ark_ff::PrimeField as _;
    ark_bls12_381::Fq::from_le_bytes_mod_order(x.to_repr().as_ref())
}

fn ark_fr(x: &Fr) -> ark_bls12_381::Fr {
    use ark_ff::PrimeField as _;
    ark_bls12_381::Fr::from_le_bytes_mod_order(&x.to_repr())
}

fn ark_g1(p: &G1Affine) -> ark_bls12_381::G1Affine {
    ark_bls12_381::G1Affine::new_unchecked(ark_fq(&p.x()), ark_fq(&p.y()))
}

fn ark_g2(p: &G2Affine) -> ark_bls12_381::G2Affine {
    let f = |x: sluice_field::Fq2| ark_bls12_381::Fq2::new(ark_fq(&x.c0), ark_fq(&x.c1));
    ark_bls12_381::G2Affine::new_unchecked(f(p.x()), f(p.y()))
}

fn scalar_bytes(s: &[Fr]) -> Vec<u8> {
    s.iter().flat_map(|s| s.to_repr()).collect()
}

fn bench_g1(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(42);
    for log_n in [12u32, 16, 20] {
        let n = 1usize << log_n;
        let bases = random_points::<G1Projective>(n, &mut rng);
        let scalars: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
        let blst_proj: Vec<blst::blst_p1> = bases
            .iter()
            .map(|b| G1Projective::from(*b).into())
            .collect();
        let blst_bases = blst::p1_affines::from(&blst_proj);
        let bytes = scalar_bytes(&scalars);
        let ark_bases: Vec<_> = bases.iter().map(ark_g1).collect();
        let ark_scalars: Vec<_> = scalars.iter().map(ark_fr).collect();

        let mut group = c.benchmark_group(format!("g1/{log_n}"));
        group.sample_size(10);
        group.bench_function(BenchmarkId::from_parameter("sluice"), |b| {
            b.iter(|| msm_g1_vartime(&bases, &scalars, None).expect("lengths match"))
        });
        group.bench_function(BenchmarkId::from_parameter("blst"), |b| {
            b.iter(|| blst_bases.mult(&bytes, 255))
        });
        group.bench_function(BenchmarkId::from_parameter("arkworks"), |b| {
            b.iter(|| ark_bls12_381::G1Projective::msm_unchecked(&ark_bases, &ark_scalars))
        });
        group.finish();

        if log_n == 16 {
            let mut group = c.benchmark_group(format!("g1_buckets/{log_n}"));
            group.sample_size(10);
            for (name, buckets) in [
                ("jacobian", Buckets::Jacobian),
                ("batch_affine", Buckets::BatchAffine),
            ] {
                let cfg = MsmConfig {
                    buckets: Some(buckets),
                    ..MsmConfig::default()
                };
                group.bench_function(BenchmarkId::from_parameter(name), |b| {
                    b.iter(|| msm_with_config_vartime::<G1Projective>(&bases, &scalars, None, &cfg))
                });
            }
            group.finish();

            // A prover's witness: mostly bits.
            let bits: Vec<Fr> = scalars
                .iter()
                .map(|s| match rng.next_u32() % 10 {
                    0..=4 => Fr::ZERO,
                    5..=8 => Fr::ONE,
                    _ => *s,
                })
                .collect();
            let bits_bytes = scalar_bytes(&bits);
            let mut group = c.benchmark_group(format!("g1_bits/{log_n}"));
            group.sample_size(10);
            for (name, fast) in [("sluice", true), ("sluice_no_fast_path", false)] {
                let cfg = MsmConfig {
                    small_scalar_fast_path: fast,
                    ..MsmConfig::default()
                };
                group.bench_function(BenchmarkId::from_parameter(name), |b| {
                    b.iter(|| msm_with_config_vartime::<G1Projective>(&bases, &bits, None, &cfg))
                });
            }
            group.bench_function(BenchmarkId::from_parameter("blst"), |b| {
                b.iter(|| blst_bases.mult(&bits_bytes, 255))
            });
            group.finish();
        }
    }
}

fn bench_g2(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(43);
    for log_n in [12u32, 16] {
        let n = 1usize << log_n;
        let bases = random_points::<G2Projective>(n, &mut rng);
        let scalars: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
        let blst_proj: Vec<blst::blst_p2> = bases
            .iter()
            .map(|b| G2Projective::from(*b).into())
            .collect();
        let blst_bases = blst::p2_affines::from(&blst_proj);
        let bytes = scalar_bytes(&scalars);
        let ark_bases: Vec<_> = bases.iter().map(ark_g2).collect();
        let ark_scalars: Vec<_> = scalars.iter().map(ark_fr).collect();

        let mut group = c.benchmark_group(format!("g2/{log_n}"));
        group.sample_size(10);
        group.bench_function(BenchmarkId::from_parameter("sluice"), |b| {
            b.iter(|| msm_g2_vartime(&bases, &scalars, None).expect("lengths match"))
        });
        group.bench_function(BenchmarkId::from_parameter("blst"), |b| {
            b.iter(|| blst_bases.mult(&bytes, 255))
        });
        group.bench_function(BenchmarkId::from_parameter("arkworks"), |b| {
            b.iter(|| ark_bls12_381::G2Projective::msm_unchecked(&ark_bases, &ark_scalars))
        });
        group.finish();
    }
}

criterion_group!(benches, bench_g1, bench_g2);
criterion_main!(benches);
