//! `ComputeBackend` on the CPU.
