//! Residency and pipeline benchmark: per domain size, an in-memory and a streaming proof of
//! the same partition (same r, s: the proofs must be identical) with their time and tracked
//! host/device peaks in full vectors; then pipeline throughput with 1, 2 and 4 workers, b_g2
//! on the CPU and on the device.
//!
//! ```text
//! cargo run --release -p sluice-pipeline --bin residency -- [--sizes 16,18,20]
//!     [--budget-bytes B | --budget-vectors F] [--partitions N] [--pipeline-log L]
//!     [--h-only] [--backend cpu|opencl] [--devices SEL]
//! ```
//!
//! `--backend opencl` (build with `--features opencl`) runs on the OpenCL devices `--devices`
//! selects (default: every GPU, else device 0): the per-size rows on the first of them, the
//! pipeline with one device worker per device, b_g2 on the CPU.
//!
//! `--partitions 0` skips the pipeline.
//!
//! `--h-only` times the H computation alone (random a and b, no parameters or MSMs), in
//! memory and streaming, and checks the two h agree: how sizes whose MSMs take too long on
//! a small CPU (2^24) are still measured.
//!
//! Every measurement is generic over the backend; only `main` names one.
//! Benchmark parameters (random points) are used: proofs take real time but do not verify.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend::{ComputeBackend, HostVector, MemoryTracker};
use sluice_backend_cpu::CpuBackend;
use sluice_field::Fr;
use sluice_groth16::demo::MimcLike;
use sluice_groth16::phases::{compute_h, compute_h_streaming};
use sluice_groth16::{
    generate_benchmark_parameters, prove_assignment, CircuitShape, HMode, Parameters, ProofReport,
    ProverConfig, ProvingAssignment, ResidentParameters, StreamingPlan,
};
use sluice_pipeline::{G2Placement, HModeChoice, Pipeline, PipelineConfig};

/// The streaming device budget: absolute, or in vectors of the domain.
#[derive(Clone, Copy)]
enum Budget {
    Bytes(u64),
    Vectors(f64),
}

impl Budget {
    fn bytes(self, vector: u64) -> u64 {
        match self {
            Budget::Bytes(b) => b,
            Budget::Vectors(v) => (v * vector as f64) as u64,
        }
    }
}

struct Options {
    sizes: Vec<u32>,
    budget: Budget,
    partitions: usize,
    pipeline_log: u32,
    h_only: bool,
    opencl: bool,
    devices: Option<String>,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        sizes: vec![16, 18, 20],
        budget: Budget::Vectors(1.0),
        partitions: 8,
        pipeline_log: 16,
        h_only: false,
        opencl: false,
        devices: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--h-only" {
            o.h_only = true;
            continue;
        }
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--sizes" => {
                o.sizes = value
                    .split(',')
                    .map(|s| s.parse().map_err(|e| bad(&e)))
                    .collect::<Result<_, _>>()?
            }
            "--budget-bytes" => o.budget = Budget::Bytes(value.parse().map_err(|e| bad(&e))?),
            "--budget-vectors" => o.budget = Budget::Vectors(value.parse().map_err(|e| bad(&e))?),
            "--partitions" => o.partitions = value.parse().map_err(|e| bad(&e))?,
            "--pipeline-log" => o.pipeline_log = value.parse().map_err(|e| bad(&e))?,
            "--devices" => o.devices = Some(value),
            "--backend" => match value.as_str() {
                "cpu" => o.opencl = false,
                "opencl" => o.opencl = true,
                _ => return Err(bad(&"expected cpu or opencl")),
            },
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(o)
}

fn parameters(log: u32, rng: &mut ChaCha20Rng) -> Result<Parameters, String> {
    let cs = ProvingAssignment::synthesize(MimcLike::filling_domain(log, Some(Fr::ONE)))
        .map_err(|e| e.to_string())?;
    generate_benchmark_parameters(&CircuitShape::of(&cs), rng).map_err(|e| e.to_string())
}

/// Proves one partition in `mode`; the proof's bytes, its time and its report.
fn prove_one<B: ComputeBackend>(
    backend: &B,
    params: &ResidentParameters<B>,
    log: u32,
    mode: HMode,
    (r, s): (Fr, Fr),
) -> Result<([u8; 192], Duration, ProofReport), String> {
    let cs = ProvingAssignment::synthesize(MimcLike::filling_domain(log, Some(Fr::from(5u64))))
        .map_err(|e| e.to_string())?;
    let config = ProverConfig {
        h_mode: mode,
        host_tracker: Some(MemoryTracker::default()),
        ..ProverConfig::default()
    };
    let t = Instant::now();
    let (proof, report) =
        prove_assignment(cs, params, r, s, backend, &config).map_err(|e| e.to_string())?;
    Ok((proof.to_bytes(), t.elapsed(), report))
}

