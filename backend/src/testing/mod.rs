//! Tools for testing backends against each other, behind the `testing` feature: the
//! [`Dual`] backend runs every operation on two backends and compares their results, so a
//! new backend (or a change to one) can run whole proofs checked step by step against a
//! reference, as risc0 ships its `DualHal`.

mod dual;

pub use dual::{Dual, DualBases, DualFr};
