//! The pipeline's threads: synthesis workers, one device worker per backend, and the
//! per-proof bookkeeping that makes every partition end as proved, failed, or cancelled.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ff::Field;
use rand_core::RngCore;
use sluice_backend::{Allocation, ComputeBackend, HostBudget, MemoryKind, MemoryTracker};
use sluice_backend_cpu::{CpuBackend, CpuBases};
use sluice_field::{Fr, FrCompatible, G1Affine, G2Affine, G2Projective};
use sluice_groth16::phases::{
    b_g2_msm, prove_assignment_with_b_g2, prove_pass, PassPartition, DECODE_BATCH,
};
use sluice_groth16::{
    Capacity, Circuit, ConstraintMatrices, Fork, G1Query, Groth16Error, HostParameters,
    PartlyResident, Proof, ProofReport, ProverConfig, ProvingAssignment, QueryLengths,
    ResidentParameters, SynthesisOptions, VerifyingKey,
};

use crate::budget::{HostPool, PartitionBudget};
use crate::gate::{DeviceGate, Priority};
use crate::planner::{MemoryPlan, PartitionFootprint, PlanInput};
use crate::{machine_host_available_bytes, PipelineConfig, PipelineError};

/// Locks, recovering from poisoning: every critical section here leaves consistent state.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What one partition held and took, as its proof measured it.
#[derive(Clone, Copy, Debug)]
pub struct PartitionReport {
    /// The prover's report: the partition's own host peak (a, b and streaming
    /// intermediates, in a tracker of its own) and the device tracker's figures.
    pub proof: ProofReport,
    /// Host bytes of the synthesized partition (a, b, witness and bitmaps) while it
    /// waited for its device.
    pub held_host_bytes: u64,
    /// Time from the start of synthesis to the end of device work.
    pub latency: Duration,
}

struct ProofInner {
    proofs: Vec<Option<Proof>>,
    reports: Vec<Option<PartitionReport>>,
    remaining: usize,
    error: Option<PipelineError>,
}

/// One submitted proof's partitions as they complete.
struct ProofState {
    inner: Mutex<ProofInner>,
    done: Condvar,
}

impl ProofState {
    fn failed(&self) -> bool {
        lock(&self.inner).error.is_some()
    }

    /// Records partition `index`'s outcome; the first failure fails the proof.
    fn finish(&self, index: usize, outcome: Result<(Proof, PartitionReport), PipelineError>) {
        let mut inner = lock(&self.inner);
        match outcome {
            Ok((proof, report)) => {
                inner.proofs[index] = Some(proof);
                inner.reports[index] = Some(report);
            }
            Err(e) => {
                log::error!("{e}");
                inner.error.get_or_insert(e);
            }
        }
        inner.remaining -= 1;
        let total = inner.proofs.len();
        sluice_groth16::progress::report(&sluice_groth16::progress::ProgressEvent {
            task: sluice_groth16::progress::Task::Partitions,
            what: "",
            done: (total - inner.remaining) as u64,
            total: total as u64,
        });
        if inner.remaining == 0 {
            self.done.notify_all();
        }
    }

    /// Accounts for a partition not run because its proof already failed.
    fn cancel(&self, index: usize) {
        log::info!("partition {index} cancelled: its proof already failed");
        let mut inner = lock(&self.inner);
        inner.remaining -= 1;
        if inner.remaining == 0 {
            self.done.notify_all();
        }
    }
}

/// The result of one submitted proof, to wait on.
pub struct ProofHandle {
    state: Arc<ProofState>,
}

impl ProofHandle {
    /// Cancels the proof: its partitions not yet started are skipped (those running
    /// finish), and [`wait`](Self::wait) returns [`PipelineError::Cancelled`] unless a
    /// partition had already failed.
    pub fn cancel(&self) {
        lock(&self.state.inner)
            .error
            .get_or_insert(PipelineError::Cancelled);
    }

