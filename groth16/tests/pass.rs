//! Partitions proved together over one pass of the parameters (`prove_pass`) give the proof
//! bytes each gives alone for the same r and s, whatever stays resident, however the
//! witness is chunked and however H runs; a partition that fails its own checks fails
//! alone; the pass streams each batch of bases once for all its partitions.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use std::sync::Arc;

use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend_cpu::CpuBackend;
use sluice_field::Fr;
use sluice_groth16::demo::{BitDecomposition, MimcLike};
use sluice_groth16::phases::{prove_pass, PassPartition};
use sluice_groth16::*;

const LOG_N: u32 = 9;

/// Each partition alone on host parameters, then together in passes over every residency,
/// chunk and H mode: the same bytes.
fn passes_equal_single_proofs<C: Circuit<Fr> + Clone>(
    label: &str,
    seed: u64,
    circuits: Vec<C>,
    params: Parameters,
) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let backend = CpuBackend::new();
    let blinding: Vec<(Fr, Fr)> = circuits
        .iter()
        .map(|_| (Fr::random(&mut rng), Fr::random(&mut rng)))
        .collect();
    let alone: Vec<Proof> = circuits
        .iter()
        .zip(&blinding)
        .map(|(c, &(r, s))| {
            let cs = ProvingAssignment::synthesize(c.clone()).unwrap();
            let config = ProverConfig::default();
            prove_assignment(cs, &params, r, s, &backend, &config)
                .unwrap()
                .0
        })
        .collect();
    let params = Arc::new(params);
    let n = 1u64 << LOG_N;
    let mixed = Residency {
        h: true,
        b_g2: true,
        ..Residency::NONE
    };
    let other = Residency {
        l: true,
        a: true,
        ..Residency::NONE
    };
    for residency in [Residency::NONE, mixed, other, Residency::ALL] {
        let source = PartlyResident::upload(Arc::clone(&params), &backend, residency).unwrap();
        // h groups of 2 (three partitions' h in uneven groups, two in one), and none on
        // the host (each h's MSM from the device, a range of it per batch).
        let plans = [
            (Some(37), Some(2)),
            (Some(37), Some(0)),
            (Some(1 << 20), Some(0)),
            (None, None),
        ];
        for (batch, h_group) in plans {
            for h_mode in [
                HMode::InMemory,
                HMode::Streaming {
                    device_budget_bytes: n * 16,
                },
            ] {
                let parts = circuits
                    .iter()
                    .zip(&blinding)
                    .map(|(c, &(r, s))| PassPartition {
                        cs: ProvingAssignment::synthesize(c.clone()).unwrap(),
                        r,
                        s,
                        b_g2: None,
                    })
                    .collect();
                let config = ProverConfig {
                    h_mode,
                    msm_batch_len: batch,
                    pass_h_group: h_group,
                    ..ProverConfig::default()
                };
                let what = format!(
                    "{label}: {residency}, batch {batch:?}, h group {h_group:?}, {h_mode:?} \
                     (seed {seed})"
                );
                let out = prove_pass(parts, &source, &backend, &config);
                assert_eq!(out.len(), alone.len(), "{what}");
                for (k, (got, expect)) in out.into_iter().zip(&alone).enumerate() {
                    let (proof, report) =
                        got.unwrap_or_else(|e| panic!("{what}, partition {k}: {e}"));
                    assert_eq!(proof, *expect, "{what}, partition {k}");
                    assert_eq!(report.pass_partitions, alone.len(), "{what}");
                    assert_eq!(report.streamed_bytes == 0, residency.is_all(), "{what}");
                }
            }
        }
    }
}

#[test]
fn passes_of_boolean_heavy_partitions_equal_their_proofs_alone() {
    let seed = 4701;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let params = generate_random_parameters(
        BitDecomposition::<Fr>::filling_domain(LOG_N, None),
        &mut rng,
    )
    .unwrap();
    let circuits = (0..3)
        .map(|k| BitDecomposition::<Fr>::filling_domain(LOG_N, Some(seed + k)))
        .collect();
    passes_equal_single_proofs("bits", seed, circuits, params);
}

#[test]
fn passes_of_dense_partitions_with_inputs_equal_their_proofs_alone() {
    let seed = 4702;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let params =
        generate_random_parameters(MimcLike::<Fr>::filling_domain(LOG_N, None), &mut rng).unwrap();
    let circuits = (0..2)
        .map(|_| MimcLike::<Fr>::filling_domain(LOG_N, Some(Fr::random(&mut rng))))
        .collect();
    passes_equal_single_proofs("mimc", seed, circuits, params);
}

/// Streamed bytes per partition fall with the partitions in the pass: each batch of bases
/// goes up once for all of them. And a partition that fails its own checks fails alone.
#[test]
fn a_pass_streams_its_bases_once_and_a_bad_partition_fails_alone() {
    let seed = 4703;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let params = generate_random_parameters(
        BitDecomposition::<Fr>::filling_domain(LOG_N, None),
        &mut rng,
    )
    .unwrap();
    let vk = prepare_verifying_key(&params.vk);
    let params = Arc::new(params);
    let backend = CpuBackend::new();
    let source = PartlyResident::upload(Arc::clone(&params), &backend, Residency::NONE).unwrap();
    let config = ProverConfig {
        msm_batch_len: Some(100),
        ..ProverConfig::default()
    };
    let part = |k: u64| PassPartition {
        cs: ProvingAssignment::synthesize(BitDecomposition::<Fr>::filling_domain(
            LOG_N,
            Some(seed + k),
        ))
        .unwrap(),
        r: Fr::random(ChaCha20Rng::seed_from_u64(k)),
        s: Fr::random(ChaCha20Rng::seed_from_u64(k + 100)),
        b_g2: None,
    };
    let per_partition = |count: u64| {
        let before = source.streamed_bytes();
        let out = prove_pass((0..count).map(part).collect(), &*params, &backend, &config);
        let out2 = prove_pass((0..count).map(part).collect(), &source, &backend, &config);
        let streamed = source.streamed_bytes() - before;
        for (a, b) in out.into_iter().zip(out2) {
            let (a, b) = (a.unwrap(), b.unwrap());
            assert_eq!(a.0, b.0, "seed {seed}");
            assert!(verify_proof(&vk, &b.0, &[]).unwrap(), "seed {seed}");
            assert_eq!(b.1.streamed_bytes, streamed / count, "seed {seed}");
        }
        streamed / count
    };
    let one = per_partition(1);
    let four = per_partition(4);
    // The parameters' bases go up once per pass; only the inputs' few bases per partition.
    assert!(
        four * 3 < one,
        "{four} bytes a partition in fours, {one} alone (seed {seed})"
    );

    // A partition of another shape fails alone, naming the mismatch; the others prove.
    let mut parts: Vec<PassPartition> = (0..3).map(part).collect();
    parts[1].cs =
        ProvingAssignment::synthesize(BitDecomposition::<Fr>::filling_domain(LOG_N - 1, Some(1)))
            .unwrap();
    let out = prove_pass(parts, &source, &backend, &config);
    assert!(out[0].is_ok() && out[2].is_ok(), "seed {seed}");
    assert!(
        matches!(out[1], Err(Groth16Error::ParameterMismatch { .. })),
        "{:?} (seed {seed})",
        out[1].as_ref().err()
    );
}
