//! The memory planner: how many partitions fit in the host budget, and how H runs in the
//! device budget.

use sluice_groth16::{Capacity, HMode, ProvingAssignment, QueryLengths, StreamingPlan};

use crate::PipelineError;

const FR_BYTES: u64 = 32;

/// What one partition holds, from the circuit's shape (the parameters' query lengths).
///
/// Host figures are worst cases: a partition stores a, b and its witness compactly
/// ([`sluice_backend::compact`]), so what it really holds depends on its values (about a
/// tenth of a vector for a boolean-heavy circuit, three vectors for a dense one) and is
/// counted as it is written ([`Pipeline`](crate::Pipeline)'s host budget); the worst case is
/// what the budget keeps in reserve so that synthesis always progresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartitionFootprint {
    /// The NTT domain size n.
    pub domain_size: usize,
    /// The most host bytes a and b hold (about 2 × n × 32: dense values stored raw).
    pub ab_bytes: u64,
    /// The most host bytes the witness (input and auxiliary assignments) and the density
    /// bitmaps hold.
    pub witness_bytes: u64,
    /// Device bytes of an in-memory H computation and its MSMs: 4 vectors (a, b and c, and
    /// one for MSM temporaries).
    pub in_memory_device_bytes: u64,
}

impl PartitionFootprint {
    /// The footprint of a circuit with these query lengths and `num_inputs` public inputs
    /// (the constant one included: `vk.ic.len()`).
    pub fn new(lengths: &QueryLengths, num_inputs: usize) -> Self {
        let n = lengths.h + 1;
        let capacity = Capacity::for_queries(lengths);
        let ab_only = Capacity {
            constraints: capacity.constraints,
            aux: 0,
        };
        let ab_bytes = ProvingAssignment::max_host_bytes(ab_only, 0);
        PartitionFootprint {
            domain_size: n,
            ab_bytes,
            witness_bytes: ProvingAssignment::max_host_bytes(capacity, num_inputs) - ab_bytes,
            in_memory_device_bytes: 4 * n as u64 * FR_BYTES,
        }
    }

    /// The most host bytes a partition holds from synthesis until its device work ends,
    /// whatever its values.
    pub fn worst_case_host_bytes(&self) -> u64 {
        self.ab_bytes + self.witness_bytes
    }

    /// One full evaluation vector (n × 32 bytes): the unit residency is stated in.
    pub fn vector_bytes(&self) -> u64 {
        self.domain_size as u64 * FR_BYTES
    }
}

/// How H runs on the devices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HModeChoice {
    /// In memory when a partition's in-memory working set fits next to the parameters,
    /// streaming in what is left otherwise.
    #[default]
    Auto,
    /// Always in memory (fails to plan when it does not fit).
    InMemory,
    /// Always streaming, with this device working set.
    Streaming {
        /// Device bytes the streaming H computation may hold at once.
        device_budget_bytes: u64,
    },
}

/// What the planner was given.
#[derive(Clone, Copy, Debug)]
pub struct PlanInput {
    /// The partition shape.
    pub footprint: PartitionFootprint,
    /// Partition workers asked for.
    pub asked_workers: usize,
    /// Host budget in bytes.
    pub host_budget: u64,
    /// Host bytes held regardless of partitions (e.g. the b_g2 bases of the CPU G2 MSM).
    pub fixed_host_bytes: u64,
    /// Device budget in bytes, per device.
    pub device_budget: u64,
    /// Device bytes the resident parameters hold (measured after their upload).
    pub params_device_bytes: u64,
    /// The number of devices (one partition in device work per device at a time).
    pub devices: usize,
    /// The H mode asked for.
    pub h_mode: HModeChoice,
    /// Whether the devices' memory is host memory (a CPU device, the CPU backend): their
    /// parameters and partition working sets then come out of the host budget.
    pub device_memory_is_host: bool,
    /// Host bytes a partition may hold beyond its assignment while it is still counted as
    /// synthesizing (the CPU b_g2 MSM's decoded scalars).
    pub partition_extra_host_bytes: u64,
    /// The most device bytes one of the partition's MSMs allocates beyond its bases
    /// ([`ComputeBackend::msm_scratch_bytes`](sluice_backend::ComputeBackend::msm_scratch_bytes)
    /// of the largest query): reserved next to h, which stays on the device during its MSM
    /// unless H runs four-step.
    pub msm_scratch_bytes: u64,
}

