//! The synthesis workers: each takes a partition, synthesizes it inside the host budget
//! (and runs the CPU b_g2 MSM where that is planned), and hands it to the device workers.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sluice_backend::{Allocation, HostBudget, MemoryKind, MemoryTracker};
use sluice_backend_cpu::{CpuBackend, CpuBases};
use sluice_field::{Fr, G2Affine, G2Projective};
use sluice_groth16::phases::b_g2_msm;
use sluice_groth16::{
    Capacity, ConstraintMatrices, Groth16Error, ProvingAssignment, SynthesisOptions,
};

use crate::budget::{HostPool, PartitionBudget};
use crate::proof::ProofState;
use crate::sync::lock;
use crate::PipelineError;

pub(crate) type Synthesize =
    Box<dyn FnOnce(&SynthesisOptions) -> Result<ProvingAssignment, Groth16Error> + Send>;

/// A partition waiting for synthesis.
pub(crate) struct Job {
    pub(crate) proof: Arc<ProofState>,
    pub(crate) index: usize,
    pub(crate) synthesize: Synthesize,
    pub(crate) r: Fr,
    pub(crate) s: Fr,
}

/// A synthesized partition waiting for a device.
pub(crate) struct Ready {
    pub(crate) proof: Arc<ProofState>,
    pub(crate) index: usize,
    pub(crate) cs: ProvingAssignment,
    pub(crate) r: Fr,
    pub(crate) s: Fr,
    pub(crate) b_g2: Option<G2Projective>,
    /// Its bytes while it waits for a device.
    pub(crate) held: Allocation,
    /// The partition's share of the host budget: its vectors give their bytes back as
    /// they drop.
    pub(crate) budget: Arc<PartitionBudget>,
    pub(crate) started: Instant,
    /// How long its synthesis took (and the CPU b_g2 MSM, where that runs here).
    pub(crate) synthesis: Duration,
}

/// The CPU side of the b_g2 MSM: a CPU backend holding the b_g2 bases.
pub(crate) type CpuG2 = Arc<(CpuBackend, CpuBases<G2Affine>)>;

pub(crate) struct SynthesisWorker {
    pub(crate) jobs: Arc<Mutex<Receiver<Job>>>,
    pub(crate) ready: SyncSender<Ready>,
    pub(crate) pool: Arc<HostPool>,
    pub(crate) held: MemoryTracker,
    /// The partitions' shape, from the parameters.
    pub(crate) capacity: Capacity,
    /// The partitions' constraint matrices, where recorded ([`Pipeline::with_matrices`]).
    pub(crate) matrices: Option<Arc<ConstraintMatrices>>,
    /// Host bytes the CPU b_g2 MSM decodes scalars into.
    pub(crate) decode_bytes: u64,
    pub(crate) cpu_g2: Option<CpuG2>,
}

impl SynthesisWorker {
    pub(crate) fn run(self) {
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
    pub(crate) fn synthesize(
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
