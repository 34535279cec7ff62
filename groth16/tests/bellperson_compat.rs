//! Byte compatibility with bellperson 0.27: each side reads what the other writes, and each
//! verifies the other's proofs.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

mod common;

use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar};
use common::Chain;
use ff::{Field, PrimeField};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend_cpu::CpuBackend;
use sluice_field::Fr;
use sluice_groth16 as sl;

const ROUNDS: usize = 40;

fn to_blstrs(x: &Fr) -> Scalar {
    Scalar::from_repr(x.to_repr()).unwrap()
}

#[test]
fn sluice_files_and_proofs_work_in_bellperson() {
    let seed = 20;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let x = Fr::random(&mut rng);
    let params = sl::generate_random_parameters(Chain::<Fr>::new(None, ROUNDS), &mut rng).unwrap();
    let proof = sl::create_random_proof(
        Chain::new(Some(x), ROUNDS),
        &params,
        &mut rng,
        &CpuBackend::new(),
    )
    .unwrap();
    let mut param_bytes = Vec::new();
    params.write(&mut param_bytes).unwrap();
    let bp_params = bp::Parameters::<Bls12>::read(&param_bytes[..], true).unwrap();
    // bellperson writes back exactly what it read.
    let mut again = Vec::new();
    bp_params.write(&mut again).unwrap();
    assert_eq!(again, param_bytes, "seed {seed}");

    let bp_proof = bp::Proof::<Bls12>::read(&proof.to_bytes()[..]).unwrap();
    let pvk = bp::prepare_verifying_key(&bp_params.vk);
    let inputs: Vec<Scalar> = Chain::public_inputs(x, ROUNDS)
        .iter()
        .map(to_blstrs)
        .collect();
    assert!(
        bp::verify_proof(&pvk, &bp_proof, &inputs).unwrap(),
        "seed {seed}"
    );
    let mut wrong = inputs.clone();
    wrong[0] += Scalar::ONE;
    assert!(!bp::verify_proof(&pvk, &bp_proof, &wrong).unwrap());
}

#[test]
fn bellperson_files_and_proofs_work_in_sluice() {
    let seed = 21;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let x = Scalar::random(&mut rng);
    let bp_params =
        bp::generate_random_parameters::<Bls12, _, _>(Chain::<Scalar>::new(None, ROUNDS), &mut rng)
            .unwrap();
    let bp_proof =
        bp::create_random_proof(Chain::new(Some(x), ROUNDS), &bp_params, &mut rng).unwrap();
    let (mut param_bytes, mut vk_bytes, mut proof_bytes) = (Vec::new(), Vec::new(), Vec::new());
    bp_params.write(&mut param_bytes).unwrap();
    bp_params.vk.write(&mut vk_bytes).unwrap();
    bp_proof.write(&mut proof_bytes).unwrap();

    // Read identically: writing back gives the same bytes.
    let params = sl::Parameters::read(&param_bytes[..], true).unwrap();
    let vk = sl::VerifyingKey::read(&vk_bytes[..]).unwrap();
    let proof = sl::Proof::read(&proof_bytes[..]).unwrap();
    assert_eq!(vk, params.vk);
    let (mut p2, mut v2) = (Vec::new(), Vec::new());
    params.write(&mut p2).unwrap();
    vk.write(&mut v2).unwrap();
    assert_eq!(p2, param_bytes, "seed {seed}");
    assert_eq!(v2, vk_bytes);
    assert_eq!(proof.to_bytes().as_slice(), &proof_bytes[..]);

    // sluice verifies bellperson's proof...
    let x_sl = Fr::from_repr(x.to_repr()).unwrap();
    let inputs = Chain::public_inputs(x_sl, ROUNDS);
    let pvk = sl::prepare_verifying_key(&vk);
    assert!(
        sl::verify_proof(&pvk, &proof, &inputs).unwrap(),
        "seed {seed}"
    );
    // ...and proves with bellperson's parameters, which bellperson accepts.
    let ours = sl::create_random_proof(
        Chain::new(Some(x_sl), ROUNDS),
        &params,
        &mut rng,
        &CpuBackend::new(),
    )
    .unwrap();
    assert!(sl::verify_proof(&pvk, &ours, &inputs).unwrap());
    let ours_bp = bp::Proof::<Bls12>::read(&ours.to_bytes()[..]).unwrap();
    let bp_inputs: Vec<Scalar> = inputs.iter().map(to_blstrs).collect();
    let bp_pvk = bp::prepare_verifying_key(&bp_params.vk);
    assert!(bp::verify_proof(&bp_pvk, &ours_bp, &bp_inputs).unwrap());
}
