//! The c2 row: a C2-shaped job through the partition pipeline. P partitions per proof of a
//! boolean-heavy circuit (or MiMC, the dense case compact storage must not make worse, or
//! with the `filecoin` feature real PoRep or PoSt partitions, each of its own small sector
//! and synthesized forked on every core, as `sluice-filecoin` proves them), Q
//! proofs submitted back to back, workers and budgets from the machine unless given. Every
//! partition's circuit is made before the clock starts. The row's time is the steady state,
//! counted in partitions: those that ended after the first end, over the time from it to
//! the last end, as proofs of P partitions (see [`steady_state`]); the ends themselves are
//! in the row's figures. Beside it, what the pipeline held: admitted workers, host bytes
//! per waiting partition, device busy and the process's peak resident set sampled during
//! the run.
//!
//! The parameters are benchmark parameters (the circuit's shape, no trapdoor; for
//! Filecoin's circuits the shape of one synthesized partition, `filecoin.rs`), made and
//! uploaded before the clock starts
//! and dropped from the host once resident; the proofs are not verified here (the test
//! suite verifies pipeline proofs). With `--matrices` a
//! second pipeline on the same parameters runs the same job with the circuit's constraint
//! matrices recorded before its clock (`Pipeline::with_matrices`), in a row
//! `<label>+matrices`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend::ComputeBackend;
use sluice_field::{Fr, FrCompatible};
use sluice_groth16::demo::{BitDecomposition, MimcLike, Sha256Preimage};
use sluice_groth16::{
    generate_benchmark_parameters, CircuitShape, ConstraintMatrices, ParameterInfo, Parameters,
    PhaseTimes, Residency,
};
use sluice_pipeline::{Pipeline, PipelineConfig};

mod partition;

#[cfg(feature = "filecoin")]
pub(crate) use partition::OnEveryCore;
pub(crate) use partition::{OnOneThread, Partition};

use crate::bar;
use crate::options::{CircuitKind, Op, Options};
use crate::report::{PipelineFigures, Row};

/// Runs the c2 job at 2^log on a backend `make` builds (the pipeline owns its backends).
pub fn measure<B: ComputeBackend + 'static>(
    make: &dyn Fn() -> Result<B, String>,
    label: &str,
    log: u32,
    circuit: CircuitKind,
    opts: &Options,
) -> Result<Vec<Row>, String> {
    match circuit {
        CircuitKind::Bits => on_shape(make, label, log, circuit, opts, |seed| {
            Ok(OnOneThread(BitDecomposition::<Fr>::filling_domain(
                log,
                Some(seed),
            )))
        }),
        CircuitKind::Sha256 => on_shape(make, label, log, circuit, opts, |seed| {
            Ok(OnOneThread(Sha256Preimage::<Fr>::filling_domain(
                log,
                Some(seed),
            )))
        }),
        // A chain of full field elements: each partition its own starting point.
        CircuitKind::Mimc => on_shape(make, label, log, circuit, opts, |seed| {
            Ok(OnOneThread(MimcLike::<Fr>::filling_domain(
                log,
                Some(Fr::from(seed)),
            )))
        }),
        CircuitKind::Porep | CircuitKind::Post => {
            crate::filecoin::c2(make, label, log, circuit, opts)
        }
    }
}

/// The job of `partition`'s circuits, on benchmark parameters of their shape (one
/// partition synthesized for it).
pub(crate) fn on_shape<B, S, P>(
    make: &dyn Fn() -> Result<B, String>,
    label: &str,
    log: u32,
    circuit: CircuitKind,
    opts: &Options,
    partition: impl Fn(u64) -> Result<P, String>,
) -> Result<Vec<Row>, String>
where
    B: ComputeBackend + 'static,
    S: FrCompatible,
    P: Partition<S>,
{
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let mut rng = ChaCha20Rng::seed_from_u64(opts.seed ^ 0xc2 ^ (u64::from(log) << 32));
    // Set-up, untimed: one synthesis for the shape, then the parameters.
    let clock = Instant::now();
    let cs = partition(opts.seed)?.synthesize().map_err(|x| e(&x))?;
    let shape = CircuitShape::of(&cs);
    drop(cs);
    let synthesized = clock.elapsed();
    let params = generate_benchmark_parameters(&shape, &mut rng).map_err(|x| e(&x))?;
    bar::note(format!(
        "  {} 2^{log} set-up (untimed): synthesis {:.1} s, parameters {:.1} s\n",
        circuit.row_name(Op::C2),
        synthesized.as_secs_f64(),
        (clock.elapsed() - synthesized).as_secs_f64(),
    ));
    run(make, label, log, circuit, opts, partition, Arc::new(params))
}

