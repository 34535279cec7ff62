//! sluice: Groth16 over BLS12-381, fast on GPUs through OpenCL and correct everywhere through
//! a CPU backend. This crate is the one to depend on: it re-exports what a prover uses,
//! grouped below by what a user does; each group's crate is whole under a module of its own
//! ([`field`], [`groth16`], [`backend`], [`pipeline`], `opencl`).
//!
//! `docs/PORTING.md` (in the repository) maps bellperson 0.27's entry points to these.
//!
//! # Circuits, setup, proving and verifying
//! Circuits are written against bellpepper-core 0.2 ([`Circuit`], [`ConstraintSystem`],
//! [`LinearCombination`], [`Variable`], [`Index`], [`Namespace`], [`SynthesisError`]), the API
//! bellperson 0.27 uses; [`demo`] has the circuits the examples and benchmarks use.
//! Setup: [`generate_random_parameters`] (or [`generate_parameters`] with a
//! [`ToxicWaste`]; [`generate_benchmark_parameters`] makes parameters of a [`CircuitShape`]
//! that come from no setup, for measuring); proving: [`create_random_proof`], [`create_proof`],
//! [`create_random_proof_batch`]; verifying: [`prepare_verifying_key`], [`verify_proof`],
//! [`verify_proofs_batch`] (a [`PreparedVerifyingKey`]). These take circuits over [`Fr`], so
//! a circuit generic over its field needs no type annotation; circuits over
//! `blstrs::Scalar` (Filecoin's) go through the same calls in `for_blstrs` (feature `blstrs`).
//!
//! ```
//! use sluice::{create_random_proof, generate_random_parameters, prepare_verifying_key};
//! use sluice::{demo::MimcLike, rand_core::OsRng, verify_proof, CpuBackend, Fr};
//!
//! let params = generate_random_parameters(MimcLike::filling_domain(6, None), &mut OsRng)?;
//! let x = Fr::from(7u64);
//! let circuit = MimcLike::filling_domain(6, Some(x));
//! let rounds = circuit.rounds;
//! let proof = create_random_proof(circuit, &params, &mut OsRng, &CpuBackend::new())?;
//! let pvk = prepare_verifying_key(&params.vk);
//! assert!(verify_proof(&pvk, &proof, &MimcLike::public_inputs(x, rounds))?);
//! # Ok::<(), sluice::Groth16Error>(())
//! ```
//!
//! # Proving in steps
//! Synthesize once ([`ProvingAssignment`] with [`SynthesisOptions`], recorded
//! [`ConstraintMatrices`] for circuits of one shape), then prove as a [`ProverConfig`] says
//! ([`prove_assignment`]: H in memory or streamed, MSMs in batches) and read what the proof
//! held and where its time went ([`ProofReport`]); or overlap the witness's MSMs with its
//! synthesis ([`create_proof_streamed`]). Synthesis takes a [`Capacity`], a [`Storage`] and a
//! [`SynthesisProgress`] callback and names a failed constraint ([`Unsatisfied`]); H runs as
//! [`HMode`] says ([`StreamingPlan`] where the device is small); [`PhaseTimes`] is the
//! report's clock. Long work reports to the [`progress`] hook.
//!
//! ```
//! use sluice::{demo::MimcLike, prove_assignment, CpuBackend, Fr, ProverConfig};
//! use sluice::{generate_random_parameters, rand_core::OsRng, ConstraintMatrices};
//! use sluice::{ProvingAssignment, SynthesisOptions};
//! use std::sync::Arc;
//!
//! let shape = MimcLike::<Fr>::filling_domain(6, None);
//! let params = generate_random_parameters(shape.clone(), &mut OsRng)?;
//! let options = SynthesisOptions {
//!     matrices: Some(Arc::new(ConstraintMatrices::record(shape)?)),
//!     ..SynthesisOptions::default()
//! };
//! let circuit = MimcLike::filling_domain(6, Some(Fr::from(3u64)));
//! let cs = ProvingAssignment::synthesize_with(circuit, &options)?;
//! let (r, s) = (Fr::from(11u64), Fr::from(13u64)); // draw these from a CSPRNG
//! let config = ProverConfig::default();
//! let (_proof, report) = prove_assignment(cs, &params, r, s, &CpuBackend::new(), &config)?;
//! println!("device peak: {:.2} vectors", report.device_peak_vectors());
//! # Ok::<(), sluice::Groth16Error>(())
//! ```
//!
//! # Files
//! bellperson's byte formats: [`Parameters`], [`VerifyingKey`], [`Proof`];
//! [`MappedParameters`] maps a Filecoin `.params` file; [`ResidentParameters`] keeps the
//! bases in a backend for many proofs. Proofs take any [`ParameterSource`]; its
//! [`ParameterInfo`] gives the verifying key and the [`QueryLengths`].
//!
//! ```
//! use sluice::{demo::MimcLike, generate_random_parameters, rand_core::OsRng, Fr, Parameters};
//!
//! let params = generate_random_parameters(MimcLike::<Fr>::filling_domain(4, None), &mut OsRng)?;
//! let mut bytes = Vec::new();
//! params.write(&mut bytes)?;
//! let read = Parameters::read(&bytes[..], true)?; // `true`: check every point's subgroup
//! assert_eq!(read.vk, params.vk);
//! # Ok::<(), sluice::Groth16Error>(())
//! ```
//!
//! # Backends
//! Every heavy operation goes through a [`ComputeBackend`]: [`CpuBackend`] everywhere, and
//! with feature `opencl` `OpenClBackend` on GPUs (configured by `OpenClConfig`). Memory is
//! counted by a [`MemoryTracker`] per [`MemoryKind`]; failures are [`BackendError`]s.
//!
//! ```
//! use sluice::{ComputeBackend, CpuBackend, MemoryKind};
//!
//! let backend = CpuBackend::new();
//! println!("{} holds {} device bytes", backend.info().name,
//!          backend.tracker().current(MemoryKind::Device));
//! ```
//!
//! # Many proofs
//! A [`Pipeline`] proves the partitions of many proofs on one or more backends, with its
//! concurrency planned from host and device memory budgets ([`PipelineConfig`]); each
//! submitted proof is a [`ProofHandle`], and failures are [`PipelineError`]s.
//!
//! ```
//! use sluice::{demo::MimcLike, generate_random_parameters, rand_core::OsRng};
//! use sluice::{CpuBackend, Fr, Pipeline, PipelineConfig};
//!
//! let params = generate_random_parameters(MimcLike::<Fr>::filling_domain(5, None), &mut OsRng)?;
//! let params = std::sync::Arc::new(params);
//! let pipeline = Pipeline::new(params, vec![CpuBackend::new()], &PipelineConfig::default())?;
//! let partitions = (1..=2u64).map(|x| MimcLike::filling_domain(5, Some(Fr::from(x)))).collect();
//! let (proofs, _reports) = pipeline.submit(partitions, &mut OsRng)?.wait()?;
//! assert_eq!(proofs.len(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Field and group types
//! [`Fr`], [`Fq`], [`Fq2`], [`G1Affine`], [`G1Projective`], [`G2Affine`], [`G2Projective`]
//! (ff/group 0.13), their encodings' [`DecodeError`], and [`FrCompatible`], the scalars a
//! circuit may be written over. With feature `blstrs`, `From`/`Into` convert sluice's and
//! blstrs' scalars and affine points at no cost, and public inputs convert with no copy
//! (`FrCompatible::as_fr_slice`, in scope with `use sluice::FrCompatible`).

