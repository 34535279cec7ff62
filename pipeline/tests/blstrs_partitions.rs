//! The pipeline takes partitions written over `blstrs::Scalar` (as Filecoin's are) as they
//! are, and their proofs verify.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use std::sync::Arc;

use blstrs::Scalar;
use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend_cpu::CpuBackend;
use sluice_field::FrCompatible;
use sluice_groth16::demo::MimcLike;
use sluice_groth16::for_blstrs::generate_random_parameters;
use sluice_groth16::{
    prepare_verifying_key, verify_proof, Circuit, ConstraintSystem, SynthesisError,
};
use sluice_pipeline::{Pipeline, PipelineConfig};

/// A partition that exists only over `blstrs::Scalar`.
struct ScalarPartition(MimcLike<Scalar>);

impl Circuit<Scalar> for ScalarPartition {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        self.0.synthesize(cs)
    }
}

#[test]
fn blstrs_partitions_prove_in_the_pipeline() {
    let seed = 242;
    let log_n = 7;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let shape = ScalarPartition(MimcLike::filling_domain(log_n, None));
    let params = generate_random_parameters(shape, &mut rng).unwrap();
    let config = PipelineConfig {
        workers: 2,
        host_budget_bytes: Some(1 << 30),
        device_budget_bytes: Some(1 << 30),
        ..PipelineConfig::default()
    };
    let pipeline =
        Pipeline::new(Arc::new(params.clone()), vec![CpuBackend::new()], &config).unwrap();
    let xs: Vec<Scalar> = (0..3).map(|_| Scalar::random(&mut rng)).collect();
    let partitions = xs
        .iter()
        .map(|&x| ScalarPartition(MimcLike::filling_domain(log_n, Some(x))))
        .collect();
    let (proofs, _) = pipeline
        .submit(partitions, &mut rng)
        .unwrap()
        .wait()
        .unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    let rounds = MimcLike::<Scalar>::filling_domain(log_n, None).rounds;
    for (proof, &x) in proofs.iter().zip(&xs) {
        let inputs = MimcLike::public_inputs(x, rounds);
        assert!(
            verify_proof(&pvk, proof, Scalar::as_fr_slice(&inputs)).unwrap(),
            "seed {seed}"
        );
    }
}