/// The job's rows on `params` (the last holder of them, so they leave the host once
/// resident): one pipeline, and a second with `--matrices`.
fn run<B, S, P>(
    make: &dyn Fn() -> Result<B, String>,
    label: &str,
    log: u32,
    circuit: CircuitKind,
    opts: &Options,
    partition: impl Fn(u64) -> Result<P, String>,
    params: Arc<Parameters>,
) -> Result<Vec<Row>, String>
where
    B: ComputeBackend + 'static,
    S: FrCompatible,
    P: Partition<S>,
{
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let matrices = match opts.matrices {
        true => {
            let clock = Instant::now();
            let matrices = partition(opts.seed)?.record().map_err(|x| e(&x))?;
            bar::note(format!(
                "  matrices recorded (untimed) in {:.1} s: {} terms, {} bytes\n",
                clock.elapsed().as_secs_f64(),
                matrices.num_terms(),
                matrices.host_bytes()
            ));
            Some(Arc::new(matrices))
        }
        false => None,
    };
    // Per device budget, the plain pipeline and, with --matrices, the one with matrices.
    let jobs: Vec<(String, Option<f64>, Option<Arc<ConstraintMatrices>>)> = opts
        .c2
        .device_budget_gib
        .iter()
        .flat_map(|&card| {
            let label = match card {
                None => label.to_owned(),
                Some(g) => format!("{label}@{g}GiB"),
            };
            let with = matrices.as_ref().map(|m| {
                (
                    format!("{label}{}", crate::WITH_MATRICES),
                    card,
                    Some(Arc::clone(m)),
                )
            });
            std::iter::once((label, card, None)).chain(with)
        })
        .collect();
    let mut params = Some(params);
    let mut rows = Vec::with_capacity(jobs.len());
    let count = jobs.len();
    for (k, (label, card, matrices)) in jobs.into_iter().enumerate() {
        let last = k + 1 == count;
        let config = Job {
            label: &label,
            device_budget_gib: card,
            matrices,
            last,
        };
        rows.push(job(
            make,
            log,
            circuit,
            opts,
            &partition,
            &mut params,
            config,
        )?);
    }
    Ok(rows)
}

/// What one pipeline of the job is: its row's label, the device budget it emulates, its
/// matrices, and whether it is the last to use the parameters (which it then drops from the
/// host once resident).
struct Job<'a> {
    label: &'a str,
    device_budget_gib: Option<f64>,
    matrices: Option<Arc<ConstraintMatrices>>,
    last: bool,
}

