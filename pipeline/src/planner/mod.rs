//! The memory planner: how many partitions fit in the host budget, and how H runs in the
//! device budget.

use sluice_groth16::{Capacity, HMode, ProvingAssignment, QueryLengths, Residency, StreamingPlan};

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
    /// the witness, which goes up beside H's last kernels).
    pub in_memory_device_bytes: u64,
}

/// Device bytes a compact upload's temporaries may hold at once, beyond its destination:
/// the OpenCL backend's batches carry at most 16 MiB of codes and 36 MiB of exceptions.
const COMPACT_UPLOAD_TEMPORARIES: u64 = 64 << 20;

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

    /// Device bytes of an in-memory H in a pass, where nothing goes up beside it: a, b and
    /// c, and a compact upload's temporaries (a whole vector for them in small domains,
    /// as the fourth vector of [`in_memory_device_bytes`](Self::in_memory_device_bytes)).
    pub fn pass_h_device_bytes(&self) -> u64 {
        let vector = self.vector_bytes();
        3 * vector + COMPACT_UPLOAD_TEMPORARIES.min(vector)
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

/// Which queries of the parameters the pipeline keeps on its devices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ResidencyChoice {
    /// Every query resident where the parameters fit next to a partition's work; where
    /// they do not, the largest queries that still fit next to a pass's working set stay
    /// resident and the others stream ([`Residency::fitting`]).
    #[default]
    Auto,
    /// Every query resident (fails to plan when the parameters do not fit).
    Resident,
    /// These queries resident, the others streamed.
    Fixed(Residency),
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
    /// Device bytes each query of the parameters holds when resident: h, l, a, b_g1,
    /// b_g2.
    pub query_device_bytes: [u64; 5],
    /// Device bytes of one streamed base: G1, G2.
    pub point_device_bytes: [u64; 2],
    /// Which queries stay resident.
    pub residency: ResidencyChoice,
    /// Most partitions a pass over streamed parameters proves at once (`None`: as many
    /// as the device holds, at most [`MAX_PASS_PARTITIONS`] and the workers asked for).
    pub pass_partitions: Option<usize>,
    /// Most partitions of a pass whose h the host holds at once. `None`: h's MSM from the
    /// device right after each H where that fits and keeps a partition's streamed bytes
    /// within [`STREAMED_SHARE`] of the parameters, else as many as half of the host
    /// budget left holds. `Some(0)`: h's MSM from the device wherever the device holds h
    /// beside a batch of its bases (else the host's groups). `Some(g)`: the host's groups
    /// of g, capped by the host budget.
    pub pass_h_group: Option<usize>,
    /// Scalars per streamed batch (`None`: the largest power of two whose pass working
    /// set fits the device left beside the resident queries).
    pub stream_batch_len: Option<usize>,
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
    /// (with h beside it where h stays on the device); with streamed parameters, also a
    /// pass's batches.
    pub partition_device_bytes: u64,
    /// Which queries stay on the devices; the others stream a batch at a time.
    pub residency: Residency,
    /// Device bytes of the resident queries.
    pub params_device_bytes: u64,
    /// Most partitions proved in one pass over the streamed parameters (1 when every
    /// query is resident: there is nothing to share).
    pub pass_partitions: usize,
    /// Most partitions of a pass whose h the host holds at once, where h does not stay on
    /// the device ([`ProverConfig::pass_h_group`](sluice_groth16::ProverConfig::pass_h_group)):
    /// the host budget's share, which may be fewer than the pass's partitions. 0: none,
    /// each partition's h MSM runs from the device right after its H (see
    /// [`PlanInput::pass_h_group`]).
    pub pass_h_group: usize,
    /// Scalars per streamed batch (`None` when every query is resident).
    pub stream_batch_len: Option<usize>,
}

/// Most partitions a pass proves at once by default: a 32 GiB PoRep's ten, with room.
pub const MAX_PASS_PARTITIONS: usize = 16;

