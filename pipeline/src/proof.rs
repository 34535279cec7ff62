//! Per-proof bookkeeping: every partition of a submitted proof ends as proved, failed, or
//! cancelled, and the handle waits for all of them.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use sluice_groth16::{Proof, ProofReport};

use crate::sync::lock;
use crate::PipelineError;

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
    /// When its device work ended: the end of its pass, shared by every partition in it.
    pub finished: Instant,
}

pub(crate) struct ProofInner {
    pub(crate) proofs: Vec<Option<Proof>>,
    pub(crate) reports: Vec<Option<PartitionReport>>,
    pub(crate) remaining: usize,
    pub(crate) error: Option<PipelineError>,
}

/// One submitted proof's partitions as they complete.
pub(crate) struct ProofState {
    pub(crate) inner: Mutex<ProofInner>,
    pub(crate) done: Condvar,
}

impl ProofState {
    pub(crate) fn failed(&self) -> bool {
        lock(&self.inner).error.is_some()
    }

    /// Records partition `index`'s outcome; the first failure fails the proof.
    pub(crate) fn finish(
        &self,
        index: usize,
        outcome: Result<(Proof, PartitionReport), PipelineError>,
    ) {
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
    pub(crate) fn cancel(&self, index: usize) {
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
    pub(crate) state: Arc<ProofState>,
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
