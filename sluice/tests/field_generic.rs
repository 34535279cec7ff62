//! Circuits generic over their field, as bellperson users write them
//! (`impl<F: PrimeField> Circuit<F> for C`), set up and prove with no type annotation: the
//! calls at the crate's root take circuits over `Fr`, so the field is inferred as bellperson
//! infers its engine from the parameters. Each test is a port changed only in its crate
//! names and its prover call (which takes a backend).

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use bellpepper::gadgets::boolean::{AllocatedBit, Boolean};
use bellpepper::gadgets::multipack;
use bellpepper::gadgets::sha256::sha256;
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use ff::{PrimeField, PrimeFieldBits};
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use sha2::{Digest, Sha256};
use sluice::{create_random_proof, generate_random_parameters, prepare_verifying_key};
use sluice::{verify_proof, CpuBackend, Fr};

/// The README's example before the facade named the field (it stopped compiling with
/// E0283 then): the demo circuit is generic over its field.
#[test]
fn the_old_readme_example_compiles_and_verifies() -> Result<(), Box<dyn std::error::Error>> {
    use sluice::demo::MimcLike;
    let mut rng = ChaCha20Rng::seed_from_u64(251);
    let params = generate_random_parameters(MimcLike::filling_domain(10, None), &mut rng)?;
    let backend = CpuBackend::new();
    let x = Fr::from(3u64);
    let circuit = MimcLike::filling_domain(10, Some(x));
    let rounds = circuit.rounds;
    let proof = create_random_proof(circuit, &params, &mut rng, &backend)?;
    assert!(verify_proof(
        &prepare_verifying_key(&params.vk),
        &proof,
        &MimcLike::public_inputs(x, rounds)
    )?);
    Ok(())
}

const PREIMAGE_BYTES: usize = 32;

/// Knowledge of a SHA-256 preimage with bellpepper's gadget, written for any field.
struct Sha256Preimage {
    preimage: Option<[u8; PREIMAGE_BYTES]>,
}

impl<F: PrimeField + PrimeFieldBits> Circuit<F> for Sha256Preimage {
    fn synthesize<CS: ConstraintSystem<F>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
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

#[test]
fn a_field_generic_sha256_circuit_proves_with_no_annotation() {
    let seed = 252;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut preimage = [0u8; PREIMAGE_BYTES];
    rng.fill_bytes(&mut preimage);
    let params = generate_random_parameters(Sha256Preimage { preimage: None }, &mut rng).unwrap();
    let circuit = Sha256Preimage {
        preimage: Some(preimage),
    };
    let proof = create_random_proof(circuit, &params, &mut rng, &CpuBackend::new()).unwrap();
    let digest = Sha256::digest(preimage);
    let inputs: Vec<Fr> = multipack::compute_multipacking(&multipack::bytes_to_bits(&digest));
    let pvk = prepare_verifying_key(&params.vk);
    assert!(verify_proof(&pvk, &proof, &inputs).unwrap(), "seed {seed}");
    let mut wrong = inputs.clone();
    wrong[0] += Fr::from(1u64);
    assert!(!verify_proof(&pvk, &proof, &wrong).unwrap(), "seed {seed}");
}
