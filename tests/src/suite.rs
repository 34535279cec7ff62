//! The differential suite: one generic check per operation, run against any backend on
//! seeded inputs and compared with the host references (sluice-ntt, sluice-msm and field
//! arithmetic, themselves tested against naive algorithms, blst and arkworks).

use ff::Field;
use group::Curve;
use rand_chacha::ChaCha20Rng;
use rand_core::RngCore;
use rand_core::SeedableRng;
use sluice_backend::{Buffer, ComputeBackend, CurveAffine, Density, NttOrder, Scalars, Transform};
use sluice_backend_cpu::transform_on_host;
use sluice_field::{Fr, G1Affine, G2Affine};
use sluice_ntt::Domain;

/// Sizes the suite runs at. Small by default (PoCL in CI); `SLUICE_DIFF_LARGE=1` selects the
/// sizes of a real GPU run.
#[derive(Clone, Debug)]
pub struct SuiteSizes {
    /// log2 sizes of the NTT-family checks (every transform in every order).
    pub ntt_logs: Vec<u32>,
    /// log2 sizes checked with one forward NTT and a round trip only: GPU sizes whose CPU
    /// reference would take minutes for the whole family.
    pub ntt_forward_logs: Vec<u32>,
    /// log2 domain of the whole-proof checks.
    pub proof_log: u32,
    /// Lengths of the pointwise checks.
    pub pointwise: Vec<usize>,
    /// Base counts of the G1 MSM checks.
    pub msm_g1_vartime: Vec<usize>,
    /// Base counts of the G2 MSM checks.
    pub msm_g2_vartime: Vec<usize>,
}

impl SuiteSizes {
    /// The sizes for this run: small unless `SLUICE_DIFF_LARGE=1`.
    pub fn from_env() -> Self {
        if std::env::var("SLUICE_DIFF_LARGE").is_ok_and(|v| v == "1") {
            Self::large()
        } else {
            Self::small()
        }
    }

    /// GPU sizes: the NTT family to 2^20, forward NTTs to 2^27, MSMs to 2^22 (G1) and 2^20 (G2).
    pub fn large() -> Self {
        SuiteSizes {
            ntt_logs: vec![1, 10, 16, 20],
            ntt_forward_logs: vec![24, 27],
            proof_log: 16,
            pointwise: vec![1 << 20, (1 << 24) + 3],
            msm_g1_vartime: vec![1, 1000, (1 << 16) + 1, 1 << 20, 1 << 22],
            msm_g2_vartime: vec![1, 1000, (1 << 16) + 1, 1 << 20],
        }
    }

    /// Sizes PoCL handles in seconds (CI), and the only sizes for tests whose buffers are
    /// split into tiny chunks on purpose.
    pub fn small() -> Self {
        SuiteSizes {
            ntt_logs: vec![0, 1, 2, 5, 8, 11, 13],
            ntt_forward_logs: vec![13],
            proof_log: 10,
            pointwise: vec![1, 3, 1000, 4097],
            msm_g1_vartime: vec![1, 2, 3, 255, 256, 257, 1500],
            msm_g2_vartime: vec![1, 3, 129, 300],
        }
    }
}

/// A seeded RNG; the seed goes into every assertion message so a failure can be replayed.
pub fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

fn random_fr(n: usize, rng: &mut ChaCha20Rng) -> Vec<Fr> {
    (0..n).map(|_| Fr::random(&mut *rng)).collect()
}

fn download<B: ComputeBackend>(b: &B, buf: &B::FrBuffer) -> Vec<Fr> {
    let mut out = vec![Fr::ZERO; buf.len()];
    b.read_fr(buf, 0, &mut out).expect("read_fr");
    out
}