/// The most of the parameters' bytes a partition streams, in the steady passes, where the
/// planner runs h's MSM from the device by default. That mode uploads h's bases for every
/// partition: faster where the link keeps up with the MSMs (no h read back, no h waiting
/// on the host), but heavier on the link, which a multi-GPU host's cards share. Where a
/// pass is too short to share the other queries that far, the host's groups read h's
/// bases once a group instead.
pub const STREAMED_SHARE: f64 = 0.25;

/// Smallest streamed batch the planner picks: below it, per-batch overheads dominate.
const MIN_STREAM_BATCH: usize = 1 << 6;

impl MemoryPlan {
    /// Plans a pipeline; logs (`warn`) when fewer workers fit than were asked for, saying
    /// what was asked, what fits and why.
    ///
    /// Errors when not even one partition fits: the parameters exceed the device budget,
    /// the device budget cannot hold the smallest streaming working set, or the host
    /// budget cannot hold one partition.
    ///
    /// Where the parameters do not fit next to a partition's work (and
    /// [`ResidencyChoice::Auto`] lets it), the plan streams: it keeps the largest queries
    /// that fit resident, sizes the batches and the partitions per pass, and logs the
    /// choice at info.
    pub fn new(input: &PlanInput) -> Result<Self, PipelineError> {
        let all: u64 = input.query_device_bytes.iter().sum();
        match input.residency {
            ResidencyChoice::Resident => Self::resident(input, all),
            ResidencyChoice::Fixed(r) if r.is_all() => Self::resident(input, all),
            ResidencyChoice::Fixed(r) => Self::streamed(input, Some(r)),
            ResidencyChoice::Auto => match Self::resident(input, all) {
                Err(
                    e @ (PipelineError::ParametersDoNotFit { .. }
                    | PipelineError::DeviceBudgetTooSmall { .. }),
                ) => {
                    log::info!("the parameters stream: every query resident does not fit ({e})");
                    Self::streamed(input, None)
                }
                plan => plan,
            },
        }
    }

    /// Every query resident.
    fn resident(input: &PlanInput, params_device_bytes: u64) -> Result<Self, PipelineError> {
        let mut plan = Self::with_resident_bytes(input, params_device_bytes, input.h_mode, 0)?;
        plan.residency = Residency::ALL;
        Ok(plan)
    }

