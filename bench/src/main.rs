//! The benchmark runner behind `cargo xtask bench`: every available sluice backend over a
//! ladder of sizes, a table with median/min/throughput/residency, JSON and SVG plots.
//!
//! Each NTT and MSM row of a non-CPU backend is checked after timing against an independent
//! host computation (sluice-msm; for the NTT, two output positions summed directly): a wrong
//! result fails the row. Proof rows use benchmark parameters (random points, no trapdoor),
//! so they are not verified; the demo proof run first is. Rows of Filecoin's own circuits
//! (`--circuit porep|post`, feature `filecoin`, `filecoin.rs`) use a setup's parameters
//! and verify their last proof.

mod bar;
mod c2;
mod filecoin;
mod options;
mod params;
#[cfg(feature = "compare")]
mod peers;
mod profiled;
mod provenance;
mod record;
mod report;
mod synthesis;
mod verify;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use rayon::prelude::*;
use sluice_backend::{
    BackendError, ComputeBackend, CurveAffine, MemoryKind, NttOrder, Scalars, Transform,
};
use sluice_backend_cpu::CpuBackend;
use sluice_field::{Fr, G1Affine, G2Affine};
use std::sync::Arc;

use sluice_groth16::demo::{BitDecomposition, MimcLike, Sha256Preimage};
use sluice_groth16::{
    create_proof_streamed, generate_benchmark_parameters, generate_random_parameters,
    prepare_verifying_key, prove_assignment, verify_proof, Capacity, CircuitShape,
    ConstraintMatrices, ParameterSource, Parameters, ProvingAssignment, ResidentParameters,
    SynthesisOptions,
};

use clap::Parser;
use options::{CircuitKind, Command, Op, Options};
#[cfg(feature = "compare")]
use peers::peers_for;
use profiled::Profiled;
use report::Row;

fn main() -> ExitCode {
    let opts = Options::parse();
    let result = match opts.command {
        Some(Command::Record(record)) => record::main(record),
        None => run(&opts),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("sluice-bench: {msg}");
            ExitCode::FAILURE
        }
    }
}

fn run(opts: &Options) -> Result<(), String> {
    bar::install();
    // The library's log (the pipeline's plan, a pass's steps) where RUST_LOG asks for it.
    // It takes the process's one logger, so the synthesis peer, which reads bellperson's
    // log, then cannot run.
    if std::env::var_os("RUST_LOG").is_some() {
        env_logger::Builder::from_default_env()
            .format_timestamp_millis()
            .init();
    }
    if opts.compare && !cfg!(feature = "compare") {
        return Err("--compare needs sluice-bench built with its `compare` feature".into());
    }
    if let Some(kind) = opts
        .ops
        .iter()
        .flat_map(|&op| opts.circuits_for(op))
        .find(|c| c.is_filecoin())
    {
        filecoin::available(kind)?;
    }
    let mut rows = Vec::new();
    let wants = |b: &str| opts.backends.is_empty() || opts.backends.iter().any(|x| x == b);
    let mut backends_run = Vec::new();
    // What each backend ran on, for the run's provenance.
    let mut devices = Vec::new();
    // Peers and host-only ops run once, in the first ladder that runs: each peer right
    // after the sluice row of its op and size (the table compares every backend's rows
    // with them).
    let mut first_pending = true;
    if wants("cpu") {
        let first = std::mem::take(&mut first_pending);
        let cpu = CpuBackend::new();
        ladder(
            &cpu,
            &|| Ok(CpuBackend::new()),
            "cpu",
            opts,
            first,
            &mut rows,
        )?;
        backends_run.push("cpu");
        devices.push(format!("cpu: {}", cpu.info().name));
    }
    // `opencl-shifted` only on request: its tables cost 12-16 times the bases' memory.
    let [plain, shifted] = options::OPENCL_BACKENDS;
    let opencl_labels = [plain, shifted]
        .into_iter()
        .filter(|&l| wants(l) && (l == plain || !opts.backends.is_empty()));
    for label in opencl_labels {
        #[cfg(feature = "opencl")]
        match opencl_backend(opts, label == shifted) {
            Ok(gpu) => {
                let first = std::mem::take(&mut first_pending);
                let make = || opencl_backend(opts, label == shifted);
                ladder(&gpu, &make, label, opts, first, &mut rows)?;
                if let Some(profile) = gpu.profile_report() {
                    eprint!("  profile of {label} since the last report:\n{profile}");
                }
                for t in sluice_backend_opencl::OpenClBackend::program_build_times() {
                    eprintln!(
                        "   program {} on {}: {:.3} s ({:?})",
                        t.program, t.device, t.seconds, t.source
                    );
                }
                backends_run.push(label);
                devices.push(format!("{label}: {}", gpu.info().name));
            }
            Err(e) => eprintln!(
                "== backend {label}: no usable OpenCL device ({e}); the results cover the CPU only"
            ),
        }
        #[cfg(not(feature = "opencl"))]
        eprintln!(
            "== backend {label}: not compiled in (no OpenCL loader when built); CPU results only"
        );
    }

    // Host-only rows are sluice's too (the peers are compared with them).
    if rows.iter().any(|r| r.implementation == HOST) {
        backends_run.push(HOST);
    }
    std::fs::create_dir_all(&opts.out_dir)
        .map_err(|e| format!("cannot create {}: {e}", opts.out_dir.display()))?;
    let provenance = provenance::Provenance::of_this_run(&devices);
    let meta = report::meta(&backends_run, opts.reps, opts.seed, &provenance);
    let json = report::write_json(&opts.out_dir, &rows, &meta)
        .map_err(|e| format!("cannot write results.json: {e}"))?;
    let plots = report::write_plots(&opts.out_dir, &rows)
        .map_err(|e| format!("cannot write plots: {e}"))?;
    println!("\n{}", report::table(&rows, &backends_run));
    for extra in [report::phase_table(&rows), report::pipeline_table(&rows)] {
        if !extra.is_empty() {
            println!("{extra}");
        }
    }
    println!("results: {}", json.display());
    for p in plots {
        println!("plot:    {}", p.display());
    }
    Ok(())
}