/// One pipeline's run of the job, on `params` (taken by the last job, so dropped from the
/// host once resident).
fn job<B, S, P>(
    make: &dyn Fn() -> Result<B, String>,
    log: u32,
    circuit: CircuitKind,
    opts: &Options,
    partition: &impl Fn(u64) -> Result<P, String>,
    params: &mut Option<Arc<Parameters>>,
    Job {
        label,
        device_budget_gib,
        matrices,
        last,
    }: Job<'_>,
) -> Result<Row, String>
where
    B: ComputeBackend + 'static,
    S: FrCompatible,
    P: Partition<S>,
{
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let c2 = &opts.c2;
    let mut rng = ChaCha20Rng::seed_from_u64(opts.seed ^ 0xc2 ^ (u64::from(log) << 33));
    let clock = Instant::now();
    let defaults = PipelineConfig::default();
    let config = PipelineConfig {
        workers: c2.workers.unwrap_or(defaults.workers),
        host_budget_bytes: c2.host_budget_gib.map(gib_bytes),
        device_budget_bytes: device_budget_gib.map(gib_bytes),
        ..defaults
    }
    .with_env_overrides()
    .map_err(|x| e(&x))?;
    // What the process holds before the row (the parameters in memory among it): the
    // row's own growth is what its host budget must cover.
    let rss_at_start_bytes = resident_bytes();
    let host = Arc::clone(params.as_ref().ok_or("the parameters were dropped")?);
    let params_bytes = Residency::ALL.resident_file_bytes(&host.query_lengths());
    let pipeline = match matrices {
        Some(m) => Pipeline::with_matrices(host, vec![make()?], &config, m),
        None => Pipeline::new(host, vec![make()?], &config),
    }
    .map_err(|x| e(&x))?;
    if last {
        *params = None;
    }
    let plan = *pipeline.plan();
    let vector = (pipeline.domain_size() * 32) as f64;
    bar::note(format!(
        "  {label}: upload {:.1} s; plan {plan:?}\n",
        clock.elapsed().as_secs_f64()
    ));

    // Every partition's circuit is made before the clock (a real one, Filecoin's, from its
    // sector and vanilla proofs: a C2 receives them made).
    let proofs = (0..c2.proofs)
        .map(|q| {
            (0..c2.partitions)
                .map(|p| partition(opts.seed + 1 + (q * c2.partitions + p) as u64))
                .collect::<Result<Vec<P>, String>>()
        })
        .collect::<Result<Vec<_>, String>>()?;
    let rss = RssSampler::start();
    let before = pipeline.stats();
    let start = Instant::now();
    let mut handles = Vec::with_capacity(c2.proofs);
    for circuits in proofs {
        handles.push(P::submit(&pipeline, circuits, &mut rng).map_err(|x| e(&x))?);
    }
    let mut ends = Vec::with_capacity(c2.proofs);
    let mut partition_ends = Vec::with_capacity(c2.proofs * c2.partitions);
    let (mut waiting, mut synthesized) = (Vec::new(), Vec::new());
    let (mut streamed, mut per_pass) = (Vec::new(), Vec::new());
    let mut passes: Vec<(Duration, usize, PhaseTimes)> = Vec::new();
    // Each proof's end as it happens, whatever the order: partitions of consecutive proofs
    // interleave (and a pass may finish several proofs at once), so a later proof can end
    // first.
    let (done_tx, done) = std::sync::mpsc::channel();
    for handle in handles {
        let done_tx = done_tx.clone();
        std::thread::spawn(move || {
            let outcome = handle.wait();
            let _ = done_tx.send((start.elapsed(), outcome));
        });
    }
    drop(done_tx);
    // Device busy is measured from the first proof's end (the ramp-up, when every worker
    // is still synthesizing its first partition, is not steady state) to the last
    // partition's, over the whole run where the proofs all end together.
    let mut first_end = None;
    for (end, outcome) in done.iter() {
        let (_, reports) = outcome.map_err(|x| e(&x))?;
        ends.push(end);
        if first_end.is_none() {
            first_end = Some((pipeline.stats(), start.elapsed()));
        }
        for r in &reports {
            let end = r.finished.duration_since(start);
            partition_ends.push(end);
            // When its synthesis ended (its start is its latency before its end).
            synthesized.push(end.saturating_sub(r.latency) + r.proof.phases.synthesis);
            waiting.push(r.held_host_bytes as f64 / vector);
            streamed.push((end, r.proof.streamed_bytes as f64));
            per_pass.push(r.proof.pass_partitions as f64);
            if !passes.iter().any(|p| p.0 == end) {
                passes.push((end, r.proof.pass_partitions, r.proof.phases));
            }
        }
    }
    // Two ends a few microseconds apart may arrive in either order.
    ends.sort();
    partition_ends.sort();
    let after = pipeline.stats();
    let peak_rss_bytes = rss.stop();
    drop(pipeline);

    let steady = steady_state(&partition_ends, c2.partitions);
    let streamed_steady = steady_mean(&streamed, partition_ends.first().copied());
    let streamed: Vec<f64> = streamed.iter().map(|s| s.1).collect();
    // The window ends at the last partition's end, not after the pipeline's drop; where
    // the first proof ended with the last pass (no window left), the whole run.
    let last_end = partition_ends
        .last()
        .copied()
        .unwrap_or_else(|| start.elapsed());
    let since_first = first_end.map(|(from, at)| (from, last_end.saturating_sub(at)));
    let (from, wall) = match since_first {
        Some((from, wall)) if wall >= Duration::from_secs(1) => (from, wall),
        _ => (before, last_end),
    };
    bar::note(format!(
        "  {label}: proof ends {} s; partition ends {} s; {}\n",
        seconds(&ends),
        seconds(&partition_ends),
        backlog_words(&partition_ends, &synthesized, steady, c2.partitions)
    ));
    passes.sort_by_key(|p| p.0);
    bar::note(format!("  {label}: passes {}\n", pass_phases(&passes)));
    let times = vec![steady.per_proof];
    let busy = after
        .device_busy
        .iter()
        .zip(&from.device_busy)
        // A device job is credited when it ends, so one straddling the window's start
        // counts whole: capped at all of the window.
        .map(|(a, b)| ((*a - *b).as_secs_f64() / wall.as_secs_f64()).min(1.0))
        .collect();
    let mut row = Row::measured(&circuit.row_name(Op::C2), label, log, &times, None);
    row.pipeline = Some(PipelineFigures {
        partitions: c2.partitions,
        proofs: c2.proofs,
        workers_asked: plan.asked_workers,
        workers_admitted: after.synthesizing_peak,
        host_budget_bytes: plan.host_budget_bytes,
        waiting_partition_vectors: waiting.iter().copied().fold(0.0, f64::max),
        waiting_partition_mean_vectors: mean(&waiting),
        host_reserved_peak_bytes: after.host_reserved_peak,
        device_busy: busy,
        peak_rss_bytes,
        rss_at_start_bytes,
        proof_ends_s: ends.iter().map(Duration::as_secs_f64).collect(),
        partition_ends_s: partition_ends.iter().map(Duration::as_secs_f64).collect(),
        steady_partitions: steady.partitions,
        residency: plan.residency.to_string(),
        device_budget_bytes: config.device_budget_bytes,
        params_bytes,
        streamed_bytes_per_partition: mean(&streamed),
        streamed_bytes_per_steady_partition: streamed_steady,
        pass_partitions_mean: mean(&per_pass),
    });
    Ok(row)
}