// Circuits.
pub use sluice_groth16::demo;
pub use sluice_groth16::{
    count_constraints, Circuit, ConstraintSystem, Counts, Fork, Forked, Index, LinearCombination,
    Namespace, SynthesisError, Variable,
};
// Setup.
pub use sluice_groth16::{
    generate_benchmark_parameters, generate_parameters, generate_parameters_vartime,
    generate_random_parameters, generate_random_parameters_vartime, CircuitShape, ToxicWaste,
};
// Proving.
#[cfg(feature = "blstrs")]
pub use sluice_groth16::for_blstrs;
pub use sluice_groth16::progress;
pub use sluice_groth16::{
    create_proof, create_proof_streamed, create_random_proof, create_random_proof_batch,
    prove_assignment, Capacity, ConstraintMatrices, Groth16Error, HMode, PhaseTimes, ProofReport,
    ProverConfig, ProvingAssignment, Storage, StreamingPlan, SynthesisOptions, SynthesisProgress,
    Unsatisfied,
};
// Verifying.
pub use sluice_groth16::{
    prepare_verifying_key, verify_proof, verify_proofs_batch, PreparedVerifyingKey,
};
// Files and parameter sources.
pub use sluice_groth16::{
    MappedParameters, ParameterInfo, ParameterSource, Parameters, Proof, QueryLengths,
    ResidentParameters, VerifyingKey,
};
// Backends.
pub use sluice_backend::{BackendError, ComputeBackend, MemoryKind, MemoryTracker};
pub use sluice_backend_cpu::CpuBackend;
// Many proofs.
pub use sluice_pipeline::{Pipeline, PipelineConfig, PipelineError, ProofHandle};
// Field and group types.
pub use sluice_field::{
    DecodeError, Fq, Fq2, Fr, FrCompatible, G1Affine, G1Projective, G2Affine, G2Projective,
};

#[cfg(feature = "opencl")]
pub use sluice_backend_opencl::{DeviceSelector, OpenClBackend, OpenClConfig};

/// Randomness traits (rand_core 0.6, which ff and group use), with `OsRng`.
pub use rand_core;

/// All of `sluice-field`: fields, groups, encodings.
pub mod field {
    pub use sluice_field::*;
}

/// All of `sluice-groth16`: besides the above, the parameter sources' plumbing for backend
/// authors and the prover's phases for schedulers (`phases`).
pub mod groth16 {
    pub use sluice_groth16::*;
}

/// All of `sluice-backend`: the backend trait, buffers, memory accounting.
pub mod backend {
    pub use sluice_backend::*;
}

/// All of `sluice-backend-opencl`: devices, configuration, kernel cache.
#[cfg(feature = "opencl")]
pub mod opencl {
    pub use sluice_backend_opencl::*;
}

/// All of `sluice-pipeline`: the pipeline, its plan, budgets and reports.
pub mod pipeline {
    pub use sluice_pipeline::*;
}

// `sluice/README.md` is a link to the repository's README (cargo packages its text), so the
// path holds both in the workspace and in the published crate.
/// The README's "Using it" example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