    /// Some queries streamed: `fixed`, or the largest that fit next to a pass's working
    /// set.
    fn streamed(input: &PlanInput, fixed: Option<Residency>) -> Result<Self, PipelineError> {
        let fp = &input.footprint;
        let n = fp.domain_size;
        let vector = fp.vector_bytes();
        let budget = input.device_budget;
        let mut k = input
            .pass_partitions
            .unwrap_or(MAX_PASS_PARTITIONS.min(input.asked_workers.max(1)))
            .max(1);
        let point = input.point_device_bytes[0].max(input.point_device_bytes[1]);
        // Three batches of bases in flight (one in the MSMs, one queued, one going up),
        // two chunks of every partition's scalars, the MSM scratch of a batch.
        let pass_bytes = |chunk: usize, k: usize| {
            let c = chunk as u64;
            3 * c * point + 2 * k as u64 * c * FR_BYTES + input.msm_scratch_bytes / n as u64 * c
        };
        // In a pass H runs alone (a, b and c: the witness goes up later, for the resident
        // queries' MSMs).
        let pass_fp = PartitionFootprint {
            in_memory_device_bytes: fp.pass_h_device_bytes(),
            ..*fp
        };
        // H in memory where its working set fits the budget: it is never on the device
        // with a pass's batches, and streaming H leaves the device idle while the host
        // works. Else streaming H in half the budget.
        let h_mode = match input.h_mode {
            HModeChoice::Auto if pass_fp.in_memory_device_bytes > budget => {
                HModeChoice::Streaming {
                    device_budget_bytes: budget / 2,
                }
            }
            h => h,
        };
        let h_work = match h_mode {
            HModeChoice::Streaming {
                device_budget_bytes,
            } => device_budget_bytes,
            _ => pass_fp.in_memory_device_bytes,
        };
        // The largest chunk whose pass fits `limit` (fewer, larger MSMs: each pays its
        // bucket sums once).
        let size_chunk = |k: usize, limit: u64| match input.stream_batch_len {
            Some(c) => c.max(1),
            None => {
                let mut c = n.next_power_of_two();
                while c > MIN_STREAM_BATCH && pass_bytes(c, k) > limit {
                    c /= 2;
                }
                c
            }
        };
        // Reserved for a pass while the resident queries are chosen: a quarter of the
        // budget, or H's working set where that is more (the two are never on the device
        // at once).
        let mut chunk = size_chunk(k, (budget / 4).max(h_work));
        let mut work = pass_bytes(chunk, k).max(h_work);
        // A resident query's MSMs run whole (over h, or a partition's witness in h's
        // place): where the largest queries that fit next to the pass need more than that,
        // they are fitted next to a whole MSM and its vector instead.
        let whole_msm = input.msm_scratch_bytes + vector;
        let query_bytes = input.query_device_bytes;
        let all: u64 = query_bytes.iter().sum();
        let residency = fixed.unwrap_or_else(|| {
            let next_to_pass = Residency::fitting(query_bytes, budget.saturating_sub(work));
            match next_to_pass.resident_bytes(query_bytes) > 0 && whole_msm > work {
                true => Residency::fitting(query_bytes, budget.saturating_sub(whole_msm)),
                false => next_to_pass,
            }
        });
        let resident = residency.resident_bytes(query_bytes);
        let any_resident = resident > 0;
        if any_resident {
            work = work.max(whole_msm);
        }
        // A pass's H alone; a streamed query's MSMs run in batches (their scratch is the
        // pass's), a resident query's whole.
        let pass_input = PlanInput {
            footprint: pass_fp,
            msm_scratch_bytes: match any_resident {
                true => input.msm_scratch_bytes,
                false => 0,
            },
            ..*input
        };
        let device_left = budget.saturating_sub(resident);
        // The most partitions, from `k` down to `floor`, whose pass fits at `chunk`.
        let fitting = |chunk: usize, floor: usize, mut k: usize| {
            while k > floor && pass_bytes(chunk, k) > device_left {
                k -= 1;
            }
            k
        };
        // By default or asked for (a group of 0): where H leaves h on the device, h's MSM
        // runs from there right after H, its bases streamed for that partition alone, so no
        // h vector waits on the host. Its working set is h and a batch's (one partition's
        // scalars), at the longest batch beside h: a shorter one would fit more partitions
        // a pass to share the uploads, but doubles every MSM's bucket sums, which costs
        // more time than the host's groups at the same bytes.
        let leaves_h_on_device = !matches!(plan_h_on_host(fp, h_mode), Some(true));
        let h_batch = size_chunk(1, device_left.saturating_sub(vector));
        let device_holds_h =
            !residency.h && leaves_h_on_device && vector + pass_bytes(h_batch, 1) <= device_left;
        let h_from_device = match input.pass_h_group {
            Some(0) => device_holds_h,
            Some(_) => false,
            None if device_holds_h => {
                // The steady passes' bytes a partition: h's bases each, the other
                // streamed queries' shared by as many as fit at h's batch length.
                let shared = fitting(h_batch, 1, k);
                let h_bytes = query_bytes[0];
                let others = all.saturating_sub(resident + h_bytes);
                let per_partition = h_bytes + others / shared as u64;
                per_partition as f64 <= STREAMED_SHARE * all as f64
            }
            None => false,
        };
        // Else, where h's query streams (or H leaves h on the host), the host holds each
        // partition's h, a vector each, for a group of the pass's partitions at a time: at
        // most half of what the host budget leaves beside one worst-case partition, so the
        // passes do not starve synthesis.
        let h_on_host = !residency.h || !leaves_h_on_device;
        let (extra_host, h_group) = match (h_from_device, h_on_host) {
            (true, _) => (0, 0),
            (false, true) => {
                let host_left = input
                    .host_budget
                    .saturating_sub(input.fixed_host_bytes + fp.worst_case_host_bytes());
                let per_device = host_left / 2 / input.devices.max(1) as u64;
                let host_k = usize::try_from(per_device / vector.max(1)).unwrap_or(usize::MAX);
                let asked = input.pass_h_group.filter(|&g| g > 0).unwrap_or(k);
                let group = asked.min(k).min(host_k).max(1);
                (devices_h_bytes(input, group, vector), group)
            }
            (false, false) => (0, k),
        };
        let mut plan = Self::with_resident_bytes(&pass_input, resident, h_mode, extra_host)?;
        // The batches as long as the device left beside the resident queries allows for an
        // h group (beside h, where its MSM runs from the device): the fewer, the fewer MSMs
        // (each pays its bucket sums once), and nothing else is on the device during a
        // pass's MSMs. At least the reserved chunk, which fits.
        if h_from_device {
            chunk = h_batch;
        } else if work <= device_left {
            chunk = chunk.max(size_chunk(h_group, device_left));
        }
        // Then as many partitions a pass as fit at that length: each more shares the
        // witness's streamed bases, whose uploads otherwise outlast their MSMs.
        k = fitting(chunk, h_group.max(1), k);
        let h_beside = match h_from_device {
            true => vector + pass_bytes(chunk, 1),
            false => 0,
        };
        let pass_bytes = pass_bytes(chunk, k).max(h_beside);
        if pass_bytes > device_left {
            return Err(too_small(
                "a pass's batches of streamed bases",
                pass_bytes,
                device_left,
            ));
        }
        if any_resident && whole_msm > device_left {
            return Err(too_small(
                "a resident query's whole MSM and its vector",
                whole_msm,
                device_left,
            ));
        }
        plan.partition_device_bytes = plan
            .partition_device_bytes
            .max(pass_bytes)
            .max(u64::from(any_resident) * whole_msm);
        plan.residency = residency;
        plan.pass_partitions = k;
        plan.pass_h_group = h_group.min(k);
        plan.stream_batch_len = Some(chunk);
        let h_where = match (h_from_device, h_on_host) {
            (true, _) => "h's MSM from the device after each H".to_owned(),
            (false, true) => format!("h on the host for {h_group} at a time"),
            (false, false) => "h's MSM resident".to_owned(),
        };
        log::info!(
            "streamed parameters: {residency} ({resident} of {} device bytes resident), \
             batches of {chunk} scalars, up to {k} partitions a pass ({h_where}), H {:?}",
            all,
            plan.h_mode
        );
        Ok(plan)
    }

