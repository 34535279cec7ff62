//! Streaming-mode proofs end to end: they verify, equal the in-memory proofs with the same
//! blinding, and stay within their residency bounds as the trackers measure them.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend::{ComputeBackend, MemoryKind, MemoryTracker};
use sluice_backend_cpu::CpuBackend;
use sluice_field::{Fr, G2Affine};
use sluice_groth16::demo::MimcLike;
use sluice_groth16::*;

#[test]
fn streaming_proofs_verify_equal_in_memory_ones_and_respect_residency_bounds() {
    let seed = 91;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    for log_n in [8u32, 10, 12] {
        let n = 1usize << log_n;
        let vector = n as u64 * 32;
        let params =
            generate_random_parameters(MimcLike::<Fr>::filling_domain(log_n, None), &mut rng)
                .unwrap();
        let pvk = prepare_verifying_key(&params.vk);
        let x = Fr::random(&mut rng);
        let circuit = MimcLike::filling_domain(log_n, Some(x));
        let inputs = MimcLike::public_inputs(x, circuit.rounds);
        let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));

        // The device limit is the parameters plus the streaming budget: any allocation
        // beyond the budget would fail the proof. Half a vector streams four-step; two
        // vectors take the two-vector scheme.
        let tracker = MemoryTracker::default();
        let backend = CpuBackend::with_tracker(tracker.clone());
        let resident = ResidentParameters::upload(&params, &backend).unwrap();
        let params_bytes = tracker.current(MemoryKind::Device);

        let prove = |h_mode| {
            let cs = ProvingAssignment::synthesize(circuit.clone()).unwrap();
            let config = ProverConfig {
                h_mode,
                host_tracker: Some(MemoryTracker::default()),
                ..ProverConfig::default()
            };
            prove_assignment(cs, &resident, r, s, &backend, &config).unwrap()
        };
        let mut streamed = Vec::new();
        for budget in [vector / 2, 2 * vector] {
            tracker.set_limit(MemoryKind::Device, Some(params_bytes + budget));
            let streaming = HMode::Streaming {
                device_budget_bytes: budget,
            };
            let (p_stream, report) = prove(streaming);
            assert!(
                verify_proof(&pvk, &p_stream, &inputs).unwrap(),
                "seed {seed}, 2^{log_n}, budget {budget}"
            );
            assert_eq!(report.h_mode, streaming);
            assert_eq!(report.device_baseline_bytes, params_bytes);
            let own_device = report.memory.device_peak - report.device_baseline_bytes;
            assert!(
                own_device <= budget,
                "seed {seed}, 2^{log_n}: streaming device peak {own_device} > budget {budget}"
            );
            // Four-step: a, b, c's intermediate and one chunk of staging. Two vectors: a, b.
            let plan = StreamingPlan::new(n, budget).unwrap();
            let host = match plan.holds_two_vectors() {
                true => 2 * vector,
                false => 3 * vector + plan.chunk_len() as u64 * 32,
            };
            assert_eq!(
                report.host_peak_bytes, host,
                "seed {seed}, 2^{log_n}, budget {budget}"
            );
            streamed.push(p_stream);
        }

        tracker.set_limit(MemoryKind::Device, None);
        let (p_mem, report) = prove(HMode::InMemory);
        for p_stream in &streamed {
            assert_eq!(
                &p_mem, p_stream,
                "same r, s: the same proof, seed {seed}, 2^{log_n}"
            );
        }
        // A waiting partition holds a and b (their page tables aside: a few hundred bytes);
        // each is freed once uploaded.
        assert!(
            report.host_peak_vectors() <= 2.05,
            "seed {seed}, 2^{log_n}: {report:?}"
        );
        assert!(report.device_working_set_vectors() >= 3.0, "{report:?}");
    }
}

