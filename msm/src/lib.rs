//! Pippenger multi-scalar multiplication for BLS12-381 G1 and G2 on the CPU.
#![no_std]
