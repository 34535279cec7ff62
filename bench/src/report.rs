//! Results of a bench run: the printed table, the JSON file and the SVG plots.

use std::fmt;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::provenance::Provenance;

/// One measured row: an operation at one size on one implementation.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Row {
    /// The operation (`ntt`, `msm-g1`, `msm-g2`, `proof`).
    pub op: String,
    /// Who ran it: a sluice backend (`cpu`, `opencl`) or a peer (`arkworks`, `blst`, ...).
    pub implementation: String,
    /// log2 of the problem size (elements, bases or constraints).
    pub log_size: u32,
    /// The outcome: timings, or why there are none.
    pub outcome: Outcome,
    /// A c2 row's pipeline figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<PipelineFigures>,
    /// A sluice proof row's parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<ProofPhases>,
}

/// Where a proof row's time went, each part the median over the timed runs, in seconds:
/// synthesis, then the prover's parts ([`sluice_groth16::PhaseTimes`]: each ends when its
/// result is on the host, its uploads inside it), and the rest of the run (host
/// preparation, gaps between parts, the final synchronisation).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProofPhases {
    /// Synthesis into the prover's vectors.
    pub synthesis_s: f64,
    /// H (a, b, c to h's coefficients, then h's MSM), with the uploads of a and b.
    pub h_s: f64,
    /// The L MSM (with the witness upload where it is not overlapped with H).
    pub l_s: f64,
    /// The A MSMs.
    pub a_s: f64,
    /// The B MSMs in G1.
    pub b_g1_s: f64,
    /// The B MSM in G2.
    pub b_g2_s: f64,
    /// The run's time outside synthesis and the parts above.
    pub other_s: f64,
}

impl ProofPhases {
    /// The medians of `runs` (synthesis time and the prover's parts of each run) against
    /// the runs' whole `times`, index for index.
    pub fn of_runs(times: &[Duration], runs: &[(Duration, sluice_groth16::PhaseTimes)]) -> Self {
        let med = |f: &dyn Fn(usize) -> f64| {
            let mut v: Vec<f64> = (0..runs.len()).map(f).collect();
            v.sort_by(f64::total_cmp);
            median(&v)
        };
        let s = |d: Duration| d.as_secs_f64();
        let parts = |i: usize| {
            let p = &runs[i].1;
            s(p.h) + s(p.l) + s(p.a) + s(p.b_g1) + s(p.b_g2)
        };
        ProofPhases {
            synthesis_s: med(&|i| s(runs[i].0)),
            h_s: med(&|i| s(runs[i].1.h)),
            l_s: med(&|i| s(runs[i].1.l)),
            a_s: med(&|i| s(runs[i].1.a)),
            b_g1_s: med(&|i| s(runs[i].1.b_g1)),
            b_g2_s: med(&|i| s(runs[i].1.b_g2)),
            other_s: med(&|i| (s(times[i]) - s(runs[i].0) - parts(i)).max(0.0)),
        }
    }

    /// Everything after synthesis: the parts and the rest.
    pub fn after_synthesis_s(&self) -> f64 {
        self.h_s + self.l_s + self.a_s + self.b_g1_s + self.b_g2_s + self.other_s
    }
}

impl fmt::Display for ProofPhases {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |x: f64| x * 1e3;
        write!(
            f,
            "medians: synthesis {:.1} ms, h {:.1}, l {:.1}, a {:.1}, b_g1 {:.1}, b_g2 {:.1}, \
             other {:.1} ms",
            ms(self.synthesis_s),
            ms(self.h_s),
            ms(self.l_s),
            ms(self.a_s),
            ms(self.b_g1_s),
            ms(self.b_g2_s),
            ms(self.other_s)
        )
    }
}