/// Names the backend and runs its demo proof (when asked; a proof that does not verify
/// stops the run), then every requested op and size on it (host-only ops in the `first`
/// ladder only, labelled [`HOST`]), each followed by its peers in the `first` ladder
/// under `--compare` (back to back, so both see the same load of a noisy machine);
/// failures of the ladder (errors or panics) become rows and the run goes on.
fn ladder<B: Profiled + 'static>(
    backend: &B,
    make: &dyn Fn() -> Result<B, String>,
    label: &str,
    opts: &Options,
    first: bool,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    eprintln!("== backend {label}: {}", backend.info().name);
    if let Some(log) = opts.demo_log {
        demo_proof(backend, log, opts.seed)?;
    }
    let with_peers = first && opts.compare;
    let ops: Vec<Op> = opts
        .ops
        .iter()
        .copied()
        .filter(|op| first || !op.on_host())
        .collect();
    let total: usize = ops
        .iter()
        .map(|&op| opts.sizes_for(op).len() * opts.circuits_for(op).len())
        .sum();
    let mut done = 0;
    for &op in &ops {
        for log in opts.sizes_for(op) {
            for circuit in opts.circuits_for(op) {
                done += 1;
                let name = circuit.row_name(op);
                if op == Op::C2 {
                    // A pipeline owns its backends: a fresh one of the same kind runs it.
                    start_row(format!("[{done}/{total}] {label} {name} 2^{log} ... "));
                    rows.extend(whole_rows(&name, label, log, || {
                        c2::measure(make, label, log, circuit, opts)
                    }));
                    continue;
                }
                let chosen = |peer: &str| {
                    opts.peers
                        .as_ref()
                        .map_or(true, |p| p.iter().any(|q| q == peer))
                };
                #[cfg(feature = "compare")]
                if with_peers && chosen("bellperson") && matches!(op, Op::Verify | Op::VerifyBatch)
                {
                    // Rows of about a millisecond: alternated run by run, as one row's
                    // neighbour seconds later saw other load.
                    start_row(format!(
                        "[{done}/{total}] {HOST} and bellperson {name} 2^{log} ... "
                    ));
                    let both = peers::verify_side_by_side(
                        op == Op::VerifyBatch,
                        log,
                        opts.seed,
                        opts.reps,
                    );
                    let part = |k: usize| {
                        both.clone()
                            .map(|b| Timings::of(if k == 0 { b.0 } else { b.1 }))
                    };
                    rows.push(row(&name, HOST, log, || part(0)));
                    rows.push(row(&name, "bellperson", log, || part(1)));
                    continue;
                }
                if op.on_host() {
                    start_row(format!("[{done}/{total}] {HOST} {name} 2^{log} ... "));
                    rows.push(row(&name, HOST, log, || {
                        host_op(op, circuit, log, opts, false).map(Timings::of)
                    }));
                    if op == Op::Synthesis && circuit.is_filecoin() {
                        for threads in synthesis_threads(opts) {
                            for matrices in
                                [false, true].into_iter().filter(|&m| !m || opts.matrices)
                            {
                                let label = format!(
                                    "{HOST}{FORKED}{}/{threads}t",
                                    if matrices { WITH_MATRICES } else { "" }
                                );
                                start_row(format!("[{done}/{total}] {label} {name} 2^{log} ... "));
                                rows.push(row(&name, &label, log, || {
                                    filecoin::synthesis_forked(
                                        circuit, log, opts.seed, opts.reps, threads, matrices,
                                    )
                                    .map(Timings::of)
                                }));
                            }
                        }
                    }
                    if opts.matrices && op == Op::Synthesis {
                        let label = format!("{HOST}{WITH_MATRICES}");
                        start_row(format!("[{done}/{total}] {label} {name} 2^{log} ... "));
                        rows.push(row(&name, &label, log, || {
                            host_op(op, circuit, log, opts, true).map(Timings::of)
                        }));
                        let label = synthesis::CIRCUIT_ALONE;
                        start_row(format!("[{done}/{total}] {label} {name} 2^{log} ... "));
                        rows.push(row(&name, label, log, || {
                            synthesis::circuit_alone(circuit, log, opts.seed, opts.reps)
                                .map(Timings::of)
                        }));
                    }
                } else if op == Op::Params {
                    start_row(format!(
                        "[{done}/{total}] {label} and {label}{} {name} 2^{log} ... ",
                        params::HOST_DECODE
                    ));
                    let both = params::mapped_side_by_side(backend, log, opts);
                    let part = |k: usize| {
                        both.clone()
                            .map(|b| Timings::of(if k == 0 { b.0 } else { b.1 }))
                    };
                    rows.push(row(&name, label, log, || part(0)));
                    let host = format!("{label}{}", params::HOST_DECODE);
                    rows.push(row(&name, &host, log, || part(1)));
                } else {
                    start_row(format!("[{done}/{total}] {label} {name} 2^{log} ... "));
                    rows.push(row(&name, label, log, || {
                        measure(backend, op, circuit, log, opts, false, ProofMode::Plain)
                    }));
                    let modes = [ProofMode::Matrices, ProofMode::Streamed, ProofMode::Forked];
                    for mode in modes.into_iter().filter(|&mode| {
                        op == Op::Proof
                            && match mode {
                                ProofMode::Forked => circuit.is_filecoin(),
                                _ => opts.matrices,
                            }
                    }) {
                        let label = format!("{label}{}", mode.suffix());
                        start_row(format!("[{done}/{total}] {label} {name} 2^{log} ... "));
                        rows.push(row(&name, &label, log, || {
                            measure(backend, op, circuit, log, opts, false, mode)
                        }));
                    }
                }
                if opts.uploads && !op.on_host() && op != Op::Params {
                    let with_uploads = format!("{label}+upload");
                    start_row(format!(
                        "[{done}/{total}] {with_uploads} {name} 2^{log} ... "
                    ));
                    rows.push(row(&name, &with_uploads, log, || {
                        measure(backend, op, circuit, log, opts, true, ProofMode::Plain)
                    }));
                }
                for &(peer, f) in peers_for(&name)
                    .iter()
                    .filter(|(peer, _)| with_peers && chosen(peer))
                {
                    start_row(format!("[{done}/{total}] {peer} {name} 2^{log} ... "));
                    rows.push(row(&name, peer, log, || {
                        f(log, opts.seed, opts.reps).map(Timings::of)
                    }));
                }
            }
        }
    }
    Ok(())
}

