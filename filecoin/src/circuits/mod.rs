//! Real Filecoin circuits of a chosen size, for benchmarks: a PoRep partition
//! (storage-proofs-porep's [`StackedCircuit`](storage_proofs_porep::stacked::StackedCircuit))
//! of any number of challenges and a Window PoSt partition
//! (storage-proofs-post's [`FallbackPoStCircuit`](storage_proofs_post::fallback::FallbackPoStCircuit))
//! of any number of sectors, built from small sectors replicated or generated on the spot.
//!
//! The circuits are rust-fil-proofs' own, made by its public API the way its circuit tests
//! make them (`storage-proofs-porep`'s `tests/stacked_circuit.rs`, and the PoSt test of
//! `tests/ecosystem`): only the sector is small. What a partition's size depends on (the
//! challenges of a PoRep partition, the sectors of a PoSt partition) is chosen freely, so a
//! circuit can fill a domain of 2^k: [`porep_challenges_for_domain`] and
//! [`post_sectors_for_domain`] pick the count.
//!
//! ```no_run
//! use sluice_filecoin::circuits;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut rng = rand::thread_rng();
//! // The largest PoRep partition of a 2^24 domain: 13 challenges, about 15.6M constraints.
//! let challenges = circuits::porep_challenges_for_domain(24);
//! let blank = circuits::porep_blank(challenges)?;
//! // Test parameters: whoever runs the setup can forge proofs.
//! let params = sluice::for_blstrs::generate_random_parameters(blank, &mut rng)?;
//! let circuit = circuits::porep(challenges, &mut rng)?;
//! let proof = sluice::for_blstrs::create_random_proof(
//!     circuit,
//!     &params,
//!     &mut rng,
//!     &sluice::CpuBackend::new(),
//! )?;
//! # let _ = proof;
//! # Ok(())
//! # }
//! ```

mod count;
mod porep;
mod post;
mod scratch;

pub use porep::{
    porep, porep_blank, porep_challenges_for_domain, porep_constraints, porep_fork_with_inputs,
    porep_public_params, porep_with_inputs, PorepCircuit, PorepForkCircuit, PorepTree,
    POREP_LAYERS, POREP_NODES,
};
pub use post::{
    post, post_blank, post_constraints, post_public_params, post_sectors_for_domain,
    post_with_inputs, PostCircuit, PostTree, POST_LEAVES, WINDOW_POST_CHALLENGES,
};

/// A circuit with the public inputs its proof verifies against (storage-proofs'
/// `generate_public_inputs`, the constant one left out, as verifiers take them).
pub struct Instance<C> {
    /// The circuit, its witness filled in.
    pub circuit: C,
    /// Its public inputs.
    pub inputs: Vec<blstrs::Scalar>,
}
