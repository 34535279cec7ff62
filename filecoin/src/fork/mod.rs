//! Filecoin's circuits as [`Fork`](sluice::Fork)s, so a partition synthesizes on every core
//! (rust-fil-proofs synthesizes a PoRep partition on one thread): a PoRep partition is its
//! shared commitments then one part per challenge ([`PorepFork`]), a PoSt partition one part
//! per sector ([`PostFork`]). The parts are storage-proofs' own circuits of one challenge or
//! one sector, so the gadget code is theirs; joined, they are exactly the partition's circuit
//! (its constraint matrices are byte-identical, a test checks).

mod porep;
mod post;

pub use porep::PorepFork;
pub use post::PostFork;

/// A part circuit that storage-proofs refused to build, as the synthesis error a fork
/// reports (with its part's index).
fn refused(what: &str, error: impl std::fmt::Display) -> bellperson::SynthesisError {
    bellperson::SynthesisError::IoError(std::io::Error::other(format!("{what}: {error}")))
}