/// Starts a row: its label begins its line (on its progress bar where there is one), which
/// its result ends.
fn start_row(label: String) {
    bar::row_started(label);
}

/// The label of host-only rows ([`Op::on_host`]), which no backend runs.
const HOST: &str = "host";

/// The label suffix of rows whose synthesis uses the circuit's recorded constraint
/// matrices (`--matrices`).
pub(crate) const WITH_MATRICES: &str = "+matrices";

/// The label part of rows whose synthesis is forked: a challenge or sector of a Filecoin
/// circuit per task, on every core (`ProvingAssignment::synthesize_forked`).
pub(crate) const FORKED: &str = "+forked";

/// The thread counts of the forked synthesis rows: `--threads`, else every core.
fn synthesis_threads(opts: &Options) -> Vec<usize> {
    match opts.threads.is_empty() {
        false => opts.threads.clone(),
        true => vec![std::thread::available_parallelism().map_or(1, usize::from)],
    }
}

/// How a proof row synthesizes and proves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ProofMode {
    /// A full synthesis, then `prove_assignment`.
    Plain,
    /// Synthesis with the constraint matrices recorded before the clock, then
    /// `prove_assignment` (rows `+matrices`).
    Matrices,
    /// `create_proof_streamed` with the recorded matrices: the witness MSMs during
    /// synthesis (rows `+streamed`).
    Streamed,
    /// Forked synthesis on every core, then `prove_assignment` (rows `+forked`; Filecoin's
    /// circuits).
    Forked,
}

impl ProofMode {
    fn suffix(self) -> &'static str {
        match self {
            ProofMode::Plain => "",
            ProofMode::Matrices => WITH_MATRICES,
            ProofMode::Streamed => "+streamed",
            ProofMode::Forked => FORKED,
        }
    }
}

