//! The facts about a circuit's R1CS that synthesis, setup, the matrices and the prover all
//! use: the evaluation domain, the shape counts parameters must match, and the a·b = c check.
//! Every other module may import this one; it imports none of them but the error type.

pub(crate) mod domain;
pub(crate) mod satisfy;
pub(crate) mod shape;
