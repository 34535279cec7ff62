//! Forked synthesis: a circuit made of a shared prefix and independent parts, synthesized
//! on every core and joined into exactly the assignment one thread would make.
//!
//! Many large circuits are loops over independent parts that read a few shared values:
//! Filecoin's PoRep circuit proves one challenge after another against the same replica id
//! and commitments, its PoSt circuit one sector after another. A circuit author describes
//! such a circuit as a [`Fork`]: the *prefix* (the shared values, as a circuit of its own)
//! and, for each part, a circuit that synthesizes the prefix and then that part alone.
//! The whole circuit is the prefix once, then every part's rest in order:
//!
//! - [`ProvingAssignment::synthesize_forked`](crate::ProvingAssignment::synthesize_forked)
//!   synthesizes every part on its own thread (the rayon pool it runs in) and joins them:
//!   each later part's copy of the prefix is checked to hold part 0's values and dropped,
//!   its rest appended. The assignment, a and b, the densities and therefore the proof for
//!   given r and s are those of the sequential circuit (with recorded matrices too).
//! - [`Forked`] is the same circuit as a plain [`Circuit`], synthesized part after part in
//!   any constraint system (setup, recording the matrices, bellperson's): what parameters
//!   and matrices for a fork are made from.
//!
//! A part must repeat the prefix exactly first (the same allocations and constraints, in
//! the same order) and may use its variables; parts never use each other's.
//!
//! # Example
//! ```
//! use sluice_groth16::{Circuit, ConstraintSystem, Fork, Forked, SynthesisError};
//! use ff::Field;
//! use sluice_field::Fr;
//!
//! /// `x` public, then for each `k` in `ks`: `y_k = (x + k)^2`, with `y_k` public.
//! #[derive(Clone)]
//! struct Squares {
//!     x: Fr,
//!     ks: Vec<u64>,
//! }
//!
//! impl Circuit<Fr> for Squares {
//!     fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
//!         let x = cs.alloc_input(|| "x", || Ok(self.x))?;
//!         for k in self.ks {
//!             let value = (self.x + Fr::from(k)).square();
//!             let y = cs.alloc_input(|| format!("y_{k}"), || Ok(value))?;
//!             let kk = Fr::from(k);
//!             cs.enforce(
//!                 || format!("square {k}"),
//!                 |lc| lc + x + (kk, CS::one()),
//!                 |lc| lc + x + (kk, CS::one()),
//!                 |lc| lc + y,
//!             );
//!         }
//!         Ok(())
//!     }
//! }
//!
//! /// The prefix is the circuit with no `ks`; part `i` is the circuit with `ks[i]` alone.
//! impl Fork<Fr> for Squares {
//!     type Part = Squares;
//!     fn parts(&self) -> usize {
//!         self.ks.len()
//!     }
//!     fn prefix(&self) -> Result<Squares, SynthesisError> {
//!         Ok(Squares { x: self.x, ks: vec![] })
//!     }
//!     fn part(&self, index: usize) -> Result<Squares, SynthesisError> {
//!         Ok(Squares { x: self.x, ks: vec![self.ks[index]] })
//!     }
//! }
//!
//! # fn main() -> Result<(), sluice_groth16::Groth16Error> {
//! use sluice_groth16::ProvingAssignment;
//! let circuit = Squares { x: Fr::from(3), ks: vec![1, 2, 3, 4] };
//! let sequential = ProvingAssignment::synthesize(circuit.clone())?;
//! let forked = ProvingAssignment::synthesize_forked(circuit.clone(), &Default::default())?;
//! assert_eq!(forked.a(), sequential.a());
//! assert_eq!(forked.input_assignment(), sequential.input_assignment());
//! // The same circuit part after part, for setup or recording matrices:
//! let _params_circuit = Forked(circuit);
//! # Ok(())
//! # }
//! ```

mod circuit;
mod parallel;
mod rebase;

pub use circuit::{Fork, Forked};