/// Every transform in every order at every size, against sluice-ntt on the host; then
/// iNTT(NTT(x)) = x and coset NTT = distribute powers + NTT through the backend alone.
pub fn ntt_family<B: ComputeBackend>(backend: &B, sizes: &SuiteSizes, seed: u64) {
    let mut rng = rng(seed);
    for &log in &sizes.ntt_logs {
        let domain = Domain::<Fr>::new(log).unwrap();
        let input = random_fr(1 << log, &mut rng);
        for transform in Transform::ALL {
            for order in NttOrder::ALL {
                let mut expect = input.clone();
                transform_on_host(&domain, &mut expect, transform, order).unwrap();
                let mut buf = backend.upload_fr("ntt input", &input, input.len()).unwrap();
                backend
                    .transform(&mut buf, transform, order)
                    .unwrap_or_else(|e| {
                        panic!("{transform:?} {order:?} at 2^{log} failed: {e} (seed {seed:#x})")
                    });
                let got = download(backend, &buf);
                assert!(
                    got == expect,
                    "{transform:?} {order:?} at 2^{log} differs from sluice-ntt on {} (seed {seed:#x})",
                    backend.info().name
                );
            }
        }
        // The fused coset steps of H against the same transforms on the host.
        let mut expect = input.clone();
        for (transform, order) in [
            (Transform::Intt, NttOrder::NaturalToBitReversed),
            (Transform::CosetNtt, NttOrder::BitReversedToNatural),
        ] {
            transform_on_host(&domain, &mut expect, transform, order).unwrap();
        }
        let mut buf = backend.upload_fr("to coset", &input, input.len()).unwrap();
        backend.domain_to_coset(&mut buf).unwrap();
        assert!(
            download(backend, &buf) == expect,
            "domain_to_coset at 2^{log} differs on {} (seed {seed:#x})",
            backend.info().name
        );
        let factor = Fr::random(&mut rng);
        let mut expect = input.clone();
        transform_on_host(
            &domain,
            &mut expect,
            Transform::CosetIntt,
            NttOrder::NaturalToNatural,
        )
        .unwrap();
        expect.iter_mut().for_each(|x| *x *= factor);
        let mut buf = backend
            .upload_fr("scaled coset intt", &input, input.len())
            .unwrap();
        backend.coset_intt_scaled(&mut buf, factor).unwrap();
        assert!(
            download(backend, &buf) == expect,
            "coset_intt_scaled at 2^{log} differs on {} (seed {seed:#x})",
            backend.info().name
        );

        // Round trips through the backend alone.
        let mut buf = backend
            .upload_fr("round trip", &input, input.len())
            .unwrap();
        let nat = NttOrder::NaturalToNatural;
        backend
            .transform(&mut buf, Transform::CosetNtt, nat)
            .unwrap();
        backend
            .transform(&mut buf, Transform::CosetIntt, nat)
            .unwrap();
        backend
            .transform(&mut buf, Transform::Ntt, NttOrder::NaturalToBitReversed)
            .unwrap();
        backend
            .transform(&mut buf, Transform::Intt, NttOrder::BitReversedToNatural)
            .unwrap();
        assert!(
            download(backend, &buf) == input,
            "round trip at 2^{log} on {} (seed {seed:#x})",
            backend.info().name
        );
        let mut shifted = backend.upload_fr("coset", &input, input.len()).unwrap();
        backend
            .distribute_powers(&mut shifted, domain.coset_shift())
            .unwrap();
        backend
            .transform(&mut shifted, Transform::Ntt, nat)
            .unwrap();
        let mut coset = backend.upload_fr("coset", &input, input.len()).unwrap();
        backend
            .transform(&mut coset, Transform::CosetNtt, nat)
            .unwrap();
        assert!(
            download(backend, &shifted) == download(backend, &coset),
            "coset NTT != distribute powers + NTT at 2^{log} (seed {seed:#x})"
        );
    }
    for &log in &sizes.ntt_forward_logs {
        let domain = Domain::<Fr>::new(log).unwrap();
        let input = random_fr(1 << log, &mut rng);
        let order = NttOrder::NaturalToNatural;
        let mut buf = backend.upload_fr("large ntt", &input, input.len()).unwrap();
        backend.transform(&mut buf, Transform::Ntt, order).unwrap();
        let mut expect = input.clone();
        sluice_ntt::ntt(&domain, &mut expect, order).unwrap();
        assert!(
            download(backend, &buf) == expect,
            "NTT at 2^{log} differs from sluice-ntt on {} (seed {seed:#x})",
            backend.info().name
        );
        backend.transform(&mut buf, Transform::Intt, order).unwrap();
        assert!(
            download(backend, &buf) == input,
            "round trip at 2^{log} on {} (seed {seed:#x})",
            backend.info().name
        );
    }
    // A domain of 2^33 is beyond the field; an odd length is not a domain at all.
    let mut odd = backend.alloc_fr("odd", 3).unwrap();
    assert!(backend
        .transform(&mut odd, Transform::Ntt, NttOrder::NaturalToNatural)
        .is_err());
}