/// In-memory vs streaming at each size; prints one table row per mode.
fn run_sizes<B: ComputeBackend>(
    make: &impl Fn(MemoryTracker) -> Result<B, String>,
    o: &Options,
) -> Result<(), String> {
    println!("| log n | mode | budget (vectors) | prove (s) | streaming / in-memory | host peak (vectors) | device working set (vectors) |");
    println!("|---|---|---|---|---|---|---|");
    let mut rng = ChaCha20Rng::seed_from_u64(2026);
    for &log in &o.sizes {
        let n = 1u64 << log;
        let params = parameters(log, &mut rng)?;
        let backend = make(MemoryTracker::default())?;
        let resident = ResidentParameters::upload(&params, &backend).map_err(|e| e.to_string())?;
        let rs = (Fr::random(&mut rng), Fr::random(&mut rng));
        let budget = o.budget.bytes(n * 32);
        let (p_mem, t_mem, r_mem) = prove_one(&backend, &resident, log, HMode::InMemory, rs)?;
        let streaming = HMode::Streaming {
            device_budget_bytes: budget,
        };
        let (p_str, t_str, r_str) = prove_one(&backend, &resident, log, streaming, rs)?;
        if p_mem != p_str {
            return Err(format!("2^{log}: streaming and in-memory proofs differ"));
        }
        for (mode, t, r) in [("in-memory", t_mem, r_mem), ("streaming", t_str, r_str)] {
            let b = match r.h_mode {
                HMode::Streaming { .. } => format!("{:.2}", budget as f64 / (n * 32) as f64),
                HMode::InMemory => "-".into(),
            };
            println!(
                "| {log} | {mode} | {b} | {:.3} | {:.2} | {:.2} | {:.2} |",
                t.as_secs_f64(),
                t.as_secs_f64() / t_mem.as_secs_f64(),
                r.host_peak_vectors(),
                r.device_working_set_vectors(),
            );
        }
    }
    Ok(())
}

/// The H computation alone, in memory and streaming, on random evaluations.
fn run_h_only<B: ComputeBackend>(
    make: &impl Fn(MemoryTracker) -> Result<B, String>,
    o: &Options,
) -> Result<(), String> {
    println!("| log n | mode | budget (vectors) | H (s) | streaming / in-memory | host peak (vectors) | device peak (vectors) |");
    println!("|---|---|---|---|---|---|---|");
    let mut rng = ChaCha20Rng::seed_from_u64(2028);
    for &log in &o.sizes {
        let n = 1usize << log;
        let vector = n as u64 * 32;
        let budget = o.budget.bytes(vector);
        let a: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
        let b: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
        let e = |e: &dyn std::fmt::Display| e.to_string();
        let tracker = MemoryTracker::default();
        let backend = make(tracker.clone())?;
        let vectors = |a: &[Fr], b: &[Fr]| -> Result<(HostVector, HostVector), String> {
            Ok((
                HostVector::track(&tracker, "a", a.to_vec()).map_err(|x| e(&x))?,
                HostVector::track(&tracker, "b", b.to_vec()).map_err(|x| e(&x))?,
            ))
        };
        let (ha, hb) = vectors(&a, &b)?;
        tracker.reset_peaks();
        let t = Instant::now();
        let h_buf = compute_h(&backend, ha, hb, n).map_err(|x| e(&x))?;
        let mut h_mem = vec![Fr::ZERO; n];
        backend.read_fr(&h_buf, 0, &mut h_mem).map_err(|x| e(&x))?;
        let t_mem = t.elapsed();
        let mem = tracker.report();
        drop(h_buf);
        let plan = StreamingPlan::new(n, budget).map_err(|x| e(&x))?;
        let (ha, hb) = vectors(&a, &b)?;
        drop((a, b));
        tracker.reset_peaks();
        let t = Instant::now();
        let h_str = compute_h_streaming(&backend, &tracker, ha, hb, &plan).map_err(|x| e(&x))?;
        let t_str = t.elapsed();
        let streamed = tracker.report();
        if h_str[..] != h_mem[..] {
            return Err(format!("2^{log}: streaming and in-memory h differ"));
        }
        let v = |bytes: u64| bytes as f64 / vector as f64;
        for (mode, b, t, r) in [
            ("in-memory", "-".to_owned(), t_mem, mem),
            ("streaming", format!("{:.2}", v(budget)), t_str, streamed),
        ] {
            println!(
                "| {log} | {mode} | {b} | {:.3} | {:.2} | {:.2} | {:.2} |",
                t.as_secs_f64(),
                t.as_secs_f64() / t_mem.as_secs_f64(),
                v(r.host_peak),
                v(r.device_peak),
            );
        }
    }
    Ok(())
}

