//! Shared helpers for sluice's cross-crate and differential tests.
