//! The crate's error type.

use std::error::Error as StdError;
use std::path::PathBuf;

use sluice::{Groth16Error, PipelineError};

/// What went wrong in a Filecoin proving call; every variant names the proof kind, file or
/// input it is about.
#[derive(Debug, thiserror::Error)]
pub enum FilecoinError {
    /// A parameter file is not in the cache and generating it was not allowed.
    #[error(
        "no parameters for {kind} at {path}: fetch Filecoin's parameters into the cache \
         (FIL_PROOFS_PARAMETER_CACHE) or allow generating test parameters"
    )]
    MissingParameters {
        /// The proof kind.
        kind: String,
        /// Where filecoin-proofs looks for the file.
        path: PathBuf,
    },
    /// A verifying key is in the cache without its parameters: parameters generated now
    /// would not match it, so none are.
    #[error(
        "{vk} is in the parameter cache but {params} is not: generating new parameters would \
         not match that verifying key; fetch the parameters or remove the verifying key"
    )]
    OrphanVerifyingKey {
        /// The verifying key file present.
        vk: PathBuf,
        /// The parameter file missing.
        params: PathBuf,
    },
    /// A parameter or verifying-key file could not be read or written.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A parameter file is damaged or not the parameters of this proof kind.
    #[error("{path} is damaged or not the {kind} parameters: {source}")]
    DamagedParameters {
        /// The proof kind.
        kind: String,
        /// The file.
        path: PathBuf,
        /// What the reader refused.
        #[source]
        source: Groth16Error,
    },
    /// A constraint-matrices file in the cache is damaged (delete it: it is recorded again).
    #[error("{path} is damaged or not the {kind} constraint matrices (delete it to record them again): {source}")]
    DamagedMatrices {
        /// The proof kind.
        kind: String,
        /// The file.
        path: PathBuf,
        /// What the reader refused.
        #[source]
        source: Groth16Error,
    },
    /// The parameter file's verifying key differs from the `.vk` file beside it.
    #[error("the verifying key in {params} differs from {vk}: the cache holds a mismatched pair")]
    MismatchedVerifyingKey {
        /// The parameter file.
        params: PathBuf,
        /// The verifying-key file.
        vk: PathBuf,
    },
    /// The inputs are not a valid request (wrong counts, zero commitments, undecodable
    /// vanilla proofs); the message says which input.
    #[error("invalid input: {0}")]
    Input(String),
    /// filecoin-proofs or storage-proofs refused something (setting up the circuit,
    /// decoding a commitment, aggregating, verifying).
    #[error("{what}: {source}")]
    Filecoin {
        /// The step that failed.
        what: &'static str,
        /// filecoin-proofs' error.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
    /// Setting up the parameters or a pipeline failed.
    #[error("{kind}: {source}")]
    Setup {
        /// The proof kind.
        kind: String,
        /// The cause.
        #[source]
        source: PipelineError,
    },
    /// Proving failed (a partition's synthesis or device work); the source names the
    /// partition.
    #[error("proving {kind}: {source}")]
    Proving {
        /// The proof kind.
        kind: String,
        /// The cause.
        #[source]
        source: PipelineError,
    },
    /// Generating test parameters failed.
    #[error("generating {kind} parameters: {source}")]
    Generating {
        /// The proof kind.
        kind: String,
        /// The cause.
        #[source]
        source: Groth16Error,
    },
    /// The proof was made but filecoin-proofs' verifier rejects it; it is not returned.
    #[error(
        "the {kind} proof does not verify with filecoin-proofs' verifier: the inputs do not \
         match what the vanilla proofs prove (or the parameters do not match the verifying key)"
    )]
    Rejected {
        /// The proof kind.
        kind: String,
    },
}

impl FilecoinError {
    /// Wraps one of filecoin-proofs' errors with the step that failed.
    pub(crate) fn filecoin(what: &'static str) -> impl FnOnce(anyhow::Error) -> FilecoinError {
        move |e| FilecoinError::Filecoin {
            what,
            source: e.into(),
        }
    }
}