/// The four-step building blocks: segmented transforms and segment powers against
/// sluice-ntt per segment; segments that do not divide the buffer are errors.
///
/// Sizes stop at 2^11 whatever `sizes` says: segments of one or two elements are part of the
/// check, and a backend on the trait's per-segment default makes n round trips for them.
pub fn segments<B: ComputeBackend>(backend: &B, sizes: &SuiteSizes, seed: u64) {
    let mut rng = rng(seed);
    for &log in sizes.ntt_logs.iter().filter(|&&l| (2..=11).contains(&l)) {
        let n = 1usize << log;
        let input = random_fr(n, &mut rng);
        for seg_log in [0, 1, log / 2, log] {
            let segment = 1usize << seg_log;
            let domain = Domain::<Fr>::new(seg_log).unwrap();
            for (transform, order) in [
                (Transform::Ntt, NttOrder::NaturalToNatural),
                (Transform::Intt, NttOrder::BitReversedToNatural),
                (Transform::CosetNtt, NttOrder::NaturalToBitReversed),
            ] {
                let mut expect = input.clone();
                for chunk in expect.chunks_mut(segment) {
                    transform_on_host(&domain, chunk, transform, order).unwrap();
                }
                let mut buf = backend.upload_fr("segments", &input, input.len()).unwrap();
                backend
                    .transform_segments(&mut buf, segment, transform, order)
                    .unwrap();
                assert!(
                    download(backend, &buf) == expect,
                    "{transform:?} {order:?} in segments of 2^{seg_log} of 2^{log} (seed {seed:#x})"
                );
            }
            let (base, ratio) = (Fr::random(&mut rng), Fr::random(&mut rng));
            let mut expect = input.clone();
            let mut g = base;
            for chunk in expect.chunks_mut(segment) {
                sluice_ntt::distribute_powers(chunk, g);
                g *= ratio;
            }
            let mut buf = backend.upload_fr("segments", &input, input.len()).unwrap();
            backend
                .segment_powers(&mut buf, segment, base, ratio)
                .unwrap();
            assert!(
                download(backend, &buf) == expect,
                "segment_powers in segments of 2^{seg_log} of 2^{log} (seed {seed:#x})"
            );
        }
        let mut buf = backend.upload_fr("segments", &input, input.len()).unwrap();
        assert!(backend
            .transform_segments(&mut buf, 3, Transform::Ntt, NttOrder::NaturalToNatural)
            .is_err());
        assert!(backend
            .transform_segments(&mut buf, 2 * n, Transform::Ntt, NttOrder::NaturalToNatural)
            .is_err());
        assert!(backend
            .segment_powers(&mut buf, 0, Fr::ONE, Fr::ONE)
            .is_err());
    }
}