#[test]
fn a_synthesized_partition_holds_two_vectors_and_its_witness() {
    let log_n = 10;
    let cs = ProvingAssignment::synthesize(MimcLike::filling_domain(log_n, Some(Fr::ONE))).unwrap();
    let n = 1u64 << log_n;
    let witness = (cs.input_assignment().len().next_power_of_two().max(4)
        + cs.aux_assignment().len().next_power_of_two()) as u64
        * 32;
    // Dense values: raw pages, plus their page tables and the density bitmaps.
    let bytes = cs.host_bytes();
    assert!(
        bytes >= 2 * n * 32 + witness && bytes <= 2 * n * 32 + witness + 2048,
        "{bytes}"
    );
}

#[test]
fn a_budget_below_one_row_is_refused_before_any_work() {
    let mut rng = ChaCha20Rng::seed_from_u64(92);
    let params =
        generate_random_parameters(MimcLike::<Fr>::filling_domain(8, None), &mut rng).unwrap();
    let backend = CpuBackend::new();
    let cs = ProvingAssignment::synthesize(MimcLike::filling_domain(8, Some(Fr::ONE))).unwrap();
    let config = ProverConfig {
        h_mode: HMode::Streaming {
            device_budget_bytes: 100,
        },
        ..ProverConfig::default()
    };
    let r = prove_assignment(cs, &params, Fr::ONE, Fr::ONE, &backend, &config);
    assert!(matches!(
        r,
        Err(Groth16Error::Backend(
            sluice_backend::BackendError::OutOfMemory {
                kind: MemoryKind::Device,
                ..
            }
        ))
    ));
    assert_eq!(backend.tracker().current(MemoryKind::Device), 0);
}

/// With host parameters and MSMs in batches of 64 scalars, a device limit far below one
/// query of bases (a 2^10 domain: 1023 h bases) still proves: the proof verifies and equals
/// the unbatched one, and the tracked device peak stays within the limit. Without batches
/// the same limit is refused.
#[test]
fn batched_msms_prove_with_less_device_memory_than_a_query() {
    let seed = 94;
    let log_n = 10;
    let n = 1u64 << log_n;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let params =
        generate_random_parameters(MimcLike::<Fr>::filling_domain(log_n, None), &mut rng).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    let x = Fr::random(&mut rng);
    let circuit = MimcLike::filling_domain(log_n, Some(x));
    let inputs = MimcLike::public_inputs(x, circuit.rounds);
    let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
    let batch = 64u64;
    // Four-step H within half a vector; one batch of G2 bases (the largest) within the rest.
    let budget = n * 32 / 2;
    let limit = budget.max(batch * std::mem::size_of::<G2Affine>() as u64);
    assert!(limit < (n - 1) * std::mem::size_of::<sluice_field::G1Affine>() as u64);
    let prove = |msm_batch_len, limit: Option<u64>| {
        let tracker = MemoryTracker::default();
        tracker.set_limit(MemoryKind::Device, limit);
        let backend = CpuBackend::with_tracker(tracker.clone());
        let cs = ProvingAssignment::synthesize(circuit.clone()).unwrap();
        let config = ProverConfig {
            h_mode: HMode::Streaming {
                device_budget_bytes: budget,
            },
            msm_batch_len,
            ..ProverConfig::default()
        };
        let proof = prove_assignment(cs, &params, r, s, &backend, &config);
        (proof, tracker.peak(MemoryKind::Device))
    };
    let (batched, peak) = prove(Some(batch as usize), Some(limit));
    let (batched, _) = batched.unwrap();
    assert!(
        peak <= limit,
        "seed {seed}: device peak {peak} > limit {limit}"
    );
    assert!(
        verify_proof(&pvk, &batched, &inputs).unwrap(),
        "seed {seed}"
    );
    let (whole, _) = prove(None, None);
    assert_eq!(
        whole.unwrap().0,
        batched,
        "same r, s: the same proof (seed {seed})"
    );
    let (refused, _) = prove(None, Some(limit));
    assert!(
        matches!(
            refused,
            Err(Groth16Error::Backend(
                sluice_backend::BackendError::OutOfMemory { .. }
            ))
        ),
        "seed {seed}: whole queries should not fit the limit"
    );
}