/// What a c2 row measured of the partition pipeline besides its time per proof.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PipelineFigures {
    /// Partitions per proof.
    pub partitions: usize,
    /// Proofs run back to back.
    pub proofs: usize,
    /// Partition workers asked for.
    pub workers_asked: usize,
    /// Peak partitions synthesizing at once: the workers the host budget admitted.
    pub workers_admitted: usize,
    /// The host budget, in bytes.
    pub host_budget_bytes: u64,
    /// Host bytes a synthesized partition held while it waited for its device (a, b, the
    /// witness and the bitmaps), the largest over the run, in vectors (n x 32 bytes).
    pub waiting_partition_vectors: f64,
    /// The same, the mean over the run's partitions.
    pub waiting_partition_mean_vectors: f64,
    /// Peak bytes the host budget counted for all partitions together.
    pub host_reserved_peak_bytes: u64,
    /// Device busy time over the wall time from the first proof's end to the last's (the
    /// whole run where they end within a second), per device, at most 1 (work is credited
    /// when it ends).
    pub device_busy: Vec<f64>,
    /// Peak resident set size of the process sampled during the run (every 50 ms).
    pub peak_rss_bytes: Option<u64>,
    /// The resident set when the row started, the parameters held in memory among it:
    /// the peak's growth beyond it is what the row's host budget covers.
    #[serde(default)]
    pub rss_at_start_bytes: Option<u64>,
    /// Seconds from the first submission to the end of each proof.
    pub proof_ends_s: Vec<f64>,
    /// Seconds from the first submission to the end of each partition (of its pass), in
    /// order.
    #[serde(default)]
    pub partition_ends_s: Vec<f64>,
    /// The partitions the steady state counts: those that ended after the first end.
    #[serde(default)]
    pub steady_partitions: usize,
    /// Where the parameters lived: `resident`, `streamed` or `mixed (<resident queries>)`.
    #[serde(default)]
    pub residency: String,
    /// The device budget, in bytes, where one was given (`--device-budget-gib`).
    #[serde(default)]
    pub device_budget_bytes: Option<u64>,
    /// Bytes of the parameter set (file encodings of every query).
    #[serde(default)]
    pub params_bytes: u64,
    /// Host-to-device bytes of streamed bases per partition, the mean over the run (the
    /// ramp's first pass, of the one partition ready, streams every streamed query whole).
    #[serde(default)]
    pub streamed_bytes_per_partition: f64,
    /// The same, the mean over the partitions the steady state counts (those that ended
    /// after the first end): the bytes beside the row's time.
    #[serde(default)]
    pub streamed_bytes_per_steady_partition: f64,
    /// Partitions per pass over the streamed parameters, the mean over the run's
    /// partitions (1 when every query is resident).
    #[serde(default)]
    pub pass_partitions_mean: f64,
}

/// Timings of a row, or the error that stopped it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// All repetitions ran.
    Measured {
        /// Median wall time in seconds.
        median_s: f64,
        /// Fastest repetition in seconds.
        min_s: f64,
        /// Repetitions timed.
        reps: usize,
        /// Elements (or constraints) per second at the median.
        throughput_per_s: f64,
        /// Peak bytes the backend held during the operation, where tracked.
        peak_backend_bytes: Option<u64>,
        /// That peak as a multiple of one full vector of 2^log_size scalars (32 bytes each).
        peak_in_vectors: Option<f64>,
    },
    /// The implementation failed; the run went on with the others.
    Failed {
        /// The error, as displayed.
        error: String,
    },
}

impl Row {
    /// A measured row from raw repetition times.
    pub fn measured(
        op: &str,
        implementation: &str,
        log_size: u32,
        times: &[Duration],
        peak_backend_bytes: Option<u64>,
    ) -> Row {
        let mut secs: Vec<f64> = times.iter().map(Duration::as_secs_f64).collect();
        secs.sort_by(f64::total_cmp);
        let median_s = median(&secs);
        let n = (1u64 << log_size) as f64;
        Row {
            op: op.to_owned(),
            implementation: implementation.to_owned(),
            log_size,
            outcome: Outcome::Measured {
                median_s,
                min_s: secs.first().copied().unwrap_or(f64::NAN),
                reps: secs.len(),
                throughput_per_s: n / median_s,
                peak_backend_bytes,
                peak_in_vectors: peak_backend_bytes.map(|b| b as f64 / (n * 32.0)),
            },
            pipeline: None,
            phases: None,
        }
    }