/// mul, sub, scale and distribute_powers against field arithmetic; length mismatches fail.
pub fn pointwise<B: ComputeBackend>(backend: &B, sizes: &SuiteSizes, seed: u64) {
    let mut rng = rng(seed);
    for &n in &sizes.pointwise {
        let (a, b) = (random_fr(n, &mut rng), random_fr(n, &mut rng));
        let (s, g) = (Fr::random(&mut rng), Fr::random(&mut rng));
        let bb = backend.upload_fr("b", &b, b.len()).unwrap();
        let mut x = backend.upload_fr("a", &a, a.len()).unwrap();
        backend.mul_assign(&mut x, &bb).unwrap();
        let expect: Vec<Fr> = a.iter().zip(&b).map(|(x, y)| *x * y).collect();
        assert!(
            download(backend, &x) == expect,
            "mul_assign n={n} (seed {seed:#x})"
        );
        backend.sub_assign(&mut x, &bb).unwrap();
        let expect: Vec<Fr> = expect.iter().zip(&b).map(|(x, y)| *x - y).collect();
        assert!(
            download(backend, &x) == expect,
            "sub_assign n={n} (seed {seed:#x})"
        );
        backend.scale(&mut x, s).unwrap();
        let expect: Vec<Fr> = expect.iter().map(|x| *x * s).collect();
        assert!(
            download(backend, &x) == expect,
            "scale n={n} (seed {seed:#x})"
        );
        backend.distribute_powers(&mut x, g).unwrap();
        let mut power = Fr::ONE;
        let expect: Vec<Fr> = expect
            .iter()
            .map(|x| {
                let y = *x * power;
                power *= g;
                y
            })
            .collect();
        assert!(
            download(backend, &x) == expect,
            "distribute_powers n={n} (seed {seed:#x})"
        );
        // A copy is independent of its source.
        let mut copy = backend.copy_fr("copy", &x).unwrap();
        assert!(
            download(backend, &copy) == expect,
            "copy_fr n={n} (seed {seed:#x})"
        );
        backend.mul_assign(&mut copy, &bb).unwrap();
        assert!(
            download(backend, &x) == expect,
            "copy_fr source changed n={n} (seed {seed:#x})"
        );
        // Partial writes and reads.
        if n >= 3 {
            backend.write_fr(&mut x, 1, &a[..2]).unwrap();
            let mut mid = [Fr::ZERO; 2];
            backend.read_fr(&x, 1, &mut mid).unwrap();
            assert_eq!(mid, [a[0], a[1]], "write/read at offset 1 (seed {seed:#x})");
        }
        let short = backend.alloc_fr("short", n + 1).unwrap();
        assert!(backend.mul_assign(&mut x, &short).is_err());
        assert!(backend.write_fr(&mut x, n, &[Fr::ONE]).is_err());
        // Ranges of a compact vector (codes and exceptions) go up as their values.
        let small: Vec<Fr> = (0..n)
            .map(|i| match i % 4 {
                3 => a[i],
                _ => Fr::from(i as u64 % 3),
            })
            .collect();
        let compact = sluice_backend::CompactVec::from(&small[..]);
        for range in [0..n, n / 3..n, n / 4..n / 2]
            .into_iter()
            .filter(|r| !r.is_empty())
        {
            let up = backend
                .upload_compact_range("range", &compact, range.clone())
                .unwrap();
            assert!(
                download(backend, &up) == small[range.clone()],
                "upload_compact_range {range:?} n={n} (seed {seed:#x})"
            );
        }
        assert!(backend
            .upload_compact_range("past", &compact, n / 2..n + 1)
            .is_err());
    }
}

/// The scalar mixes every MSM check runs: random, boolean-heavy (Filecoin witnesses are
/// mostly bits), edge values, all zero, all one.
fn scalar_mixes(n: usize, rng: &mut ChaCha20Rng) -> Vec<(&'static str, Vec<Fr>)> {
    let edges = [Fr::ZERO, Fr::ONE, -Fr::ONE, Fr::from(2u64), -Fr::from(2u64)];
    vec![
        ("random", random_fr(n, rng)),
        (
            "boolean-heavy",
            (0..n)
                .map(|i| match i % 10 {
                    0..=3 => Fr::ZERO,
                    4..=7 => Fr::ONE,
                    _ => Fr::random(&mut *rng),
                })
                .collect(),
        ),
        ("edges", (0..n).map(|i| edges[i % edges.len()]).collect()),
        ("zeros", vec![Fr::ZERO; n]),
        ("ones", vec![Fr::ONE; n]),
    ]
}

/// Distinct random bases plus the awkward ones: duplicates, P and -P, the identity.
fn awkward_bases<A: CurveAffine>(n: usize, rng: &mut ChaCha20Rng) -> Vec<A> {
    let mut bases = sluice_msm::random_points::<A::Group>(n, rng);
    if n >= 4 {
        bases[1] = bases[0];
        bases[2] = (-A::Group::from(bases[0])).to_affine();
        bases[3] = A::default();
    }
    bases
}

