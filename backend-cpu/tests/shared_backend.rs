//! `Arc<CpuBackend>` as a backend: the same NTTs and MSMs as `CpuBackend` itself, bit for
//! bit, and one tracker for every clone of the `Arc`.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use std::sync::Arc;

use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend::{
    ComputeBackend, Density, Fr, G1Affine, G1Projective, G2Affine, G2Projective, MemoryKind,
    NttOrder, Scalars, Transform,
};
use sluice_backend_cpu::CpuBackend;

const SEED: u64 = 0x5a7e_d0a4;

/// Size of the transforms and of the MSMs.
const N: usize = 64;

/// What [`run`] computes: the transforms' outputs, then the MSMs' results.
type Results = (Vec<Vec<Fr>>, Vec<G1Projective>, G2Projective);

fn random_fr(n: usize, rng: &mut ChaCha20Rng) -> Vec<Fr> {
    (0..n).map(|_| Fr::random(&mut *rng)).collect()
}

/// A small NTT and MSM workload through `backend`, from a fixed seed: every transform, the
/// provided NTT-family methods, and MSMs with host, buffer and owned scalars and a density.
fn run<B: ComputeBackend>(backend: &B) -> Results {
    let mut rng = ChaCha20Rng::seed_from_u64(SEED);
    let values = random_fr(N, &mut rng);
    let read = |buf: &B::FrBuffer| {
        let mut out = vec![Fr::ZERO; N];
        backend.read_fr(buf, 0, &mut out).unwrap();
        out
    };

    let mut transformed = Vec::new();
    for transform in Transform::ALL {
        let mut buf = backend.upload_fr("v", &values, N).unwrap();
        backend
            .transform(&mut buf, transform, NttOrder::NaturalToNatural)
            .unwrap();
        transformed.push(read(&buf));
    }
    let mut buf = backend.upload_fr("v", &values, N).unwrap();
    backend
        .transform_segments(&mut buf, N / 4, Transform::Ntt, NttOrder::NaturalToNatural)
        .unwrap();
    transformed.push(read(&buf));
    backend.domain_to_coset(&mut buf).unwrap();
    transformed.push(read(&buf));
    backend.coset_intt_scaled(&mut buf, Fr::from(3)).unwrap();
    transformed.push(read(&buf));
    backend.distribute_powers(&mut buf, Fr::from(5)).unwrap();
    transformed.push(read(&buf));

    let g1: Vec<G1Affine> = (0..N)
        .map(|_| (G1Projective::generator() * Fr::random(&mut rng)).to_affine())
        .collect();
    let bases = backend.upload_bases("g1", &g1).unwrap();
    let scalars = random_fr(N, &mut rng);
    let mut density = Density::new(N);
    for i in (0..N).step_by(3) {
        density.set(i, true).unwrap();
    }
    let host = backend
        .msm_vartime(&bases, 0, Scalars::Host(&scalars), None)
        .unwrap();
    let dense = backend
        .msm_vartime(&bases, 2, Scalars::Host(&scalars), Some(&density))
        .unwrap();
    let buf = backend.upload_fr("s", &scalars, N).unwrap();
    let buffer = backend
        .msm_vartime(&bases, 0, Scalars::Buffer(&buf), None)
        .unwrap();
    let owned = backend
        .msm_vartime(&bases, 0, Scalars::Owned(buf), None)
        .unwrap();

    let g2: Vec<G2Affine> = (0..8)
        .map(|_| (G2Projective::generator() * Fr::random(&mut rng)).to_affine())
        .collect();
    let bases = backend.upload_bases("g2", &g2).unwrap();
    let g2_result = backend
        .msm_vartime(&bases, 0, Scalars::Host(&scalars[..8]), None)
        .unwrap();

    (transformed, vec![host, dense, buffer, owned], g2_result)
}

#[test]
fn arc_backend_computes_what_the_backend_computes() {
    let direct = run(&CpuBackend::new());
    let shared = run(&Arc::new(CpuBackend::new()));
    assert_eq!(shared.0, direct.0, "transforms differ, seed {SEED:#x}");
    assert_eq!(shared.1, direct.1, "G1 MSMs differ, seed {SEED:#x}");
    assert_eq!(shared.2, direct.2, "G2 MSM differs, seed {SEED:#x}");
    // The same scalars from the host, a buffer and an owned buffer give one result.
    assert_eq!(direct.1[0], direct.1[2], "seed {SEED:#x}");
    assert_eq!(direct.1[0], direct.1[3], "seed {SEED:#x}");
}

#[test]
fn clones_of_the_arc_share_one_backend_and_tracker() {
    let backend = Arc::new(CpuBackend::new());
    let (post, c2) = (Arc::clone(&backend), Arc::clone(&backend));
    let a = post.alloc_fr("post", 100).unwrap();
    let b = c2.upload_fr("c2", &[Fr::ONE; 50], 50).unwrap();
    assert_eq!(ComputeBackend::info(&post), backend.info());
    for tracker in [post.tracker(), c2.tracker(), backend.tracker()] {
        assert_eq!(tracker.current(MemoryKind::Device), 150 * 32);
    }
    // A buffer made through one clone is used through another, and through the backend.
    let mut c = c2.copy_fr("c", &a).unwrap();
    post.sub_assign(&mut c, &a).unwrap();
    let mut out = [Fr::ONE];
    backend.read_fr(&b, 49, &mut out).unwrap();
    assert_eq!(out, [Fr::ONE]);
    drop((a, b, c));
    assert_eq!(backend.tracker().current(MemoryKind::Device), 0);
}
