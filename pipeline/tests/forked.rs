//! Partitions submitted as forks (`Pipeline::submit_forked`) prove to the same bytes as the
//! same circuits submitted whole, with and without recorded matrices, under a host budget.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use std::sync::Arc;

use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend_cpu::CpuBackend;
use sluice_field::Fr;
use sluice_groth16::{
    generate_random_parameters_vartime, prepare_verifying_key, verify_proof, Circuit,
    ConstraintMatrices, ConstraintSystem, Fork, Forked, SynthesisError,
};
use sluice_pipeline::{Pipeline, PipelineConfig};

/// `x` public; per part `k`: 8 booleans and a chain `t_{j+1} = t_j^2 + x` from `t_0 = k`.
#[derive(Clone)]
struct Chains {
    x: Option<Fr>,
    ks: Vec<u64>,
}

impl Circuit<Fr> for Chains {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let missing = || SynthesisError::AssignmentMissing;
        let x = cs.alloc_input(|| "x", || self.x.ok_or_else(missing))?;
        for k in self.ks {
            for bit in 0..8 {
                let v = Fr::from((k >> bit) & 1);
                let b = cs.alloc(|| format!("{k} bit {bit}"), || Ok(v))?;
                cs.enforce(|| "boolean", |lc| lc + b, |lc| lc + CS::one() - b, |lc| lc);
            }
            let mut tv = Some(Fr::from(k));
            let mut t = cs.alloc(|| "t0", || tv.ok_or_else(missing))?;
            cs.enforce(
                || "t0",
                |lc| lc + t,
                |lc| lc + CS::one(),
                |lc| lc + (Fr::from(k), CS::one()),
            );
            for _ in 0..60 {
                tv = tv.zip(self.x).map(|(t, x)| t.square() + x);
                let n = cs.alloc(|| "t", || tv.ok_or_else(missing))?;
                cs.enforce(|| "round", |lc| lc + t, |lc| lc + t, |lc| lc + n - x);
                t = n;
            }
        }
        Ok(())
    }
}

impl Fork<Fr> for Chains {
    type Part = Chains;
    fn parts(&self) -> usize {
        self.ks.len()
    }
    fn prefix(&self) -> Result<Chains, SynthesisError> {
        Ok(Chains {
            x: self.x,
            ks: vec![],
        })
    }
    fn part(&self, index: usize) -> Result<Chains, SynthesisError> {
        Ok(Chains {
            x: self.x,
            ks: vec![self.ks[index]],
        })
    }
}

fn circuit(x: Option<Fr>) -> Chains {
    Chains {
        x,
        ks: (1..=6).map(|k| 37 * k).collect(),
    }
}

#[test]
fn forked_partitions_prove_to_the_bytes_of_whole_ones() {
    let seed = 4605;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let params = generate_random_parameters_vartime(Forked(circuit(None)), &mut rng).unwrap();
    let matrices = Arc::new(ConstraintMatrices::record(circuit(None)).unwrap());
    let xs: Vec<Fr> = (0..3).map(|_| Fr::random(&mut rng)).collect();
    let config = PipelineConfig {
        workers: 2,
        host_budget_bytes: Some(64 << 20),
        device_budget_bytes: Some(1 << 30),
        ..PipelineConfig::default()
    };
    let pvk = prepare_verifying_key(&params.vk);
    for with_matrices in [false, true] {
        let pipeline = match with_matrices {
            false => Pipeline::new(Arc::new(params.clone()), vec![CpuBackend::new()], &config),
            true => Pipeline::with_matrices(
                Arc::new(params.clone()),
                vec![CpuBackend::new()],
                &config,
                Arc::clone(&matrices),
            ),
        }
        .unwrap();
        let whole: Vec<Chains> = xs.iter().map(|&x| circuit(Some(x))).collect();
        let mut same = ChaCha20Rng::seed_from_u64(seed + 1);
        let (expected, _) = pipeline
            .submit(whole.clone(), &mut same)
            .unwrap()
            .wait()
            .unwrap();
        let mut same = ChaCha20Rng::seed_from_u64(seed + 1);
        let (forked, _) = pipeline
            .submit_forked(whole, &mut same)
            .unwrap()
            .wait()
            .unwrap();
        assert_eq!(forked, expected, "seed {seed}, matrices {with_matrices}");
        for (proof, x) in forked.iter().zip(&xs) {
            assert!(verify_proof(&pvk, proof, &[*x]).unwrap(), "seed {seed}");
        }
    }
}