/// MSM over group `A` against the host Pippenger (sluice-msm) for every size in `ns` and
/// every scalar mix, with and without a density mask, scalars from the host and from a
/// backend buffer, and resident bases shared through `skip`.
fn msm_matches_host<A: CurveAffine, B: ComputeBackend>(backend: &B, ns: &[usize], seed: u64) {
    let reference = sluice_msm::msm_vartime::<A::Group>;
    let mut rng = rng(seed);
    for &n in ns {
        let bases = awkward_bases::<A>(n + 2, &mut rng);
        let resident = backend.upload_bases("bases", &bases).unwrap();
        for (mix, scalars) in scalar_mixes(n, &mut rng) {
            let expect = reference(&bases[2..], &scalars, None).unwrap();
            let got = backend
                .msm_vartime(&resident, 2, Scalars::Host(&scalars), None)
                .unwrap_or_else(|e| panic!("{mix} n={n}: {e} (seed {seed:#x})"));
            assert_eq!(
                got,
                expect,
                "{:?} {mix} scalars, n={n} on {} (seed {seed:#x})",
                A::KIND,
                backend.info().name
            );
            let buf = backend.upload_fr("scalars", &scalars, n).unwrap();
            let got = backend
                .msm_vartime(&resident, 2, Scalars::Buffer(&buf), None)
                .unwrap();
            assert_eq!(
                got,
                expect,
                "{:?} {mix} scalars from a buffer, n={n} (seed {seed:#x})",
                A::KIND
            );
        }
        // Density: a random half of n variables used; bases dense over them.
        let mut density = Density::new(n);
        for i in 0..n {
            density.set(i, rng.next_u32() % 2 == 0).unwrap();
        }
        let used = density.count_ones();
        let scalars = random_fr(n, &mut rng);
        let expect = reference(&bases[..used], &scalars, Some(&density)).unwrap();
        let got = backend
            .msm_vartime(&resident, 0, Scalars::Host(&scalars), Some(&density))
            .unwrap();
        assert_eq!(
            got,
            expect,
            "{:?} density ({used} of {n} used) (seed {seed:#x})",
            A::KIND
        );
        // Too few bases after skip is an error, not a panic.
        assert!(backend
            .msm_vartime(&resident, 3, Scalars::Host(&vec![Fr::ONE; n]), None)
            .is_err());
    }
}

/// `msm_matches_host` over G1 at the sizes of [`SuiteSizes::msm_g1_vartime`].
pub fn msm_g1_vartime<B: ComputeBackend>(backend: &B, sizes: &SuiteSizes, seed: u64) {
    msm_matches_host::<G1Affine, B>(backend, &sizes.msm_g1_vartime, seed);
}

/// `msm_matches_host` over G2 at the sizes of [`SuiteSizes::msm_g2_vartime`].
pub fn msm_g2_vartime<B: ComputeBackend>(backend: &B, sizes: &SuiteSizes, seed: u64) {
    msm_matches_host::<G2Affine, B>(backend, &sizes.msm_g2_vartime, seed);
}

