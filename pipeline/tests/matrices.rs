//! A pipeline given its partitions' recorded constraint matrices synthesizes witnesses only;
//! its proofs verify, matrices of another circuit are refused when it is built, and the
//! matrices' bytes are planned as fixed host memory.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use std::sync::Arc;

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend_cpu::CpuBackend;
use sluice_field::Fr;
use sluice_groth16::demo::BitDecomposition;
use sluice_groth16::{
    generate_benchmark_parameters, generate_random_parameters, prepare_verifying_key, verify_proof,
    CircuitShape, ConstraintMatrices, Groth16Error, ProvingAssignment,
};
use sluice_pipeline::{Pipeline, PipelineConfig, PipelineError};

fn config() -> PipelineConfig {
    PipelineConfig {
        workers: 2,
        host_budget_bytes: Some(1 << 30),
        device_budget_bytes: Some(1 << 30),
        ..PipelineConfig::default()
    }
}

#[test]
fn partitions_prove_with_recorded_matrices() {
    let seed = 261;
    let log_n = 9;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let shape = || BitDecomposition::<Fr>::filling_domain(log_n, None);
    let params = generate_random_parameters(shape(), &mut rng).unwrap();
    let matrices = Arc::new(ConstraintMatrices::record(shape()).unwrap());
    let plain =
        Pipeline::new(Arc::new(params.clone()), vec![CpuBackend::new()], &config()).unwrap();
    let plain_fixed = plain.plan().fixed_host_bytes;
    drop(plain);
    let pipeline = Pipeline::with_matrices(
        Arc::new(params.clone()),
        vec![CpuBackend::new()],
        &config(),
        Arc::clone(&matrices),
    )
    .unwrap();
    assert_eq!(
        pipeline.plan().fixed_host_bytes,
        plain_fixed + matrices.host_bytes(),
        "seed {seed}"
    );
    let seeds = [seed + 1, seed + 2, seed + 3];
    let partitions = seeds
        .iter()
        .map(|&s| BitDecomposition::<Fr>::filling_domain(log_n, Some(s)))
        .collect();
    let (proofs, _) = pipeline
        .submit(partitions, &mut rng)
        .unwrap()
        .wait()
        .unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    // The circuit's only public input is the constant one.
    for proof in &proofs {
        assert!(verify_proof(&pvk, proof, &[]).unwrap(), "seed {seed}");
    }
}

#[test]
fn matrices_of_another_circuit_are_refused() {
    let seed = 262;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let params =
        generate_random_parameters(BitDecomposition::<Fr>::filling_domain(9, None), &mut rng)
            .unwrap();
    let other = Arc::new(
        ConstraintMatrices::record(BitDecomposition::<Fr>::filling_domain(8, None)).unwrap(),
    );
    match Pipeline::with_matrices(
        Arc::new(params.clone()),
        vec![CpuBackend::new()],
        &config(),
        other,
    ) {
        Err(PipelineError::Setup(Groth16Error::ParameterMismatch { .. })) => {}
        Err(e) => panic!("seed {seed}: {e}"),
        Ok(_) => panic!("seed {seed}: built"),
    }
}

/// Partitions with several pages of witness, so that their rows are evaluated on a thread
/// beside synthesis, drawing on a host budget that holds the parameters and under two
/// partitions at their worst case, shared by two workers: the proofs are
/// byte for byte those of a pipeline that synthesizes in full.
#[test]
fn rows_evaluated_during_synthesis_give_the_same_proofs() {
    let seed = 263;
    let log_n = 18;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let circuit = |s: u64| BitDecomposition::<Fr>::filling_domain(log_n, Some(s));
    let shape = CircuitShape::of(&ProvingAssignment::synthesize(circuit(seed)).unwrap());
    let params = generate_benchmark_parameters(&shape, &mut rng).unwrap();
    let matrices = Arc::new(ConstraintMatrices::record(circuit(seed)).unwrap());
    assert!(matrices.num_aux() > 2 * sluice_backend::compact::PAGE_LEN);
    let config = PipelineConfig {
        host_budget_bytes: Some(320 << 20),
        ..config()
    };
    let seeds = [seed + 1, seed + 2, seed + 3];
    let prove = |pipeline: Pipeline| {
        let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0xab);
        let partitions = seeds.iter().map(|&s| circuit(s)).collect();
        let (proofs, _) = pipeline
            .submit(partitions, &mut rng)
            .unwrap()
            .wait()
            .unwrap();
        proofs.iter().map(|p| p.to_bytes()).collect::<Vec<_>>()
    };
    let full =
        prove(Pipeline::new(Arc::new(params.clone()), vec![CpuBackend::new()], &config).unwrap());
    let with_matrices = prove(
        Pipeline::with_matrices(
            Arc::new(params.clone()),
            vec![CpuBackend::new()],
            &config,
            matrices,
        )
        .unwrap(),
    );
    assert_eq!(full, with_matrices, "seed {seed}");
}
