#![allow(missing_docs, clippy::unwrap_used)]
use ff::{Field, PrimeField};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_field::{Fr, G1Projective};
use std::time::Instant;
fn main() {
    let log: u32 = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(16);
    let reps: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(3);
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let n = 1 << log;
    let a = sluice_msm::random_points::<G1Projective>(n, &mut rng);
    let s: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
    let bp: Vec<blst::blst_p1> = a.iter().map(|b| G1Projective::from(*b).into()).collect();
    let bb = blst::p1_affines::from(&bp);
    let bytes: Vec<u8> = s.iter().flat_map(|s| s.to_repr()).collect();
    for _ in 0..reps {
        let t = Instant::now();
        let r = sluice_msm::msm_g1(&a, &s, None).unwrap();
        let ts = t.elapsed();
        let t = Instant::now();
        let q = bb.mult(&bytes, 255);
        let tb = t.elapsed();
        assert_eq!(r, G1Projective::from(q));
        println!(
            "2^{log}: sluice {:?} blst {:?} ratio {:.3}",
            ts,
            tb,
            ts.as_secs_f64() / tb.as_secs_f64()
        );
    }
}
