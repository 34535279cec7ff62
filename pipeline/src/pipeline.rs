//! The pipeline: built from the parameters, the backends and the plan, it starts the
//! synthesis workers and a device worker per backend, takes proofs and reports its figures.

use std::sync::mpsc::{channel, sync_channel, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ff::Field;
use rand_core::RngCore;
use sluice_backend::{ComputeBackend, MemoryKind, MemoryTracker};
use sluice_backend_cpu::CpuBackend;
use sluice_field::{Fr, FrCompatible};
use sluice_groth16::phases::DECODE_BATCH;
use sluice_groth16::{
    Capacity, Circuit, ConstraintMatrices, Fork, HostParameters, PartlyResident, ProverConfig,
    ProvingAssignment, QueryLengths, ResidentParameters, VerifyingKey,
};

use crate::budget::HostPool;
use crate::device_probe::{
    device_memory_is_host, msm_scratch_bytes, point_device_bytes, query_device_bytes,
};
use crate::device_worker::{DeviceParams, DeviceWorker, Stats};
use crate::planner::{MemoryPlan, PartitionFootprint, PlanInput};
use crate::proof::{ProofHandle, ProofInner, ProofState};
use crate::sync::lock;
use crate::synthesis_worker::{CpuG2, Job, Ready, SynthesisWorker, Synthesize};
use crate::{machine_host_available_bytes, PipelineConfig, PipelineError};

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
    /// matrices
    /// ([`SynthesisOptions::matrices`](sluice_groth16::SynthesisOptions::matrices)),
    /// about half the host work of a gadget circuit's synthesis (BENCHMARKS.md#synthesis). The matrices are held for the
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
            pass_h_group: config.pass_h_group,
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
                true => {
                    DeviceParams::Resident(Box::new(ResidentParameters::upload(&*host, backend)?))
                }
                false => DeviceParams::Partly(Box::new(PartlyResident::upload(
                    Arc::clone(&host),
                    backend,
                    plan.residency,
                )?)),
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
                    pass_h_group: Some(plan.pass_h_group),
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
