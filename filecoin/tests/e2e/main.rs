//! Filecoin's proofs end to end: sectors sealed by filecoin-proofs, proved by sluice (on the
//! backend `SLUICE_FILECOIN_TEST_BACKEND` names, CPU by default), verified by filecoin-proofs.
//! One binary, so the GPU bundle carries it once.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

mod support;

mod bytes;
mod c2;
mod forks;
mod post;
mod update;