/// A host-only op's timings ([`Op::on_host`]).
fn host_op(
    op: Op,
    circuit: CircuitKind,
    log: u32,
    opts: &Options,
    matrices: bool,
) -> Result<Vec<Duration>, String> {
    match op {
        Op::Synthesis => synthesis::sluice_synthesis(circuit, log, opts.seed, opts.reps, matrices),
        Op::Verify => verify::sluice_verify(log, opts.seed, opts.reps),
        Op::VerifyBatch => verify::sluice_verify_batch(log, opts.seed, opts.reps),
        _ => Err(format!("{} is not a host op", op.name())),
    }
}

/// No peers without the `compare` feature (`run` refuses `--compare` then).
#[cfg(not(feature = "compare"))]
fn peers_for(_op: &str) -> &'static [(&'static str, PeerFn)] {
    &[]
}

/// A peer's measurement, `(log, seed, reps)` to timings (see `peers.rs`).
#[cfg(not(feature = "compare"))]
type PeerFn = fn(u32, u64, usize) -> Result<Vec<Duration>, String>;

/// Runs one measurement (times, peak backend bytes where tracked, a proof's parts); errors
/// and panics become failed rows. Logs the median or the error.
fn row(op: &str, label: &str, log: u32, f: impl FnOnce() -> Result<Timings, String>) -> Row {
    let start = Instant::now();
    let row = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(t)) => {
            let mut row = Row::measured(op, label, log, &t.times, t.peak_device_bytes);
            row.phases = t.phases;
            row
        }
        Ok(Err(e)) => Row::failed(op, label, log, e),
        Err(panic) => Row::failed(op, label, log, panic_message(&panic)),
    };
    bar::row_ended();
    // The row's whole wall time (inputs, warm-up, runs, result check): what a run with a
    // time limit, like a GPU call, has to plan for.
    let whole = start.elapsed().as_secs_f64();
    match &row.outcome {
        report::Outcome::Measured { median_s, .. } => {
            eprintln!(
                "{} (row {whole:.1} s in all)",
                report::format_seconds(*median_s)
            )
        }
        report::Outcome::Failed { error } => eprintln!("failed: {error} (row {whole:.1} s)"),
    }
    row
}

