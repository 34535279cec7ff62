//! Devices whose memory is host memory (the CPU backend, a CPU OpenCL device: PoCL in CI,
//! where a missing platform fails) draw their parameters and partition working sets from
//! the host budget: a host budget that would hold the partitions only if the device's
//! memory were counted apart is refused, and one that holds both proves within it.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use std::sync::Arc;

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend::{ComputeBackend, MemoryKind};
use sluice_backend_cpu::CpuBackend;
use sluice_backend_opencl::test_support::{backend_or_skip, test_device};
use sluice_backend_opencl::{DeviceSelector, OpenClConfig};
use sluice_field::Fr;
use sluice_groth16::demo::BitDecomposition;
use sluice_groth16::{generate_random_parameters, prepare_verifying_key, verify_proof};
use sluice_pipeline::{Pipeline, PipelineConfig, PipelineError};

const LOG_N: u32 = 10;

fn device_memory_comes_out_of_the_host_budget<B, F>(make_backend: F, seed: u64)
where
    B: ComputeBackend + 'static,
    F: Fn() -> B,
{
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let shape = BitDecomposition::<Fr>::filling_domain(LOG_N, None);
    let params = generate_random_parameters(shape, &mut rng).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    // No device budget: it is the host budget, which the plan draws the device's share from.
    let config = |host: u64| PipelineConfig {
        workers: 2,
        host_budget_bytes: Some(host),
        device_budget_bytes: None,
        ..PipelineConfig::default()
    };
    let backend = make_backend();
    let tracker = backend.tracker().clone();
    let trial_pipeline =
        Pipeline::new(Arc::new(params.clone()), vec![backend], &config(1 << 40)).unwrap();
    let trial = *trial_pipeline.plan();
    let params_bytes = tracker.current(MemoryKind::Device);
    drop(trial_pipeline);
    let device_share = params_bytes + trial.partition_device_bytes;
    assert!(params_bytes > 0);
    assert!(trial.fixed_host_bytes >= device_share, "{trial:?}");
    // A budget that holds the device's share, or the partitions beside the other fixed
    // bytes, but not both: what counting the same RAM twice would have accepted.
    let without_device = trial.fixed_host_bytes - device_share + trial.partition_host_bytes;
    let double_counting = without_device.max(device_share);
    assert!(double_counting < trial.fixed_host_bytes + trial.partition_host_bytes);
    match Pipeline::new(
        Arc::new(params.clone()),
        vec![make_backend()],
        &config(double_counting),
    ) {
        Err(PipelineError::HostBudgetTooSmall { .. }) => {}
        Err(e) => panic!("seed {seed}: expected HostBudgetTooSmall, got {e}"),
        Ok(p) => panic!(
            "seed {seed}: planned into double-counted RAM: {:?}",
            p.plan()
        ),
    }
    let budget = trial.fixed_host_bytes + trial.partition_host_bytes;
    let backend = make_backend();
    let tracker = backend.tracker().clone();
    let pipeline = Pipeline::new(Arc::new(params.clone()), vec![backend], &config(budget)).unwrap();
    let circuits: Vec<_> = (0..3)
        .map(|k| BitDecomposition::<Fr>::filling_domain(LOG_N, Some(seed + k)))
        .collect();
    let (proofs, _) = pipeline.submit(circuits, &mut rng).unwrap().wait().unwrap();
    for proof in &proofs {
        assert!(verify_proof(&pvk, proof, &[]).unwrap(), "seed {seed}");
    }
    let stats = pipeline.stats();
    // The device's memory and the partitions' together stayed within the one budget.
    let device_peak = tracker.peak(MemoryKind::Device);
    assert!(
        device_peak + stats.host_reserved_peak <= budget,
        "seed {seed}: device {device_peak} + partitions {} > {budget}",
        stats.host_reserved_peak
    );
}

#[test]
fn cpu_backend_memory_comes_out_of_the_host_budget() {
    device_memory_comes_out_of_the_host_budget(CpuBackend::new, 95);
}

#[test]
fn cpu_opencl_device_memory_comes_out_of_the_host_budget() {
    let config = OpenClConfig {
        devices: DeviceSelector::Index(test_device()),
        ..OpenClConfig::default()
    };
    let Some(probe) = backend_or_skip(config.clone()) else {
        return;
    };
    // Only a device in host memory is in question here (CI's PoCL is one).
    if !probe.info().host_memory_shared {
        return;
    }
    device_memory_comes_out_of_the_host_budget(|| backend_or_skip(config.clone()).unwrap(), 96);
}
