//! The verifier against bellperson 0.27's on the same proofs, and the batch verifier's
//! rejections: every tampered position, changed inputs, wrong counts. (The public-input
//! combination's two paths are tested against a naive sum in `verifier.rs`.)

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar};
use ff::{Field, PrimeField};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend_cpu::CpuBackend;
use sluice_field::{Fr, FrCompatible, G1Affine, G1Projective};
use sluice_groth16::*;

/// `n` public inputs x_i, each squared into an auxiliary y_i = x_i · x_i.
#[derive(Clone)]
struct SquaredInputs<S>(Vec<Option<S>>);

impl<S: PrimeField> Circuit<S> for SquaredInputs<S> {
    fn synthesize<CS: ConstraintSystem<S>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        for (i, x) in self.0.into_iter().enumerate() {
            let missing = || SynthesisError::AssignmentMissing;
            let xi = cs.alloc_input(|| format!("x{i}"), || x.ok_or_else(missing))?;
            let yi = cs.alloc(
                || format!("y{i}"),
                || x.map(|x| x.square()).ok_or_else(missing),
            )?;
            cs.enforce(
                || format!("square {i}"),
                |lc| lc + xi,
                |lc| lc + xi,
                |lc| lc + yi,
            );
        }
        Ok(())
    }
}

struct Setup {
    params: Parameters,
    pvk: PreparedVerifyingKey,
    bp_pvk: bp::PreparedVerifyingKey<Bls12>,
}

fn setup(inputs: usize, rng: &mut ChaCha20Rng) -> Setup {
    let params = generate_random_parameters(SquaredInputs::<Fr>(vec![None; inputs]), rng).unwrap();
    let mut vk_bytes = Vec::new();
    params.vk.write(&mut vk_bytes).unwrap();
    let bp_vk = bp::VerifyingKey::<Bls12>::read(&vk_bytes[..]).unwrap();
    Setup {
        pvk: prepare_verifying_key(&params.vk),
        bp_pvk: bp::prepare_verifying_key(&bp_vk),
        params,
    }
}

fn prove(s: &Setup, inputs: &[Fr], rng: &mut ChaCha20Rng) -> Proof {
    let circuit = SquaredInputs(inputs.iter().copied().map(Some).collect());
    create_random_proof(circuit, &s.params, rng, &CpuBackend::new()).unwrap()
}

/// sluice's verdict, checked against bellperson's on the same bytes.
fn verify_both(s: &Setup, proof: &Proof, inputs: &[Fr], what: &str) -> bool {
    let ours = verify_proof(&s.pvk, proof, inputs).unwrap();
    let bp_proof = bp::Proof::<Bls12>::read(&proof.to_bytes()[..]).unwrap();
    let theirs = bp::verify_proof(&s.bp_pvk, &bp_proof, Scalar::from_fr_slice(inputs)).unwrap();
    assert_eq!(ours, theirs, "{what}: sluice and bellperson disagree");
    ours
}

/// Valid proofs verify and a wrong input anywhere is rejected, by both verifiers, with 0,
/// 1, 7 and 64 inputs; inputs of 0 and -1 included.
#[test]
fn verdicts_agree_with_bellperson() {
    let seed = 245;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    for n in [0, 1, 7, 64] {
        let s = setup(n, &mut rng);
        let mut inputs: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
        if n >= 2 {
            inputs[0] = Fr::ZERO;
            inputs[1] = -Fr::ONE;
        }
        let proof = prove(&s, &inputs, &mut rng);
        assert!(verify_both(
            &s,
            &proof,
            &inputs,
            &format!("seed {seed}, {n} inputs")
        ));
        for i in [0, n / 2, n.saturating_sub(1)]
            .into_iter()
            .filter(|_| n > 0)
        {
            let mut wrong = inputs.clone();
            wrong[i] += Fr::ONE;
            assert!(
                !verify_both(
                    &s,
                    &proof,
                    &wrong,
                    &format!("seed {seed}, {n} inputs, wrong {i}")
                ),
                "seed {seed}, {n} inputs, input {i} changed"
            );
        }
        let mut long = inputs.clone();
        long.push(Fr::ONE);
        assert!(matches!(
            verify_proof(&s.pvk, &proof, &long),
            Err(Groth16Error::PublicInputCount { expected, got }) if expected == n && got == n + 1
        ));
    }
}