/// [`row`] for an op that makes its whole rows (c2: one, or two with `--matrices`).
fn whole_rows(
    op: &str,
    label: &str,
    log: u32,
    f: impl FnOnce() -> Result<Vec<Row>, String>,
) -> Vec<Row> {
    let start = Instant::now();
    let rows = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(rows)) => rows,
        Ok(Err(e)) => vec![Row::failed(op, label, log, e)],
        Err(panic) => vec![Row::failed(op, label, log, panic_message(&panic))],
    };
    bar::row_ended();
    let whole = start.elapsed().as_secs_f64();
    for row in &rows {
        match &row.outcome {
            report::Outcome::Measured { median_s, .. } => eprintln!(
                "{} {} per proof (rows {whole:.1} s in all)",
                row.implementation,
                report::format_seconds(*median_s)
            ),
            report::Outcome::Failed { error } => {
                eprintln!("{} failed: {error} (rows {whole:.1} s)", row.implementation)
            }
        }
    }
    rows
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
/// backend's peak device bytes during the runs: inputs included, resident proving
/// parameters excluded (they are shared by every proof).
///
/// Without `uploads` the inputs are resident before the clock starts (NTT data, MSM bases,
/// proving parameters; MSM scalars still come from the host, as a prover's do). With
/// `uploads` every timed run also moves its inputs in (and the NTT result back out). `mode`
/// says how a proof row synthesizes and proves ([`ProofMode`]).
fn measure<B: Profiled>(
    backend: &B,
    op: Op,
    circuit: CircuitKind,
    log: u32,
    opts: &Options,
    uploads: bool,
    mode: ProofMode,
) -> Result<Timings, String> {
    let e = |e: BackendError| e.to_string();
    let n = 1usize << log;
    let mut rng = ChaCha20Rng::seed_from_u64(opts.seed ^ (u64::from(log) << 32));
    let scalars: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
    backend.tracker().reset_peaks();
    let mut baseline = 0;
    let mut phases = None;
    // Each NTT and MSM row's result is checked against an independent host computation
    // (the CPU backend's own rows are not: there the reference is the code measured).
    let check = !backend.info().name.starts_with("cpu");
    // One MSM row of either group: random bases, timed with bases resident or uploaded per
    // run, the last result checked against sluice-msm.
    macro_rules! msm_row {
        ($affine:ty, $name:literal) => {{
            type Group = <$affine as CurveAffine>::Group;
            let points = sluice_msm::random_points::<Group>(n, &mut rng);
            let mut result = Group::identity();
            let times = if uploads {
                time(backend, opts.reps, || {
                    let bases = backend.upload_bases("msm bases", &points).map_err(e)?;
                    result = backend
                        .msm_vartime(&bases, 0, Scalars::Host(&scalars), None)
                        .map_err(e)?;
                    Ok(())
                })?
            } else {
                let bases = backend.upload_bases("msm bases", &points).map_err(e)?;
                time(backend, opts.reps, || {
                    result = backend
                        .msm_vartime(&bases, 0, Scalars::Host(&scalars), None)
                        .map_err(e)?;
                    Ok(())
                })?
            };
            let reference = sluice_msm::msm_vartime::<Group>(&points, &scalars, None);
            if check && result != reference.map_err(|e| e.to_string())? {
                return Err(concat!("the ", $name, " MSM differs from the host reference").into());
            }
            times
        }};
    }
    let times = match op {
        Op::Synthesis | Op::Verify | Op::VerifyBatch => {
            return Err(format!("{} runs on the host (host_op)", op.name()))
        }
        Op::C2 => return Err("c2 makes its own rows (c2::measure)".into()),
        Op::Params => return Err("params makes its own rows (params::mapped_side_by_side)".into()),
        Op::Ntt => {
            let mut out = vec![Fr::ZERO; n];
            let times = if uploads {
                time(backend, opts.reps, || {
                    let mut buf = backend
                        .upload_fr("ntt input", &scalars, scalars.len())
                        .map_err(e)?;
                    backend
                        .transform(&mut buf, Transform::Ntt, NttOrder::NaturalToNatural)
                        .and_then(|()| backend.read_fr(&buf, 0, &mut out))
                        .map_err(e)
                })?
            } else {
                let mut buf = backend
                    .upload_fr("ntt input", &scalars, scalars.len())
                    .map_err(e)?;
                let times = time(backend, opts.reps, || {
                    backend
                        .transform(&mut buf, Transform::Ntt, NttOrder::NaturalToNatural)
                        .map_err(e)
                })?;
                // The timed runs transformed the buffer repeatedly: check a fresh transform.
                backend.write_fr(&mut buf, 0, &scalars).map_err(e)?;
                backend
                    .transform(&mut buf, Transform::Ntt, NttOrder::NaturalToNatural)
                    .and_then(|()| backend.read_fr(&buf, 0, &mut out))
                    .map_err(e)?;
                times
            };
            if check {
                check_ntt(&scalars, &out, log, &mut rng)?;
            }
            times
        }
        Op::MsmG1 => msm_row!(G1Affine, "G1"),
        Op::MsmG2 => msm_row!(G2Affine, "G2"),
        Op::Partition => {
            // The untimed set-up is minutes at 2^27: say where the time goes.
            let clock = Instant::now();
            let circuit = BitDecomposition::<Fr>::filling_domain(log, Some(opts.seed));
            let cs = ProvingAssignment::synthesize(circuit).map_err(|e| e.to_string())?;
            let synthesized = clock.elapsed();
            let params = generate_benchmark_parameters(&CircuitShape::of(&cs), &mut rng)
                .map_err(|e| e.to_string())?;
            bar::note(format!(
                "  partition 2^{log} set-up (untimed): synthesis {:.1} s, parameters {:.1} s\n",
                synthesized.as_secs_f64(),
                (clock.elapsed() - synthesized).as_secs_f64()
            ));
            // Synthesis is not timed: each run proves a copy made before its clock starts.
            let prove =
                |source: &(dyn ParameterSource<B> + Sync)| -> Result<Vec<Duration>, String> {
                    let mut times = Vec::with_capacity(opts.reps);
                    for rep in 0..=opts.reps {
                        // In the memory synthesize_for would have written (page-locked on a
                        // GPU, which uploads with no staging copy).
                        let cs = cs.clone_for(backend);
                        let lent = cs.in_lent_memory();
                        let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
                        backend.synchronize().map_err(e)?;
                        let start = Instant::now();
                        let (_, report) =
                            prove_assignment(cs, source, r, s, backend, &Default::default())
                                .map_err(|e| e.to_string())?;
                        backend.synchronize().map_err(e)?;
                        if rep > 0 {
                            times.push(start.elapsed());
                        } else if let Some(profile) = backend.profile_report() {
                            // The report at the end then covers the timed runs alone.
                            bar::note(format!(
                                "\n  profile of the set-up and the warm-up proof:\n{profile}"
                            ));
                        }
                        if rep == opts.reps {
                            let lent = if lent { "lent" } else { "ordinary" };
                            bar::note(format!(
                                "(last run, {lent} host vectors: {}) ",
                                report.phases
                            ));
                        }
                    }
                    Ok(times)
                };
            let (times, resident) = with_parameters(backend, params, uploads, prove)?;
            baseline = resident;
            times
        }
        Op::Proof => {
            let (times, resident, proof_phases) = match circuit {
                CircuitKind::Mimc => {
                    let x = scalars[0];
                    proof_row(
                        backend,
                        MimcLike::filling_domain(log, Some(x)),
                        (uploads, mode),
                        opts,
                        &mut rng,
                    )?
                }
                CircuitKind::Bits => {
                    let circuit = BitDecomposition::<Fr>::filling_domain(log, Some(opts.seed));
                    proof_row(backend, circuit, (uploads, mode), opts, &mut rng)?
                }
                CircuitKind::Sha256 => {
                    let circuit = Sha256Preimage::<Fr>::filling_domain(log, Some(opts.seed));
                    proof_row(backend, circuit, (uploads, mode), opts, &mut rng)?
                }
                CircuitKind::Porep | CircuitKind::Post => {
                    filecoin::proof_row(backend, circuit, log, (uploads, mode), opts, &mut rng)?
                }
            };
            baseline = resident;
            phases = Some(proof_phases);
            times
        }
    };
    Ok(Timings {
        times,
        peak_device_bytes: Some(backend.tracker().peak(MemoryKind::Device) - baseline),
        phases,
    })
}