    /// Waits for every partition; the proofs in partition order, or the first failure
    /// (with the partition's index and cause).
    pub fn wait(self) -> Result<(Vec<Proof>, Vec<PartitionReport>), PipelineError> {
        let mut inner = lock(&self.state.inner);
        while inner.remaining > 0 {
            inner = self
                .state
                .done
                .wait(inner)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if let Some(e) = inner.error.take() {
            return Err(e);
        }
        let proofs: Option<Vec<Proof>> = inner.proofs.iter_mut().map(Option::take).collect();
        let reports: Option<Vec<PartitionReport>> =
            inner.reports.iter_mut().map(Option::take).collect();
        match (proofs, reports) {
            (Some(p), Some(r)) => Ok((p, r)),
            _ => Err(PipelineError::Closed),
        }
    }
}

type Synthesize =
    Box<dyn FnOnce(&SynthesisOptions) -> Result<ProvingAssignment, Groth16Error> + Send>;

/// A partition waiting for synthesis.
struct Job {
    proof: Arc<ProofState>,
    index: usize,
    synthesize: Synthesize,
    r: Fr,
    s: Fr,
}

/// A synthesized partition waiting for a device.
struct Ready {
    proof: Arc<ProofState>,
    index: usize,
    cs: ProvingAssignment,
    r: Fr,
    s: Fr,
    b_g2: Option<G2Projective>,
    /// Its bytes while it waits for a device.
    held: Allocation,
    /// The partition's share of the host budget: its vectors give their bytes back as
    /// they drop.
    budget: Arc<PartitionBudget>,
    started: Instant,
    /// How long its synthesis took (and the CPU b_g2 MSM, where that runs here).
    synthesis: Duration,
}

/// Per-device busy time and the pipeline's age.
struct Stats {
    started: Instant,
    busy: Vec<Mutex<Duration>>,
}

/// Throughput figures of a pipeline.
#[derive(Clone, Debug)]
pub struct PipelineStats {
    /// Time since the pipeline was built.
    pub elapsed: Duration,
    /// Per device, the time spent in device work (proving a partition).
    pub device_busy: Vec<Duration>,
    /// Peak host bytes all partitions held together, as the host budget counted them as
    /// they were allocated: never above the budget less the fixed bytes.
    pub host_reserved_peak: u64,
    /// Peak host bytes held by synthesized partitions waiting for a device (a, b, witness
    /// and bitmaps).
    pub host_held_peak: u64,
    /// Peak partitions held at once (synthesizing, waiting or in device work).
    pub partitions_peak: usize,
    /// Peak partitions synthesizing at once: the workers the host budget admitted.
    pub synthesizing_peak: usize,
}

impl PipelineStats {
    /// Per device, busy time over elapsed time.
    pub fn busy_fraction(&self) -> Vec<f64> {
        let e = self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
        self.device_busy
            .iter()
            .map(|b| b.as_secs_f64() / e)
            .collect()
    }
}

/// The CPU side of the b_g2 MSM: a CPU backend holding the b_g2 bases.
type CpuG2 = Arc<(CpuBackend, CpuBases<G2Affine>)>;

/// The partition pipeline over devices of backend type `B`. See the crate docs.
pub struct Pipeline {
    jobs: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
    plan: MemoryPlan,
    vk: VerifyingKey,
    domain_size: usize,
    pool: Arc<HostPool>,
    held: MemoryTracker,
    stats: Arc<Stats>,
}

impl Pipeline {
    /// Builds a pipeline: plans memory (see [`MemoryPlan`]), uploads the parameters' queries
    /// the plan keeps resident to every backend (they stay there across proofs), caps each
    /// backend's device tracker at the device budget, and starts the threads.
    ///
    /// Where every query is resident the pipeline drops its hold on `params` once they are
    /// uploaded (the host copy goes with the caller's last [`Arc`]); where some stream, it
    /// reads them from `params` for every pass (a [`MappedParameters`] file keeps that
    /// cheap on the host).
    ///
    /// [`MappedParameters`]: sluice_groth16::MappedParameters
    pub fn new<B, H>(
        params: Arc<H>,
        backends: Vec<B>,
        config: &PipelineConfig,
    ) -> Result<Self, PipelineError>
    where
        B: ComputeBackend + 'static,
        H: HostParameters + Send + Sync + 'static,
    {
        Self::build(params, backends, config, None)
    }

