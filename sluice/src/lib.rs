//! sluice: Groth16 over BLS12-381, fast on GPUs through OpenCL and correct everywhere through
//! a CPU backend. This crate is the one to depend on: it re-exports what a prover uses.
//!
//! - The Groth16 API at the top level: setup ([`generate_random_parameters`]), proving
//!   ([`create_random_proof`], [`create_random_proof_batch`], ...), verification
//!   ([`verify_proof`], [`verify_proofs_batch`]), bellperson-compatible files
//!   ([`Parameters`], [`MappedParameters`], [`VerifyingKey`], [`Proof`]) and the circuit API
//!   of bellpepper-core 0.2 ([`Circuit`], [`ConstraintSystem`], ...), the version bellperson
//!   0.27 uses.
//! - The field and group types ([`Fr`], [`G1Affine`], ...; all of them in [`field`]).
//! - Backends: the [`ComputeBackend`] trait, [`CpuBackend`], and with feature `opencl`
//!   `OpenClBackend` (all of the OpenCL crate in `opencl`).
//! - The partition [`Pipeline`] with its memory planner ([`PipelineConfig`]; the rest in
//!   [`pipeline`]).
//! - With feature `blstrs`: circuits written over `blstrs::Scalar` (as Filecoin's are)
//!   prove through the same calls, and `From`/`Into` convert sluice's [`Fr`], [`G1Affine`]
//!   and [`G2Affine`] to and from blstrs' at no cost ([`FrCompatible`]).
//!
//! `docs/PORTING.md` (in the repository) maps bellperson 0.27's entry points to these.

pub use sluice_groth16::*;

pub use sluice_backend::{BackendError, ComputeBackend, MemoryKind, MemoryTracker};
pub use sluice_backend_cpu::CpuBackend;
pub use sluice_field::{
    DecodeError, Fq, Fq2, Fr, FrCompatible, G1Affine, G1Projective, G2Affine, G2Projective,
};
pub use sluice_pipeline::{Pipeline, PipelineConfig, PipelineError, ProofHandle};

#[cfg(feature = "opencl")]
pub use sluice_backend_opencl::{DeviceSelector, OpenClBackend, OpenClConfig};

/// Randomness traits (rand_core 0.6, which ff and group use), with `OsRng`.
pub use rand_core;

/// All of `sluice-field`: fields, groups, encodings.
pub mod field {
    pub use sluice_field::*;
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
