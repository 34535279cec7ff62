//! The partition pipeline and its memory planner.
//!
//! A Filecoin-style proof is several partitions, each a large circuit. The pipeline
//! synthesizes partitions on CPU worker threads, runs their H computation and G1 MSMs in
//! order on each device (several devices are used when given), computes the b_g2 MSM on the
//! CPU right after synthesis (overlapped with the device's work on earlier partitions), and
//! synthesizes the next partitions while the devices work.
//!
//! It never admits more partitions than its budgets hold. The [`MemoryPlan`] sizes
//! everything from the circuit shape and the budgets (defaults from the machine:
//! `MemAvailable` and each backend's [`memory_info`](sluice_backend::ComputeBackend::memory_info));
//! asking for more workers than fit clamps, with a logged warning saying why, instead of
//! getting the process OOM-killed. The plan is enforced, not only computed: a partition
//! reserves its host bytes in a budget tracker before its synthesis starts and waits while
//! the budget is full; its device work runs under the device tracker's limit.
//!
//! A failed partition fails its proof with the partition's index and cause; the pipeline
//! keeps serving other proofs; every partition is accounted for (proved, failed, or
//! cancelled because its proof already failed).

mod budget;
mod config;
mod pipeline;
mod planner;

pub use config::{machine_host_available_bytes, G2Placement, PipelineConfig};
pub use pipeline::{PartitionReport, Pipeline, PipelineStats, ProofHandle};
pub use planner::{HModeChoice, MemoryPlan, PartitionFootprint, PlanInput};

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
    /// An environment override is not a number.
    #[error("environment override {name}={value:?} is not a whole number")]
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
