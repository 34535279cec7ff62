//! Circuits written against `blstrs::Scalar`, as Filecoin's are, set up and prove with sluice:
//! their proofs verify with sluice and with bellperson 0.27, and a circuit generic over its
//! field gives the same parameters and proofs, byte for byte, whichever of the two scalar
//! types it is synthesized with.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

mod common;

use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination, SynthesisError};
use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar};
use common::Chain;
use ff::Field;
use group::Group;
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use sluice_backend_cpu::CpuBackend;
use sluice_field::{Fr, FrCompatible, G1Projective, G2Projective};
use sluice_groth16 as sl;

/// Knowledge of `x` (64 bits) with `y = x^5 + K` over `blstrs::Scalar` only: `x` is range
/// checked by its bits (coefficients 2^i), the fifth power takes three constraints, and `K`
/// is a constant of the circuit (a coefficient on the one). Public inputs: `y`, then `x`'s
/// low byte packed from its bits.
#[derive(Clone)]
struct FifthPowerOfA64BitNumber {
    x: Option<u64>,
}

/// The constant of the circuit: any field element with all limbs in use.
fn k() -> Scalar {
    Scalar::from(0x1234_5678_9abc_def0u64).pow_vartime([5]) - Scalar::from(17u64)
}

fn fifth_power_plus_k(x: u64) -> Scalar {
    Scalar::from(x).pow_vartime([5]) + k()
}

impl Circuit<Scalar> for FifthPowerOfA64BitNumber {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let missing = || SynthesisError::AssignmentMissing;
        let x_val = self.x.map(Scalar::from);
        let x = cs.alloc(|| "x", || x_val.ok_or_else(missing))?;
        let mut bits = LinearCombination::zero();
        let mut low_byte = LinearCombination::zero();
        let mut weight = Scalar::ONE;
        for i in 0..64 {
            let mut ns = cs.namespace(|| format!("bit {i}"));
            let bit_val = self.x.map(|x| Scalar::from((x >> i) & 1));
            let bit = ns.alloc(|| "b", || bit_val.ok_or_else(missing))?;
            // b * (1 - b) = 0
            ns.enforce(
                || "boolean",
                |lc| lc + bit,
                |lc| lc + CS::one() - bit,
                |lc| lc,
            );
            bits = bits + (weight, bit);
            if i < 8 {
                low_byte = low_byte + (weight, bit);
            }
            weight = weight.double();
        }
        cs.enforce(
            || "x is its bits",
            |_| bits,
            |lc| lc + CS::one(),
            |lc| lc + x,
        );
        let byte_val = self.x.map(|x| Scalar::from(x & 0xff));
        let byte = cs.alloc_input(|| "low byte", || byte_val.ok_or_else(missing))?;
        cs.enforce(
            || "low byte",
            |_| low_byte,
            |lc| lc + CS::one(),
            |lc| lc + byte,
        );
        let x2_val = x_val.map(|x| x.square());
        let x2 = cs.alloc(|| "x^2", || x2_val.ok_or_else(missing))?;
        cs.enforce(|| "square", |lc| lc + x, |lc| lc + x, |lc| lc + x2);
        let x4_val = x2_val.map(|x| x.square());
        let x4 = cs.alloc(|| "x^4", || x4_val.ok_or_else(missing))?;
        cs.enforce(|| "fourth", |lc| lc + x2, |lc| lc + x2, |lc| lc + x4);
        let y_val = x4_val.zip(x_val).map(|(x4, x)| x4 * x + k());
        let y = cs.alloc_input(|| "y", || y_val.ok_or_else(missing))?;
        cs.enforce(
            || "fifth plus k",
            |lc| lc + x4,
            |lc| lc + x,
            |lc| lc + y - (k(), CS::one()),
        );
        Ok(())
    }
}

fn public_inputs(x: u64) -> Vec<Scalar> {
    vec![Scalar::from(x & 0xff), fifth_power_plus_k(x)]
}

/// A blstrs-only circuit: sluice's setup and prover take it as it is; sluice and bellperson
/// both accept the proof and both reject it for a wrong input; bellperson reads the
/// parameters and its own proof with them verifies in sluice.
#[test]
fn a_blstrs_circuit_proves_with_sluice_and_verifies_in_both() {
    let seed = 240;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let x = rng.next_u64();
    let params =
        sl::for_blstrs::generate_random_parameters(FifthPowerOfA64BitNumber { x: None }, &mut rng)
            .unwrap();
    let backend = CpuBackend::new();
    let proof = sl::for_blstrs::create_random_proof(
        FifthPowerOfA64BitNumber { x: Some(x) },
        &params,
        &mut rng,
        &backend,
    )
    .unwrap();

    let inputs = public_inputs(x);
    let pvk = sl::prepare_verifying_key(&params.vk);
    let as_fr = Scalar::as_fr_slice(&inputs);
    assert!(
        sl::verify_proof(&pvk, &proof, as_fr).unwrap(),
        "seed {seed}"
    );
    let mut wrong = as_fr.to_vec();
    wrong[1] += Fr::ONE;
    assert!(
        !sl::verify_proof(&pvk, &proof, &wrong).unwrap(),
        "seed {seed}"
    );

    let mut param_bytes = Vec::new();
    params.write(&mut param_bytes).unwrap();
    let bp_params = bp::Parameters::<Bls12>::read(&param_bytes[..], true).unwrap();
    let bp_pvk = bp::prepare_verifying_key(&bp_params.vk);
    let bp_proof = bp::Proof::<Bls12>::read(&proof.to_bytes()[..]).unwrap();
    assert!(
        bp::verify_proof(&bp_pvk, &bp_proof, &inputs).unwrap(),
        "seed {seed}"
    );
    let mut wrong = inputs.clone();
    wrong[0] += Scalar::ONE;
    assert!(!bp::verify_proof(&bp_pvk, &bp_proof, &wrong).unwrap());

    // bellperson proves the same circuit with sluice's parameters; sluice accepts it.
    let theirs = bp::create_random_proof(
        FifthPowerOfA64BitNumber { x: Some(x) },
        &bp_params,
        &mut rng,
    )
    .unwrap();
    let mut theirs_bytes = Vec::new();
    theirs.write(&mut theirs_bytes).unwrap();
    let theirs = sl::Proof::read(&theirs_bytes[..]).unwrap();
    assert!(
        sl::verify_proof(&pvk, &theirs, as_fr).unwrap(),
        "seed {seed}"
    );
}

