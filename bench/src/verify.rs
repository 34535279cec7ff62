//! The `verify` and `verify-batch` rows: real proofs (a real setup, so they verify) of a
//! circuit with a chosen number of public inputs, verified by sluice and, under `--compare`,
//! by bellperson from the same bytes. Host work only, so these rows run once per run, not
//! per backend.
//!
//! A verification takes about a millisecond, so each timed run is [`CALLS`] calls and
//! reports their mean.

use std::time::Duration;

use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend_cpu::CpuBackend;
use sluice_field::Fr;
use sluice_groth16::{
    create_random_proof, generate_random_parameters, prepare_verifying_key, verify_proof,
    verify_proofs_batch, Circuit, ConstraintSystem, Proof, SynthesisError, VerifyingKey,
};

/// Calls per timed run.
pub const CALLS: u32 = 16;

/// Public inputs of each proof of a `verify-batch` row.
pub const BATCH_INPUTS: usize = 4;

/// `n` public inputs x_i, each squared into an auxiliary variable: the smallest circuit
/// with that many inputs in use.
#[derive(Clone)]
pub struct SquaredInputs<S>(pub Vec<Option<S>>);

impl<S: ff::PrimeField> Circuit<S> for SquaredInputs<S> {
    fn synthesize<CS: ConstraintSystem<S>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        for (i, x) in self.0.into_iter().enumerate() {
            let missing = || SynthesisError::AssignmentMissing;
            let xi = cs.alloc_input(|| format!("x{i}"), || x.ok_or_else(missing))?;
            let square = x.map(|x| x.square());
            let yi = cs.alloc(|| format!("y{i}"), || square.ok_or_else(missing))?;
            cs.enforce(
                || format!("x{i}^2"),
                |lc| lc + xi,
                |lc| lc + xi,
                |lc| lc + yi,
            );
        }
        Ok(())
    }
}

/// What a verify row verifies: a key and proofs with their inputs, all of them valid.
pub struct Fixture {
    /// The verifying key.
    pub vk: VerifyingKey,
    /// The proofs.
    pub proofs: Vec<Proof>,
    /// Each proof's public inputs.
    pub inputs: Vec<Vec<Fr>>,
}

impl Fixture {
    /// `proofs` proofs with `inputs` public inputs each, from a setup seeded by `seed`.
    pub fn new(inputs: usize, proofs: usize, seed: u64) -> Result<Self, String> {
        let e = |e: sluice_groth16::Groth16Error| e.to_string();
        let mut rng = ChaCha20Rng::seed_from_u64(seed ^ ((inputs as u64) << 32) ^ proofs as u64);
        let params = generate_random_parameters(SquaredInputs::<Fr>(vec![None; inputs]), &mut rng)
            .map_err(e)?;
        let backend = CpuBackend::new();
        let mut all = Vec::with_capacity(proofs);
        let mut all_inputs = Vec::with_capacity(proofs);
        for _ in 0..proofs {
            let x: Vec<Fr> = (0..inputs).map(|_| Fr::random(&mut rng)).collect();
            let circuit = SquaredInputs(x.iter().copied().map(Some).collect());
            all.push(create_random_proof(circuit, &params, &mut rng, &backend).map_err(e)?);
            all_inputs.push(x);
        }
        Ok(Fixture {
            vk: params.vk,
            proofs: all,
            inputs: all_inputs,
        })
    }

    /// For the `verify` row of 2^log inputs.
    pub fn single(log: u32, seed: u64) -> Result<Self, String> {
        Self::new(1 << log, 1, seed)
    }

    /// For the `verify-batch` row of 2^log proofs.
    pub fn batch(log: u32, seed: u64) -> Result<Self, String> {
        Self::new(BATCH_INPUTS, 1 << log, seed)
    }
}

/// The runner's timing loop over `CALLS` calls of `f` per run, as the mean per call;
/// every call must say the proofs are valid.
pub fn time_calls(
    reps: usize,
    mut f: impl FnMut() -> Result<bool, String>,
) -> Result<Vec<Duration>, String> {
    let times = crate::time(&CpuBackend::new(), reps, || {
        for _ in 0..CALLS {
            if !f()? {
                return Err("a valid proof did not verify".into());
            }
        }
        Ok(())
    })?;
    Ok(times.into_iter().map(|t| t / CALLS).collect())
}

/// sluice's `verify` row: one proof with 2^log public inputs, the key prepared beforehand.
pub fn sluice_verify(log: u32, seed: u64, reps: usize) -> Result<Vec<Duration>, String> {
    let f = Fixture::single(log, seed)?;
    let pvk = prepare_verifying_key(&f.vk);
    time_calls(reps, || {
        verify_proof(&pvk, &f.proofs[0], &f.inputs[0]).map_err(|e| e.to_string())
    })
}

/// sluice's `verify-batch` row: 2^log proofs in one batch.
pub fn sluice_verify_batch(log: u32, seed: u64, reps: usize) -> Result<Vec<Duration>, String> {
    let f = Fixture::batch(log, seed)?;
    let pvk = prepare_verifying_key(&f.vk);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    time_calls(reps, || {
        verify_proofs_batch(&pvk, &mut rng, &f.proofs, &f.inputs).map_err(|e| e.to_string())
    })
}