    /// A row for an implementation that failed.
    pub fn failed(op: &str, implementation: &str, log_size: u32, error: String) -> Row {
        Row {
            op: op.to_owned(),
            implementation: implementation.to_owned(),
            log_size,
            outcome: Outcome::Failed { error },
            pipeline: None,
            phases: None,
        }
    }

    fn median_s(&self) -> Option<f64> {
        match self.outcome {
            Outcome::Measured { median_s, .. } => Some(median_s),
            Outcome::Failed { .. } => None,
        }
    }

    /// Whether a sluice backend ran the row (`cpu+upload` too), not a peer.
    pub fn is_sluice(&self, sluice_backends: &[&str]) -> bool {
        let imp = &self.implementation;
        sluice_backends.contains(&imp.split('+').next().unwrap_or(imp))
    }

    /// For a sluice row, (peer, sluice / peer) for every peer measured at the same op and
    /// size in `rows` (below 1: sluice faster); nothing for a peer's or a failed row.
    pub fn peer_ratios<'a>(
        &self,
        rows: &'a [Row],
        sluice_backends: &[&str],
    ) -> Vec<(&'a str, f64)> {
        let (Some(median), true) = (self.median_s(), self.is_sluice(sluice_backends)) else {
            return Vec::new();
        };
        rows.iter()
            .filter(|p| {
                p.op == self.op && p.log_size == self.log_size && !p.is_sluice(sluice_backends)
            })
            .filter_map(|p| Some((p.implementation.as_str(), median / p.median_s()?)))
            .collect()
    }
}

/// The median of sorted values (the mean of the middle two for an even count).
fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// Human-readable duration with three significant figures.
pub fn format_seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.3} us", s * 1e6)
    }
}

/// An axis label for 10^decade seconds: "1 s", "100 ms", "10 us".
fn format_decade(decade: f64) -> String {
    let (scale, unit) = match decade {
        d if d >= 0.0 => (1.0, "s"),
        d if d >= -3.0 => (1e3, "ms"),
        d if d >= -6.0 => (1e6, "us"),
        _ => (1e9, "ns"),
    };
    format!("{} {unit}", (10f64.powf(decade) * scale).round())
}

fn format_rate(r: f64) -> String {
    if r >= 1e6 {
        format!("{:.2} M/s", r / 1e6)
    } else {
        format!("{:.1} k/s", r / 1e3)
    }
}

/// The proof rows' parts, a line each in milliseconds (empty without sluice proof rows),
/// with everything after synthesis as a fraction of synthesis.
pub fn phase_table(rows: &[Row]) -> String {
    let mut out = String::new();
    for row in rows {
        let (Some(p), Outcome::Measured { median_s, .. }) = (&row.phases, &row.outcome) else {
            continue;
        };
        if out.is_empty() {
            let _ = writeln!(
                out,
                "{:<14} {:<16} {:>5} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>12}",
                "proof op",
                "impl",
                "log2",
                "total ms",
                "synthesis",
                "h",
                "l",
                "a",
                "b_g1",
                "b_g2",
                "other",
                "tail/synth"
            );
        }
        let ms = |x: f64| format!("{:.1}", x * 1e3);
        let _ = writeln!(
            out,
            "{:<14} {:<16} {:>5} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>12}",
            row.op,
            row.implementation,
            row.log_size,
            ms(*median_s),
            ms(p.synthesis_s),
            ms(p.h_s),
            ms(p.l_s),
            ms(p.a_s),
            ms(p.b_g1_s),
            ms(p.b_g2_s),
            ms(p.other_s),
            format!("{:.2}", p.after_synthesis_s() / p.synthesis_s),
        );
    }
    out
}

