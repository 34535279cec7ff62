//! Shared pieces of sluice's cross-crate and differential tests: the generic
//! [`suite`] (one check per backend operation, run against any backend on seeded inputs).
//! The `Dual` backend they run whole proofs under (two backends compared after every
//! operation) ships in `sluice_backend::testing`.

// A test-support crate: an operation that fails is a failed test, reported by the panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod suite;
