//! Proving circuits: synthesis where the backend uploads fastest from, then the proof.
//! Generic over the circuit's scalar; the crate's root and its `blstrs` module name it.

use std::time::Instant;

use bellpepper_core::Circuit;
use ff::Field;
use rand_core::RngCore;
use rayon::prelude::*;
use sluice_backend::ComputeBackend;
use sluice_field::{Fr, FrCompatible};

use crate::error::Groth16Error;
use crate::params::keys::Proof;
use crate::params::source::ParameterSource;
use crate::prover::config::ProverConfig;
use crate::prover::run::prove_assignment;
use crate::synthesis::assignment::ProvingAssignment;
use crate::synthesis::options::Capacity;

/// [`create_proof`](crate::create_proof) for circuits over any `S`.
pub(crate) fn create_proof<S, B, C, P>(
    circuit: C,
    params: &P,
    r: Fr,
    s: Fr,
    backend: &B,
) -> Result<Proof, Groth16Error>
where
    S: FrCompatible,
    B: ComputeBackend,
    C: Circuit<S>,
    P: ParameterSource<B> + ?Sized,
{
    let capacity = Capacity::for_queries(&params.query_lengths());
    let started = Instant::now();
    let cs = ProvingAssignment::synthesize_for(circuit, capacity, backend)?;
    log_synthesis(&cs, started);
    Ok(prove_assignment(cs, params, r, s, backend, &ProverConfig::default())?.0)
}

/// Logs a synthesis at info: its size and time.
fn log_synthesis(cs: &ProvingAssignment, started: Instant) {
    log::info!(
        "synthesis: {} constraints, {} auxiliary in {:.1} ms",
        cs.num_constraints(),
        cs.aux_assignment().len(),
        started.elapsed().as_secs_f64() * 1e3
    );
}

/// [`create_random_proof`](crate::create_random_proof) for circuits over any `S`.
pub(crate) fn create_random_proof<S, B, C, P, R>(
    circuit: C,
    params: &P,
    rng: &mut R,
    backend: &B,
) -> Result<Proof, Groth16Error>
where
    S: FrCompatible,
    B: ComputeBackend,
    C: Circuit<S>,
    P: ParameterSource<B> + ?Sized,
    R: RngCore,
{
    let (r, s) = (Fr::random(&mut *rng), Fr::random(&mut *rng));
    create_proof(circuit, params, r, s, backend)
}

/// [`create_random_proof_batch`](crate::create_random_proof_batch) for circuits over any
/// `S`.
pub(crate) fn create_random_proof_batch<S, B, C, P, R>(
    circuits: Vec<C>,
    params: &P,
    rng: &mut R,
    backend: &B,
) -> Result<Vec<Proof>, Groth16Error>
where
    S: FrCompatible,
    B: ComputeBackend,
    C: Circuit<S> + Send,
    P: ParameterSource<B> + ?Sized,
    R: RngCore,
{
    let blinding: Vec<(Fr, Fr)> = circuits
        .iter()
        .map(|_| (Fr::random(&mut *rng), Fr::random(&mut *rng)))
        .collect();
    let capacity = Capacity::for_queries(&params.query_lengths());
    let assignments = circuits
        .into_par_iter()
        .map(|c| {
            let started = Instant::now();
            let cs = ProvingAssignment::synthesize_for(c, capacity, backend)?;
            log_synthesis(&cs, started);
            Ok(cs)
        })
        .collect::<Result<Vec<_>, Groth16Error>>()?;
    assignments
        .into_iter()
        .zip(blinding)
        .map(|(cs, (r, s))| {
            Ok(prove_assignment(cs, params, r, s, backend, &ProverConfig::default())?.0)
        })
        .collect()
}