/// GiB to bytes.
fn gib_bytes(gib: f64) -> u64 {
    (gib * (1u64 << 30) as f64) as u64
}

/// The mean of `values` (0 for none).
fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

/// The mean of the values of the partitions the steady state counts (those that ended
/// after `first_end`), so a column beside the steady time covers the same partitions; the
/// mean of all where none ended after it.
fn steady_mean(values: &[(Duration, f64)], first_end: Option<Duration>) -> f64 {
    let counted: Vec<f64> = values
        .iter()
        .filter(|(end, _)| first_end.is_some_and(|first| *end > first))
        .map(|v| v.1)
        .collect();
    match counted.is_empty() {
        true => mean(&values.iter().map(|v| v.1).collect::<Vec<_>>()),
        false => mean(&counted),
    }
}

/// The steady state of a run: the time per proof of `per_proof` partitions, and the
/// partitions it counts.
#[derive(Clone, Copy, Debug, PartialEq)]
struct SteadyState {
    per_proof: Duration,
    partitions: usize,
}

/// The steady state from the partitions' ends (sorted): those that ended after the first
/// end, over the time from it to the last end (the ramp, every worker synthesizing its
/// first partition, is not steady state). Counted in partitions, not proofs: consecutive
/// proofs' partitions interleave, and a pass ends all its partitions at once, so proof
/// ends bunch (three proofs ending in one pass left no interval at all) where partition
/// ends cannot fool the count. Where all ended at once, the whole time (0 partitions
/// counted).
fn steady_state(ends: &[Duration], per_proof: usize) -> SteadyState {
    let (Some(&first), Some(&last)) = (ends.first(), ends.last()) else {
        return SteadyState {
            per_proof: Duration::ZERO,
            partitions: 0,
        };
    };
    let after = ends.iter().filter(|&&e| e > first).count();
    let per_proof = match after {
        0 => last.mul_f64(per_proof as f64 / ends.len() as f64),
        _ => (last - first).mul_f64(per_proof as f64 / after as f64),
    };
    SteadyState {
        per_proof,
        partitions: after,
    }
}

