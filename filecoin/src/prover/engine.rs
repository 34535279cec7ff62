//! The long-lived prover: one pipeline per proof kind over the same devices, parameters
//! resident between proofs, PoSt partitions before C2 partitions at the device.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use rand_core::OsRng;
use sluice::backend::MemoryKind;
use sluice::pipeline::DeviceGate;
use sluice::{
    Circuit, ComputeBackend, CpuBackend, Fork, Forked, Pipeline, PipelineError, Proof, ProofHandle,
};

use crate::config::FilecoinConfig;
use crate::error::FilecoinError;
use crate::kind::ProofKind;
use crate::params;

/// Proves Filecoin's proofs with sluice: PoRep C2
/// ([`seal_commit_phase2`](Prover::seal_commit_phase2)), Window and Winning PoSt
/// ([`generate_window_post_with_vanilla`](Prover::generate_window_post_with_vanilla),
/// [`generate_winning_post_with_vanilla`](Prover::generate_winning_post_with_vanilla))
/// and SnapDeals updates
/// ([`generate_empty_sector_update_proof_with_vanilla`](Prover::generate_empty_sector_update_proof_with_vanilla)),
/// taking and returning what `filecoin-proofs-api` does.
///
/// Keep one for the process: the first proof of a kind maps its parameter file and uploads
/// the parameters to every device, and they stay there for later proofs of that kind
/// (reloading them per proof costs operators 30-90 s a proof). Calls from several threads
/// run at once; their partitions share the devices, PoSt first.
pub struct Prover<B: ComputeBackend + 'static> {
    backends: Vec<Arc<B>>,
    config: FilecoinConfig,
    gate: DeviceGate,
    /// The device budget every pipeline shares (accelerators only; `None` where device
    /// memory is the host's and the pipeline budgets it).
    device_budget: Option<u64>,
    loaded: Mutex<HashMap<String, Slot>>,
}

/// A proof kind's pipeline, once loaded; its own lock makes only that kind's callers wait
/// while it loads.
type Slot = Arc<Mutex<Option<Arc<Pipeline>>>>;

impl Prover<CpuBackend> {
    /// A prover on the CPU backend.
    pub fn cpu(config: FilecoinConfig) -> Result<Self, FilecoinError> {
        Prover::new(vec![CpuBackend::new()], config)
    }
}