    /// The plan with `params_device_bytes` resident, H as `h_mode` asks, and
    /// `extra_fixed_host` more fixed host bytes.
    fn with_resident_bytes(
        input: &PlanInput,
        params_device_bytes: u64,
        h_mode: HModeChoice,
        extra_fixed_host: u64,
    ) -> Result<Self, PipelineError> {
        let fp = &input.footprint;
        let device_left = input.device_budget.checked_sub(params_device_bytes).ok_or(
            PipelineError::ParametersDoNotFit {
                params: params_device_bytes,
                budget: input.device_budget,
            },
        )?;
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
        let (h_mode, plan) = match h_mode {
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
            true => params_device_bytes + devices * partition_device_bytes,
            false => 0,
        };
        // Streaming H decodes a and b into whole host vectors on each device's thread.
        let fixed_host_bytes =
            input.fixed_host_bytes + streaming_host * devices + device_in_host + extra_fixed_host;
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
            residency: Residency::ALL,
            params_device_bytes,
            pass_partitions: 1,
            pass_h_group: 1,
            stream_batch_len: None,
        })
    }
}

/// Whether H as `h_mode` runs it leaves h on the host (four-step streaming H); `None`
/// where the streaming budget cannot be planned (the plan then fails on it).
fn plan_h_on_host(fp: &PartitionFootprint, h_mode: HModeChoice) -> Option<bool> {
    match h_mode {
        HModeChoice::Streaming {
            device_budget_bytes,
        } => StreamingPlan::new(fp.domain_size, device_budget_bytes)
            .ok()
            .map(|p| !p.holds_two_vectors()),
        _ => Some(false),
    }
}

/// Host bytes the passes of every device hold for h: `k` vectors each.
fn devices_h_bytes(input: &PlanInput, k: usize, vector: u64) -> u64 {
    input.devices as u64 * k as u64 * vector
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
mod tests;