    /// [`new`](Self::new) for partitions whose constraint matrices were recorded once
    /// ([`ConstraintMatrices::record`], for the circuit the parameters are for): each
    /// partition's synthesis then computes its witness only and evaluates a and b from the
    /// matrices ([`SynthesisOptions::matrices`]), about half the host work of a gadget
    /// circuit's synthesis (BENCHMARKS.md#synthesis). The matrices are held for the
    /// pipeline's life and planned as fixed host bytes.
    ///
    /// Returns [`PipelineError::Setup`] when the matrices' counts do not fit the
    /// parameters ([`ConstraintMatrices::check_parameters`]).
    pub fn with_matrices<B, H>(
        params: Arc<H>,
        backends: Vec<B>,
        config: &PipelineConfig,
        matrices: Arc<ConstraintMatrices>,
    ) -> Result<Self, PipelineError>
    where
        B: ComputeBackend + 'static,
        H: HostParameters + Send + Sync + 'static,
    {
        matrices.check_parameters(&params.query_lengths(), params.vk().ic.len())?;
        Self::build(params, backends, config, Some(matrices))
    }

    fn build<B, H>(
        params: Arc<H>,
        backends: Vec<B>,
        config: &PipelineConfig,
        matrices: Option<Arc<ConstraintMatrices>>,
    ) -> Result<Self, PipelineError>
    where
        B: ComputeBackend + 'static,
        H: HostParameters + Send + Sync + 'static,
    {
        let Some(first) = backends.first() else {
            return Err(PipelineError::NoDevices);
        };
        let host_budget = match config.host_budget_bytes {
            Some(b) => b,
            None => config.less_headroom(
                machine_host_available_bytes().ok_or(PipelineError::UnknownHostMemory)?,
            ),
        };
        let device_memory_is_host = device_memory_is_host(first);
        let device_budget = match config.device_budget_bytes {
            Some(b) => b,
            // The same RAM as the host budget, which the plan then draws it from.
            None if device_memory_is_host => host_budget,
            None => {
                let info = first.memory_info()?;
                config.less_headroom(info.free_bytes.unwrap_or(info.total_bytes))
            }
        };
        let lengths = params.query_lengths();
        let point_device_bytes = point_device_bytes(first, &*params)?;
        let cpu_g2: Option<CpuG2> = if config.b_g2.on_cpu(first.info().accelerator) {
            let cpu = CpuBackend::new();
            let bases = cpu.upload_bases("b_g2", &params.b_g2_points()?)?;
            Some(Arc::new((cpu, bases)))
        } else {
            None
        };
        let fixed_host_bytes = cpu_g2
            .as_ref()
            .map_or(0, |g| g.0.tracker().current(MemoryKind::Device))
            + matrices.as_ref().map_or(0, |m| m.host_bytes());
        let footprint = PartitionFootprint::new(&params.query_lengths(), params.vk().ic.len());
        let plan = MemoryPlan::new(&PlanInput {
            footprint,
            asked_workers: config.workers,
            host_budget,
            fixed_host_bytes,
            device_budget,
            query_device_bytes: query_device_bytes(&lengths, point_device_bytes),
            point_device_bytes,
            residency: config.residency,
            pass_partitions: config.pass_partitions,
            stream_batch_len: config.stream_batch_len,
            devices: backends.len(),
            h_mode: config.h_mode,
            device_memory_is_host,
            // The CPU b_g2 MSM decodes compact scalars a batch at a time.
            partition_extra_host_bytes: match cpu_g2 {
                Some(_) => decode_bytes(&params.query_lengths()),
                None => 0,
            },
            msm_scratch_bytes: msm_scratch_bytes(first, &params.query_lengths(), cpu_g2.is_none()),
        })?;
        log::info!("pipeline plan: {plan:?}");
        let vk = params.vk().clone();
        let host: Arc<dyn HostParameters + Send + Sync> = params;
        let mut device_params = Vec::with_capacity(backends.len());
        for backend in &backends {
            let before = backend.tracker().current(MemoryKind::Device);
            device_params.push(match plan.residency.is_all() {
                true => DeviceParams::Resident(ResidentParameters::upload(&*host, backend)?),
                false => DeviceParams::Partly(PartlyResident::upload(
                    Arc::clone(&host),
                    backend,
                    plan.residency,
                )?),
            });
            let bytes = backend.tracker().current(MemoryKind::Device) - before;
            log::info!(
                "parameters on {}: {} ({bytes} device bytes, {} planned)",
                backend.info().name,
                plan.residency,
                plan.params_device_bytes
            );
        }
        // Resident everywhere: the host copy is the caller's alone again.
        drop(host);
        for backend in &backends {
            let t = backend.tracker();
            let limit = t
                .limit(MemoryKind::Device)
                .map_or(device_budget, |l| l.min(device_budget));
            t.set_limit(MemoryKind::Device, Some(limit));
        }

        let pool = HostPool::new(
            host_budget.saturating_sub(plan.fixed_host_bytes),
            plan.partition_host_bytes,
        );
        let capacity = Capacity::for_queries(&lengths);
        let held = MemoryTracker::default();
        let stats = Arc::new(Stats {
            started: Instant::now(),
            busy: backends.iter().map(|_| Mutex::default()).collect(),
        });
        let (job_tx, job_rx) = channel::<Job>();
        let job_rx = Arc::new(Mutex::new(job_rx));
        let (ready_tx, ready_rx) = sync_channel::<Ready>(plan.workers);
        let ready_rx = Arc::new(Mutex::new(ready_rx));
        let mut threads = Vec::new();
        for w in 0..plan.workers {
            let worker = SynthesisWorker {
                jobs: Arc::clone(&job_rx),
                ready: ready_tx.clone(),
                pool: Arc::clone(&pool),
                held: held.clone(),
                capacity,
                matrices: matrices.clone(),
                decode_bytes: decode_bytes(&lengths),
                cpu_g2: cpu_g2.clone(),
            };
            threads.push(spawn(format!("sluice-synth-{w}"), move || worker.run())?);
        }
        drop(ready_tx);
        for (d, (backend, params)) in backends.into_iter().zip(device_params).enumerate() {
            let worker = DeviceWorker {
                backend,
                partition_device_bytes: plan.partition_device_bytes,
                device_wait: config.device_wait,
                params,
                pass_partitions: plan.pass_partitions,
                ready: Arc::clone(&ready_rx),
                config: ProverConfig {
                    h_mode: plan.h_mode,
                    msm_batch_len: plan.stream_batch_len,
                    ..ProverConfig::default()
                },
                stats: Arc::clone(&stats),
                device: d,
                gate: config.device_gate.clone().map(|g| (g, config.priority)),
            };
            threads.push(spawn(format!("sluice-device-{d}"), move || worker.run())?);
        }
        Ok(Pipeline {
            jobs: Some(job_tx),
            threads,
            plan,
            vk,
            domain_size: footprint.domain_size,
            pool,
            held,
            stats,
        })
    }

