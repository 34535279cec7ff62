//! Faults: a device allocation refused in the middle of a proof (the device tracker's
//! limit lowered under a running pipeline, at every stage of a partition's device work)
//! fails that proof with the cause, frees what it held, and the pipeline goes on with the
//! next proofs, in memory, with streaming H, and with every query of the parameters
//! streamed in passes of several partitions. On the CPU backend and on OpenCL (PoCL in CI, where a missing platform
//! fails: `SLUICE_REQUIRE_OPENCL=1`).

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend::{BackendError, ComputeBackend, MemoryKind};
use sluice_backend_cpu::CpuBackend;
use sluice_backend_opencl::test_support::{backend_or_skip, test_device};
use sluice_backend_opencl::{DeviceSelector, OpenClConfig};
use sluice_field::Fr;
use sluice_groth16::demo::MimcLike;
use sluice_groth16::{
    generate_random_parameters, prepare_verifying_key, verify_proof, Groth16Error,
    PreparedVerifyingKey, Proof, Residency,
};
use sluice_pipeline::{
    HModeChoice, PartitionFootprint, Pipeline, PipelineConfig, PipelineError, ProofHandle,
    ResidencyChoice,
};

const LOG_N: u32 = 8;
const PARTITIONS: usize = 3;
/// A proof that takes this long is stuck (one takes well under a second here).
const STUCK: Duration = Duration::from_secs(120);

/// Waits for `handle`. If the pipeline stopped serving, the test process exits failed:
/// a panic would hang in the pipeline's drop, which finishes the submitted work.
fn wait(handle: ProofHandle) -> Result<Vec<Proof>, PipelineError> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(handle.wait().map(|(proofs, _)| proofs));
    });
    rx.recv_timeout(STUCK).unwrap_or_else(|_| {
        eprintln!("no result after {STUCK:?}: the pipeline stopped serving");
        std::process::exit(1)
    })
}

/// Submits one proof of `PARTITIONS` partitions.
fn submit(pipeline: &Pipeline, rng: &mut ChaCha20Rng) -> (ProofHandle, Vec<Vec<Fr>>) {
    let (circuits, inputs): (Vec<_>, Vec<_>) = (0..PARTITIONS)
        .map(|_| {
            let c = MimcLike::filling_domain(LOG_N, Some(Fr::random(&mut *rng)));
            let inputs = MimcLike::public_inputs(c.x.unwrap(), c.rounds);
            (c, inputs)
        })
        .unzip();
    (pipeline.submit(circuits, rng).unwrap(), inputs)
}

fn prove_and_verify(
    pipeline: &Pipeline,
    pvk: &PreparedVerifyingKey,
    rng: &mut ChaCha20Rng,
    seed: u64,
) {
    let (handle, inputs) = submit(pipeline, rng);
    let proofs = wait(handle).unwrap();
    for (proof, inputs) in proofs.iter().zip(&inputs) {
        assert!(verify_proof(pvk, proof, inputs).unwrap(), "seed {seed}");
    }
}

