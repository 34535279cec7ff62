//! Shared pieces of sluice's cross-crate and differential tests: the generic
//! [`suite`] (one check per backend operation, run against any backend on seeded inputs)
//! and the [`Dual`] backend (two backends compared after every operation).

// A test-support crate: an operation that fails is a failed test, reported by the panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dual;
pub mod suite;

pub use dual::{Dual, DualBases, DualFr};