    /// The memory plan the pipeline runs under.
    pub fn plan(&self) -> &MemoryPlan {
        &self.plan
    }

    /// The verifying key of the parameters.
    pub fn vk(&self) -> &VerifyingKey {
        &self.vk
    }

    /// Submits one proof's partitions; `r` and `s` of each are drawn from `rng` now (pass
    /// a CSPRNG). Returns at once; the handle waits for the result.
    pub fn submit<S, C, R>(
        &self,
        circuits: Vec<C>,
        rng: &mut R,
    ) -> Result<ProofHandle, PipelineError>
    where
        S: FrCompatible,
        C: Circuit<S> + Send + 'static,
        R: RngCore,
    {
        let jobs = circuits.into_iter().map(|circuit| -> Synthesize {
            Box::new(move |options| ProvingAssignment::synthesize_with(circuit, options))
        });
        self.submit_jobs(jobs.collect(), rng)
    }

    /// [`submit`](Self::submit) for partitions made of independent parts: each is
    /// synthesized with
    /// [`ProvingAssignment::synthesize_forked`](sluice_groth16::ProvingAssignment::synthesize_forked),
    /// its parts on every core (the rayon pool the synthesis workers share), into the same
    /// assignment as [`Forked`](sluice_groth16::Forked)`(fork)` sequentially.
    pub fn submit_forked<S, F, R>(
        &self,
        forks: Vec<F>,
        rng: &mut R,
    ) -> Result<ProofHandle, PipelineError>
    where
        S: FrCompatible,
        F: Fork<S> + Send + 'static,
        R: RngCore,
    {
        let jobs = forks.into_iter().map(|fork| -> Synthesize {
            Box::new(move |options| ProvingAssignment::synthesize_forked(fork, options))
        });
        self.submit_jobs(jobs.collect(), rng)
    }

