//! Synthesis: running a circuit against one of this crate's constraint systems.
//!
//! - [`assignment`]: the prover's [`ProvingAssignment`] (a, b, the witness, the densities);
//! - [`witness`]: the witness-only synthesis used with recorded [`matrices`];
//! - [`keypair`]: setup's column-form assembly;
//! - [`matrices`]: recording a circuit's matrices once and evaluating a and b from them;
//! - [`system`]: the one bridge from bellpepper's `ConstraintSystem` that all four use, and
//!   [`convention`]: the one order (the constant one, the circuit, the input constraints)
//!   they synthesize in;
//! - [`options`]: what a synthesis is asked for; [`combination`]: evaluating `<lc, z>`;
//!   [`counts`]: counting a circuit's variables and constraints, storing nothing;
//! - [`join`]: joining parts synthesized apart (forked synthesis) into the whole.

pub(crate) mod assignment;
pub(crate) mod combination;
pub(crate) mod convention;
pub(crate) mod counts;
pub(crate) mod join;
pub(crate) mod keypair;
pub(crate) mod matrices;
pub(crate) mod options;
pub(crate) mod system;
pub(crate) mod witness;
