//! The `ComputeBackend` trait: the boundary between the Groth16 prover and the hardware.
