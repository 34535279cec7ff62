//! Parameters for a circuit: the Groth16 setup ([`generator`], its variable-time tables in
//! [`vartime`]) and benchmark parameters of a circuit's shape that come from no setup
//! ([`benchmark`]).

pub(crate) mod benchmark;
pub(crate) mod generator;
pub(crate) mod vartime;