/// The planner's decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryPlan {
    /// Partition workers asked for: the synthesis threads.
    pub asked_workers: usize,
    /// Synthesis threads started (the workers asked for, at least one). How many
    /// partitions synthesize at once follows their real sizes in the host budget (see
    /// [`Pipeline`](crate::Pipeline)).
    pub workers: usize,
    /// Partitions of the worst case (dense values) the host budget holds at once: at
    /// least one, which the budget keeps in reserve.
    pub worst_case_partitions: usize,
    /// How H runs.
    pub h_mode: HMode,
    /// The host budget planned with, in bytes.
    pub host_budget_bytes: u64,
    /// The most host bytes one partition holds (its values unknown): the budget's reserve.
    pub partition_host_bytes: u64,
    /// Host bytes held regardless of partitions: the fixed input; when streaming, one
    /// streaming intermediate per device; and where device memory is host memory, the
    /// resident parameters and each device's partition working set.
    pub fixed_host_bytes: u64,
    /// Device bytes of one partition's work, next to the resident parameters: the larger of
    /// H's working set (in memory, or the streaming budget) and its largest MSM's scratch
    /// (with h beside it where h stays on the device).
    pub partition_device_bytes: u64,
}

impl MemoryPlan {
    /// Plans a pipeline; logs (`warn`) when fewer workers fit than were asked for, saying
    /// what was asked, what fits and why.
    ///
    /// Errors when not even one partition fits: the parameters exceed the device budget,
    /// the device budget cannot hold the smallest streaming working set, or the host
    /// budget cannot hold one partition.
    pub fn new(input: &PlanInput) -> Result<Self, PipelineError> {
        let fp = &input.footprint;
        let device_left = input
            .device_budget
            .checked_sub(input.params_device_bytes)
            .ok_or(PipelineError::ParametersDoNotFit {
                params: input.params_device_bytes,
                budget: input.device_budget,
            })?;
        let streaming = |budget: u64| -> Result<(HMode, Option<StreamingPlan>), PipelineError> {
            let plan = StreamingPlan::new(fp.domain_size, budget).map_err(|source| {
                PipelineError::DeviceBudgetTooSmall {
                    budget,
                    source: Box::new(source),
                }
            })?;
            let mode = HMode::Streaming {
                device_budget_bytes: budget,
            };
            Ok((mode, Some(plan)))
        };
        let (h_mode, plan) = match input.h_mode {
            HModeChoice::Streaming {
                device_budget_bytes,
            } => streaming(device_budget_bytes.min(device_left))?,
            HModeChoice::InMemory if fp.in_memory_device_bytes > device_left => {
                return Err(too_small(
                    "in-memory H working set",
                    fp.in_memory_device_bytes,
                    device_left,
                ));
            }
            HModeChoice::Auto if fp.in_memory_device_bytes > device_left => {
                log::info!(
                    "H streams: an in-memory partition needs {} device bytes, {} are left \
                     next to the parameters",
                    fp.in_memory_device_bytes,
                    device_left
                );
                streaming(device_left)?
            }
            HModeChoice::InMemory | HModeChoice::Auto => (HMode::InMemory, None),
        };
        // H's device working set, the host bytes it adds per device (streaming works on a
        // and b decoded whole, and its intermediates), and whether h is a device vector
        // during its MSM (all but a four-step H leave it there; the other MSMs come after h
        // is freed).
        let (h_device_bytes, streaming_host, h_on_device) = match plan {
            None => (fp.in_memory_device_bytes, 0, true),
            Some(p) => (
                p.device_bytes(),
                2 * fp.vector_bytes() + p.extra_host_bytes(),
                p.holds_two_vectors(),
            ),
        };
        let msm_bytes = input.msm_scratch_bytes + u64::from(h_on_device) * fp.vector_bytes();
        let partition_device_bytes = h_device_bytes.max(msm_bytes);
        if partition_device_bytes > device_left {
            return Err(too_small(
                "a partition's largest MSM and its scratch",
                msm_bytes,
                device_left,
            ));
        }
        let devices = input.devices as u64;
        // A device in host memory draws on the host budget: counting its memory apart
        // would count the same RAM twice.
        let device_in_host = match input.device_memory_is_host {
            true => input.params_device_bytes + devices * partition_device_bytes,
            false => 0,
        };
        // Streaming H decodes a and b into whole host vectors on each device's thread.
        let fixed_host_bytes = input.fixed_host_bytes + streaming_host * devices + device_in_host;
        let per = fp.worst_case_host_bytes() + input.partition_extra_host_bytes;
        let fit = input.host_budget.saturating_sub(fixed_host_bytes) / per.max(1);
        if fit == 0 {
            return Err(PipelineError::HostBudgetTooSmall {
                budget: input.host_budget,
                fixed: fixed_host_bytes,
                partition: per,
            });
        }
        let workers = input.asked_workers.max(1);
        let worst_case_partitions = usize::try_from(fit).unwrap_or(usize::MAX);
        if worst_case_partitions < workers {
            log::info!(
                "the host budget of {} bytes less {fixed_host_bytes} fixed holds \
                 {worst_case_partitions} worst-case partitions of {per} bytes ({:.2} vectors) for \
                 {workers} workers: partitions are admitted by the sizes they really reach",
                input.host_budget,
                per as f64 / fp.vector_bytes() as f64,
            );
        }
        Ok(MemoryPlan {
            asked_workers: input.asked_workers,
            workers,
            worst_case_partitions,
            h_mode,
            host_budget_bytes: input.host_budget,
            partition_host_bytes: per,
            fixed_host_bytes,
            partition_device_bytes,
        })
    }
}

