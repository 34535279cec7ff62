//! `sluice-bench record FILE [--machine NAME] [--commit C] [--date D] [--command C]`
//! (`cargo xtask record FILE`): prints a run's results.json as BENCHMARKS.md table rows
//! (figure, value, machine, commit, date, command), so that recorded figures are copied from
//! the run rather than typed. The flags replace what the file says, e.g. the machine's
//! long description by its name in BENCHMARKS.md's machines table.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::provenance::Provenance;
use crate::report::{format_seconds, Outcome, Row};

/// A results.json as `write_json` writes it, with the parts `record` reads.
#[derive(serde::Deserialize)]
struct Results {
    meta: Meta,
    rows: Vec<Row>,
}

#[derive(serde::Deserialize)]
struct Meta {
    /// The sluice backends that ran; every other implementation is a peer.
    backends: Vec<String>,
    provenance: Option<Provenance>,
}

/// `record`'s arguments.
#[derive(Clone, Debug, clap::Args)]
pub struct Record {
    /// A results.json of sluice-bench.
    pub file: PathBuf,
    /// The fields that replace the run's own.
    #[command(flatten)]
    pub overrides: Overrides,
}

/// The provenance fields given on the command line, replacing what the file says.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct Overrides {
    /// The machine column [default: the run's host and devices]; use the name
    /// BENCHMARKS.md's machines table gives it, e.g. h200.
    #[arg(long, value_name = "NAME")]
    pub machine: Option<String>,
    /// The commit column [default: the run's own; needed for results.json files from
    /// before sluice-bench recorded it].
    #[arg(long, value_name = "C")]
    pub commit: Option<String>,
    /// The date column [default: the run's own, as for --commit].
    #[arg(long, value_name = "D")]
    pub date: Option<String>,
    /// The command column [default: the run's own, as for --commit].
    #[arg(long, value_name = "C")]
    pub command: Option<String>,
}

/// Runs `record`.
pub fn main(Record { file, overrides }: Record) -> Result<(), String> {
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("record: cannot read {}: {e}", file.display()))?;
    let file = file.display();
    let (table, run_machine) =
        render(&text, overrides).map_err(|e| format!("record: {file}: {e}"))?;
    print!("{table}");
    eprintln!(
        "record: {} rows; the run's machine: {}",
        table.lines().count().saturating_sub(2),
        run_machine.as_deref().unwrap_or("not recorded")
    );
    Ok(())
}

/// The table (header and one row per result) and the machine the run itself recorded.
fn render(json: &str, overrides: Overrides) -> Result<(String, Option<String>), String> {
    let results: Results =
        serde_json::from_str(json).map_err(|e| format!("not a sluice-bench results.json: {e}"))?;
    let recorded = results.meta.provenance.as_ref();
    let field = |given: Option<String>, name: &str, get: fn(&Provenance) -> &String| {
        given.or_else(|| recorded.map(|p| get(p).clone())).ok_or_else(|| {
            format!("it records no {name} (a run from before sluice-bench recorded it): pass --{name}")
        })
    };
    let shown = Provenance {
        machine: field(overrides.machine, "machine", |p| &p.machine)?,
        commit: field(overrides.commit, "commit", |p| &p.commit)?,
        date: field(overrides.date, "date", |p| &p.date)?,
        command: field(overrides.command, "command", |p| &p.command)?,
    };
    // The table's date column is the day; results.json keeps the time.
    let day = shown.date.split('T').next().unwrap_or(&shown.date);
    let backends: Vec<&str> = results.meta.backends.iter().map(String::as_str).collect();
    let mut out = String::from(
        "| figure | value | machine | commit | date | command |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for row in &results.rows {
        let _ = writeln!(
            out,
            "| {} 2^{}, {} | {} | {} | `{}` | {day} | `{}` |",
            cell(&row.op),
            row.log_size,
            cell(&row.implementation),
            cell(&value(row, &results.rows, &backends)),
            cell(&shown.machine),
            cell(&shown.commit),
            cell(&shown.command),
        );
    }
    Ok((out, recorded.map(|p| p.machine.clone())))
}

/// "17.707 ms median, 17.560 ms min (5 reps); 2.00 vectors; sluice / blst 0.97".
fn value(row: &Row, rows: &[Row], backends: &[&str]) -> String {
    match &row.outcome {
        Outcome::Measured {
            median_s,
            min_s,
            reps,
            peak_in_vectors,
            ..
        } => {
            let mut v = format!(
                "{} median, {} min ({reps} reps)",
                format_seconds(*median_s),
                format_seconds(*min_s)
            );
            if let Some(vectors) = peak_in_vectors {
                let _ = write!(v, "; {vectors:.2} vectors");
            }
            for (peer, ratio) in row.peer_ratios(rows, backends) {
                let _ = write!(v, "; sluice / {peer} {ratio:.2}");
            }
            v
        }
        Outcome::Failed { error } => format!("failed: {}", error.lines().next().unwrap_or("")),
    }
}

