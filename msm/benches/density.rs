//! Gathering the scalars a density keeps (what a device backend does before uploading an
//! MSM's host scalars): [`Density::gather`] against a bit-by-bit serial scan.
//!
//! `cargo bench -p sluice-msm --bench density -- --warm-up-time 1 --measurement-time 5`
//!
//! Group `gather/<log n>`: n scalars, 64 of every 65 used (a prover's B density).

// criterion_group!/criterion_main! generate undocumented items.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use sluice_field::Fr;
use sluice_msm::Density;

fn gather(c: &mut Criterion) {
    let mut group = c.benchmark_group("gather");
    group.sample_size(10);
    for log in [20u32, 24] {
        let n = 1usize << log;
        let scalars: Vec<Fr> = (0..n as u64).map(Fr::from).collect();
        let density: Density = (0..n).map(|i| i % 65 != 3).collect();
        group.bench_function(BenchmarkId::new("bit_by_bit", log), |b| {
            b.iter(|| {
                (0..density.len())
                    .filter(|&i| density.get(i))
                    .map(|i| scalars[i])
                    .collect::<Vec<_>>()
            })
        });
        group.bench_function(BenchmarkId::new("sluice", log), |b| {
            b.iter(|| density.gather(&scalars))
        });
    }
    group.finish();
}

criterion_group!(benches, gather);
criterion_main!(benches);