/// The c2 rows' pipeline figures, a line each (empty without c2 rows).
pub fn pipeline_table(rows: &[Row]) -> String {
    let mut out = String::new();
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    for row in rows {
        let (Some(p), Outcome::Measured { median_s, .. }) = (&row.pipeline, &row.outcome) else {
            continue;
        };
        if out.is_empty() {
            let _ = writeln!(
                out,
                "{:<10} {:<10} {:>5} {:>9} {:>20} {:>17} {:>10} {:>10} {:>18}  {:<28} {:>11} {:>38}",
                "c2 op",
                "impl",
                "log2",
                "workers",
                "s per proof (steady)",
                "waiting (vectors)",
                "device",
                "budget",
                "peak RSS (+row) GiB",
                "parameters",
                "per pass",
                "streamed GB / partition, steady (all)"
            );
        }
        let busy: Vec<String> = p
            .device_busy
            .iter()
            .map(|b| format!("{:.0}%", b * 100.0))
            .collect();
        let _ = writeln!(
            out,
            "{:<10} {:<10} {:>5} {:>9} {:>20} {:>17} {:>10} {:>10} {:>18}  {:<28} {:>11} {:>38}",
            row.op,
            row.implementation,
            row.log_size,
            format!("{}/{}", p.workers_admitted, p.workers_asked),
            format!(
                "{median_s:.2} ({} of {}x{})",
                p.steady_partitions, p.proofs, p.partitions
            ),
            format!(
                "{:.3} ({:.3})",
                p.waiting_partition_vectors, p.waiting_partition_mean_vectors
            ),
            busy.join(","),
            format!("{:.1} GiB", gib(p.host_budget_bytes)),
            match (p.peak_rss_bytes, p.rss_at_start_bytes) {
                (Some(peak), Some(start)) =>
                    format!("{:.2} (+{:.2})", gib(peak), gib(peak.saturating_sub(start))),
                (Some(peak), None) => format!("{:.2}", gib(peak)),
                (None, _) => "-".to_owned(),
            },
            match p.device_budget_bytes {
                Some(b) if gib(b) < 1.0 =>
                    format!("{} ({:.0} MiB card)", p.residency, gib(b) * 1024.0),
                Some(b) => format!("{} ({:.0} GiB card)", p.residency, gib(b)),
                None => p.residency.clone(),
            },
            format!("{:.1}", p.pass_partitions_mean),
            format!(
                "{:.3} ({:.3}) of {:.3}",
                p.streamed_bytes_per_steady_partition / 1e9,
                p.streamed_bytes_per_partition / 1e9,
                p.params_bytes as f64 / 1e9
            ),
        );
    }
    out
}

/// The table printed at the end of a run. Rows of sluice backends get a `vs <peer>` ratio
/// column for every peer measured at the same op and size (sluice / peer; < 1 is faster).
pub fn table(rows: &[Row], sluice_backends: &[&str]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<12} {:<14} {:>5} {:>12} {:>12} {:>12} {:>10}  ratios (sluice/peer)",
        "op", "impl", "log2", "median", "min", "throughput", "residency"
    );
    for row in rows {
        let _ = write!(
            out,
            "{:<12} {:<14} {:>5} ",
            row.op, row.implementation, row.log_size
        );
        match &row.outcome {
            Outcome::Measured {
                median_s,
                min_s,
                throughput_per_s,
                peak_in_vectors,
                ..
            } => {
                let residency = peak_in_vectors.map_or("-".to_owned(), |v| format!("{v:.2} vec"));
                let _ = write!(
                    out,
                    "{:>12} {:>12} {:>12} {:>10} ",
                    format_seconds(*median_s),
                    format_seconds(*min_s),
                    format_rate(*throughput_per_s),
                    residency
                );
                for (peer, ratio) in row.peer_ratios(rows, sluice_backends) {
                    let _ = write!(out, " {peer}={ratio:.2}");
                }
            }
            Outcome::Failed { error } => {
                let _ = write!(out, "FAILED: {}", error.lines().next().unwrap_or(""));
            }
        }
        out.push('\n');
    }
    out
}

/// The `meta` object of a run's results.json: the sluice backends that ran (every other
/// implementation is a peer), the repetitions, the seed, the threads and where the run
/// came from (what `record` puts beside each figure).
pub fn meta(
    backends: &[&str],
    reps: usize,
    seed: u64,
    provenance: &Provenance,
) -> serde_json::Value {
    serde_json::json!({
        "backends": backends,
        "reps": reps,
        "seed": seed,
        "threads": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "provenance": provenance,
    })
}

/// Writes `rows` as JSON to `dir/results.json`.
pub fn write_json(dir: &Path, rows: &[Row], meta: &serde_json::Value) -> std::io::Result<PathBuf> {
    let path = dir.join("results.json");
    let doc = serde_json::json!({ "meta": meta, "rows": rows });
    std::fs::write(&path, serde_json::to_string_pretty(&doc)?)?;
    Ok(path)
}

