//! A circuit's constraint matrices, recorded once, so that each proof's synthesis computes
//! only the witness.
//!
//! Most of a gadget circuit's synthesis is spent building linear combinations (sorted
//! inserts, allocations, merges) that are the same in every proof of that circuit. With
//! [`ConstraintMatrices`] recorded once (by a synthesis without a witness), a proof's
//! synthesis runs the circuit with a constraint system that records the assignment and
//! never calls the `enforce` closures, then evaluates `a = A z`, `b = B z` and `c = C z`
//! from the matrices on all cores, checking `a b = c` per constraint. The assignment and
//! the densities are exactly those a full synthesis gives (tested on every demo circuit and
//! on bellpepper's SHA-256 gadget), so the proof bytes do not change.
//!
//! A circuit whose counts differ from the matrices' is refused
//! ([`Groth16Error::MatricesMismatch`]); one of the same counts but other constraints fails
//! the satisfaction check (for a real circuit's witness), so matrices of the wrong circuit
//! never give a silently wrong proof.

mod evaluate;
mod file;
mod record;
mod rows;
#[cfg(test)]
mod tests;

pub(crate) use evaluate::{evaluate_early, Evaluation};
pub use record::ConstraintMatrices;
