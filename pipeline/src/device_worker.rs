//! The device workers, one per backend: each proves the partitions synthesized for it,
//! alone where every query of the parameters is resident, else in passes of the partitions
//! waiting together over one upload of each batch of streamed bases.

use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sluice_backend::{ComputeBackend, MemoryKind, MemoryTracker};
use sluice_groth16::phases::{prove_assignment_with_b_g2, prove_pass, PassPartition};
use sluice_groth16::{HostParameters, PartlyResident, ProverConfig, ResidentParameters};

use crate::gate::{DeviceGate, Priority};
use crate::proof::PartitionReport;
use crate::sync::lock;
use crate::synthesis_worker::Ready;
use crate::PipelineError;

/// Per-device busy time and the pipeline's age.
pub(crate) struct Stats {
    pub(crate) started: Instant,
    pub(crate) busy: Vec<Mutex<Duration>>,
}

/// A device's parameters: every query resident, or some streamed from the host.
pub(crate) enum DeviceParams<B: ComputeBackend> {
    Resident(Box<ResidentParameters<B>>),
    Partly(Box<PartlyResident<B, dyn HostParameters + Send + Sync>>),
}

pub(crate) struct DeviceWorker<B: ComputeBackend> {
    pub(crate) backend: B,
    /// Device bytes one partition's work is planned to take.
    pub(crate) partition_device_bytes: u64,
    /// How long a partition waits for device memory others hold before trying anyway.
    pub(crate) device_wait: Duration,
    pub(crate) params: DeviceParams<B>,
    /// Most partitions proved in one pass over streamed parameters.
    pub(crate) pass_partitions: usize,
    pub(crate) ready: Arc<Mutex<Receiver<Ready>>>,
    pub(crate) config: ProverConfig,
    pub(crate) stats: Arc<Stats>,
    pub(crate) device: usize,
    /// Turns shared with other pipelines on this device, and this pipeline's place there.
    pub(crate) gate: Option<(DeviceGate, Priority)>,
}

impl<B: ComputeBackend> DeviceWorker<B> {
    /// Waits while the device tracker's limit leaves less than the partition's planned
    /// working set (others share the device); after `device_wait` it tries anyway, and a
    /// refused allocation then fails the partition with the cause.
    pub(crate) fn wait_for_device_memory(&self, index: usize) {
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
    pub(crate) fn next_partitions(&self) -> Option<Vec<Ready>> {
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

    pub(crate) fn run(self) {
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
                            &**params,
                            p.r,
                            p.s,
                            &self.backend,
                            &config,
                            p.b_g2,
                        )
                    })
                    .collect(),
                DeviceParams::Partly(params) => {
                    prove_pass(parts, &**params, &self.backend, &config)
                }
            };
            let finished = Instant::now();
            *lock(&self.stats.busy[self.device]) += finished - t;
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
                            latency: finished - started,
                            finished,
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
