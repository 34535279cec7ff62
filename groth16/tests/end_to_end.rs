//! Setup, prove, verify and file round trips on the CPU backend, and every rejection path.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

mod common;

use common::readers::non_subgroup_point;
use common::{Chain, Empty, InputsOnly};
use ff::Field;
use group::prime::PrimeCurveAffine;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend::ComputeBackend;
use sluice_backend_cpu::CpuBackend;
use sluice_field::{DecodeError, Fr, G1Affine};
use sluice_groth16::*;

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

fn prove_and_verify<C: Circuit<Fr> + Clone>(circuit: C, inputs: &[Fr], seed: u64) {
    let mut rng = rng(seed);
    let backend = CpuBackend::new();
    let params = generate_random_parameters(circuit.clone(), &mut rng).unwrap();
    let proof = create_random_proof(circuit, &params, &mut rng, &backend).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    assert!(verify_proof(&pvk, &proof, inputs).unwrap(), "seed {seed}");
    // A wrong public input is rejected.
    let mut wrong = inputs.to_vec();
    if let Some(x) = wrong.first_mut() {
        *x += Fr::ONE;
        assert!(!verify_proof(&pvk, &proof, &wrong).unwrap(), "seed {seed}");
    }
}

#[test]
fn empty_circuit_proves() {
    prove_and_verify(Empty, &[], 1);
}

#[test]
fn inputs_only_circuit_proves() {
    let v = [Fr::from(5u64), Fr::from(7u64), -Fr::ONE];
    prove_and_verify(InputsOnly(v.iter().copied().map(Some).collect()), &v, 2);
}

#[test]
fn small_chain_proves() {
    let x = Fr::from(11u64);
    prove_and_verify(Chain::new(Some(x), 5), &Chain::public_inputs(x, 5), 3);
}

/// A setup, a proof, and everything derived from them, for the larger tests.
struct Fixture {
    params: Parameters,
    circuit: Chain<Fr>,
    inputs: Vec<Fr>,
    proof: Proof,
}

/// 2 · 2100 + 5 constraints: domain 2^13.
const ROUNDS: usize = 2100;

fn fixture(seed: u64) -> Fixture {
    let mut rng = rng(seed);
    let x = Fr::random(&mut rng);
    let circuit = Chain::new(Some(x), ROUNDS);
    let params = generate_random_parameters(circuit.clone(), &mut rng).unwrap();
    let backend = CpuBackend::new();
    let proof = create_random_proof(circuit.clone(), &params, &mut rng, &backend).unwrap();
    Fixture {
        params,
        circuit,
        inputs: Chain::public_inputs(x, ROUNDS),
        proof,
    }
}

