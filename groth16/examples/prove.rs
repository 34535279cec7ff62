//! Setup, prove and verify a MiMC-like circuit on the CPU backend, timing each phase.
//!
//! `cargo run --release -p sluice-groth16 --example prove [log2-constraints]` (default 14).

use std::time::Instant;

use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend_cpu::CpuBackend;
use sluice_field::Fr;
use sluice_groth16::{
    create_random_proof_batch, generate_random_parameters, prepare_verifying_key, prove_assignment,
    verify_proof, verify_proofs_batch, Circuit, ConstraintSystem, ProvingAssignment,
    ResidentParameters, SynthesisError,
};

/// `x_{i+1} = (x_i + k_i)^3`, the MiMC round function without the key schedule: two
/// constraints per round. The start is a public input, and so is the end.
#[derive(Clone)]
struct MimcLike {
    x: Option<Fr>,
    rounds: usize,
}

fn round_constant(i: usize) -> Fr {
    Fr::from((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

fn mimc_like(mut x: Fr, rounds: usize) -> Fr {
    for i in 0..rounds {
        let t = x + round_constant(i);
        x = t.square() * t;
    }
    x
}

impl Circuit<Fr> for MimcLike {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let missing = || SynthesisError::AssignmentMissing;
        let mut x_val = self.x;
        let mut x = cs.alloc_input(|| "x", || x_val.ok_or_else(missing))?;
        for i in 0..self.rounds {
            let mut cs = cs.namespace(|| format!("round {i}"));
            let k = round_constant(i);
            let t_val = x_val.map(|v| v + k);
            let sq_val = t_val.map(|t| t.square());
            let sq = cs.alloc(|| "sq", || sq_val.ok_or_else(missing))?;
            cs.enforce(
                || "t^2",
                |lc| lc + x + (k, CS::one()),
                |lc| lc + x + (k, CS::one()),
                |lc| lc + sq,
            );
            x_val = sq_val.zip(t_val).map(|(s, t)| s * t);
            let next = if i + 1 == self.rounds {
                cs.alloc_input(|| "out", || x_val.ok_or_else(missing))?
            } else {
                cs.alloc(|| "cube", || x_val.ok_or_else(missing))?
            };
            cs.enforce(
                || "t^3",
                |lc| lc + sq,
                |lc| lc + x + (k, CS::one()),
                |lc| lc + next,
            );
            x = next;
        }
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let log: u32 = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(14);
    // Two constraints per round; leave room for the input constraints in the domain.
    let rounds = ((1usize << log) - 8) / 2;
    let mut rng = ChaCha20Rng::seed_from_u64(0x5107);
    let backend = CpuBackend::new();
    println!(
        "MiMC-like circuit: {rounds} rounds, {} constraints, domain 2^{log}, threads {}",
        2 * rounds + 2,
        rayon::current_num_threads()
    );

    let t = Instant::now();
    let params = generate_random_parameters(MimcLike { x: None, rounds }, &mut rng)?;
    println!("setup:              {:>8.2?}", t.elapsed());

    let x = Fr::random(&mut rng);
    let inputs = [x, mimc_like(x, rounds)];
    let circuit = MimcLike { x: Some(x), rounds };

    let t = Instant::now();
    let cs = ProvingAssignment::synthesize(circuit.clone())?;
    let synth = t.elapsed();
    let t = Instant::now();
    let (proof, report) = prove_assignment(
        cs,
        &params,
        Fr::random(&mut rng),
        Fr::random(&mut rng),
        &backend,
    )?;
    println!("synthesis:          {synth:>8.2?}");
    println!(
        "prove (H + MSMs):   {:>8.2?}  (bases uploaded per proof)",
        t.elapsed()
    );
    println!(
        "  residency: device peak {:.2} vectors ({} bytes, bases included), backend host peak {} bytes",
        report.device_peak_vectors(),
        report.memory.device_peak,
        report.memory.host_peak
    );

    let t = Instant::now();
    let pvk = prepare_verifying_key(&params.vk);
    let ok = verify_proof(&pvk, &proof, &inputs)?;
    println!("verify:             {:>8.2?}  -> {ok}", t.elapsed());
    if !ok {
        return Err("the proof did not verify".into());
    }

    let t = Instant::now();
    let resident = ResidentParameters::upload(&params, &backend)?;
    println!("upload bases:       {:>8.2?}", t.elapsed());
    let xs: Vec<Fr> = (0..4).map(|_| Fr::random(&mut rng)).collect();
    let circuits = xs
        .iter()
        .map(|x| MimcLike {
            x: Some(*x),
            rounds,
        })
        .collect();
    let t = Instant::now();
    let proofs = create_random_proof_batch(circuits, &resident, &mut rng, &backend)?;
    let per = t.elapsed() / proofs.len() as u32;
    println!(
        "batch of {} proofs: {:>8.2?}  ({per:.2?} per proof)",
        proofs.len(),
        t.elapsed()
    );
    let batch_inputs: Vec<Vec<Fr>> = xs.iter().map(|x| vec![*x, mimc_like(*x, rounds)]).collect();
    let t = Instant::now();
    let ok = verify_proofs_batch(&pvk, &mut rng, &proofs, &batch_inputs)?;
    println!("batch verify:       {:>8.2?}  -> {ok}", t.elapsed());
    if !ok {
        return Err("the batch did not verify".into());
    }
    Ok(())
}
