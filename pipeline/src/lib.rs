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
mod device_probe;
mod device_worker;
mod error;
mod gate;
mod pipeline;
mod planner;
mod proof;
mod sync;
mod synthesis_worker;

pub use config::{machine_host_available_bytes, G2Placement, PipelineConfig};
pub use error::PipelineError;
pub use gate::{DeviceGate, Priority, Turn};
pub use pipeline::{Pipeline, PipelineStats};
pub use planner::{
    HModeChoice, MemoryPlan, PartitionFootprint, PlanInput, ResidencyChoice, MAX_PASS_PARTITIONS,
    STREAMED_SHARE,
};
pub use proof::{PartitionReport, ProofHandle};