/// A proof row's timed runs of `circuit` (synthesis included, as a prover's whole proof),
/// with benchmark parameters for its shape ([`proof_row_with`]).
fn proof_row<B: Profiled, C: sluice_groth16::Circuit<Fr> + Clone>(
    backend: &B,
    circuit: C,
    (uploads, mode): (bool, ProofMode),
    opts: &Options,
    rng: &mut ChaCha20Rng,
) -> Result<(Vec<Duration>, u64, report::ProofPhases), String> {
    if mode == ProofMode::Forked {
        return Err("only Filecoin's circuits (--circuit porep|post) are forks".into());
    }
    let params = benchmark_parameters(circuit.clone(), &mut *rng)?;
    proof_row_with(
        backend,
        circuit,
        params,
        None,
        (uploads, mode),
        opts,
        rng,
        None,
    )
}

/// A circuit's scalar: sluice's own, or (feature `filecoin`) blstrs' (Filecoin's circuits),
/// with the one prover call sluice names per scalar that the proof rows use.
pub(crate) trait BenchScalar: sluice_field::FrCompatible {
    /// `create_proof_streamed` for circuits over this scalar.
    fn create_proof_streamed<B, C>(
        circuit: C,
        matrices: &Arc<ConstraintMatrices>,
        params: &(dyn ParameterSource<B> + Sync),
        blinding: (Fr, Fr),
        backend: &B,
    ) -> Result<(sluice_groth16::Proof, sluice_groth16::ProofReport), sluice_groth16::Groth16Error>
    where
        B: ComputeBackend,
        C: sluice_groth16::Circuit<Self>;
}

impl BenchScalar for Fr {
    fn create_proof_streamed<B, C>(
        circuit: C,
        matrices: &Arc<ConstraintMatrices>,
        params: &(dyn ParameterSource<B> + Sync),
        (r, s): (Fr, Fr),
        backend: &B,
    ) -> Result<(sluice_groth16::Proof, sluice_groth16::ProofReport), sluice_groth16::Groth16Error>
    where
        B: ComputeBackend,
        C: sluice_groth16::Circuit<Self>,
    {
        create_proof_streamed(circuit, matrices, params, r, s, backend, None)
    }
}

#[cfg(feature = "filecoin")]
impl BenchScalar for blstrs::Scalar {
    fn create_proof_streamed<B, C>(
        circuit: C,
        matrices: &Arc<ConstraintMatrices>,
        params: &(dyn ParameterSource<B> + Sync),
        (r, s): (Fr, Fr),
        backend: &B,
    ) -> Result<(sluice_groth16::Proof, sluice_groth16::ProofReport), sluice_groth16::Groth16Error>
    where
        B: ComputeBackend,
        C: sluice_groth16::Circuit<Self>,
    {
        sluice_groth16::for_blstrs::create_proof_streamed(
            circuit, matrices, params, r, s, backend, None,
        )
    }
}