/// The device budget left next to the parameters (`available`) cannot hold `what`.
fn too_small(what: &str, requested: u64, available: u64) -> PipelineError {
    PipelineError::DeviceBudgetTooSmall {
        budget: available,
        source: Box::new(sluice_groth16::Groth16Error::Backend(
            sluice_backend::BackendError::OutOfMemory {
                kind: sluice_backend::MemoryKind::Device,
                what: what.into(),
                requested,
                available,
            },
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lengths(log_n: u32) -> QueryLengths {
        let n = 1usize << log_n;
        QueryLengths {
            h: n - 1,
            l: n / 2,
            a: n / 2,
            b_g1: n / 2,
            b_g2: n / 2,
        }
    }

    fn input(log_n: u32, workers: usize, host: u64, device: u64) -> PlanInput {
        PlanInput {
            footprint: PartitionFootprint::new(&lengths(log_n), 3),
            asked_workers: workers,
            host_budget: host,
            fixed_host_bytes: 1000,
            device_budget: device,
            params_device_bytes: 5000,
            devices: 1,
            h_mode: HModeChoice::Auto,
            device_memory_is_host: false,
            partition_extra_host_bytes: 0,
            msm_scratch_bytes: 0,
        }
    }

    #[test]
    fn footprint_is_the_worst_case_of_the_compact_assignment() {
        let lengths = lengths(10);
        let fp = PartitionFootprint::new(&lengths, 3);
        assert_eq!(fp.domain_size, 1024);
        let capacity = Capacity::for_queries(&lengths);
        assert_eq!(
            fp.worst_case_host_bytes(),
            ProvingAssignment::max_host_bytes(capacity, 3)
        );
        // At least the raw a, b and witness: dense values are stored raw.
        assert!(fp.ab_bytes >= 2 * 1024 * 32, "{fp:?}");
        assert!(fp.witness_bytes >= (512 + 3) * 32, "{fp:?}");
        assert_eq!(fp.in_memory_device_bytes, 4 * 1024 * 32);
    }

    #[test]
    fn plans_every_worker_and_counts_the_worst_cases_that_fit() {
        let per = PartitionFootprint::new(&lengths(10), 3).worst_case_host_bytes();
        let plan = MemoryPlan::new(&input(10, 16, 1000 + 3 * per + per / 2, 1 << 30)).unwrap();
        assert_eq!((plan.asked_workers, plan.workers), (16, 16));
        assert_eq!(plan.worst_case_partitions, 3);
        assert_eq!(plan.partition_host_bytes, per);
        assert_eq!(plan.h_mode, HMode::InMemory);
        assert!(matches!(
            MemoryPlan::new(&input(10, 4, 1000 + per - 1, 1 << 30)),
            Err(PipelineError::HostBudgetTooSmall { .. })
        ));
    }

    /// A device in host memory draws its parameters and partition working set from the
    /// host budget: a budget that would count the same RAM twice is refused.
    #[test]
    fn devices_in_host_memory_draw_on_the_host_budget() {
        let per = PartitionFootprint::new(&lengths(10), 3).worst_case_host_bytes();
        let mut shared = input(10, 4, 1000 + per + 100, 1 << 30);
        let apart = MemoryPlan::new(&shared).unwrap();
        assert_eq!(apart.fixed_host_bytes, 1000);
        shared.device_memory_is_host = true;
        assert!(matches!(
            MemoryPlan::new(&shared),
            Err(PipelineError::HostBudgetTooSmall { .. })
        ));
        shared.host_budget += 5000 + apart.partition_device_bytes;
        let plan = MemoryPlan::new(&shared).unwrap();
        assert_eq!(
            plan.fixed_host_bytes,
            1000 + 5000 + plan.partition_device_bytes,
            "{plan:?}"
        );
    }

    #[test]
    fn msm_scratch_is_reserved_next_to_h() {
        let n = 1u64 << 12;
        let mut with_scratch = input(12, 4, 1 << 40, 1 << 30);
        with_scratch.msm_scratch_bytes = 7 * n * 32;
        let plan = MemoryPlan::new(&with_scratch).unwrap();
        assert_eq!(plan.h_mode, HMode::InMemory);
        assert_eq!(
            plan.partition_device_bytes,
            8 * n * 32,
            "h plus the scratch"
        );
        // Four-step H leaves h on the host: the scratch alone.
        with_scratch.h_mode = HModeChoice::Streaming {
            device_budget_bytes: n * 32,
        };
        let plan = MemoryPlan::new(&with_scratch).unwrap();
        assert_eq!(plan.partition_device_bytes, 7 * n * 32);
        // A budget that holds H but not the scratch is refused, not planned.
        with_scratch.device_budget = 5000 + 6 * n * 32;
        assert!(matches!(
            MemoryPlan::new(&with_scratch),
            Err(PipelineError::DeviceBudgetTooSmall { .. })
        ));
    }

    #[test]
    fn streams_when_the_in_memory_working_set_does_not_fit() {
        let n = 1u64 << 12;
        // Parameters 5000 bytes; in memory needs 4 vectors; give it 2.
        let plan = MemoryPlan::new(&input(12, 4, 1 << 40, 5000 + 2 * n * 32)).unwrap();
        let HMode::Streaming {
            device_budget_bytes,
        } = plan.h_mode
        else {
            panic!("expected streaming, got {:?}", plan.h_mode)
        };
        assert_eq!(device_budget_bytes, 2 * n * 32);
        assert!(plan.partition_device_bytes <= device_budget_bytes);
        // Two vectors fit: the two-vector scheme holds a and b decoded whole, per device.
        assert_eq!(plan.fixed_host_bytes, 1000 + 2 * n * 32, "{plan:?}");
        // With 1.5 vectors, four-step: also one streaming intermediate (a vector and a
        // chunk) per device.
        let plan = MemoryPlan::new(&input(12, 4, 1 << 40, 5000 + 3 * n * 16)).unwrap();
        assert!(matches!(plan.h_mode, HMode::Streaming { .. }), "{plan:?}");
        assert!(plan.fixed_host_bytes >= 1000 + 3 * n * 32, "{plan:?}");
        assert!(matches!(
            MemoryPlan::new(&input(12, 4, 1 << 40, 4000)),
            Err(PipelineError::ParametersDoNotFit { .. })
        ));
        assert!(matches!(
            MemoryPlan::new(&input(12, 4, 1 << 40, 5000 + 64 * 32)),
            Err(PipelineError::DeviceBudgetTooSmall { .. })
        ));
        let mut forced = input(12, 4, 1 << 40, 1 << 30);
        forced.h_mode = HModeChoice::InMemory;
        forced.device_budget = 5000 + 3 * n * 32;
        assert!(
            MemoryPlan::new(&forced).is_err(),
            "in memory needs 4 vectors"
        );
    }
}
