//! [`PipelineError`]: why the pipeline could not be built or a proof failed.

use sluice_backend::BackendError;
use sluice_groth16::Groth16Error;

/// Why the pipeline could not be built or a proof failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    /// A partition failed; its proof fails with it.
    #[error("partition {index} failed: {source}")]
    Partition {
        /// The partition's index within its proof.
        index: usize,
        /// The cause.
        source: Groth16Error,
    },
    /// A partition's synthesis panicked (a bug in the circuit); its proof fails.
    #[error("partition {index} panicked during synthesis: {message}")]
    PartitionPanicked {
        /// The partition's index within its proof.
        index: usize,
        /// The panic message.
        message: String,
    },
    /// The proof was cancelled through its handle.
    #[error("the proof was cancelled")]
    Cancelled,
    /// The resident parameters alone exceed the device budget.
    #[error("the parameters take {params} device bytes, more than the device budget of {budget}")]
    ParametersDoNotFit {
        /// Device bytes of the parameters.
        params: u64,
        /// The device budget.
        budget: u64,
    },
    /// The device budget left next to the parameters cannot hold one partition's H.
    #[error("{budget} device bytes cannot hold one partition's H computation: {source}")]
    DeviceBudgetTooSmall {
        /// Device bytes left for a partition.
        budget: u64,
        /// What did not fit.
        source: Box<Groth16Error>,
    },
    /// The host budget cannot hold one partition.
    #[error("the host budget of {budget} bytes ({fixed} of them fixed) cannot hold one partition of {partition} bytes")]
    HostBudgetTooSmall {
        /// The host budget.
        budget: u64,
        /// Bytes held regardless of partitions.
        fixed: u64,
        /// Bytes one partition holds.
        partition: u64,
    },
    /// An environment override is not a value of its kind (a whole number, or one of the
    /// names its documentation lists).
    #[error("environment override {name}={value:?} is not a valid value")]
    BadOverride {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
    },
    /// No backend was given.
    #[error("the pipeline needs at least one backend")]
    NoDevices,
    /// No host budget was given and the machine's available memory could not be read.
    #[error("cannot read the machine's available memory (/proc/meminfo); set host_budget_bytes")]
    UnknownHostMemory,
    /// Setting up the parameters failed.
    #[error("setup: {0}")]
    Setup(#[from] Groth16Error),
    /// A backend failed outside any partition.
    #[error("backend: {0}")]
    Backend(#[from] BackendError),
    /// The pipeline stopped (its threads exited) before the proof completed.
    #[error("the pipeline shut down before the proof completed")]
    Closed,
}