/// Pipeline throughput with 1, 2 and 4 workers on the backends `make_all` builds (one per
/// device), with the b_g2 MSM on the CPU and then on the device.
fn run_pipeline<B: ComputeBackend + 'static>(
    make_all: &impl Fn() -> Result<Vec<B>, String>,
    o: &Options,
) -> Result<(), String> {
    let log = o.pipeline_log;
    let mut rng = ChaCha20Rng::seed_from_u64(2027);
    let params = parameters(log, &mut rng)?;
    println!();
    println!("| log n | partitions | b_g2 on | workers asked | workers admitted | wall (s) | s / partition | device busy |");
    println!("|---|---|---|---|---|---|---|---|");
    let runs = [G2Placement::Cpu, G2Placement::Device]
        .into_iter()
        .flat_map(|p| [1, 2, 4].map(|w| (p, w)));
    for (b_g2, workers) in runs {
        let config = PipelineConfig {
            workers,
            b_g2,
            host_budget_bytes: Some(8 << 30),
            device_budget_bytes: Some(8 << 30),
            h_mode: HModeChoice::InMemory,
            ..PipelineConfig::default()
        };
        let pipeline = Pipeline::new(Arc::new(params.clone()), make_all()?, &config)
            .map_err(|e| e.to_string())?;
        let circuits: Vec<_> = (0..o.partitions)
            .map(|i| MimcLike::filling_domain(log, Some(Fr::from(i as u64))))
            .collect();
        let t = Instant::now();
        let handle = pipeline
            .submit(circuits, &mut rng)
            .map_err(|e| e.to_string())?;
        handle.wait().map_err(|e| e.to_string())?;
        let wall = t.elapsed().as_secs_f64();
        let busy: Vec<String> = pipeline
            .stats()
            .device_busy
            .iter()
            .map(|b| format!("{:.0}%", 100.0 * b.as_secs_f64() / wall))
            .collect();
        println!(
            "| {log} | {} | {} | {workers} | {} | {wall:.2} | {:.3} | {} |",
            o.partitions,
            if b_g2 == G2Placement::Cpu {
                "cpu"
            } else {
                "device"
            },
            pipeline.plan().workers,
            wall / o.partitions as f64,
            busy.join(" ")
        );
    }
    Ok(())
}

/// Every measurement the options ask for, on backends `make` builds (one device) and
/// `make_all` builds (one per device, for the pipeline).
fn run_all<B: ComputeBackend + 'static>(
    make: &impl Fn(MemoryTracker) -> Result<B, String>,
    make_all: &impl Fn() -> Result<Vec<B>, String>,
    o: &Options,
) -> Result<(), String> {
    if o.h_only {
        return run_h_only(make, o);
    }
    run_sizes(make, o)?;
    if o.partitions == 0 {
        return Ok(());
    }
    run_pipeline(make_all, o)
}

#[cfg(feature = "opencl")]
fn run_opencl(o: &Options) -> Result<(), String> {
    use sluice_backend_opencl::{DeviceSelector, OpenClBackend, OpenClConfig};
    let e = |e: sluice_backend::BackendError| e.to_string();
    let selector = o
        .devices
        .as_deref()
        .map_or(DeviceSelector::GpusOrFirst, DeviceSelector::parse);
    let chosen: Vec<usize> = selector
        .select()
        .map_err(e)?
        .iter()
        .map(|d| d.index)
        .collect();
    eprintln!("residency: OpenCL devices {chosen:?}");
    let config = OpenClConfig::from_env().map_err(|e| e.to_string())?;
    let on = |index: usize, tracker: MemoryTracker| {
        OpenClBackend::new(OpenClConfig {
            devices: DeviceSelector::Index(index),
            tracker: Some(tracker),
            ..config.clone()
        })
        .map_err(e)
    };
    let make = |t: MemoryTracker| on(chosen[0], t);
    let make_all = || {
        chosen
            .iter()
            .map(|&i| on(i, MemoryTracker::default()))
            .collect()
    };
    run_all(&make, &make_all, o)
}

#[cfg(not(feature = "opencl"))]
fn run_opencl(_: &Options) -> Result<(), String> {
    Err("built without the `opencl` feature".into())
}

fn main() {
    let result = parse().and_then(|o| {
        if o.opencl {
            return run_opencl(&o);
        }
        run_all(
            &|t| Ok(CpuBackend::with_tracker(t)),
            &|| Ok(vec![CpuBackend::new()]),
            &o,
        )
    });
    if let Err(e) = result {
        eprintln!("residency: {e}");
        std::process::exit(1);
    }
}