/// How many of the partitions the steady state counts (those ending after the first end)
/// were already synthesized at the first end, and synthesis's mean pace over the run (all
/// partitions by the last synthesis's end), in seconds a proof of `per_proof` partitions. A
/// backlog the ramp built is drained at the device's sustained rate where synthesis keeps
/// that pace; where synthesis is slower than the steady state, the steady state is the
/// device draining a backlog synthesis cannot refill.
fn backlog_words(
    ends: &[Duration],
    synthesized: &[Duration],
    steady: SteadyState,
    per_proof: usize,
) -> String {
    let Some(&first) = ends.first() else {
        return "no partitions".into();
    };
    let counted = ends.iter().filter(|&&e| e > first).count();
    // Every partition but those of the first pass: the earliest syntheses ended first.
    let ready = synthesized.iter().filter(|&&s| s <= first).count();
    let backlog = ready.saturating_sub(ends.len() - counted);
    let last = synthesized.iter().max().copied().unwrap_or_default();
    let pace = last.as_secs_f64() * per_proof as f64 / synthesized.len().max(1) as f64;
    let words = format!(
        "{backlog} of the {counted} counted were synthesized by the first end; synthesis \
         averaged {pace:.2} s a proof (the last at {:.1} s)",
        last.as_secs_f64()
    );
    // A twentieth of slack: a pace within it is the same rate.
    match counted > 0 && pace > 1.05 * steady.per_proof.as_secs_f64() {
        true => format!(
            "{words}: slower than the steady state, which is the device draining the \
             ramp's backlog, not a sustained rate (run more proofs)"
        ),
        false => words,
    }
}

/// Each pass's end, partitions and phase times in seconds (H with h's MSMs, then the
/// witness queries'): where a pass's time goes, so streamed rows can be read.
fn pass_phases(passes: &[(Duration, usize, PhaseTimes)]) -> String {
    let s: Vec<String> = passes
        .iter()
        .map(|(end, k, t)| {
            let s = |d: Duration| d.as_secs_f64();
            format!(
                "[{:.1} s: {k}, h {:.1} l {:.1} a {:.1} b_g1 {:.1} b_g2 {:.1}]",
                s(*end),
                s(t.h),
                s(t.l),
                s(t.a),
                s(t.b_g1),
                s(t.b_g2)
            )
        })
        .collect();
    s.join(" ")
}

/// Seconds to one place, comma-separated.
fn seconds(times: &[Duration]) -> String {
    let s: Vec<String> = times
        .iter()
        .map(|t| format!("{:.1}", t.as_secs_f64()))
        .collect();
    s.join(", ")
}

/// Samples the process's resident set every 50 ms on a thread of its own; `stop` gives
/// the peak (`None` where `/proc/self/status` cannot be read).
struct RssSampler {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RssSampler {
    fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(0));
        let thread = {
            let (stop, peak) = (Arc::clone(&stop), Arc::clone(&peak));
            std::thread::Builder::new()
                .name("sluice-bench-rss".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        if let Some(rss) = resident_bytes() {
                            peak.fetch_max(rss, Ordering::Relaxed);
                        }
                        std::thread::sleep(Duration::from_millis(50));
                    }
                })
                .ok()
        };
        RssSampler { stop, peak, thread }
    }

    fn stop(mut self) -> Option<u64> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        resident_bytes()?;
        Some(self.peak.load(Ordering::Relaxed))
    }
}

