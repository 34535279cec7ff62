//! Parameters larger than the device budget: the pipeline streams the queries that do not
//! fit, proving the partitions waiting together in passes, and its proofs are the bytes the
//! resident pipeline gives for the same r and s. On the CPU backend and on OpenCL (PoCL in
//! CI, where a missing platform fails: `SLUICE_REQUIRE_OPENCL=1`).

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
use sluice_groth16::{
    generate_random_parameters, prepare_verifying_key, verify_proof, Parameters, Proof, Residency,
};
use sluice_pipeline::{PartitionReport, Pipeline, PipelineConfig, PipelineError, ResidencyChoice};

const LOG_N: u32 = 9;
const PARTITIONS: u64 = 5;

/// Two proofs of `PARTITIONS` partitions through a pipeline of `config`, the blinding from
/// `seed`: the proofs and the partitions' reports.
fn prove<B: ComputeBackend + 'static>(
    backend: B,
    params: &Arc<Parameters>,
    config: &PipelineConfig,
    seed: u64,
) -> (Pipeline, Vec<Proof>, Vec<PartitionReport>) {
    let pipeline = Pipeline::new(Arc::clone(params), vec![backend], config).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let handles: Vec<_> = (0..2)
        .map(|q| {
            let circuits = (0..PARTITIONS)
                .map(|p| BitDecomposition::<Fr>::filling_domain(LOG_N, Some(seed + q * 10 + p)))
                .collect();
            pipeline.submit(circuits, &mut rng).unwrap()
        })
        .collect();
    let (mut proofs, mut reports) = (Vec::new(), Vec::new());
    for h in handles {
        let (p, r) = h.wait().unwrap();
        proofs.extend(p);
        reports.extend(r);
    }
    (pipeline, proofs, reports)
}

/// `half_fits`: a pass fits in half the parameters' bytes (not on OpenCL at this size: its
/// MSM scratch has a floor larger than that).
fn streamed_proofs_equal_resident_ones<B, F>(make_backend: F, seed: u64, half_fits: bool)
where
    B: ComputeBackend + 'static,
    F: Fn() -> B,
{
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let params = Arc::new(
        generate_random_parameters(
            BitDecomposition::<Fr>::filling_domain(LOG_N, None),
            &mut rng,
        )
        .unwrap(),
    );
    let pvk = prepare_verifying_key(&params.vk);
    let base = PipelineConfig {
        workers: 3,
        host_budget_bytes: Some(1 << 30),
        device_budget_bytes: Some(1 << 30),
        ..PipelineConfig::default()
    };
    let (resident, expect, _) = prove(make_backend(), &params, &base, seed);
    let plan = *resident.plan();
    assert!(plan.residency.is_all(), "{plan:?}");
    assert_eq!((plan.pass_partitions, plan.stream_batch_len), (1, None));
    drop(resident);

    // A device budget one byte short of resident, or half the parameters where the
    // backend's MSM scratch is small enough: the planner streams what does not fit.
    let short = plan.params_device_bytes + plan.partition_device_bytes - 1;
    let tiny = PipelineConfig {
        device_budget_bytes: Some(match half_fits {
            true => plan.params_device_bytes / 2,
            false => short,
        }),
        ..base.clone()
    };
    let every_query = PipelineConfig {
        residency: ResidencyChoice::Fixed(Residency::NONE),
        stream_batch_len: Some(100),
        pass_partitions: Some(4),
        ..base.clone()
    };
    // The host holding two partitions' h at once: H and h's MSMs in groups of two (the
    // last of one), the passes still of four.
    let h_groups = PipelineConfig {
        pass_h_group: Some(2),
        ..every_query.clone()
    };
    // None on the host: each h's MSM from the device right after its H.
    let h_from_device = PipelineConfig {
        pass_h_group: Some(0),
        ..every_query.clone()
    };
    let configs = [
        ("a small device", tiny),
        ("all streamed", every_query),
        ("h in groups", h_groups),
        ("h from the device", h_from_device),
    ];
    for (what, config) in configs {
        let backend = make_backend();
        let tracker = backend.tracker().clone();
        let (pipeline, proofs, reports) = prove(backend, &params, &config, seed);
        let plan = *pipeline.plan();
        let at = format!("{what}: {plan:?} (seed {seed})");
        assert!(!plan.residency.is_all(), "{at}");
        assert!(plan.stream_batch_len.is_some(), "{at}");
        match what {
            "h in groups" => assert_eq!((plan.pass_h_group, plan.pass_partitions), (2, 4), "{at}"),
            "h from the device" => assert_eq!(plan.pass_h_group, 0, "{at}"),
            _ => {}
        }
        assert!(
            tracker.peak(MemoryKind::Device) <= config.device_budget_bytes.unwrap(),
            "{at}: the device budget held"
        );
        assert_eq!(
            proofs, expect,
            "{at}: the proofs differ from the resident pipeline's"
        );
        for (k, proof) in proofs.iter().enumerate() {
            assert!(
                verify_proof(&pvk, proof, &[]).unwrap(),
                "{at}, partition {k}"
            );
        }
        // Every partition streamed its share of the bases; some shared a pass.
        assert!(reports.iter().all(|r| r.proof.streamed_bytes > 0), "{at}");
        let passes = reports.iter().map(|r| r.proof.pass_partitions);
        println!(
            "{at}: partitions per pass {:?}",
            passes.clone().collect::<Vec<_>>()
        );
        assert!(
            passes
                .clone()
                .all(|k| (1..=plan.pass_partitions).contains(&k)),
            "{at}"
        );
    }

    // A budget no pass fits in is refused when planning, naming what did not fit.
    let none = PipelineConfig {
        device_budget_bytes: Some(1 << 10),
        ..base
    };
    match Pipeline::new(Arc::clone(&params), vec![make_backend()], &none) {
        Err(PipelineError::DeviceBudgetTooSmall { .. }) => {}
        Err(e) => panic!("seed {seed}: expected DeviceBudgetTooSmall, got {e}"),
        Ok(p) => panic!("seed {seed}: planned {:?} in 1 KiB", p.plan()),
    }
}

#[test]
fn cpu_streamed_proofs_equal_resident_ones() {
    streamed_proofs_equal_resident_ones(CpuBackend::new, 4711, true);
}

#[test]
fn opencl_streamed_proofs_equal_resident_ones() {
    let config = OpenClConfig {
        devices: DeviceSelector::Index(test_device()),
        ..OpenClConfig::default()
    };
    if backend_or_skip(config.clone()).is_none() {
        return;
    }
    streamed_proofs_equal_resident_ones(|| backend_or_skip(config.clone()).unwrap(), 4712, false);
}
