//! A third-party gadget circuit: knowledge of a SHA-256 preimage, built with `bellpepper`
//! 0.2's SHA-256 gadget (as Filecoin's circuits use it) over `blstrs::Scalar`. sluice sets it
//! up and proves it; bellperson 0.27 verifies sluice's proof and proves with sluice's
//! parameters, and sluice verifies that proof.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use bellpepper::gadgets::boolean::{AllocatedBit, Boolean};
use bellpepper::gadgets::multipack;
use bellpepper::gadgets::sha256::sha256;
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar};
use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use sha2::{Digest, Sha256};
use sluice_backend_cpu::CpuBackend;
use sluice_field::FrCompatible;
use sluice_groth16 as sl;

const PREIMAGE_BYTES: usize = 32;

/// SHA-256(preimage) = the public digest, packed into field elements.
struct Sha256Preimage {
    preimage: Option<[u8; PREIMAGE_BYTES]>,
}

impl Circuit<Scalar> for Sha256Preimage {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let bits: Vec<Option<bool>> = match self.preimage {
            Some(p) => multipack::bytes_to_bits(&p).into_iter().map(Some).collect(),
            None => vec![None; PREIMAGE_BYTES * 8],
        };
        let preimage = bits
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                AllocatedBit::alloc(cs.namespace(|| format!("preimage bit {i}")), b)
                    .map(Boolean::from)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let digest = sha256(cs.namespace(|| "SHA-256(preimage)"), &preimage)?;
        multipack::pack_into_inputs(cs.namespace(|| "digest"), &digest)
    }
}

fn public_inputs(preimage: &[u8]) -> Vec<Scalar> {
    let digest = Sha256::digest(preimage);
    multipack::compute_multipacking(&multipack::bytes_to_bits(&digest))
}

#[test]
fn a_sha256_gadget_circuit_cross_verifies_with_bellperson() {
    let seed = 250;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut preimage = [0u8; PREIMAGE_BYTES];
    rng.fill_bytes(&mut preimage);
    let inputs = public_inputs(&preimage);

    let params =
        sl::for_blstrs::generate_random_parameters(Sha256Preimage { preimage: None }, &mut rng)
            .unwrap();
    let proof = sl::for_blstrs::create_random_proof(
        Sha256Preimage {
            preimage: Some(preimage),
        },
        &params,
        &mut rng,
        &CpuBackend::new(),
    )
    .unwrap();
    let pvk = sl::prepare_verifying_key(&params.vk);
    let as_fr = Scalar::as_fr_slice(&inputs);
    assert!(
        sl::verify_proof(&pvk, &proof, as_fr).unwrap(),
        "seed {seed}"
    );
    let mut other = preimage;
    other[0] ^= 1;
    let wrong = public_inputs(&other);
    assert!(!sl::verify_proof(&pvk, &proof, Scalar::as_fr_slice(&wrong)).unwrap());

    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    let bp_params = bp::Parameters::<Bls12>::read(&bytes[..], true).unwrap();
    let bp_pvk = bp::prepare_verifying_key(&bp_params.vk);
    let bp_proof = bp::Proof::<Bls12>::read(&proof.to_bytes()[..]).unwrap();
    assert!(
        bp::verify_proof(&bp_pvk, &bp_proof, &inputs).unwrap(),
        "seed {seed}"
    );
    assert!(!bp::verify_proof(&bp_pvk, &bp_proof, &wrong).unwrap());

    let theirs = bp::create_random_proof(
        Sha256Preimage {
            preimage: Some(preimage),
        },
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
    assert!(!inputs.is_empty() && inputs.iter().any(|x| !bool::from(x.is_zero())));
}

/// With the circuit's constraint matrices recorded once (from the shape alone), a proof's
/// synthesis computes the witness only; the proof is byte for byte the one a full
/// synthesis gives with the same r and s, and it verifies.
#[test]
fn recorded_matrices_give_the_same_proof() {
    use std::sync::Arc;
    let seed = 251;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut preimage = [0u8; PREIMAGE_BYTES];
    rng.fill_bytes(&mut preimage);
    let params =
        sl::for_blstrs::generate_random_parameters(Sha256Preimage { preimage: None }, &mut rng)
            .unwrap();
    let matrices =
        Arc::new(sl::ConstraintMatrices::record(Sha256Preimage { preimage: None }).unwrap());
    let (r, s) = (
        sluice_field::Fr::random(&mut rng),
        sluice_field::Fr::random(&mut rng),
    );
    let backend = CpuBackend::new();
    let circuit = || Sha256Preimage {
        preimage: Some(preimage),
    };
    let plain = sl::ProvingAssignment::synthesize(circuit()).unwrap();
    let options = sl::SynthesisOptions {
        matrices: Some(matrices),
        ..sl::SynthesisOptions::default()
    };
    let fast = sl::ProvingAssignment::synthesize_with(circuit(), &options).unwrap();
    let prove = |cs| {
        sl::prove_assignment(cs, &params, r, s, &backend, &Default::default())
            .unwrap()
            .0
    };
    let (plain, fast) = (prove(plain), prove(fast));
    assert_eq!(plain.to_bytes(), fast.to_bytes(), "seed {seed}");
    let pvk = sl::prepare_verifying_key(&params.vk);
    let inputs = public_inputs(&preimage);
    assert!(
        sl::verify_proof(&pvk, &fast, Scalar::as_fr_slice(&inputs)).unwrap(),
        "seed {seed}"
    );
}