/// The fault scenario on `backend`, in each H mode.
fn device_faults_fail_one_proof_and_the_pipeline_goes_on<B, F>(make_backend: F, seed: u64)
where
    B: ComputeBackend + 'static,
    F: Fn() -> B,
{
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let params =
        generate_random_parameters(MimcLike::<Fr>::filling_domain(LOG_N, None), &mut rng).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    let footprint =
        PartitionFootprint::new(&sluice_groth16::ParameterInfo::query_lengths(&params), 3);
    let streaming = HModeChoice::Streaming {
        device_budget_bytes: 2 * footprint.vector_bytes(),
    };
    // In memory, streaming H, and every query streamed in passes of up to three.
    let streamed = ResidencyChoice::Fixed(Residency::NONE);
    let runs = [
        (HModeChoice::InMemory, ResidencyChoice::Auto),
        (streaming, ResidencyChoice::Auto),
        (HModeChoice::InMemory, streamed),
    ];
    for (h_mode, residency) in runs {
        let mut config = PipelineConfig {
            workers: 2,
            host_budget_bytes: Some(1 << 30),
            device_budget_bytes: Some(1 << 30),
            h_mode,
            device_wait: Duration::from_millis(10),
            residency,
            stream_batch_len: Some(64),
            pass_partitions: Some(PARTITIONS),
            ..PipelineConfig::default()
        };
        let h_mode = format!("{h_mode:?}, {residency:?}");
        // A host budget of exactly two partitions (next to what the plan holds fixed): a
        // reservation a failed proof kept would stall the next proofs, which `wait`
        // reports.
        let plan = *Pipeline::new(Arc::new(params.clone()), vec![make_backend()], &config)
            .unwrap()
            .plan();
        config.host_budget_bytes = Some(plan.fixed_host_bytes + 2 * plan.partition_host_bytes);
        let backend = make_backend();
        // Cloned before the backend moves into the pipeline: the same counters.
        let tracker = backend.tracker().clone();
        let pipeline = Pipeline::new(Arc::new(params.clone()), vec![backend], &config).unwrap();
        assert_eq!(pipeline.plan().workers, 2, "{:?}", pipeline.plan());
        let all_resident = residency == ResidencyChoice::Auto;
        assert_eq!(pipeline.plan().residency.is_all(), all_resident, "{h_mode}");
        // A proof first, so the baseline holds whatever the backend keeps between proofs.
        prove_and_verify(&pipeline, &pvk, &mut rng, seed);
        let baseline = tracker.current(MemoryKind::Device);
        let limit = tracker.limit(MemoryKind::Device);
        tracker.reset_peaks();
        prove_and_verify(&pipeline, &pvk, &mut rng, seed);
        let work = tracker.peak(MemoryKind::Device) - baseline;
        assert!(work > 0, "{h_mode}: partitions allocate device memory");

        // Limits a half vector apart (refusals while a, b and H's vectors are allocated)
        // and at eighths of a partition's device work (in the MSMs, whose scratch
        // dominates it on OpenCL): refusals at every stage.
        let half_vector = footprint.vector_bytes() / 2;
        let mut cuts: Vec<u64> = (1..8)
            .map(|k| k * half_vector)
            .chain((1..8).map(|eighth| work * eighth / 8))
            .filter(|&c| c < work)
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut failed = 0;
        for &extra in &cuts {
            let cut = baseline + extra;
            tracker.set_limit(MemoryKind::Device, Some(cut));
            tracker.reset_peaks();
            let (handle, inputs) = submit(&pipeline, &mut rng);
            let at = format!("{h_mode}, limit {extra} of {work} bytes of work, seed {seed}");
            match wait(handle) {
                Err(
                    e @ PipelineError::Partition {
                        source:
                            Groth16Error::Backend(BackendError::OutOfMemory {
                                kind: MemoryKind::Device,
                                ..
                            }),
                        ..
                    },
                ) => {
                    println!("{at}: {e}");
                    failed += 1;
                }
                // A backend may fit the work in less (smaller MSM pieces): then it verifies.
                Ok(proofs) => {
                    for (proof, inputs) in proofs.iter().zip(&inputs) {
                        assert!(verify_proof(&pvk, proof, inputs).unwrap(), "{at}");
                    }
                }
                Err(e) => panic!("{at}: expected a device out-of-memory error, got {e}"),
            }
            assert!(
                tracker.peak(MemoryKind::Device) <= cut,
                "{at}: the limit held"
            );
            assert_eq!(
                tracker.current(MemoryKind::Device),
                baseline,
                "{at}: the proof freed its device memory"
            );
            tracker.set_limit(MemoryKind::Device, limit);
            prove_and_verify(&pipeline, &pvk, &mut rng, seed);
        }
        println!(
            "{h_mode}: {failed} of {} limits failed their proof",
            cuts.len()
        );
        // Not vacuous: the smaller limits (below a single vector) did refuse.
        assert!(failed >= 1, "{h_mode}: no limit failed a proof");
        assert_eq!(tracker.current(MemoryKind::Device), baseline);
    }
}

#[test]
fn cpu_device_faults_fail_one_proof_and_the_pipeline_goes_on() {
    device_faults_fail_one_proof_and_the_pipeline_goes_on(CpuBackend::new, 91);
}

#[test]
fn opencl_device_faults_fail_one_proof_and_the_pipeline_goes_on() {
    let config = OpenClConfig {
        devices: DeviceSelector::Index(test_device()),
        ..OpenClConfig::default()
    };
    if backend_or_skip(config.clone()).is_none() {
        return;
    }
    device_faults_fail_one_proof_and_the_pipeline_goes_on(
        || backend_or_skip(config.clone()).unwrap(),
        92,
    );
}