/// A proof row's timed runs of `circuit` (synthesis included, as a prover's whole proof),
/// with `params` uploaded per proof or resident ([`with_parameters`]), synthesized and
/// proved as `mode` says (matrices recorded before the clock): the times, the resident
/// bytes and the medians of each part. With `inputs` (parameters from a setup), the last
/// proof must verify against them. `forked` (mode [`ProofMode::Forked`]) synthesizes the
/// circuit's fork in place of `circuit`.
#[allow(clippy::too_many_arguments)] // One row's inputs, each named.
fn proof_row_with<B, S, C, P>(
    backend: &B,
    circuit: C,
    params: P,
    inputs: Option<&[Fr]>,
    (uploads, mode): (bool, ProofMode),
    opts: &Options,
    rng: &mut ChaCha20Rng,
    forked: Option<&ForkedSynthesis<'_>>,
) -> Result<(Vec<Duration>, u64, report::ProofPhases), String>
where
    B: Profiled,
    S: BenchScalar,
    C: sluice_groth16::Circuit<S> + Clone,
    P: std::borrow::Borrow<Parameters>,
{
    let check = inputs.map(|inputs| (prepare_verifying_key(&params.borrow().vk), inputs));
    let mut last = None;
    let matrices = match mode {
        ProofMode::Plain | ProofMode::Forked => None,
        _ => Some(Arc::new(
            ConstraintMatrices::record(circuit.clone()).map_err(|e| e.to_string())?,
        )),
    };
    let mut parts = Vec::with_capacity(opts.reps + 1);
    let prove = |source: &(dyn ParameterSource<B> + Sync)| {
        // Synthesis sizes its vectors from the parameters and writes them where the
        // backend uploads fastest from, as create_proof does.
        let options = SynthesisOptions {
            capacity: Capacity::for_queries(&source.query_lengths()),
            lender: backend.host_allocator(),
            matrices: matrices.clone(),
            ..SynthesisOptions::default()
        };
        time(backend, opts.reps, || {
            if let (ProofMode::Streamed, Some(m)) = (mode, &matrices) {
                let (r, s) = (Fr::random(&mut *rng), Fr::random(&mut *rng));
                let (proof, report) =
                    S::create_proof_streamed(circuit.clone(), m, source, (r, s), backend)
                        .map_err(|e| e.to_string())?;
                parts.push((report.phases.synthesis, report.phases));
                last = Some(proof);
                return Ok(());
            }
            let start = Instant::now();
            let cs = match forked {
                Some(forked) => forked(&options),
                None => ProvingAssignment::synthesize_with(circuit.clone(), &options),
            }
            .map_err(|e| e.to_string())?;
            let synthesis = start.elapsed();
            let (r, s) = (Fr::random(&mut *rng), Fr::random(&mut *rng));
            let (proof, report) = prove_assignment(cs, source, r, s, backend, &Default::default())
                .map_err(|e| e.to_string())?;
            parts.push((synthesis, report.phases));
            last = Some(proof);
            Ok(())
        })
    };
    let (times, resident) = with_parameters(backend, params, uploads, prove)?;
    if let Some((pvk, inputs)) = check {
        let proof = last.ok_or("the row made no proof to verify")?;
        if !verify_proof(&pvk, &proof, inputs).map_err(|e| e.to_string())? {
            return Err("the row's last proof does not verify".into());
        }
    }
    // The first part is the warm-up's, which `time` does not report.
    let phases = report::ProofPhases::of_runs(&times, &parts[parts.len() - times.len()..]);
    bar::note(format!("({phases}) "));
    Ok((times, resident, phases))
}

/// A forked synthesis of a row's circuit (`ProvingAssignment::synthesize_forked` of its
/// fork), for [`proof_row_with`].
pub(crate) type ForkedSynthesis<'a> = dyn Fn(&SynthesisOptions) -> Result<ProvingAssignment, sluice_groth16::Groth16Error>
    + Sync
    + 'a;

/// What a timed row measured: its times, the backend's peak device bytes where tracked,
/// and a proof row's parts.
struct Timings {
    times: Vec<Duration>,
    peak_device_bytes: Option<u64>,
    phases: Option<report::ProofPhases>,
}

impl Timings {
    /// Times alone (peers, host ops).
    fn of(times: Vec<Duration>) -> Self {
        Timings {
            times,
            peak_device_bytes: None,
            phases: None,
        }
    }
}

/// Benchmark parameters ([`generate_benchmark_parameters`]: the right shape, not from a
/// setup) for `circuit`, which is synthesized once to learn its shape.
fn benchmark_parameters(
    circuit: impl sluice_groth16::Circuit<Fr>,
    rng: &mut impl RngCore,
) -> Result<Parameters, String> {
    let cs = ProvingAssignment::synthesize(circuit).map_err(|e| e.to_string())?;
    generate_benchmark_parameters(&CircuitShape::of(&cs), rng).map_err(|e| e.to_string())
}

/// Runs `prove` (a proof row's timed runs) with `params` uploaded by every proof
/// (`uploads`) or resident: uploaded once beforehand, the host copy dropped and the
/// backend's peaks reset. Returns the times and the resident bytes, which the row's
/// residency leaves out (0 when uploading).
fn with_parameters<B: ComputeBackend>(
    backend: &B,
    params: impl std::borrow::Borrow<Parameters>,
    uploads: bool,
    prove: impl FnOnce(&(dyn ParameterSource<B> + Sync)) -> Result<Vec<Duration>, String>,
) -> Result<(Vec<Duration>, u64), String> {
    if uploads {
        return Ok((prove(params.borrow())?, 0));
    }
    let resident =
        ResidentParameters::upload(params.borrow(), backend).map_err(|e| e.to_string())?;
    drop(params);
    backend.tracker().reset_peaks();
    let baseline = backend.tracker().current(MemoryKind::Device);
    Ok((prove(&resident)?, baseline))
}

