//! How fast `random_points` makes bases (what benchmark parameters are built from):
//! `cargo run --release -p sluice-msm --example random_points -- [log2 count]` (default 24).

use std::time::Instant;

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_field::{G1Projective, G2Projective};

fn main() {
    let log: u32 = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 24,
        Some(Ok(log)) if log <= 30 => log,
        Some(_) => {
            eprintln!("usage: random_points [log2 count <= 30]");
            std::process::exit(2);
        }
    };
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let t = Instant::now();
    let g1 = sluice_msm::random_points::<G1Projective>(1 << log, &mut rng);
    println!("G1: 2^{log} points in {:.2?}", t.elapsed());
    drop(g1);
    let t = Instant::now();
    let g2 = sluice_msm::random_points::<G2Projective>(1 << log, &mut rng);
    println!("G2: 2^{log} points in {:.2?}", t.elapsed());
    drop(g2);
}
