//! Lists the OpenCL devices, builds every program on the first one (printing each build's
//! duration and whether it came from a cache), then checks and times one NTT and one G1 MSM
//! against the CPU references.
//!
//! `cargo run --release -p sluice-backend-opencl --example device_report [log_ntt] [log_msm]`
//! Run it twice with the same `SLUICE_KERNEL_CACHE` to see cold and cached build times;
//! `SLUICE_OPENCL_DEVICE` picks the device (an index, `all`, or a name substring).

use std::time::Instant;

use ff::Field;
use group::{Curve, Group};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend::{ComputeBackend, NttOrder, Scalars, Transform};
use sluice_backend_opencl::{devices, DeviceSelector, OpenClBackend, OpenClConfig};
use sluice_field::{Fr, G1Affine, G1Projective};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u32>());
    let log_ntt = args.next().transpose()?.unwrap_or(16);
    let log_msm = args.next().transpose()?.unwrap_or(14);
    for d in devices()? {
        println!("{d}, nvidia path: {}", d.is_nvidia());
    }
    let selector = std::env::var("SLUICE_OPENCL_DEVICE")
        .map_or(DeviceSelector::Index(0), |s| DeviceSelector::parse(&s));
    let b = OpenClBackend::new(OpenClConfig {
        devices: selector,
        ..OpenClConfig::from_env()?
    })?;
    b.build_programs()?;
    for t in OpenClBackend::program_build_times() {
        println!(
            "build {:8} {:>9.3} s  {:?}  ({})",
            t.program, t.seconds, t.source, t.device
        );
    }

    let seed = 42;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let n = 1usize << log_ntt;
    let input: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
    let mut buf = b.upload_fr("ntt", &input, input.len())?;
    b.synchronize()?;
    let t = Instant::now();
    b.transform(&mut buf, Transform::Ntt, NttOrder::NaturalToNatural)?;
    b.synchronize()?;
    let ntt_s = t.elapsed().as_secs_f64();
    let mut got = vec![Fr::ZERO; n];
    b.read_fr(&buf, 0, &mut got)?;
    let mut want = input;
    let domain = sluice_ntt::Domain::<Fr>::for_size(n)?;
    sluice_ntt::ntt(&domain, &mut want, NttOrder::NaturalToNatural)?;
    println!(
        "ntt 2^{log_ntt} natural->natural: {:.3} ms (upload excluded), matches CPU: {}",
        ntt_s * 1e3,
        got == want
    );

    let m = 1usize << log_msm;
    let step = G1Projective::random(&mut rng);
    let mut p = G1Projective::random(&mut rng);
    let proj: Vec<G1Projective> = (0..m)
        .map(|_| {
            p += step;
            p
        })
        .collect();
    let mut bases = vec![G1Affine::identity(); m];
    G1Projective::batch_normalize(&proj, &mut bases);
    let scalars: Vec<Fr> = (0..m).map(|_| Fr::random(&mut rng)).collect();
    let resident = b.upload_bases("bases", &bases)?;
    let _ = b.msm_vartime(&resident, 0, Scalars::Host(&scalars[..1]), None)?; // warm-up
    let t = Instant::now();
    let got = b.msm_vartime(&resident, 0, Scalars::Host(&scalars), None)?;
    let msm_s = t.elapsed().as_secs_f64();
    let want = sluice_msm::msm_g1_vartime(&bases, &scalars, None)?;
    println!(
        "g1 msm 2^{log_msm}: {:.3} ms (scalar upload included, bases resident), matches CPU: {}",
        msm_s * 1e3,
        got == want
    );
    println!("seed {seed}");
    Ok(())
}