/// A wrong witness of a blstrs circuit is reported with its constraint, as for `Fr` ones.
#[test]
fn a_wrong_blstrs_witness_names_its_constraint() {
    struct Wrong;
    impl Circuit<Scalar> for Wrong {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            let a = cs.alloc(|| "a", || Ok(Scalar::from(3u64)))?;
            let b = cs.alloc_input(|| "b", || Ok(Scalar::from(10u64)))?;
            let mut ns = cs.namespace(|| "gadget");
            ns.enforce(|| "a squared", |lc| lc + a, |lc| lc + a, |lc| lc + b);
            Ok(())
        }
    }
    match sl::ProvingAssignment::synthesize(Wrong) {
        Err(sl::Groth16Error::Unsatisfied { index, name }) => {
            assert_eq!((index, name.as_str()), (0, "gadget/a squared"));
        }
        other => panic!("expected Unsatisfied, got {:?}", other.err()),
    }
}

/// One generic circuit, synthesized over `Fr` and over `blstrs::Scalar` with the same
/// secrets: identical parameter bytes, assignment, and proof bytes, single and batched.
#[test]
fn a_generic_circuit_is_the_same_over_both_scalars() {
    let seed = 241;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let rounds = 30;
    let x = Scalar::random(&mut rng);
    let (g1, g2) = (
        G1Projective::random(&mut rng),
        G2Projective::random(&mut rng),
    );
    let toxic = sl::ToxicWaste::random(&mut rng);
    // A circuit generic over its field needs no annotation: each call names its scalar.
    let over_fr = sl::generate_parameters(Chain::new(None, rounds), g1, g2, &toxic).unwrap();
    let over_scalar =
        sl::for_blstrs::generate_parameters(Chain::new(None, rounds), g1, g2, &toxic).unwrap();
    let bytes = |p: &sl::Parameters| {
        let mut v = Vec::new();
        p.write(&mut v).unwrap();
        v
    };
    assert_eq!(bytes(&over_fr), bytes(&over_scalar), "seed {seed}");

    let a = sl::ProvingAssignment::synthesize(Chain::new(Some(Fr::from(x)), rounds)).unwrap();
    let b = sl::ProvingAssignment::synthesize(Chain::new(Some(x), rounds)).unwrap();
    assert_eq!(a.a(), b.a(), "seed {seed}");
    assert_eq!(a.b(), b.b(), "seed {seed}");
    assert_eq!(a.aux_assignment(), b.aux_assignment(), "seed {seed}");
    assert_eq!(a.input_assignment(), b.input_assignment(), "seed {seed}");

    let backend = CpuBackend::new();
    let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
    let p_fr = sl::create_proof(
        Chain::new(Some(Fr::from(x)), rounds),
        &over_fr,
        r,
        s,
        &backend,
    )
    .unwrap();
    let p_scalar =
        sl::for_blstrs::create_proof(Chain::new(Some(x), rounds), &over_fr, r, s, &backend)
            .unwrap();
    assert_eq!(p_fr.to_bytes(), p_scalar.to_bytes(), "seed {seed}");

    let xs: Vec<Scalar> = (0..3).map(|_| Scalar::random(&mut rng)).collect();
    let batch = sl::for_blstrs::create_random_proof_batch(
        xs.iter().map(|&x| Chain::new(Some(x), rounds)).collect(),
        &over_fr,
        &mut rng,
        &backend,
    )
    .unwrap();
    let pvk = sl::prepare_verifying_key(&over_fr.vk);
    for (proof, &x) in batch.iter().zip(&xs) {
        let inputs = Chain::public_inputs(x, rounds);
        assert!(
            sl::verify_proof(&pvk, proof, Scalar::as_fr_slice(&inputs)).unwrap(),
            "seed {seed}"
        );
    }
    // Batch verification takes the blstrs inputs as views, with no copy.
    let inputs: Vec<Vec<Scalar>> = xs
        .iter()
        .map(|&x| Chain::public_inputs(x, rounds))
        .collect();
    let views: Vec<&[Fr]> = inputs.iter().map(|i| Scalar::as_fr_slice(i)).collect();
    assert!(
        sl::verify_proofs_batch(&pvk, &mut rng, &batch, &views).unwrap(),
        "seed {seed}"
    );
}