/// Text safe inside a markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::report::{meta, write_json};

    fn ms(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|&m| Duration::from_millis(m)).collect()
    }

    /// `rows` and `provenance` through `write_json` and back, as `record` reads a run (with
    /// `None`, a run from before sluice-bench recorded its provenance).
    fn written(name: &str, rows: &[Row], provenance: Option<&Provenance>) -> String {
        let dir =
            std::env::temp_dir().join(format!("sluice-bench-record-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut m = meta(&["opencl"], 5, 1, provenance.unwrap_or(&self::provenance()));
        if provenance.is_none() {
            let removed = m.as_object_mut().and_then(|o| o.remove("provenance"));
            assert!(removed.is_some(), "meta records the provenance");
        }
        let path = write_json(&dir, rows, &m).expect("results.json");
        let text = std::fs::read_to_string(&path).expect("read back");
        std::fs::remove_dir_all(&dir).expect("clean up");
        text
    }

    fn run_rows() -> Vec<Row> {
        vec![
            Row::measured("msm-g1", "opencl", 20, &ms(&[18, 17, 19]), Some(3 << 25)),
            Row::measured("msm-g1", "bellperson-gpu", 20, &ms(&[190]), None),
            Row::failed("ntt", "opencl", 27, "out of | memory\nat upload".into()),
        ]
    }

    fn provenance() -> Provenance {
        Provenance {
            machine: "Xeon (16 threads), 125.6 GiB; opencl: NVIDIA H200".into(),
            commit: "c934208".into(),
            command: "sluice-bench --ops msm-g1,ntt".into(),
            date: "2026-12-01T17:55:03Z".into(),
        }
    }

    #[test]
    fn rows_carry_the_runs_provenance_and_peer_ratios() {
        let json = written("provenance", &run_rows(), Some(&provenance()));
        let (table, machine) = render(&json, Overrides::default()).expect("renders");
        assert_eq!(
            table.lines().collect::<Vec<_>>(),
            [
                "| figure | value | machine | commit | date | command |",
                "| --- | --- | --- | --- | --- | --- |",
                "| msm-g1 2^20, opencl | 18.000 ms median, 17.000 ms min (3 reps); 3.00 vectors; \
                 sluice / bellperson-gpu 0.09 | Xeon (16 threads), 125.6 GiB; opencl: NVIDIA H200 \
                 | `c934208` | 2026-12-01 | `sluice-bench --ops msm-g1,ntt` |",
                "| msm-g1 2^20, bellperson-gpu | 190.000 ms median, 190.000 ms min (1 reps) \
                 | Xeon (16 threads), 125.6 GiB; opencl: NVIDIA H200 | `c934208` | 2026-12-01 \
                 | `sluice-bench --ops msm-g1,ntt` |",
                "| ntt 2^27, opencl | failed: out of \\| memory | Xeon (16 threads), 125.6 GiB; \
                 opencl: NVIDIA H200 | `c934208` | 2026-12-01 | `sluice-bench --ops msm-g1,ntt` |",
            ]
        );
        assert_eq!(machine, Some(provenance().machine));
    }

    #[test]
    fn flags_replace_the_recorded_fields() {
        let json = written("overrides", &run_rows()[..1], Some(&provenance()));
        let overrides = Overrides {
            machine: Some("h200".into()),
            commit: Some("d4cbaa7".into()),
            ..Overrides::default()
        };
        let (table, _) = render(&json, overrides).expect("renders");
        assert!(
            table
                .ends_with("| h200 | `d4cbaa7` | 2026-12-01 | `sluice-bench --ops msm-g1,ntt` |\n"),
            "{table}"
        );
    }

    #[test]
    fn a_run_without_provenance_names_the_missing_field() {
        let json = written("no-provenance", &run_rows(), None);
        let err = render(
            &json,
            Overrides {
                machine: Some("dev".into()),
                ..Overrides::default()
            },
        )
        .expect_err("no commit recorded");
        assert!(
            err.contains("no commit") && err.contains("--commit"),
            "{err}"
        );
        let all = Overrides {
            machine: Some("dev".into()),
            commit: Some("7852723".into()),
            date: Some("2026-11-30".into()),
            command: Some("sluice-bench --compare".into()),
        };
        let (table, machine) = render(&json, all).expect("every field given");
        assert_eq!(machine, None);
        assert!(table.contains("| dev | `7852723` | 2026-11-30 | `sluice-bench --compare` |"));
        assert!(render("{\"rows\": []}", Overrides::default()).is_err());
    }

    #[test]
    fn an_unreadable_file_is_named() {
        // The arguments' errors are clap's (`options::tests::record_is_a_subcommand`).
        let record = Record {
            file: "/nonexistent/results.json".into(),
            overrides: Overrides::default(),
        };
        let missing = main(record).expect_err("no file");
        assert!(missing.contains("/nonexistent/results.json"), "{missing}");
    }
}
