//! The pipeline end to end on the CPU backend: budgets honoured (tracked peaks), every
//! proof verifies, failures name their partition and leave the pipeline serving.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use std::sync::Arc;

use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend::{ComputeBackend, MemoryKind, MemoryTracker};
use sluice_backend_cpu::CpuBackend;
use sluice_field::Fr;
use sluice_groth16::demo::MimcLike;
use sluice_groth16::{
    generate_random_parameters, prepare_verifying_key, verify_proof, Circuit, ConstraintSystem,
    HMode, Parameters, ResidentParameters, SynthesisError,
};
use sluice_pipeline::{
    G2Placement, HModeChoice, Pipeline, PipelineConfig, PipelineError, ResidencyChoice,
};

const LOG_N: u32 = 8;

/// A demo partition, or one that fails (synthesis error) or panics, to test failures.
#[derive(Clone)]
enum Part {
    Good(MimcLike<Fr>),
    Fails,
    Panics,
}

impl Circuit<Fr> for Part {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self {
            Part::Good(c) => c.synthesize(cs),
            Part::Fails => Err(SynthesisError::AssignmentMissing),
            Part::Panics => panic!("a buggy circuit"),
        }
    }
}

fn setup(seed: u64) -> (Parameters, ChaCha20Rng) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let params =
        generate_random_parameters(MimcLike::<Fr>::filling_domain(LOG_N, None), &mut rng).unwrap();
    (params, rng)
}

fn partitions(count: usize, rng: &mut ChaCha20Rng) -> (Vec<Part>, Vec<Vec<Fr>>) {
    (0..count)
        .map(|_| {
            let c = MimcLike::filling_domain(LOG_N, Some(Fr::random(&mut *rng)));
            let inputs = MimcLike::public_inputs(c.x.unwrap(), c.rounds);
            (Part::Good(c), inputs)
        })
        .unzip()
}

/// Device bytes the parameters take when resident.
fn params_device_bytes(params: &Parameters) -> u64 {
    let b = CpuBackend::new();
    let _resident = ResidentParameters::upload(params, &b).unwrap();
    b.tracker().current(MemoryKind::Device)
}

/// Host bytes of the CPU copy of b_g2 (the pipeline's fixed host bytes).
fn b_g2_bytes(params: &Parameters) -> u64 {
    let b = CpuBackend::new();
    let _g2 = b.upload_bases("b_g2", &params.b_g2).unwrap();
    b.tracker().current(MemoryKind::Device)
}

#[test]
fn stress_small_budgets_many_workers_every_proof_verifies() {
    let seed = 81;
    let (params, mut rng) = setup(seed);
    let pvk = prepare_verifying_key(&params.vk);
    let n = 1u64 << LOG_N;
    // Device: the parameters and 2 vectors, so H must stream. Host: 3 worst-case partitions
    // next to the fixed bytes (the b_g2 copy, a and b decoded for streaming, and the
    // device's memory, which is host memory for the CPU backend), as a first plan says.
    let device_budget = params_device_bytes(&params) + 2 * n * 32;
    let config = |host_budget| PipelineConfig {
        workers: 16,
        host_budget_bytes: Some(host_budget),
        device_budget_bytes: Some(device_budget),
        h_mode: HModeChoice::Auto,
        ..PipelineConfig::default()
    };
    let trial = *Pipeline::new(
        Arc::new(params.clone()),
        vec![CpuBackend::new()],
        &config(1 << 40),
    )
    .unwrap()
    .plan();
    assert!(
        trial.fixed_host_bytes >= b_g2_bytes(&params) + device_budget,
        "{trial:?}"
    );
    // One worst case (the reserve) and room for about three partitions as they really are
    // (a MiMC partition at 2^8 holds about 25 kB): synthesis must wait for memory.
    let per = trial.partition_host_bytes;
    let host_budget = trial.fixed_host_bytes + per + 80_000;
    let tracker = MemoryTracker::default();
    let config = config(host_budget);
    let pipeline = Pipeline::new(
        Arc::new(params.clone()),
        vec![CpuBackend::with_tracker(tracker.clone())],
        &config,
    )
    .unwrap();
    let plan = *pipeline.plan();
    assert_eq!(
        (plan.asked_workers, plan.workers, plan.worst_case_partitions),
        (16, 16, 1),
        "seed {seed}: {plan:?}"
    );
    assert!(matches!(plan.h_mode, HMode::Streaming { .. }), "{plan:?}");

    let mut handles = Vec::new();
    for _ in 0..4 {
        let (circuits, inputs) = partitions(5, &mut rng);
        handles.push((pipeline.submit(circuits, &mut rng).unwrap(), inputs));
    }
    for (handle, inputs) in handles {
        let (proofs, reports) = handle.wait().unwrap();
        for ((proof, inputs), report) in proofs.iter().zip(&inputs).zip(&reports) {
            assert!(verify_proof(&pvk, proof, inputs).unwrap(), "seed {seed}");
            assert!(
                report.proof.memory.device_peak <= device_budget,
                "{report:?}"
            );
            // Streaming: a, b, c's intermediate and one chunk.
            assert!(report.proof.host_peak_vectors() <= 4.0, "{report:?}");
        }
    }
    let stats = pipeline.stats();
    assert!(
        stats.host_reserved_peak <= host_budget - plan.fixed_host_bytes,
        "seed {seed}: reserved {} > budget {host_budget} - fixed {}",
        stats.host_reserved_peak,
        plan.fixed_host_bytes
    );
    assert!(
        stats.host_held_peak <= stats.host_reserved_peak,
        "{stats:?}"
    );
    // Not vacuous: partitions overlapped (20 of them), and the budget, not the 16
    // workers, limited how many synthesized at once.
    assert!(stats.partitions_peak >= 2, "{stats:?}");
    assert!(
        stats.synthesizing_peak >= 2 && stats.synthesizing_peak <= 8,
        "{stats:?}"
    );
    assert!(tracker.peak(MemoryKind::Device) <= device_budget);
    assert!(stats.device_busy[0] > std::time::Duration::ZERO);
}

