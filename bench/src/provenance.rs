//! Where a bench run came from: the machine, the commit, the command line and the date,
//! recorded in results.json so that every figure taken from it carries them
//! (`sluice-bench record`).

use std::borrow::Cow;
use std::time::{SystemTime, UNIX_EPOCH};

/// The provenance of one run.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Provenance {
    /// The host (CPU model, hardware threads, memory) and what each backend ran on.
    pub machine: String,
    /// The commit the runner was built from, `-dirty` when tracked files differed from it,
    /// `unknown` when built outside a git checkout.
    pub commit: String,
    /// The command line of the run.
    pub command: String,
    /// When the run ended, UTC, as RFC 3339 (`2026-12-01T17:55:03Z`).
    pub date: String,
}

impl Provenance {
    /// This process's provenance; `devices` says what each backend ran on.
    pub fn of_this_run(devices: &[String]) -> Provenance {
        let mut machine = host_description();
        for device in devices {
            machine.push_str("; ");
            machine.push_str(device);
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Provenance {
            machine,
            commit: env!("SLUICE_BENCH_COMMIT").to_owned(),
            command: command_line(std::env::args()),
            date: utc_rfc3339(now),
        }
    }
}

/// "AMD EPYC 9R14 (2 threads), 23.4 GiB": the CPU model as `/proc/cpuinfo` names it, the
/// threads this process may use and the host's memory (each left out where unknown).
fn host_description() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, model)| model.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut host = format!("{cpu} ({threads} threads)");
    if let Some((total, _)) = sluice_backend::host_memory_bytes() {
        host.push_str(&format!(", {:.1} GiB", total as f64 / (1u64 << 30) as f64));
    }
    host
}

/// The program's file name and its arguments, quoted for a POSIX shell where they need it.
fn command_line(mut args: impl Iterator<Item = String>) -> String {
    let program = args.next().unwrap_or_default();
    let program = std::path::Path::new(&program)
        .file_name()
        .map_or(Cow::Borrowed("sluice-bench"), |n| n.to_string_lossy());
    let mut line = program.into_owned();
    for arg in args {
        line.push(' ');
        line.push_str(&shell_quote(&arg));
    }
    line
}

fn shell_quote(arg: &str) -> Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_=.,/:+@%".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) {
        Cow::Borrowed(arg)
    } else {
        Cow::Owned(format!("'{}'", arg.replace('\'', r"'\''")))
    }
}

/// `unix_seconds` as an RFC 3339 UTC time (the proleptic Gregorian calendar of civil dates).
pub fn utc_rfc3339(unix_seconds: u64) -> String {
    let days = unix_seconds / 86_400;
    let secs = unix_seconds % 86_400;
    // Days since 1970-01-01 to a civil date (H. Hinnant's `civil_from_days`), in eras of
    // 400 years (146097 days) counted from 0000-03-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates_across_leap_days_and_centuries() {
        assert_eq!(utc_rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_rfc3339(946_684_799), "1999-12-31T23:59:59Z");
        assert_eq!(utc_rfc3339(1_796_147_703), "2026-12-01T17:55:03Z");
        assert_eq!(utc_rfc3339(4_107_542_400), "2100-03-01T00:00:00Z");
    }

    #[test]
    fn command_lines_name_the_program_and_quote_what_a_shell_would_split() {
        let args = [
            "target/device/bin/sluice-bench",
            "--sizes",
            "msm-g1=20,26",
            "--out",
            "my dir",
            "it's",
            "",
        ]
        .map(String::from);
        assert_eq!(
            command_line(args.into_iter()),
            r"sluice-bench --sizes msm-g1=20,26 --out 'my dir' 'it'\''s' ''"
        );
    }

    #[test]
    fn this_run_names_its_commit_and_devices() {
        let p = Provenance::of_this_run(&["opencl: some GPU".to_owned()]);
        assert!(p.machine.ends_with("; opencl: some GPU"), "{}", p.machine);
        assert!(p.machine.contains("threads)"), "{}", p.machine);
        assert!(!p.commit.is_empty());
        assert!(p.date.ends_with('Z') && p.date.len() == 20, "{}", p.date);
    }
}