#[test]
fn large_circuit_verifies_and_rejects_tampering() {
    let seed = 4;
    let f = fixture(seed);
    assert_eq!(f.params.h.len(), 8191);
    let pvk = prepare_verifying_key(&f.params.vk);
    assert!(verify_proof(&pvk, &f.proof, &f.inputs).unwrap());

    // Wrong inputs.
    let mut wrong = f.inputs.clone();
    wrong[1] += Fr::ONE;
    assert!(!verify_proof(&pvk, &f.proof, &wrong).unwrap());
    // Wrong number of inputs is an error, not `false`.
    assert!(matches!(
        verify_proof(&pvk, &f.proof, &f.inputs[..1]),
        Err(Groth16Error::PublicInputCount {
            expected: 2,
            got: 1
        })
    ));
    // Tampered proofs.
    let g = G1Affine::generator();
    for tampered in [
        Proof {
            a: (f.proof.a.to_curve() + g).to_affine(),
            ..f.proof
        },
        Proof {
            c: (f.proof.c.to_curve() + g).to_affine(),
            ..f.proof
        },
        Proof {
            b: (-f.proof.b.to_curve()).to_affine(),
            ..f.proof
        },
        Proof {
            a: f.proof.c,
            c: f.proof.a,
            ..f.proof
        },
    ] {
        assert!(
            !verify_proof(&pvk, &tampered, &f.inputs).unwrap(),
            "seed {seed}"
        );
    }
    // A verifying key from another setup of the same circuit.
    let other = generate_random_parameters(f.circuit.clone(), &mut rng(seed + 100)).unwrap();
    assert!(!verify_proof(&prepare_verifying_key(&other.vk), &f.proof, &f.inputs).unwrap());

    // The same proof through a batch, with a mix of valid and invalid.
    let mut r = rng(seed + 1);
    assert!(verify_proofs_batch(
        &pvk,
        &mut r,
        &[f.proof, f.proof],
        &[f.inputs.clone(), f.inputs.clone()]
    )
    .unwrap());
    assert!(!verify_proofs_batch(
        &pvk,
        &mut r,
        &[f.proof, f.proof],
        &[f.inputs.clone(), wrong]
    )
    .unwrap());

    // File round trips, checked and unchecked, byte-exact.
    let mut bytes = Vec::new();
    f.params.write(&mut bytes).unwrap();
    for checked in [true, false] {
        let back = Parameters::read(&bytes[..], checked).unwrap();
        assert_eq!(back, f.params);
    }
    let mut vk_bytes = Vec::new();
    f.params.vk.write(&mut vk_bytes).unwrap();
    assert_eq!(vk_bytes.len(), f.params.vk.serialized_size());
    assert_eq!(
        &bytes[..vk_bytes.len()],
        &vk_bytes[..],
        "params start with the vk"
    );
    assert_eq!(VerifyingKey::read(&vk_bytes[..]).unwrap(), f.params.vk);
    let mut proof_bytes = Vec::new();
    f.proof.write(&mut proof_bytes).unwrap();
    assert_eq!(proof_bytes.len(), Proof::SIZE);
    assert_eq!(Proof::read(&proof_bytes[..]).unwrap(), f.proof);

    // Memory-mapped parameters prove the same circuit.
    let path =
        std::env::temp_dir().join(format!("sluice-groth16-test-{}.params", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    let mapped = MappedParameters::open(&path, true).unwrap();
    assert_eq!(mapped.to_parameters().unwrap(), f.params);
    // With the whole API in scope (`use sluice_groth16::*`), vk() and query_lengths() are one
    // method each (ParameterInfo's), on every kind of parameters.
    assert_eq!(mapped.vk(), &f.params.vk);
    assert_eq!(mapped.query_lengths(), f.params.query_lengths());
    let backend = CpuBackend::new();
    let resident = ResidentParameters::upload(&mapped, &backend).unwrap();
    assert_eq!(resident.vk(), f.params.vk());
    assert_eq!(resident.query_lengths(), mapped.query_lengths());
    let proof = create_random_proof(f.circuit.clone(), &mapped, &mut r, &backend).unwrap();
    assert!(verify_proof(&pvk, &proof, &f.inputs).unwrap());
    // Ranges decode alone and equal the slices of the whole query; past the end is an error.
    for (query, points) in [(G1Query::H, &f.params.h), (G1Query::L, &f.params.l)] {
        let len = points.len();
        for range in [0..0, 0..len, 1..len / 2 + 1, len - 1..len] {
            let got = mapped.g1_points_range(query, range.clone()).unwrap();
            assert_eq!(&got[..], &points[range.clone()], "{query:?} {range:?}");
        }
        assert!(mapped.g1_points_range(query, len - 1..len + 1).is_err());
    }
    let b_g2 = mapped.b_g2_points_range(1..3).unwrap();
    assert_eq!(&b_g2[..], &f.params.b_g2[1..3]);
    // Read unchecked, the mapping offers the encodings to backends that decode on their
    // devices (which leave out the subgroup check: checked reads decode on the host).
    assert!(mapped.g1_encoded(G1Query::L, 0..1).is_none());
    assert!(mapped.b_g2_encoded(0..1).is_none());
    let unchecked = MappedParameters::open(&path, false).unwrap();
    let l = unchecked.g1_encoded(G1Query::L, 1..3).unwrap();
    let want: Vec<u8> = f.params.l[1..3]
        .iter()
        .flat_map(|p| p.to_uncompressed().as_ref().to_vec())
        .collect();
    assert_eq!(l.bytes, &want[..]);
    assert_eq!(&bytes[l.offset as usize..][..want.len()], &want[..]);
    let g2 = unchecked.b_g2_encoded(2..3).unwrap();
    assert_eq!(g2.bytes, f.params.b_g2[2].to_uncompressed().as_ref());
    assert!(unchecked
        .g1_encoded(G1Query::H, 0..f.params.h.len() + 1)
        .is_none());
    // A truncated file is rejected at open, naming where the data ends.
    std::fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
    assert!(matches!(
        MappedParameters::open(&path, true),
        Err(Groth16Error::Truncated { .. })
    ));
    std::fs::remove_file(&path).unwrap();

    // Parameters for another circuit are refused with the numbers.
    let small = Chain::new(Some(Fr::ONE), 3);
    match create_random_proof(small, &f.params, &mut r, &backend) {
        Err(Groth16Error::ParameterMismatch {
            params, circuit, ..
        }) => assert_ne!(params, circuit),
        other => panic!("expected a parameter mismatch, got {other:?}"),
    }
}

#[test]
fn residency_and_phase_times_are_reported() {
    let mut rng = rng(5);
    let x = Fr::from(3u64);
    let circuit = Chain::new(Some(x), 100);
    let params = generate_random_parameters(circuit.clone(), &mut rng).unwrap();
    let backend = CpuBackend::new();
    let cs = ProvingAssignment::synthesize(circuit).unwrap();
    let clock = std::time::Instant::now();
    let (proof, report) = prove_assignment(
        cs,
        &params,
        Fr::random(&mut rng),
        Fr::random(&mut rng),
        &backend,
        &Default::default(),
    )
    .unwrap();
    assert!(verify_proof(
        &prepare_verifying_key(&params.vk),
        &proof,
        &Chain::public_inputs(x, 100)
    )
    .unwrap());
    let elapsed = clock.elapsed();
    let p = report.phases;
    for (name, t) in [
        ("h", p.h),
        ("l", p.l),
        ("a", p.a),
        ("b_g1", p.b_g1),
        ("b_g2", p.b_g2),
    ] {
        assert!(!t.is_zero(), "phase {name} not timed: {p}");
    }
    assert!(
        p.h + p.l + p.a + p.b_g1 + p.b_g2 <= elapsed,
        "{p} over {elapsed:?}"
    );
    assert_eq!(report.domain_size, 256);
    // a, b and c are resident together during the H computation.
    assert!(report.device_peak_vectors() >= 3.0, "{report:?}");
    assert_eq!(
        backend
            .tracker()
            .current(sluice_backend::MemoryKind::Device),
        0,
        "all freed"
    );
}

#[test]
fn batch_proofs_with_resident_parameters() {
    let mut rng = rng(6);
    let circuit = Chain::<Fr>::new(None, 50);
    let params = generate_random_parameters(circuit, &mut rng).unwrap();
    let backend = CpuBackend::new();
    let resident = ResidentParameters::upload(&params, &backend).unwrap();
    let xs: Vec<Fr> = (0..4).map(|i| Fr::from(i as u64 + 2)).collect();
    let circuits = xs.iter().map(|x| Chain::new(Some(*x), 50)).collect();
    let proofs = create_random_proof_batch(circuits, &resident, &mut rng, &backend).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    let inputs: Vec<Vec<Fr>> = xs.iter().map(|x| Chain::public_inputs(*x, 50)).collect();
    for (p, i) in proofs.iter().zip(&inputs) {
        assert!(verify_proof(&pvk, p, i).unwrap());
    }
    assert!(verify_proofs_batch(&pvk, &mut rng, &proofs, &inputs).unwrap());
    let mut swapped = inputs.clone();
    swapped.swap(0, 1);
    assert!(!verify_proofs_batch(&pvk, &mut rng, &proofs, &swapped).unwrap());
}

#[test]
fn unsatisfied_circuit_names_the_constraint() {
    let mut rng = rng(7);
    let params = generate_random_parameters(Chain::<Fr>::new(None, 10), &mut rng).unwrap();
    let bad = Chain {
        tamper: Some(6),
        ..Chain::new(Some(Fr::from(9u64)), 10)
    };
    match create_random_proof(bad.clone(), &params, &mut rng, &CpuBackend::new()) {
        Err(Groth16Error::Unsatisfied { name, index }) => {
            assert_eq!(name, "round 6/square");
            assert_eq!(index, 1 + 2 * 6);
        }
        other => panic!("expected Unsatisfied, got {other:?}"),
    }
    // The bellpepper view: SynthesisError::Unsatisfiable.
    let mut cs = <ProvingAssignment as ConstraintSystem<Fr>>::new();
    cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    bad.synthesize(&mut cs).unwrap();
    assert!(matches!(cs.check(), Err(SynthesisError::Unsatisfiable)));
    assert_eq!(cs.first_unsatisfied().unwrap().name, "round 6/square");
    // Proving the hand-built assignment (with the input constraints setup adds, so its
    // shape matches the parameters) fails as the high-level path does, through every
    // low-level entry point.
    for i in 0..cs.input_assignment().len() {
        cs.enforce(
            || format!("input constraint {i}"),
            |lc: LinearCombination<Fr>| lc + Variable(Index::Input(i)),
            |lc| lc,
            |lc| lc,
        );
    }
    let expect_unsatisfied = |r: Result<(Proof, ProofReport), Groth16Error>| match r {
        Err(Groth16Error::Unsatisfied { name, index }) => {
            assert_eq!((name.as_str(), index), ("round 6/square", 1 + 2 * 6));
        }
        other => panic!("expected Unsatisfied, got {:?}", other.map(|_| ())),
    };
    let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
    let backend = CpuBackend::new();
    expect_unsatisfied(prove_assignment(
        cs.clone(),
        &params,
        r,
        s,
        &backend,
        &Default::default(),
    ));
    expect_unsatisfied(prove_assignment(
        cs,
        &params,
        r,
        s,
        &backend,
        &ProverConfig::default(),
    ));
    // A missing witness is a synthesis error.
    assert!(matches!(
        create_random_proof(
            Chain::<Fr>::new(None, 10),
            &params,
            &mut rng,
            &CpuBackend::new()
        ),
        Err(Groth16Error::Synthesis(SynthesisError::AssignmentMissing))
    ));
}

#[test]
fn benchmark_parameters_have_the_right_shape_and_do_not_verify() {
    let mut rng = rng(8);
    let x = Fr::from(4u64);
    let circuit = Chain::new(Some(x), 300);
    let real = generate_random_parameters(circuit.clone(), &mut rng).unwrap();
    let shape = CircuitShape::of(&ProvingAssignment::synthesize(circuit.clone()).unwrap());
    let bench = generate_benchmark_parameters(&shape, &mut rng).unwrap();
    assert_eq!(bench.vk.ic.len(), real.vk.ic.len());
    for (b, r) in [
        (bench.h.len(), real.h.len()),
        (bench.l.len(), real.l.len()),
        (bench.a.len(), real.a.len()),
        (bench.b_g1.len(), real.b_g1.len()),
        (bench.b_g2.len(), real.b_g2.len()),
    ] {
        assert_eq!(b, r);
    }
    assert!(bench
        .h
        .iter()
        .chain(&bench.a)
        .all(|p| bool::from(!p.is_identity() & p.is_on_curve() & p.is_torsion_free())));
    let backend = CpuBackend::new();
    let proof = create_random_proof(circuit, &bench, &mut rng, &backend).unwrap();
    let pvk = prepare_verifying_key(&bench.vk);
    assert!(!verify_proof(&pvk, &proof, &Chain::public_inputs(x, 300)).unwrap());
}

#[test]
fn corrupted_and_truncated_files_are_rejected_with_offsets() {
    let mut rng = rng(9);
    let params = generate_random_parameters(Chain::<Fr>::new(None, 6), &mut rng).unwrap();
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    let vk_len = params.vk.serialized_size();
    let h_start = vk_len as u64 + 4;

    // Truncation at many offsets: always an error naming an offset within the file.
    for cut in [
        0,
        1,
        95,
        96,
        500,
        vk_len - 1,
        vk_len,
        vk_len + 2,
        vk_len + 4 + 50,
        bytes.len() - 1,
    ] {
        match Parameters::read(&bytes[..cut], true) {
            Err(Groth16Error::Truncated { offset, expected }) => {
                assert!(offset <= cut as u64, "cut {cut}: offset {offset}");
                assert!(!expected.is_empty());
            }
            other => panic!("cut {cut}: expected Truncated, got {other:?}"),
        }
    }
    // A huge length field is a truncation, not an allocation failure.
    let mut huge = bytes.clone();
    huge[vk_len..vk_len + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    assert!(matches!(
        Parameters::read(&huge[..], true),
        Err(Groth16Error::Truncated { .. })
    ));

    // h[1] off the curve: flip a bit of y.
    let mut bad = bytes.clone();
    let h1 = h_start as usize + 96;
    bad[h1 + 95] ^= 1;
    match Parameters::read(&bad[..], true) {
        Err(Groth16Error::InvalidPoint {
            offset,
            what,
            source,
        }) => {
            assert_eq!(offset, h1 as u64);
            assert_eq!(what, "h[1]");
            assert_eq!(source, DecodeError::NotOnCurve);
        }
        other => panic!("expected InvalidPoint, got {other:?}"),
    }
    // h[0] on the curve, outside the subgroup: rejected only by a checked read.
    let mut bad = bytes.clone();
    let p = non_subgroup_point();
    bad[h_start as usize..h_start as usize + 96].copy_from_slice(&p.to_uncompressed());
    assert!(matches!(
        Parameters::read(&bad[..], true),
        Err(Groth16Error::InvalidPoint {
            source: DecodeError::NotInSubgroup,
            ..
        })
    ));
    assert!(Parameters::read(&bad[..], false).is_ok());
    // The identity in a query is rejected, with its offset.
    let mut bad = bytes.clone();
    bad[h_start as usize..h_start as usize + 96]
        .copy_from_slice(&G1Affine::identity().to_uncompressed());
    assert!(matches!(
        Parameters::read(&bad[..], false),
        Err(Groth16Error::PointAtInfinity { offset, .. }) if offset == h_start
    ));
    // A corrupted vk point (alpha_g1, always checked).
    let mut bad = bytes.clone();
    bad[10] ^= 0x55;
    assert!(matches!(
        VerifyingKey::read(&bad[..]),
        Err(Groth16Error::InvalidPoint { offset: 0, .. })
    ));

    // Proofs: truncated, trailing bytes, corrupted, identity.
    let backend = CpuBackend::new();
    let x = Fr::from(2u64);
    let proof = create_random_proof(Chain::new(Some(x), 6), &params, &mut rng, &backend).unwrap();
    let pb = proof.to_bytes();
    assert!(matches!(
        Proof::from_bytes(&pb[..100]),
        Err(Groth16Error::Truncated { .. })
    ));
    assert!(matches!(
        Proof::read(&pb[..100]),
        Err(Groth16Error::Truncated { .. })
    ));
    let mut long = pb.to_vec();
    long.push(0);
    assert!(matches!(
        Proof::from_bytes(&long),
        Err(Groth16Error::TrailingBytes {
            offset: 192,
            extra: 1,
            ..
        })
    ));
    for (offset, what) in [(0usize, "proof.a"), (48, "proof.b"), (144, "proof.c")] {
        let mut bad = pb;
        bad[offset + 20] ^= 0x40;
        match Proof::from_bytes(&bad) {
            Err(Groth16Error::InvalidPoint {
                offset: o, what: w, ..
            }) => {
                assert_eq!((o, w.as_str()), (offset as u64, what));
            }
            // Some flips land on another valid x; then the proof must not verify.
            Ok(p) => assert!(!verify_proof(
                &prepare_verifying_key(&params.vk),
                &p,
                &Chain::public_inputs(x, 6)
            )
            .unwrap()),
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    let mut ident = pb;
    ident[..48].copy_from_slice(&G1Affine::identity().to_compressed());
    assert!(matches!(
        Proof::from_bytes(&ident),
        Err(Groth16Error::PointAtInfinity { offset: 0, .. })
    ));
}