    /// Queues one proof's partitions, drawing each one's `r` and `s` from `rng`.
    fn submit_jobs<R: RngCore>(
        &self,
        partitions: Vec<Synthesize>,
        rng: &mut R,
    ) -> Result<ProofHandle, PipelineError> {
        let count = partitions.len();
        let state = Arc::new(ProofState {
            inner: Mutex::new(ProofInner {
                proofs: vec![None; count],
                reports: vec![None; count],
                remaining: count,
                error: None,
            }),
            done: Condvar::new(),
        });
        let jobs = self.jobs.as_ref().ok_or(PipelineError::Closed)?;
        for (index, synthesize) in partitions.into_iter().enumerate() {
            let job = Job {
                proof: Arc::clone(&state),
                index,
                synthesize,
                r: Fr::random(&mut *rng),
                s: Fr::random(&mut *rng),
            };
            if jobs.send(job).is_err() {
                // Workers gone: account for the rest so the handle returns.
                state.finish(index, Err(PipelineError::Closed));
            }
        }
        Ok(ProofHandle { state })
    }

    /// Throughput and memory figures so far.
    pub fn stats(&self) -> PipelineStats {
        let pool = self.pool.figures();
        PipelineStats {
            elapsed: self.stats.started.elapsed(),
            device_busy: self.stats.busy.iter().map(|b| *lock(b)).collect(),
            host_reserved_peak: pool.held_peak,
            host_held_peak: self.held.peak(MemoryKind::Host),
            partitions_peak: pool.partitions_peak,
            synthesizing_peak: pool.synthesizing_peak,
        }
    }

