//! Groth16 over BLS12-381, generic over the compute backend.
//!
//! - Circuits are written against bellpepper-core 0.2 (re-exported here), the API bellperson
//!   0.27 uses, so existing bellperson circuits prove with sluice unchanged.
//! - Setup ([`generate_random_parameters`]), proving ([`create_random_proof`] and friends,
//!   generic over [`ComputeBackend`](sluice_backend::ComputeBackend)) and verification
//!   ([`verify_proof`], [`verify_proofs_batch`], on blst's pairing).
//! - Parameters, verifying keys and proofs read and write bellperson's byte formats, so
//!   Filecoin `.params` files work, also memory-mapped ([`MappedParameters`]).
//!
//! The calls that take a circuit are for circuits over [`Fr`](sluice_field::Fr) at the root
//! (so a circuit generic over its field needs no type annotation) and, with feature
//! `blstrs`, for circuits over `blstrs::Scalar` in [`for_blstrs`].
//!
//! The prover never stores `c = <C, z>`: on the evaluation domain of a satisfied circuit
//! `c = a ∘ b`, so it is recomputed in the backend where the H computation needs it.
//!
//! # Layout
//! Folders by job over one bottom module: `r1cs` (the domain, the shape counts parameters
//! must match, the a·b = c check), `synthesis` (the constraint systems and recorded
//! matrices), `fork` (forked synthesis: independent parts of a circuit on every core), `setup`, `params` (types, formats, sources of bases), `prover`, `verifier`.

pub mod demo;
mod error;
mod fork;
mod params;
pub mod progress;
mod prover;
mod r1cs;
mod scalar_entry;
mod setup;
mod synthesis;
mod verifier;

pub use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, Namespace, SynthesisError, Variable,
};

pub use error::Groth16Error;
pub use fork::{Fork, Forked};
pub use params::keys::{Parameters, Proof, VerifyingKey};
pub use params::partly_resident::PartlyResident;
pub use params::residency::Residency;
pub use params::source::{
    Bases, EncodedPoints, G1Query, HostParameters, MappedParameters, ParameterInfo,
    ParameterSource, ResidentParameters,
};
pub use prover::config::{HMode, ProverConfig};
pub use prover::report::{PhaseTimes, ProofReport};
pub use prover::run::prove_assignment;
pub use prover::streaming::StreamingPlan;
pub use r1cs::shape::QueryLengths;
#[cfg(feature = "blstrs")]
pub use scalar_entry::for_blstrs;
pub use scalar_entry::for_fr::{
    create_proof, create_proof_streamed, create_random_proof, create_random_proof_batch,
    generate_parameters, generate_parameters_vartime, generate_random_parameters,
    generate_random_parameters_vartime,
};
pub use setup::benchmark::{generate_benchmark_parameters, CircuitShape};
pub use setup::generator::ToxicWaste;
pub use sluice_backend::{CompactVec, Storage};
pub use synthesis::assignment::ProvingAssignment;
pub use synthesis::counts::{count_constraints, Counts};
pub use synthesis::matrices::ConstraintMatrices;
pub use synthesis::options::{
    Capacity, SynthesisOptions, SynthesisProgress, Unsatisfied, PROGRESS_STEP, UNNAMED,
};
pub use verifier::{
    prepare_verifying_key, verify_proof, verify_proofs_batch, PreparedVerifyingKey,
};

/// The prover's phases on their own, for schedulers that split a proof across devices or
/// time its parts (`sluice-pipeline`, the benchmarks): H into a device buffer, the b_g2 MSM,
/// streaming H over host vectors, and a proof with its b_g2 computed elsewhere. A prover of
/// single proofs needs none of them.
pub mod phases {
    pub use crate::prover::h::compute_h;
    pub use crate::prover::msm::{b_g2_msm, DECODE_BATCH};
    pub use crate::prover::pass::{prove_pass, PassPartition};
    pub use crate::prover::run::prove_assignment_with_b_g2;
    pub use crate::prover::streaming::{compute_h_streaming, compute_h_two_vectors};
}