/// Tampered proofs: each of A, B, C replaced (by another valid point, by the identity, and
/// by the generator) is rejected, and never panics.
#[test]
fn tampered_proofs_are_rejected() {
    let seed = 246;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let s = setup(3, &mut rng);
    let inputs: Vec<Fr> = (0..3).map(|_| Fr::random(&mut rng)).collect();
    let proof = prove(&s, &inputs, &mut rng);
    let other = prove(&s, &inputs, &mut rng);
    let tampered = [
        Proof {
            a: other.a,
            ..proof
        },
        Proof {
            b: other.b,
            ..proof
        },
        Proof {
            c: other.c,
            ..proof
        },
        Proof {
            a: G1Affine::identity(),
            ..proof
        },
        Proof {
            b: sluice_field::G2Affine::identity(),
            ..proof
        },
        Proof {
            c: G1Affine::identity(),
            ..proof
        },
        Proof {
            a: G1Affine::generator(),
            ..proof
        },
        Proof {
            a: proof.c,
            c: proof.a,
            ..proof
        },
    ];
    for (i, t) in tampered.iter().enumerate() {
        assert!(
            !verify_proof(&s.pvk, t, &inputs).unwrap(),
            "seed {seed}, tampering {i}"
        );
    }
    assert!(
        verify_proof(&s.pvk, &other, &inputs).unwrap(),
        "seed {seed}"
    );
}

/// A batch of valid proofs verifies; one bad proof anywhere (tampered, or verified against
/// another proof's inputs) fails the batch, for several verifier seeds; counts that do not
/// match are errors; an empty batch is valid.
#[test]
fn batches_reject_any_bad_member() {
    let seed = 247;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let s = setup(4, &mut rng);
    let n = 6;
    let inputs: Vec<Vec<Fr>> = (0..n)
        .map(|_| (0..4).map(|_| Fr::random(&mut rng)).collect())
        .collect();
    let proofs: Vec<Proof> = inputs.iter().map(|i| prove(&s, i, &mut rng)).collect();
    for verifier_seed in 0..3 {
        let mut vr = ChaCha20Rng::seed_from_u64(1000 + verifier_seed);
        assert!(
            verify_proofs_batch(&s.pvk, &mut vr, &proofs, &inputs).unwrap(),
            "seed {seed}, verifier seed {verifier_seed}"
        );
        for bad in 0..n {
            let mut tampered = proofs.clone();
            tampered[bad].c =
                (G1Projective::from(tampered[bad].c) + G1Projective::generator()).to_affine();
            assert!(
                !verify_proofs_batch(&s.pvk, &mut vr, &tampered, &inputs).unwrap(),
                "seed {seed}, verifier seed {verifier_seed}, proof {bad} tampered"
            );
            let mut wrong_inputs = inputs.clone();
            wrong_inputs[bad][bad % 4] += Fr::ONE;
            assert!(
                !verify_proofs_batch(&s.pvk, &mut vr, &proofs, &wrong_inputs).unwrap(),
                "seed {seed}, verifier seed {verifier_seed}, proof {bad}'s input changed"
            );
        }
        // Two bad proofs whose errors could cancel without the random multipliers.
        let mut pair = proofs.clone();
        let delta = G1Projective::generator();
        pair[0].c = (G1Projective::from(pair[0].c) + delta).to_affine();
        pair[1].c = (G1Projective::from(pair[1].c) - delta).to_affine();
        assert!(!verify_proofs_batch(&s.pvk, &mut vr, &pair, &inputs).unwrap());
    }
    let mut vr = ChaCha20Rng::seed_from_u64(7);
    let no_inputs: [&[Fr]; 0] = [];
    assert!(verify_proofs_batch(&s.pvk, &mut vr, &[], &no_inputs).unwrap());
    assert!(matches!(
        verify_proofs_batch(&s.pvk, &mut vr, &proofs, &inputs[1..]),
        Err(Groth16Error::ParameterMismatch { .. })
    ));
    let mut short = inputs.clone();
    short[3].pop();
    assert!(matches!(
        verify_proofs_batch(&s.pvk, &mut vr, &proofs, &short),
        Err(Groth16Error::PublicInputCount {
            expected: 4,
            got: 3
        })
    ));
}
