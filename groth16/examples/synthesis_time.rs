//! Times witness synthesis alone (`ProvingAssignment::synthesize`) for the demo MiMC-like
//! circuit filling a domain of 2^LOG (default 20), the part of a whole-proof figure that no
//! backend speeds up:
//!
//!     cargo run --release -p sluice-groth16 --example synthesis_time -- [LOG] [RUNS] [sized]
//!
//! With `sized`, each run gives synthesis the circuit's shape
//! (`synthesize_with_capacity`, the shape from one untimed synthesis first), as
//! `create_proof` does from the parameters.

use sluice_field::Fr;
use sluice_groth16::demo::MimcLike;
use sluice_groth16::{Capacity, ProvingAssignment};

fn main() {
    let mut args = std::env::args().skip(1);
    let log: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(6);
    let circuit = || MimcLike::<Fr>::filling_domain(log, Some(Fr::from(7u64)));
    let capacity = match args.next().as_deref() {
        Some("sized") => match ProvingAssignment::synthesize(circuit()) {
            Ok(cs) => Capacity {
                constraints: cs.num_constraints(),
                aux: cs.aux_assignment().len(),
            },
            Err(e) => {
                eprintln!("synthesis failed: {e}");
                std::process::exit(1);
            }
        },
        _ => Capacity::default(),
    };
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let circuit = circuit();
        let start = std::time::Instant::now();
        match ProvingAssignment::synthesize_with_capacity(circuit, capacity) {
            Ok(cs) => {
                times.push(start.elapsed());
                println!(
                    "2^{log}: {} constraints in {:?}",
                    cs.num_constraints(),
                    start.elapsed()
                );
            }
            Err(e) => {
                eprintln!("synthesis failed: {e}");
                std::process::exit(1);
            }
        }
    }
    times.sort();
    if let Some(median) = times.get(times.len() / 2) {
        println!("median of {runs}: {median:?}");
    }
}