const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// One SVG per operation: median time (log scale) against log2 size, one line per
/// implementation. Returns the files written.
pub fn write_plots(dir: &Path, rows: &[Row]) -> std::io::Result<Vec<PathBuf>> {
    let mut ops: Vec<&str> = rows.iter().map(|r| r.op.as_str()).collect();
    ops.dedup();
    ops.sort_unstable();
    ops.dedup();
    let mut written = Vec::new();
    for op in ops {
        let path = dir.join(format!("{op}.svg"));
        std::fs::write(&path, plot(op, rows))?;
        written.push(path);
    }
    Ok(written)
}

fn plot(op: &str, rows: &[Row]) -> String {
    let points: Vec<(&str, u32, f64)> = rows
        .iter()
        .filter(|r| r.op == op)
        .filter_map(|r| {
            r.median_s()
                .map(|m| (r.implementation.as_str(), r.log_size, m))
        })
        .filter(|&(_, _, m)| m > 0.0)
        .collect();
    let (w, h, left, right, top, bottom) = (640.0, 400.0, 70.0, 150.0, 40.0, 50.0);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">{op}: median time vs size</text>\n",
        (w - right + left) / 2.0
    );
    if points.is_empty() {
        svg.push_str("<text x=\"20\" y=\"80\">no measurements</text>\n</svg>\n");
        return svg;
    }
    let xmin = points.iter().map(|p| p.1).min().unwrap_or(0) as f64;
    let xmax = (points.iter().map(|p| p.1).max().unwrap_or(1) as f64).max(xmin + 1.0);
    let ymin = points
        .iter()
        .map(|p| p.2.log10())
        .fold(f64::INFINITY, f64::min)
        .floor();
    let ymax = points
        .iter()
        .map(|p| p.2.log10())
        .fold(f64::NEG_INFINITY, f64::max)
        .ceil()
        .max(ymin + 1.0);
    let px = |x: f64| left + (x - xmin) / (xmax - xmin) * (w - left - right);
    let py = |y: f64| h - bottom - (y - ymin) / (ymax - ymin) * (h - top - bottom);
    // Axes, decade grid lines and size ticks.
    let _ = writeln!(
        svg,
        "<line x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>",
        h - bottom,
        w - right,
        h - bottom
    );
    let _ = writeln!(
        svg,
        "<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{}\" stroke=\"black\"/>",
        h - bottom
    );
    let mut decade = ymin;
    while decade <= ymax {
        let y = py(decade);
        let _ = writeln!(
            svg,
            "<line x1=\"{left}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#ddd\"/>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            w - right,
            left - 5.0,
            y + 4.0,
            format_decade(decade)
        );
        decade += 1.0;
    }
    let mut x = xmin as u32;
    while x as f64 <= xmax {
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">2^{x}</text>",
            px(x as f64),
            h - bottom + 18.0
        );
        x += 1;
    }
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">size</text>",
        (w - right + left) / 2.0,
        h - 10.0
    );
    let mut impls: Vec<&str> = points.iter().map(|p| p.0).collect();
    impls.sort_unstable();
    impls.dedup();
    for (i, imp) in impls.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let mut line: Vec<(u32, f64)> = points
            .iter()
            .filter(|p| p.0 == *imp)
            .map(|p| (p.1, p.2))
            .collect();
        line.sort_by_key(|p| p.0);
        let coords: Vec<String> = line
            .iter()
            .map(|&(x, t)| format!("{:.1},{:.1}", px(x as f64), py(t.log10())))
            .collect();
        let _ = writeln!(
            svg,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>",
            coords.join(" ")
        );
        for c in &coords {
            let (cx, cy) = c.split_once(',').unwrap_or(("0", "0"));
            let _ = writeln!(
                svg,
                "<circle cx=\"{cx}\" cy=\"{cy}\" r=\"3\" fill=\"{color}\"/>"
            );
        }
        let ly = top + 20.0 * i as f64;
        let _ = writeln!(
            svg,
            "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"2\"/>\
             <text x=\"{}\" y=\"{}\">{imp}</text>",
            w - right + 10.0,
            w - right + 30.0,
            w - right + 35.0,
            ly + 4.0
        );
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|&m| Duration::from_millis(m)).collect()
    }

    #[test]
    fn median_min_and_throughput() {
        let r = Row::measured(
            "ntt",
            "cpu",
            10,
            &ms(&[30, 10, 20, 40]),
            Some(2 * 1024 * 32),
        );
        match r.outcome {
            Outcome::Measured {
                median_s,
                min_s,
                reps,
                throughput_per_s,
                peak_in_vectors,
                ..
            } => {
                assert!((median_s - 0.025).abs() < 1e-12);
                assert!((min_s - 0.010).abs() < 1e-12);
                assert_eq!(reps, 4);
                assert!((throughput_per_s - 1024.0 / 0.025).abs() < 1e-6);
                assert_eq!(peak_in_vectors, Some(2.0));
            }
            Outcome::Failed { .. } => panic!("measured row expected"),
        }
    }

    #[test]
    fn table_has_ratios_against_peers_and_failures() {
        let rows = vec![
            Row::measured("ntt", "cpu", 16, &ms(&[10]), None),
            Row::measured("ntt", "arkworks", 16, &ms(&[20]), None),
            Row::failed("ntt", "opencl", 16, "no platform".into()),
            Row::measured("ntt", "cpu+upload", 16, &ms(&[40]), None),
        ];
        let t = table(&rows, &["cpu", "opencl"]);
        assert!(t.contains("arkworks=0.50"), "{t}");
        assert!(t.contains("FAILED: no platform"), "{t}");
        assert!(!t.contains("cpu+upload="), "upload rows are not peers: {t}");
        assert_eq!(t.matches("arkworks=").count(), 2, "{t}");
    }

    /// Each part is its own median over the runs; `other` is what the whole run spent
    /// outside synthesis and the parts; the phase table shows the rows that have parts.
    #[test]
    fn proof_phases_are_medians_and_the_rest() {
        let d = Duration::from_millis;
        let part = |h| sluice_groth16::PhaseTimes {
            h: d(h),
            l: d(2),
            a: d(3),
            b_g1: d(4),
            b_g2: d(5),
            ..Default::default()
        };
        let runs = [(d(100), part(10)), (d(300), part(30)), (d(200), part(20))];
        let times = ms(&[130, 350, 240]);
        let p = ProofPhases::of_runs(&times, &runs);
        assert_eq!((p.synthesis_s, p.h_s, p.b_g2_s), (0.2, 0.02, 0.005));
        // The rests are 6, 6 and 6 ms: 130 - 100 - 24, 350 - 300 - 44, 240 - 200 - 34.
        assert!((p.other_s - 0.006).abs() < 1e-9, "{p:?}");
        assert!((p.after_synthesis_s() - 0.040).abs() < 1e-9, "{p:?}");
        let mut row = Row::measured("proof-sha256", "cpu", 10, &times, None);
        assert!(phase_table(&[row.clone()]).is_empty());
        row.phases = Some(p);
        let table = phase_table(&[row]);
        assert!(
            table.contains("proof-sha256") && table.contains("0.20"),
            "{table}"
        );
    }

    #[test]
    fn decade_labels_are_compact() {
        assert_eq!(format_decade(1.0), "10 s");
        assert_eq!(format_decade(0.0), "1 s");
        assert_eq!(format_decade(-1.0), "100 ms");
        assert_eq!(format_decade(-3.0), "1 ms");
        assert_eq!(format_decade(-5.0), "10 us");
    }

    #[test]
    fn plot_has_one_line_per_implementation() {
        let rows = vec![
            Row::measured("msm-g1", "cpu", 10, &ms(&[1]), None),
            Row::measured("msm-g1", "cpu", 12, &ms(&[4]), None),
            Row::measured("msm-g1", "blst", 10, &ms(&[2]), None),
            Row::measured("msm-g1", "blst", 12, &ms(&[5]), None),
        ];
        let svg = plot("msm-g1", &rows);
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains(">blst</text>") && svg.contains(">cpu</text>"));
    }
}