/// A whole Groth16 proof on `backend`: with the same blinding it must equal, byte for
/// byte, the CPU backend's proof, and it must verify. The backend's assignment is
/// synthesized as `create_proof` does it, into the host memory the backend lends where it
/// lends any (checked), the CPU's into ordinary memory.
pub fn proof<B: ComputeBackend>(backend: &B, log_domain: u32, seed: u64) {
    use sluice_groth16::demo::MimcLike;
    use sluice_groth16::{
        generate_random_parameters, prepare_verifying_key, prove_assignment, verify_proof,
        Capacity, ParameterInfo, ProvingAssignment,
    };
    let mut rng = rng(seed);
    let params =
        generate_random_parameters(MimcLike::<Fr>::filling_domain(log_domain, None), &mut rng)
            .unwrap();
    let x = Fr::random(&mut rng);
    let circuit = MimcLike::filling_domain(log_domain, Some(x));
    let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
    let capacity = Capacity::for_queries(&params.query_lengths());
    let cs = ProvingAssignment::synthesize_for(circuit.clone(), capacity, backend).unwrap();
    // Dense values: one raw vector each, in the memory the backend lends where it lends.
    assert!(cs.a().is_raw(), "seed {seed:#x}");
    assert_eq!(
        cs.a().as_raw().is_some_and(|v| v.is_lent()),
        backend.host_allocator().is_some(),
        "{} lends host memory but the assignment is not in it (seed {seed:#x})",
        backend.info().name
    );
    let got = prove_assignment(cs, &params, r, s, backend, &Default::default())
        .unwrap_or_else(|e| {
            panic!(
                "proof on {} failed: {e} (seed {seed:#x})",
                backend.info().name
            )
        })
        .0;
    let cpu = sluice_backend_cpu::CpuBackend::new();
    let cs = ProvingAssignment::synthesize(circuit.clone()).unwrap();
    let want = prove_assignment(cs, &params, r, s, &cpu, &Default::default())
        .unwrap()
        .0;
    assert_eq!(
        got.to_bytes(),
        want.to_bytes(),
        "proof on {} differs from the CPU backend's (seed {seed:#x})",
        backend.info().name
    );
    // Parameters resident (each query's bases uploaded once, as provers that run many
    // proofs hold them): the same bytes.
    let resident = sluice_groth16::ResidentParameters::upload(&params, backend)
        .unwrap_or_else(|e| panic!("uploading the parameters failed: {e} (seed {seed:#x})"));
    let cs = ProvingAssignment::synthesize_for(circuit.clone(), capacity, backend).unwrap();
    let from_resident = prove_assignment(cs, &resident, r, s, backend, &Default::default())
        .unwrap_or_else(|e| {
            panic!(
                "proof on {} from resident parameters failed: {e} (seed {seed:#x})",
                backend.info().name
            )
        })
        .0;
    assert_eq!(
        from_resident.to_bytes(),
        want.to_bytes(),
        "proof on {} from resident parameters differs from the CPU backend's (seed {seed:#x})",
        backend.info().name
    );
    let pvk = prepare_verifying_key(&params.vk);
    assert!(
        verify_proof(&pvk, &got, &MimcLike::public_inputs(x, circuit.rounds)).unwrap(),
        "proof on {} does not verify (seed {seed:#x})",
        backend.info().name
    );
}

