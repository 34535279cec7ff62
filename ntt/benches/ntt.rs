//! NTT throughput: sluice's forward NTT (natural to natural order) against arkworks'
//! parallel `Radix2EvaluationDomain::fft_in_place`, on the same random inputs.
//!
//! `cargo bench -p sluice-ntt --bench ntt -- --warm-up-time 1 --measurement-time 3`

// criterion_group!/criterion_main! generate undocumented items.
#![allow(missing_docs)]

use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use ff::{Field, PrimeField};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_field::Fr;
use sluice_ntt::{ntt, Domain, NttOrder};

fn to_ark(x: &Fr) -> ark_bls12_381::Fr {
    use ark_ff::PrimeField as _;
    ark_bls12_381::Fr::from_le_bytes_mod_order(&x.to_repr())
}

fn bench_ntt(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(42);
    for log_n in [16u32, 18, 20, 22] {
        let n = 1usize << log_n;
        let input: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
        let ark_input: Vec<ark_bls12_381::Fr> = input.iter().map(to_ark).collect();
        let domain = Domain::<Fr>::new(log_n).expect("supported size");
        // Build the twiddle table outside the measurement: it is cached across transforms.
        let _ = domain.twiddles();
        let ark_domain =
            Radix2EvaluationDomain::<ark_bls12_381::Fr>::new(n).expect("supported size");

        let mut group = c.benchmark_group(format!("ntt/2^{log_n}"));
        group.sample_size(10);
        group.bench_function(BenchmarkId::from_parameter("sluice"), |b| {
            b.iter_batched_ref(
                || input.clone(),
                |data| ntt(&domain, data, NttOrder::NaturalToNatural).expect("right length"),
                BatchSize::LargeInput,
            )
        });
        group.bench_function(BenchmarkId::from_parameter("arkworks"), |b| {
            b.iter_batched_ref(
                || ark_input.clone(),
                |data| ark_domain.fft_in_place(data),
                BatchSize::LargeInput,
            )
        });
        group.finish();
    }
}

criterion_group!(benches, bench_ntt);
criterion_main!(benches);
