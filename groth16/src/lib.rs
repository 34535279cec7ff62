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
//! The prover never stores `c = <C, z>`: on the evaluation domain of a satisfied circuit
//! `c = a ∘ b`, so it is recomputed in the backend where the H computation needs it.

mod assignment;
pub mod demo;
mod error;
mod generator;
mod io;
mod keygen;
mod matrices;
mod pairing;
mod params;
pub mod progress;
mod prover;
mod source;
mod streaming;
mod verifier;
mod witness;

pub use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, Namespace, SynthesisError, Variable,
};

pub use assignment::{
    Capacity, ProvingAssignment, SynthesisOptions, SynthesisProgress, Unsatisfied, PROGRESS_STEP,
    UNNAMED,
};
pub use error::Groth16Error;
pub use generator::{
    generate_benchmark_parameters, generate_parameters, generate_random_parameters, CircuitShape,
    ToxicWaste,
};
pub use keygen::{Column, KeypairAssembly};
pub use matrices::ConstraintMatrices;
pub use params::{Parameters, Proof, VerifyingKey};
pub use prover::{
    b_g2_msm, compute_h, create_proof, create_proof_streamed, create_proof_streamed_in_chunks,
    create_random_proof, create_random_proof_batch, prove_assignment, prove_assignment_with, HMode,
    PhaseTimes, ProofReport, ProverConfig, DECODE_BATCH,
};
pub use sluice_backend::{CompactVec, Storage};
pub use source::{
    Bases, EncodedPoints, G1Query, HostParameters, MappedParameters, ParameterInfo,
    ParameterSource, QueryLengths, ResidentParameters,
};
pub use streaming::{compute_h_streaming, compute_h_two_vectors, HostVector, StreamingPlan};
pub use verifier::{
    prepare_verifying_key, verify_proof, verify_proofs_batch, PreparedVerifyingKey,
};