/// Parameters read unchecked from a memory-mapped file, decoded by `backend`'s own decoder
/// where it has one: the proofs from the mapping (bases uploaded per proof) and from its
/// upload (resident) equal, byte for byte, the CPU backend's from the parameters in memory;
/// and a file with one invalid point, in each query and of each kind, is refused with the
/// error the streamed reader gives for the same bytes (offset, point and reason).
pub fn mapped_parameters<B: ComputeBackend>(backend: &B, log_domain: u32, seed: u64) {
    use sluice_groth16::demo::MimcLike;
    use sluice_groth16::{
        generate_random_parameters, prove_assignment, Capacity, G1Query, MappedParameters,
        ParameterInfo, ParameterSource, Parameters, ProvingAssignment, ResidentParameters,
        VerifyingKey,
    };
    let mut rng = rng(seed);
    let params =
        generate_random_parameters(MimcLike::<Fr>::filling_domain(log_domain, None), &mut rng)
            .unwrap();
    let circuit = MimcLike::filling_domain(log_domain, Some(Fr::random(&mut rng)));
    let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
    let capacity = Capacity::for_queries(&params.query_lengths());
    let cpu = sluice_backend_cpu::CpuBackend::new();
    let cs = ProvingAssignment::synthesize(circuit.clone()).unwrap();
    let want = prove_assignment(cs, &params, r, s, &cpu, &Default::default())
        .unwrap()
        .0;

    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    let path = std::env::temp_dir().join(format!(
        "sluice-mapped-{}-{seed:x}.params",
        std::process::id()
    ));
    let name = &backend.info().name;
    let prove = |mapped: &MappedParameters| {
        let cs = ProvingAssignment::synthesize_for(circuit.clone(), capacity, backend).unwrap();
        prove_assignment(cs, mapped, r, s, backend, &Default::default()).map(|p| p.0)
    };
    std::fs::write(&path, &bytes).unwrap();
    let mapped = MappedParameters::open(&path, false).unwrap();
    let got = prove(&mapped).unwrap_or_else(|e| panic!("{name}, mapped: {e} (seed {seed:#x})"));
    assert_eq!(
        got.to_bytes(),
        want.to_bytes(),
        "{name}, mapped (seed {seed:#x})"
    );
    let resident = ResidentParameters::upload(&mapped, backend).unwrap();
    let cs = ProvingAssignment::synthesize_for(circuit.clone(), capacity, backend).unwrap();
    let got = prove_assignment(cs, &resident, r, s, backend, &Default::default())
        .unwrap()
        .0;
    assert_eq!(
        got.to_bytes(),
        want.to_bytes(),
        "{name}, uploaded from the mapping (seed {seed:#x})"
    );

    // Where each query's points start: the vk, then per query a u32 length and the points.
    let mut vk = Vec::new();
    params.vk.write(&mut vk).unwrap();
    assert_eq!(VerifyingKey::read(&vk[..]).unwrap(), params.vk);
    let lengths = params.query_lengths();
    let mut at = vk.len();
    let mut start = |len: usize, size: usize| {
        let first = at + 4;
        at = first + len * size;
        first
    };
    let (h, l) = (start(lengths.h, 96), start(lengths.l, 96));
    let (a, _b_g1) = (start(lengths.a, 96), start(lengths.b_g1, 96));
    let b_g2 = start(lengths.b_g2, 192);
    let p_be: Vec<u8> = sluice_field::Fq::MODULUS_LIMBS
        .iter()
        .rev()
        .flat_map(|l| l.to_be_bytes())
        .collect();
    type Corrupt<'a> = Box<dyn Fn(&mut [u8]) + 'a>;
    let cases: [(&str, usize, Corrupt<'_>); 4] = [
        (
            "h's last point, x = p",
            h + (lengths.h - 1) * 96,
            Box::new(|e| e[..48].copy_from_slice(&p_be)),
        ),
        (
            "l[3], compression flag",
            l + 3 * 96,
            Box::new(|e| e[0] |= 0x80),
        ),
        (
            "a[1], the identity",
            a + 96,
            Box::new(|e| {
                e[..96].fill(0);
                e[0] = 0x40;
            }),
        ),
        (
            "b_g2[2], off the curve",
            b_g2 + 2 * 192 + 191,
            Box::new(|e| e[0] ^= 1),
        ),
    ];
    for (what, offset, corrupt) in cases {
        let mut bad = bytes.clone();
        corrupt(&mut bad[offset..]);
        let reference = Parameters::read(&bad[..], false)
            .err()
            .unwrap_or_else(|| panic!("{what}: the reader accepts it"))
            .to_string();
        std::fs::write(&path, &bad).unwrap();
        let mapped = MappedParameters::open(&path, false).unwrap();
        let uploaded = ResidentParameters::upload(&mapped, backend)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            uploaded.as_ref(),
            Some(&reference),
            "{name}, {what}, upload (seed {seed:#x})"
        );
        let proved = prove(&mapped).err().map(|e| e.to_string());
        assert_eq!(
            proved.as_ref(),
            Some(&reference),
            "{name}, {what}, proof (seed {seed:#x})"
        );
        // A batch of bases (as a batched MSM uploads them) names the point by its index in
        // the query; a batch without it uploads.
        if offset == l + 3 * 96 {
            let range = mapped.g1_bases_range(backend, G1Query::L, 2..5).err();
            assert_eq!(
                range.map(|e| e.to_string()).as_ref(),
                Some(&reference),
                "{name}, {what}, range (seed {seed:#x})"
            );
            assert!(mapped.g1_bases_range(backend, G1Query::L, 4..6).is_ok());
        }
    }
    std::fs::remove_file(&path).unwrap();
}