/// Checks an NTT (natural order in and out) at two random output positions k against
/// sum_i x_i w^(ik), computed on the host: O(n) per position, independent of every NTT.
fn check_ntt(x: &[Fr], out: &[Fr], log: u32, rng: &mut ChaCha20Rng) -> Result<(), String> {
    let domain = sluice_ntt::Domain::<Fr>::new(log).map_err(|e| e.to_string())?;
    for _ in 0..2 {
        let k = (rng.next_u64() % x.len() as u64) as usize;
        let wk = domain.omega().pow_vartime([k as u64]);
        // In parallel chunks, each from its own power of w^k: at 2^27 one thread took
        // seconds of a GPU call's time.
        const CHUNK: usize = 1 << 16;
        let sum: Fr = x
            .par_chunks(CHUNK)
            .enumerate()
            .map(|(c, xs)| {
                let mut power = wk.pow_vartime([(c * CHUNK) as u64]);
                let mut sum = Fr::ZERO;
                for xi in xs {
                    sum += *xi * power;
                    power *= wk;
                }
                sum
            })
            .sum();
        if sum != out[k] {
            return Err(format!(
                "the NTT differs from the host reference at position {k}"
            ));
        }
    }
    Ok(())
}

/// One untimed warm-up, then `reps` timed calls; the clock stops only after the backend
/// has finished all queued work.
fn time<B: ComputeBackend>(
    backend: &B,
    reps: usize,
    mut f: impl FnMut() -> Result<(), String>,
) -> Result<Vec<Duration>, String> {
    let mut run = || f().and_then(|()| backend.synchronize().map_err(|e| e.to_string()));
    run()?;
    (0..reps)
        .map(|rep| {
            bar::runs(rep, reps);
            let start = Instant::now();
            run().map(|()| start.elapsed())
        })
        .collect()
}

/// The demo: a real setup, a proof on `backend`, and its verification, each phase timed.
fn demo_proof<B: ComputeBackend>(backend: &B, log: u32, seed: u64) -> Result<(), String> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let x = Fr::random(&mut rng);
    let circuit = MimcLike::filling_domain(log, Some(x));
    println!(
        "demo proof on {}: MiMC-like circuit, {} rounds, {} constraints (domain 2^{log})",
        backend.info().name,
        circuit.rounds,
        circuit.num_constraints()
    );
    let t = Instant::now();
    let params = generate_random_parameters(MimcLike::<Fr>::filling_domain(log, None), &mut rng)
        .map_err(|e| format!("demo setup failed: {e}"))?;
    println!(
        "  setup      {}",
        report::format_seconds(t.elapsed().as_secs_f64())
    );
    let t = Instant::now();
    let cs = ProvingAssignment::synthesize(circuit.clone())
        .map_err(|e| format!("demo synthesis failed: {e}"))?;
    let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
    let (proof, proof_report) = prove_assignment(cs, &params, r, s, backend, &Default::default())
        .map_err(|e| format!("demo proof failed: {e}"))?;
    println!(
        "  prove      {}  (synthesis included; backend peak {:.2} vectors incl. bases)",
        report::format_seconds(t.elapsed().as_secs_f64()),
        proof_report.device_peak_vectors()
    );
    let t = Instant::now();
    let pvk = prepare_verifying_key(&params.vk);
    let ok = verify_proof(&pvk, &proof, &MimcLike::public_inputs(x, circuit.rounds))
        .map_err(|e| format!("demo verification failed: {e}"))?;
    println!(
        "  verify     {}  -> {}",
        report::format_seconds(t.elapsed().as_secs_f64()),
        if ok { "valid" } else { "INVALID" }
    );
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the demo proof on {} did not verify",
            backend.info().name
        ))
    }
}

/// The OpenCL backend on the devices `--devices` selects (by default every GPU, or device
/// 0 where there is none — a CPU driver such as PoCL next to a GPU would only slow the
/// GPU down), with shifted MSM bases when `shifted_bases` and the environment's tuning
/// overrides (`OpenClConfig::from_env`: the README's variables), its programs built up front
/// so that no timed row pays for compilation.
#[cfg(feature = "opencl")]
fn opencl_backend(
    opts: &Options,
    shifted_bases: bool,
) -> Result<sluice_backend_opencl::OpenClBackend, String> {
    use sluice_backend_opencl::{DeviceSelector, OpenClBackend, OpenClConfig};
    let devices = match opts.devices.as_deref() {
        Some(sel) => DeviceSelector::parse(sel),
        None => DeviceSelector::GpusOrFirst,
    };
    let backend = OpenClBackend::new(OpenClConfig {
        devices,
        shifted_bases,
        ..OpenClConfig::from_env().map_err(|e| e.to_string())?
    })
    .map_err(|e| e.to_string())?;
    let t = Instant::now();
    backend.build_programs().map_err(|e| e.to_string())?;
    eprintln!(
        "   programs ready in {}",
        report::format_seconds(t.elapsed().as_secs_f64())
    );
    Ok(backend)
}
