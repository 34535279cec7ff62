//! Parameters for a circuit: the Groth16 setup ([`generator`]) and benchmark parameters of a
//! circuit's shape that come from no setup ([`benchmark`]).

pub(crate) mod benchmark;
pub(crate) mod generator;