#[test]
fn in_memory_on_two_devices_verifies() {
    let seed = 82;
    let (params, mut rng) = setup(seed);
    let pvk = prepare_verifying_key(&params.vk);
    let config = PipelineConfig {
        workers: 3,
        host_budget_bytes: Some(1 << 30),
        device_budget_bytes: Some(1 << 30),
        h_mode: HModeChoice::InMemory,
        b_g2: G2Placement::Device,
        ..PipelineConfig::default()
    };
    let pipeline = Pipeline::new(
        Arc::new(params.clone()),
        vec![CpuBackend::new(), CpuBackend::new()],
        &config,
    )
    .unwrap();
    assert_eq!(pipeline.plan().h_mode, HMode::InMemory);
    let (circuits, inputs) = partitions(8, &mut rng);
    let (proofs, reports) = pipeline.submit(circuits, &mut rng).unwrap().wait().unwrap();
    for ((proof, inputs), report) in proofs.iter().zip(&inputs).zip(&reports) {
        assert!(verify_proof(&pvk, proof, inputs).unwrap(), "seed {seed}");
        // A waiting partition holds a and b (and their page tables, a few hundred bytes);
        // the proof frees each once uploaded.
        assert!(report.proof.host_peak_vectors() <= 2.05, "{report:?}");
    }
    // Both devices took partitions: each proof takes far longer than handing one over.
    let busy = pipeline.stats().device_busy;
    assert!(
        busy.len() == 2 && busy.iter().all(|b| !b.is_zero()),
        "{busy:?}"
    );
}

#[test]
fn a_failed_partition_fails_its_proof_and_the_pipeline_keeps_serving() {
    let seed = 83;
    let (params, mut rng) = setup(seed);
    let pvk = prepare_verifying_key(&params.vk);
    let config = PipelineConfig {
        workers: 2,
        host_budget_bytes: Some(1 << 30),
        device_budget_bytes: Some(1 << 30),
        ..PipelineConfig::default()
    };
    let pipeline =
        Pipeline::new(Arc::new(params.clone()), vec![CpuBackend::new()], &config).unwrap();
    let (mut bad, _) = partitions(4, &mut rng);
    bad[2] = Part::Fails;
    let (mut panicking, _) = partitions(3, &mut rng);
    panicking[1] = Part::Panics;
    let failed = pipeline.submit(bad, &mut rng).unwrap();
    let panicked = pipeline.submit(panicking, &mut rng).unwrap();
    let (good, inputs) = partitions(3, &mut rng);
    let served = pipeline.submit(good, &mut rng).unwrap();
    match failed.wait() {
        Err(PipelineError::Partition {
            index: 2,
            source: sluice_groth16::Groth16Error::Synthesis(SynthesisError::AssignmentMissing),
        }) => {}
        other => panic!("expected partition 2 to fail, got {:?}", other.map(|_| ())),
    }
    match panicked.wait() {
        Err(PipelineError::PartitionPanicked { index: 1, message }) => {
            assert_eq!(message, "a buggy circuit")
        }
        other => panic!("expected partition 1 to panic, got {:?}", other.map(|_| ())),
    }
    let (proofs, _) = served.wait().unwrap();
    for (proof, inputs) in proofs.iter().zip(&inputs) {
        assert!(verify_proof(&pvk, proof, inputs).unwrap(), "seed {seed}");
    }
}