impl<B: ComputeBackend + 'static> Prover<B> {
    /// A prover over `backends` (one per device).
    pub fn new(backends: Vec<B>, config: FilecoinConfig) -> Result<Self, FilecoinError> {
        let setup = |source| FilecoinError::Setup {
            kind: "prover".into(),
            source,
        };
        let first = backends.first().ok_or(setup(PipelineError::NoDevices))?;
        let device_budget = if first.info().accelerator {
            Some(match config.pipeline.device_budget_bytes {
                Some(bytes) => bytes,
                None => {
                    let info = first.memory_info().map_err(|e| setup(e.into()))?;
                    config
                        .pipeline
                        .less_headroom(info.free_bytes.unwrap_or(info.total_bytes))
                }
            })
        } else {
            None
        };
        Ok(Prover {
            backends: backends.into_iter().map(Arc::new).collect(),
            config,
            gate: DeviceGate::new(),
            device_budget,
            loaded: Mutex::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &FilecoinConfig {
        &self.config
    }

    /// Loads `kind`'s parameters onto the devices now rather than at its first proof (an
    /// operator loads PoSt's before a deadline, and the larger kinds first: each pipeline
    /// plans its partitions' device memory with what is free when it is built).
    pub fn preload(&self, kind: ProofKind) -> Result<(), FilecoinError> {
        self.pipeline(kind).map(drop)
    }

    /// Frees `kind`'s resident parameters once its proofs in flight finish; returns
    /// whether they were loaded.
    pub fn unload(&self, kind: ProofKind) -> Result<bool, FilecoinError> {
        let id = kind.circuit_identifier()?;
        let slot = lock(&self.loaded).remove(&id);
        Ok(slot.is_some_and(|slot| lock(&slot).take().is_some()))
    }

    /// The pipeline of `kind`, built on first use.
    fn pipeline(&self, kind: ProofKind) -> Result<Arc<Pipeline>, FilecoinError> {
        let id = kind.circuit_identifier()?;
        let slot = Arc::clone(lock(&self.loaded).entry(id).or_default());
        // Only this kind's callers wait while its parameters load.
        let mut slot = lock(&slot);
        if let Some(pipeline) = &*slot {
            return Ok(Arc::clone(pipeline));
        }
        let params = Arc::new(params::open(kind, self.config.generate.allows(kind))?);
        let mut config = self.config.pipeline.clone();
        config.device_gate = Some(self.gate.clone());
        config.priority = kind.priority();
        let resident_before = self.backends[0].tracker().current(MemoryKind::Device);
        if let Some(budget) = self.device_budget {
            // Other kinds' parameters already hold part of the device.
            config.device_budget_bytes = Some(budget.saturating_sub(resident_before));
        }
        let matrices = match self.config.matrices {
            true => Some(Arc::new(params::matrices(kind)?)),
            false => None,
        };
        let start = Instant::now();
        let backends = self.backends.clone();
        let pipeline = match matrices {
            Some(matrices) => Pipeline::with_matrices(params, backends, &config, matrices),
            None => Pipeline::new(params, backends, &config),
        }
        .map_err(|source| FilecoinError::Setup {
            kind: kind.to_string(),
            source,
        })?;
        if let Some(budget) = self.device_budget {
            // The pipeline capped the shared trackers at what was left for it; the cap
            // is the whole budget again, which every kind's parameters count against.
            for backend in &self.backends {
                backend
                    .tracker()
                    .set_limit(MemoryKind::Device, Some(budget));
            }
        }
        log::info!(
            "{kind}: parameters resident on {} device(s) in {:.2?} ({} device bytes); plan {:?}",
            self.backends.len(),
            start.elapsed(),
            self.backends[0]
                .tracker()
                .current(MemoryKind::Device)
                .saturating_sub(resident_before),
            pipeline.plan()
        );
        let pipeline = Arc::new(pipeline);
        *slot = Some(Arc::clone(&pipeline));
        Ok(pipeline)
    }

    /// Proves the partitions of one proof of `kind`; the proofs come back in order.
    pub(crate) fn prove<C>(
        &self,
        kind: ProofKind,
        circuits: Vec<C>,
    ) -> Result<Vec<Proof>, FilecoinError>
    where
        C: Circuit<blstrs::Scalar> + Send + 'static,
    {
        let count = circuits.len();
        self.run(kind, count, "", |pipeline| {
            pipeline.submit(circuits, &mut OsRng)
        })
    }

    /// [`prove`](Self::prove) for partitions made of independent parts: synthesized on
    /// every core ([`Pipeline::submit_forked`]) unless the configuration asks for the
    /// sequential synthesis, which proves the same circuits ([`Forked`]).
    pub(crate) fn prove_forked<F>(
        &self,
        kind: ProofKind,
        forks: Vec<F>,
    ) -> Result<Vec<Proof>, FilecoinError>
    where
        F: Fork<blstrs::Scalar> + Send + 'static,
    {
        let count = forks.len();
        match self.config.forked_synthesis {
            true => self.run(kind, count, ", forked synthesis", |pipeline| {
                pipeline.submit_forked(forks, &mut OsRng)
            }),
            false => self.run(kind, count, "", |pipeline| {
                let whole: Vec<_> = forks.into_iter().map(Forked).collect();
                pipeline.submit(whole, &mut OsRng)
            }),
        }
    }

    /// Submits one proof of `count` partitions through `submit` to `kind`'s pipeline and
    /// waits for it, logging each partition's phases.
    fn run(
        &self,
        kind: ProofKind,
        count: usize,
        how: &str,
        submit: impl FnOnce(&Pipeline) -> Result<ProofHandle, PipelineError>,
    ) -> Result<Vec<Proof>, FilecoinError> {
        let pipeline = self.pipeline(kind)?;
        let start = Instant::now();
        log::info!("{kind}: proving {count} partition(s){how}");
        let proving = |source| FilecoinError::Proving {
            kind: kind.to_string(),
            source,
        };
        let (proofs, reports) = submit(&pipeline)
            .map_err(proving)?
            .wait()
            .map_err(proving)?;
        for (k, report) in reports.iter().enumerate() {
            log::info!(
                "{kind}: partition {k}: 2^{}; {}; {:.2} s from submission",
                report.proof.domain_size.trailing_zeros(),
                report.proof.phases,
                report.latency.as_secs_f64()
            );
            log::debug!("{kind}: partition {k}: {report:?}");
        }
        log::info!(
            "{kind}: {count} partition(s) proved in {:.2?}",
            start.elapsed()
        );
        Ok(proofs)
    }
}

/// The proofs' bytes as filecoin-proofs writes them: each partition's 192-byte proof in
/// order.
pub(crate) fn proof_bytes(proofs: &[Proof]) -> Vec<u8> {
    proofs.iter().flat_map(|p| p.to_bytes()).collect()
}

/// A poisoned lock still holds a consistent map (every update is one insert or remove).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
