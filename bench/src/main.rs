//! The benchmark runner behind `cargo xtask bench`: every available sluice backend over a
//! ladder of sizes, a table with median/min/throughput/residency, JSON and SVG plots.

mod options;
mod report;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend::{BackendError, ComputeBackend, MemoryKind, NttOrder, Scalars, Transform};
use sluice_backend_cpu::CpuBackend;
use sluice_field::{Fr, G1Projective, G2Projective};

use options::{Op, Options, USAGE};
use report::Row;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match Options::parse(&args) {
        Ok(o) => o,
        Err(msg) if msg.is_empty() => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(msg) => {
            eprintln!("sluice-bench: {msg}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("sluice-bench: {msg}");
            ExitCode::FAILURE
        }
    }
}

fn run(opts: &Options) -> Result<(), String> {
    let mut rows = Vec::new();
    let wants = |b: &str| opts.backends.is_empty() || opts.backends.iter().any(|x| x == b);
    let mut backends_run = Vec::new();
    if wants("cpu") {
        let cpu = CpuBackend::new();
        eprintln!("== backend cpu: {}", cpu.name());
        ladder(&cpu, "cpu", opts, &mut rows);
        backends_run.push("cpu");
    }
    if wants("opencl") {
        eprintln!(
            "== backend opencl: not available in this build yet — running on the CPU backend only"
        );
    }

    std::fs::create_dir_all(&opts.out_dir)
        .map_err(|e| format!("cannot create {}: {e}", opts.out_dir.display()))?;
    let meta = serde_json::json!({
        "backends": backends_run,
        "reps": opts.reps,
        "seed": opts.seed,
        "threads": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    });
    let json = report::write_json(&opts.out_dir, &rows, &meta)
        .map_err(|e| format!("cannot write results.json: {e}"))?;
    let plots = report::write_plots(&opts.out_dir, &rows)
        .map_err(|e| format!("cannot write plots: {e}"))?;
    println!("\n{}", report::table(&rows, &backends_run));
    println!("results: {}", json.display());
    for p in plots {
        println!("plot:    {}", p.display());
    }
    Ok(())
}

/// Runs every requested op and size on one backend; failures (errors or panics) become
/// rows and the run goes on.
fn ladder<B: ComputeBackend>(backend: &B, label: &str, opts: &Options, rows: &mut Vec<Row>) {
    let total: usize = opts.ops.iter().map(|&op| opts.sizes_for(op).len()).sum();
    let mut done = 0;
    for &op in &opts.ops {
        for log in opts.sizes_for(op) {
            done += 1;
            eprint!("[{done}/{total}] {label} {} 2^{log} ... ", op.name());
            let outcome = catch_unwind(AssertUnwindSafe(|| measure(backend, op, log, opts)));
            let row = match outcome {
                Ok(Ok((times, peak))) => Row::measured(op.name(), label, log, &times, Some(peak)),
                Ok(Err(e)) => Row::failed(op.name(), label, log, e.to_string()),
                Err(panic) => Row::failed(op.name(), label, log, panic_message(&panic)),
            };
            match &row.outcome {
                report::Outcome::Measured { median_s, .. } => {
                    eprintln!("{}", report::format_seconds(*median_s))
                }
                report::Outcome::Failed { error } => eprintln!("failed: {error}"),
            }
            rows.push(row);
        }
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    let msg = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into());
    format!("panicked: {msg}")
}

/// One warm-up and `opts.reps` timed runs of `op` at 2^log; returns the times and the
/// backend's peak device bytes during the timed runs (inputs included).
fn measure<B: ComputeBackend>(
    backend: &B,
    op: Op,
    log: u32,
    opts: &Options,
) -> Result<(Vec<Duration>, u64), BackendError> {
    let n = 1usize << log;
    let mut rng = ChaCha20Rng::seed_from_u64(opts.seed ^ (u64::from(log) << 32));
    let scalars: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
    backend.tracker().reset_peaks();
    let times = match op {
        Op::Ntt => {
            let mut buf = backend.upload_fr("ntt input", &scalars)?;
            time(opts.reps, || {
                backend.transform(&mut buf, Transform::Ntt, NttOrder::NaturalToNatural)
            })?
        }
        Op::MsmG1 => {
            let bases = backend.upload_g1_bases(
                "msm bases",
                &sluice_msm::random_points::<G1Projective>(n, &mut rng),
            )?;
            time(opts.reps, || {
                backend
                    .msm_g1(&bases, 0, Scalars::Host(&scalars), None)
                    .map(drop)
            })?
        }
        Op::MsmG2 => {
            let bases = backend.upload_g2_bases(
                "msm bases",
                &sluice_msm::random_points::<G2Projective>(n, &mut rng),
            )?;
            time(opts.reps, || {
                backend
                    .msm_g2(&bases, 0, Scalars::Host(&scalars), None)
                    .map(drop)
            })?
        }
    };
    Ok((times, backend.tracker().peak(MemoryKind::Device)))
}

/// One untimed warm-up, then `reps` timed calls.
fn time(
    reps: usize,
    mut f: impl FnMut() -> Result<(), BackendError>,
) -> Result<Vec<Duration>, BackendError> {
    f()?;
    (0..reps)
        .map(|_| {
            let start = Instant::now();
            f().map(|()| start.elapsed())
        })
        .collect()
}
