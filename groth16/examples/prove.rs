//! Setup, prove and verify a MiMC-like circuit on the CPU backend, timing each phase.
//!
//! `cargo run --release -p sluice-groth16 --example prove [log2-constraints]` (default 14).

use std::time::Instant;

use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend_cpu::CpuBackend;
use sluice_field::Fr;
use sluice_groth16::demo::MimcLike;
use sluice_groth16::{
    create_random_proof_batch, generate_random_parameters, prepare_verifying_key, prove_assignment,
    verify_proof, verify_proofs_batch, ProvingAssignment, ResidentParameters,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let log: u32 = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(14);
    let shape = MimcLike::<Fr>::filling_domain(log, None);
    let rounds = shape.rounds;
    let mut rng = ChaCha20Rng::seed_from_u64(0x5107);
    let backend = CpuBackend::new();
    println!(
        "MiMC-like circuit: {rounds} rounds, {} constraints, domain 2^{log}, threads {}",
        shape.num_constraints(),
        rayon::current_num_threads()
    );

    let t = Instant::now();
    let params = generate_random_parameters(shape, &mut rng)?;
    println!("setup:              {:>8.2?}", t.elapsed());

    let x = Fr::random(&mut rng);
    let inputs = MimcLike::public_inputs(x, rounds);
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
        &Default::default(),
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
    let batch_inputs: Vec<Vec<Fr>> = xs
        .iter()
        .map(|x| MimcLike::public_inputs(*x, rounds))
        .collect();
    let t = Instant::now();
    let ok = verify_proofs_batch(&pvk, &mut rng, &proofs, &batch_inputs)?;
    println!("batch verify:       {:>8.2?}  -> {ok}", t.elapsed());
    if !ok {
        return Err("the batch did not verify".into());
    }
    Ok(())
}