/// `VmRSS` of `/proc/self/status`, in bytes.
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use sluice_backend_cpu::CpuBackend;

    /// A small c2 job on the CPU backend, with and without recorded matrices: every proof
    /// ends, the steady-state times and the figures are consistent, and a boolean-heavy
    /// partition waits compactly.
    #[test]
    fn a_small_c2_job_reports_its_pipeline() {
        let opts = Options::try_parse_from([
            "sluice-bench",
            "--ops",
            "c2",
            "--partitions",
            "3",
            "--proofs",
            "3",
            "--workers",
            "2",
            "--matrices",
        ])
        .unwrap();
        let make = || Ok(CpuBackend::new());
        let rows = measure(&make, "cpu", 12, CircuitKind::Bits, &opts).unwrap();
        let labels: Vec<&str> = rows.iter().map(|r| r.implementation.as_str()).collect();
        assert_eq!(labels, ["cpu", "cpu+matrices"]);
        for row in rows {
            let p = row.pipeline.as_ref().expect("c2 figures");
            assert_eq!(p.residency, "resident", "{p:?}");
            assert_eq!(
                (p.streamed_bytes_per_partition, p.pass_partitions_mean),
                (0.0, 1.0)
            );
            check_row(row);
        }
        // A card of a few hundred KiB: the parameters (2^12 bits, 1.3 MB) stream, in passes.
        let mut small = opts.clone();
        small.matrices = false;
        small.c2.device_budget_gib = vec![Some(400e3 / (1u64 << 30) as f64)];
        let rows = measure(&make, "cpu", 12, CircuitKind::Bits, &small).unwrap();
        let p = rows[0].pipeline.clone().expect("c2 figures");
        assert_ne!(p.residency, "resident", "{p:?}");
        assert!(p.device_budget_bytes.is_some_and(|b| b <= 400_000), "{p:?}");
        assert!(p.streamed_bytes_per_partition > 0.0, "{p:?}");
        assert!(p.streamed_bytes_per_steady_partition > 0.0, "{p:?}");
        assert!(
            p.streamed_bytes_per_steady_partition < p.params_bytes as f64,
            "{p:?}"
        );
        assert!(
            p.streamed_bytes_per_partition < p.params_bytes as f64,
            "{p:?}"
        );
        assert!(p.pass_partitions_mean >= 1.0, "{p:?}");
        check_row(rows[0].clone());
        // Dense partitions wait as full vectors (a, b and the witness), no larger.
        for dense in measure(&make, "cpu", 12, CircuitKind::Mimc, &opts).unwrap() {
            let d = dense.pipeline.expect("c2 figures");
            assert!(
                d.waiting_partition_vectors > 2.0 && d.waiting_partition_vectors <= 3.05,
                "{d:?}"
            );
        }
    }

    fn check_row(row: Row) {
        let p = row.pipeline.expect("c2 figures");
        assert_eq!((p.partitions, p.proofs, p.workers_asked), (3, 3, 2));
        assert!((1..=2).contains(&p.workers_admitted), "{p:?}");
        assert_eq!(p.proof_ends_s.len(), 3);
        assert!(p.rss_at_start_bytes.is_some(), "{p:?}");
        assert!(p.proof_ends_s.windows(2).all(|w| w[0] <= w[1]), "{p:?}");
        assert!(
            p.waiting_partition_vectors > 0.0 && p.waiting_partition_vectors < 0.25,
            "{p:?}"
        );
        assert!(p.waiting_partition_mean_vectors <= p.waiting_partition_vectors);
        assert!(
            p.device_busy.iter().all(|b| (0.0..=1.0).contains(b)),
            "{p:?}"
        );
        match row.outcome {
            crate::report::Outcome::Measured { reps, median_s, .. } => {
                assert_eq!(reps, 1);
                let ends = &p.partition_ends_s;
                assert_eq!(ends.len(), 9, "{p:?}");
                let after = ends.iter().filter(|&&e| e > ends[0]).count();
                assert_eq!(p.steady_partitions, after, "{p:?}");
                let steady = match after {
                    0 => ends[8] * 3.0 / 9.0,
                    _ => (ends[8] - ends[0]) * 3.0 / after as f64,
                };
                assert!((median_s - steady).abs() < 1e-6, "{median_s} {p:?}");
            }
            other => panic!("{other:?}"),
        }
    }

    /// Partitions ending one at a time (resident) and by passes: the partitions after the
    /// first end over the time from it, whatever proofs they belong to.
    #[test]
    fn the_steady_state_counts_the_partitions_after_the_first_end() {
        let secs = |v: &[f64]| -> Vec<Duration> {
            v.iter().map(|&s| Duration::from_secs_f64(s)).collect()
        };
        let steady = |ends: &[f64], per: usize| {
            let s = steady_state(&secs(ends), per);
            (s.per_proof.as_secs_f64(), s.partitions)
        };
        // One at a time, two partitions a proof: 3 after the first, in 3 s.
        let (t, n) = steady(&[10.0, 11.0, 12.0, 13.0], 2);
        assert!((t - 2.0).abs() < 1e-9 && n == 3, "{t} {n}");
        // Passes of 14, 14 and 2 partitions of three proofs of 10: three proofs' ends in
        // the last pass would have left no interval; 16 partitions in 30 s count.
        let mut ends = vec![60.0; 14];
        ends.extend([80.0; 14]);
        ends.extend([90.0; 2]);
        let (t, n) = steady(&ends, 10);
        assert!((t - 30.0 * 10.0 / 16.0).abs() < 1e-9 && n == 16, "{t} {n}");
        // One pass for all: its whole time, as proofs of 10, and nothing counted.
        let (t, n) = steady(&[50.0; 20], 10);
        assert!((t - 25.0).abs() < 1e-9 && n == 0, "{t} {n}");
        assert_eq!(steady(&[], 10), (0.0, 0));
    }

    #[test]
    fn steady_bytes_count_the_partitions_the_steady_time_counts() {
        let at = |s: f64, v: f64| (Duration::from_secs_f64(s), v);
        // A ramp pass of one streams everything; the two after it share a pass.
        let values = [at(10.0, 90.0), at(20.0, 30.0), at(20.0, 20.0)];
        let first = Some(Duration::from_secs(10));
        assert_eq!(steady_mean(&values, first), 25.0);
        // Everything ended at once: no steady partitions, the mean of all.
        assert_eq!(
            steady_mean(&values[1..], Some(Duration::from_secs(20))),
            25.0
        );
        assert_eq!(steady_mean(&[], None), 0.0);
    }

    #[test]
    fn a_backlog_the_ramp_built_is_named() {
        let s = |v: &[f64]| -> Vec<Duration> {
            v.iter().map(|&x| Duration::from_secs_f64(x)).collect()
        };
        let words = |ends: &[f64], synthesized: &[f64]| {
            let ends = s(ends);
            backlog_words(&ends, &s(synthesized), steady_state(&ends, 1), 1)
        };
        // Synthesis kept pace: only the first partition was ready at the first end.
        let paced = words(&[10.0, 20.0, 30.0, 40.0], &[5.0, 15.0, 25.0, 35.0]);
        assert!(paced.starts_with("0 of the 3 counted"), "{paced}");
        assert!(paced.contains("averaged 8.75 s a proof"), "{paced}");
        assert!(!paced.contains("draining"), "{paced}");
        // Two of the three counted were ready before the first end, but synthesis's pace
        // (8.75 s a partition) beats the device's (10 s): the device's rate, sustained.
        let ahead = words(&[10.0, 20.0, 30.0, 40.0], &[5.0, 8.0, 9.0, 35.0]);
        assert!(ahead.starts_with("2 of the 3 counted"), "{ahead}");
        assert!(!ahead.contains("draining"), "{ahead}");
        // The device drained in 3 s what synthesis took 90 s to build.
        let drained = words(&[100.0, 101.0, 102.0, 103.0], &[5.0, 8.0, 9.0, 90.0]);
        assert!(drained.starts_with("3 of the 3 counted"), "{drained}");
        assert!(drained.contains("draining"), "{drained}");
        let none = steady_state(&[], 1);
        assert_eq!(backlog_words(&[], &[], none, 1), "no partitions");
    }
}