/// Compact partitions prove exactly what raw ones do: for a boolean-heavy circuit (the bit
/// decomposition and `bellpepper`'s SHA-256) and a dense one, the proof from a compactly
/// stored assignment on `backend` equals, byte for byte, the proof from 32-byte elements on
/// the CPU backend with the same blinding, and the boolean-heavy assignments were compact;
/// so do the proof on `backend` of an assignment synthesized with the circuit's recorded
/// constraint matrices (the witness alone, a and b from the matrices) and the streamed proof
/// (the witness MSMs on five chunks during synthesis).
pub fn compact_proof<B: ComputeBackend>(backend: &B, log_domain: u32, seed: u64) {
    use sluice_groth16::demo::{BitDecomposition, MimcLike, Sha256Preimage};
    use sluice_groth16::{
        create_proof_streamed, generate_random_parameters, prove_assignment, Capacity, Circuit,
        ConstraintMatrices, ParameterInfo, ProvingAssignment, Storage, SynthesisOptions,
    };
    use std::sync::Arc;
    fn check<B: ComputeBackend, C: Circuit<Fr> + Clone>(
        backend: &B,
        shape: C,
        circuit: C,
        compact: bool,
        rng: &mut ChaCha20Rng,
        what: &str,
    ) {
        let matrices = Arc::new(ConstraintMatrices::record(shape.clone()).unwrap());
        let params = generate_random_parameters(shape, &mut *rng).unwrap();
        let (r, s) = (Fr::random(&mut *rng), Fr::random(&mut *rng));
        let capacity = Capacity::for_queries(&params.query_lengths());
        let synthesize = |storage, matrices| {
            let options = SynthesisOptions {
                capacity,
                storage,
                lender: backend.host_allocator(),
                matrices,
                ..SynthesisOptions::default()
            };
            ProvingAssignment::synthesize_with(circuit.clone(), &options).unwrap()
        };
        let cs = synthesize(Storage::Auto, None);
        let vector = (capacity.constraints * 32) as f64;
        let held = cs.host_bytes() as f64 / vector;
        assert_eq!(held < 0.25, compact, "{what}: {held} vectors");
        let got = prove_assignment(cs, &params, r, s, backend, &Default::default())
            .unwrap()
            .0;
        let cpu = sluice_backend_cpu::CpuBackend::new();
        let want = prove_assignment(
            synthesize(Storage::Raw, None),
            &params,
            r,
            s,
            &cpu,
            &Default::default(),
        )
        .unwrap()
        .0;
        assert_eq!(
            got.to_bytes(),
            want.to_bytes(),
            "{what}: the compact proof on {} differs from the raw one on the CPU",
            backend.info().name
        );
        let cs = synthesize(Storage::Auto, Some(Arc::clone(&matrices)));
        let fast = prove_assignment(cs, &params, r, s, backend, &Default::default())
            .unwrap()
            .0;
        assert_eq!(
            fast.to_bytes(),
            want.to_bytes(),
            "{what}: the proof on {} with recorded matrices differs from the CPU's",
            backend.info().name
        );
        let chunk = matrices.num_aux().div_ceil(5);
        let (streamed, _) = create_proof_streamed(
            circuit.clone(),
            &matrices,
            &params,
            r,
            s,
            backend,
            Some(chunk),
        )
        .unwrap();
        assert_eq!(
            streamed.to_bytes(),
            want.to_bytes(),
            "{what}: the streamed proof on {} differs from the CPU's",
            backend.info().name
        );
    }
    let mut rng = rng(seed);
    let what = |name: &str| format!("{name} 2^{log_domain}, seed {seed:#x}");
    check(
        backend,
        BitDecomposition::<Fr>::filling_domain(log_domain, None),
        BitDecomposition::<Fr>::filling_domain(log_domain, Some(seed)),
        true,
        &mut rng,
        &what("bit decomposition"),
    );
    let blocks = Sha256Preimage::<Fr>::filling_domain(log_domain.max(15), None).blocks;
    check(
        backend,
        Sha256Preimage::<Fr>::new(blocks, None),
        Sha256Preimage::<Fr>::new(blocks, Some(seed)),
        true,
        &mut rng,
        &what("sha-256"),
    );
    let x = Fr::random(&mut rng);
    check(
        backend,
        MimcLike::<Fr>::filling_domain(log_domain, None),
        MimcLike::<Fr>::filling_domain(log_domain, Some(x)),
        false,
        &mut rng,
        &what("mimc"),
    );
}