    /// The domain size of the partitions this pipeline proves.
    pub fn domain_size(&self) -> usize {
        self.domain_size
    }
}

impl Drop for Pipeline {
    /// Finishes the submitted work, then stops the threads.
    fn drop(&mut self) {
        self.jobs.take();
        for t in self.threads.drain(..) {
            if t.join().is_err() {
                log::error!("a pipeline thread panicked");
            }
        }
    }
}

/// The host bytes of scalars an MSM over the witness decodes at once (see [`DECODE_BATCH`]).
fn decode_bytes(lengths: &QueryLengths) -> u64 {
    DECODE_BATCH.min(lengths.l) as u64 * 32
}

/// Device bytes of one base of each group (G1, G2) on `backend`, measured on an upload of
/// the first few points of the h and b_g2 queries (the file encodings' sizes where a query
/// is empty).
fn point_device_bytes<B: ComputeBackend, H: HostParameters + ?Sized>(
    backend: &B,
    params: &H,
) -> Result<[u64; 2], PipelineError> {
    const PROBE: usize = 4096;
    let lengths = params.query_lengths();
    let tracker = backend.tracker();
    // The tracker's growth while `upload` holds its bases, per point; freed before the
    // next probe (a backend that frees at its queue's drain frees at the synchronize).
    let per_point = |count: usize, upload: &dyn Fn() -> Result<(), PipelineError>| {
        let before = tracker.current(MemoryKind::Device);
        upload()?;
        let bytes = tracker.peak(MemoryKind::Device).max(before) - before;
        backend.synchronize()?;
        Ok::<u64, PipelineError>((bytes / count as u64).max(1))
    };
    tracker.reset_peaks();
    let g1 = match lengths.h.min(PROBE) {
        0 => 96,
        m => per_point(m, &|| {
            let points = params.g1_points_range(G1Query::H, 0..m)?;
            drop(backend.upload_bases("probe", &points)?);
            Ok(())
        })?,
    };
    tracker.reset_peaks();
    let g2 = match lengths.b_g2.min(PROBE) {
        0 => 192,
        m => per_point(m, &|| {
            let points = params.b_g2_points_range(0..m)?;
            drop(backend.upload_bases("probe", &points)?);
            Ok(())
        })?,
    };
    Ok([g1, g2])
}

/// Each query's device bytes when resident (h, l, a, b_g1, b_g2), from the bytes of a base.
fn query_device_bytes(q: &QueryLengths, [g1, g2]: [u64; 2]) -> [u64; 5] {
    let g1 = |n: usize| n as u64 * g1;
    [g1(q.h), g1(q.l), g1(q.a), g1(q.b_g1), q.b_g2 as u64 * g2]
}

/// Whether `backend` computes in host memory (the CPU backend, a CPU OpenCL device, a GPU
/// sharing the host's memory), so that its "device" budget is host memory too.
fn device_memory_is_host<B: ComputeBackend>(backend: &B) -> bool {
    backend.info().host_memory_shared
}

/// The scratch of a partition's largest MSM on `backend` (b_g2's too when it runs there).
fn msm_scratch_bytes<B: ComputeBackend>(backend: &B, q: &QueryLengths, b_g2_here: bool) -> u64 {
    let g1 = [q.h + 1, q.l, q.a, q.b_g1]
        .into_iter()
        .map(|n| backend.msm_scratch_bytes::<G1Affine>(n))
        .max()
        .unwrap_or(0);
    let g2 = match b_g2_here {
        true => backend.msm_scratch_bytes::<G2Affine>(q.b_g2),
        false => 0,
    };
    g1.max(g2)
}

fn spawn(name: String, f: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>, PipelineError> {
    std::thread::Builder::new()
        .name(name)
        .spawn(f)
        .map_err(|e| {
            PipelineError::Backend(sluice_backend::BackendError::Unsupported(format!(
                "cannot start a pipeline thread: {e}"
            )))
        })
}

struct SynthesisWorker {
    jobs: Arc<Mutex<Receiver<Job>>>,
    ready: SyncSender<Ready>,
    pool: Arc<HostPool>,
    held: MemoryTracker,
    /// The partitions' shape, from the parameters.
    capacity: Capacity,
    /// The partitions' constraint matrices, where recorded ([`Pipeline::with_matrices`]).
    matrices: Option<Arc<ConstraintMatrices>>,
    /// Host bytes the CPU b_g2 MSM decodes scalars into.
    decode_bytes: u64,
    cpu_g2: Option<CpuG2>,
}

impl SynthesisWorker {
    fn run(self) {
        loop {
            let job = match lock(&self.jobs).recv() {
                Ok(job) => job,
                Err(_) => return,
            };
            if job.proof.failed() {
                job.proof.cancel(job.index);
                continue;
            }
            let budget = self.pool.admit();
            log::debug!("partition {} admitted to synthesis", job.index);
            let started = Instant::now();
            match self.synthesize(job.synthesize, &budget, job.index) {
                Ok((cs, held, b_g2)) => {
                    let ready = Ready {
                        proof: job.proof,
                        index: job.index,
                        cs,
                        r: job.r,
                        s: job.s,
                        b_g2,
                        held,
                        budget,
                        started,
                        synthesis: started.elapsed(),
                    };
                    if let Err(back) = self.ready.send(ready) {
                        let Ready { proof, index, .. } = back.0;
                        proof.finish(index, Err(PipelineError::Closed));
                        return;
                    }
                }
                Err(e) => job.proof.finish(job.index, Err(e)),
            }
        }
    }

    /// Synthesizes into `budget` (waiting while the host budget is full), runs the CPU
    /// b_g2 MSM, and counts what the partition holds.
    fn synthesize(
        &self,
        synthesize: Synthesize,
        budget: &Arc<PartitionBudget>,
        index: usize,
    ) -> Result<(ProvingAssignment, Allocation, Option<G2Projective>), PipelineError> {
        let fail = |source| PipelineError::Partition { index, source };
        let total = self.capacity.constraints;
        let progress = Arc::clone(budget);
        let options = SynthesisOptions {
            capacity: self.capacity,
            budget: Some(Arc::clone(budget) as Arc<dyn HostBudget>),
            progress: Some(Arc::new(move |done| progress.progress(done, total))),
            matrices: self.matrices.clone(),
            ..SynthesisOptions::default()
        };
        let cs = match catch_unwind(AssertUnwindSafe(|| synthesize(&options))) {
            Ok(cs) => cs.map_err(fail)?,
            Err(panic) => {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                return Err(PipelineError::PartitionPanicked { index, message });
            }
        };
        // Still counted as synthesizing, so the MSM's decoded scalars draw on the budget
        // as the oldest partition may (see crate::budget).
        let b_g2 = match &self.cpu_g2 {
            Some(g2) => {
                let decoded = self.decode_bytes;
                budget.acquire(decoded);
                let msm = b_g2_msm(&cs, &g2.0, &g2.1);
                budget.release(decoded);
                Some(msm.map_err(fail)?)
            }
            None => None,
        };
        budget.synthesized();
        let bytes = cs.host_bytes();
        log::debug!(
            "partition {index} synthesized: {} constraints, {bytes} host bytes",
            cs.num_constraints()
        );
        let held = self
            .held
            .allocate(MemoryKind::Host, "synthesized partition", bytes)
            .map_err(|e| fail(e.into()))?;
        Ok((cs, held, b_g2))
    }
}

/// A device's parameters: every query resident, or some streamed from the host.
enum DeviceParams<B: ComputeBackend> {
    Resident(ResidentParameters<B>),
    Partly(PartlyResident<B, dyn HostParameters + Send + Sync>),
}

struct DeviceWorker<B: ComputeBackend> {
    backend: B,
    /// Device bytes one partition's work is planned to take.
    partition_device_bytes: u64,
    /// How long a partition waits for device memory others hold before trying anyway.
    device_wait: Duration,
    params: DeviceParams<B>,
    /// Most partitions proved in one pass over streamed parameters.
    pass_partitions: usize,
    ready: Arc<Mutex<Receiver<Ready>>>,
    config: ProverConfig,
    stats: Arc<Stats>,
    device: usize,
    /// Turns shared with other pipelines on this device, and this pipeline's place there.
    gate: Option<(DeviceGate, Priority)>,
}

impl<B: ComputeBackend> DeviceWorker<B> {
    /// Waits while the device tracker's limit leaves less than the partition's planned
    /// working set (others share the device); after `device_wait` it tries anyway, and a
    /// refused allocation then fails the partition with the cause.
    fn wait_for_device_memory(&self, index: usize) {
        let tracker = self.backend.tracker();
        let Some(limit) = tracker.limit(MemoryKind::Device) else {
            return;
        };
        let free = || limit.saturating_sub(tracker.current(MemoryKind::Device));
        if free() >= self.partition_device_bytes {
            return;
        }
        log::warn!(
            "device {}: partition {index} waits for device memory: it needs {} bytes, {} are \
             free under the budget",
            self.device,
            self.partition_device_bytes,
            free()
        );
        let start = Instant::now();
        while free() < self.partition_device_bytes && start.elapsed() < self.device_wait {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The next partitions to prove: one waited for, and with streamed parameters those
    /// already waiting beside it, up to a pass's worth; those whose proof failed are
    /// cancelled. Empty when the pipeline is closing.
    fn next_partitions(&self) -> Option<Vec<Ready>> {
        let ready = lock(&self.ready);
        let first = ready.recv().ok()?;
        let mut batch = vec![first];
        if let DeviceParams::Partly(_) = self.params {
            while batch.len() < self.pass_partitions {
                match ready.try_recv() {
                    Ok(next) => batch.push(next),
                    Err(_) => break,
                }
            }
        }
        drop(ready);
        batch.retain(|r| match r.proof.failed() {
            true => {
                r.proof.cancel(r.index);
                false
            }
            false => true,
        });
        Some(batch)
    }

    fn run(self) {
        while let Some(batch) = self.next_partitions() {
            let Some(first) = batch.first() else {
                continue;
            };
            let turn = self
                .gate
                .as_ref()
                .map(|(gate, priority)| gate.acquire(self.device, *priority));
            self.wait_for_device_memory(first.index);
            let t = Instant::now();
            // A tracker of the pass's own measures its host peak exactly.
            let config = ProverConfig {
                host_tracker: Some(MemoryTracker::default()),
                ..self.config.clone()
            };
            let mut rest = Vec::with_capacity(batch.len());
            let mut parts = Vec::with_capacity(batch.len());
            for ready in batch {
                let held_host_bytes = ready.held.bytes();
                // No longer waiting: the budget counts what the proof still holds.
                drop(ready.held);
                parts.push(PassPartition {
                    cs: ready.cs,
                    r: ready.r,
                    s: ready.s,
                    b_g2: ready.b_g2,
                });
                rest.push((
                    ready.proof,
                    ready.index,
                    ready.budget,
                    ready.started,
                    ready.synthesis,
                    held_host_bytes,
                ));
            }
            let results = match &self.params {
                DeviceParams::Resident(params) => parts
                    .into_iter()
                    .map(|p| {
                        prove_assignment_with_b_g2(
                            p.cs,
                            params,
                            p.r,
                            p.s,
                            &self.backend,
                            &config,
                            p.b_g2,
                        )
                    })
                    .collect(),
                DeviceParams::Partly(params) => prove_pass(parts, params, &self.backend, &config),
            };
            *lock(&self.stats.busy[self.device]) += t.elapsed();
            drop(turn);
            for ((proof, index, budget, started, synthesis, held_host_bytes), result) in
                rest.into_iter().zip(results)
            {
                let outcome = result
                    .map(|(p, mut report)| {
                        // The device worker proves an assignment synthesized elsewhere.
                        report.phases.synthesis = synthesis;
                        let report = PartitionReport {
                            proof: report,
                            held_host_bytes,
                            latency: started.elapsed(),
                        };
                        (p, report)
                    })
                    .map_err(|source| PipelineError::Partition { index, source });
                // Free the partition's bytes before telling the waiter.
                drop(budget);
                proof.finish(index, outcome);
            }
        }
    }
}
