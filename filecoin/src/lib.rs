//! Filecoin's proving calls on sluice: PoRep C2 from a C1 output, Window and Winning PoSt
//! and SnapDeals updates from vanilla proofs, taking and returning what
//! [`filecoin-proofs-api`](filecoin_proofs_api) does, with Filecoin's parameter files.
//!
//! ```no_run
//! use sluice_filecoin::{FilecoinConfig, Prover};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let prover = Prover::cpu(FilecoinConfig::default().with_env_overrides()?)?;
//! // The JSON lotus-bench's `prove` reads, decoded (see `c1::read_commit2_input`).
//! let input = sluice_filecoin::c1::read_commit2_input(std::fs::File::open("c1.json")?)?;
//! let prover_id = [0u8; 32];
//! let sector_id = input.sector_id.ok_or("the file gives no sector number")?;
//! let output = prover.seal_commit_phase2(input.phase1_output, prover_id, sector_id)?;
//! println!("{}", hex::encode(&output.proof));
//! # Ok(())
//! # }
//! ```
//!
//! What differs from filecoin-proofs: circuits are filecoin-proofs' own (built by
//! storage-proofs from the vanilla proofs), proved by sluice's pipeline; the parameters stay
//! resident between proofs of a kind; PoSt partitions take the device before C2 partitions;
//! where a test sector size's parameters are missing they are generated (loudly) rather than
//! refused. See `docs/FILECOIN.md`.

pub mod c1;
pub mod circuits;
mod config;
mod error;
pub mod fork;
mod kind;
mod params;
mod prover;

pub use config::{FilecoinConfig, GenerateParameters};
pub use error::FilecoinError;
pub use kind::ProofKind;
pub use prover::engine::Prover;

/// The vocabulary of the calls (registered proof types, C1 output, vanilla proof bytes).
pub use filecoin_proofs_api;