#[test]
fn a_cancelled_proof_stops_and_the_next_one_verifies() {
    let seed = 85;
    let (params, mut rng) = setup(seed);
    let pvk = prepare_verifying_key(&params.vk);
    let config = PipelineConfig {
        workers: 1,
        host_budget_bytes: Some(1 << 30),
        device_budget_bytes: Some(1 << 30),
        ..PipelineConfig::default()
    };
    let pipeline =
        Pipeline::new(Arc::new(params.clone()), vec![CpuBackend::new()], &config).unwrap();
    let (circuits, _) = partitions(6, &mut rng);
    let cancelled = pipeline.submit(circuits, &mut rng).unwrap();
    cancelled.cancel();
    assert!(matches!(cancelled.wait(), Err(PipelineError::Cancelled)));
    let (circuits, inputs) = partitions(2, &mut rng);
    let (proofs, _) = pipeline.submit(circuits, &mut rng).unwrap().wait().unwrap();
    for (proof, inputs) in proofs.iter().zip(&inputs) {
        assert!(verify_proof(&pvk, proof, inputs).unwrap(), "seed {seed}");
    }
}

#[test]
fn a_partition_waits_for_device_memory_held_by_another_user() {
    let seed = 86;
    let (params, mut rng) = setup(seed);
    let pvk = prepare_verifying_key(&params.vk);
    let device_budget = params_device_bytes(&params) + (4u64 << LOG_N) * 32;
    let tracker = MemoryTracker::default();
    let config = PipelineConfig {
        workers: 1,
        host_budget_bytes: Some(1 << 30),
        device_budget_bytes: Some(device_budget),
        h_mode: HModeChoice::InMemory,
        ..PipelineConfig::default()
    };
    let pipeline = Pipeline::new(
        Arc::new(params.clone()),
        vec![CpuBackend::with_tracker(tracker.clone())],
        &config,
    )
    .unwrap();
    // Another user of the same device takes half of a partition's working set: proving
    // now would be refused.
    let other = tracker
        .allocate(MemoryKind::Device, "another user", (2u64 << LOG_N) * 32)
        .unwrap();
    let (circuits, inputs) = partitions(1, &mut rng);
    let handle = pipeline.submit(circuits, &mut rng).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    drop(other);
    let (proofs, _) = handle.wait().unwrap();
    assert!(
        verify_proof(&pvk, &proofs[0], &inputs[0]).unwrap(),
        "seed {seed}"
    );
}

#[test]
fn budgets_that_cannot_hold_one_partition_are_refused() {
    let (params, _) = setup(84);
    let base = PipelineConfig {
        workers: 4,
        host_budget_bytes: Some(1 << 30),
        device_budget_bytes: Some(1 << 30),
        ..PipelineConfig::default()
    };
    let small_host = PipelineConfig {
        host_budget_bytes: Some(1000),
        ..base.clone()
    };
    assert!(matches!(
        Pipeline::new(
            Arc::new(params.clone()),
            vec![CpuBackend::new()],
            &small_host
        ),
        Err(PipelineError::HostBudgetTooSmall { .. })
    ));
    // Parameters larger than the device budget: refused where every query must be
    // resident, streamed by default.
    let small_device = PipelineConfig {
        device_budget_bytes: Some(params_device_bytes(&params) - 1),
        residency: ResidencyChoice::Resident,
        ..base
    };
    assert!(matches!(
        Pipeline::new(
            Arc::new(params.clone()),
            vec![CpuBackend::new()],
            &small_device
        ),
        Err(PipelineError::ParametersDoNotFit { .. })
    ));
    let streamed = PipelineConfig {
        residency: ResidencyChoice::Auto,
        ..small_device
    };
    let pipeline = Pipeline::new(Arc::new(params.clone()), vec![CpuBackend::new()], &streamed);
    assert!(!pipeline.unwrap().plan().residency.is_all());
    assert!(matches!(
        Pipeline::new::<CpuBackend, _>(
            Arc::new(params.clone()),
            vec![],
            &PipelineConfig::default()
        ),
        Err(PipelineError::NoDevices)
    ));
}
