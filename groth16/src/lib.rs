//! Groth16 over BLS12-381, generic over the compute backend.
