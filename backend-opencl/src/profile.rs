//! Device profiles: every kernel's and transfer's device time, recorded from the queue's
//! events, the device's idle time between commands, and the report's text.

use std::sync::Mutex;

use ocl::core::{self, Event};

use crate::util::lock;

/// The profile's names of the transfers.
pub(crate) const TO_DEVICE: &str = "(host to device)";
pub(crate) const TO_HOST: &str = "(device to host)";
pub(crate) const ON_DEVICE: &str = "(device copy or fill)";

/// Device idle gaps at least this long get rows of their own in a profile (see [`idle_gaps`]).
const IDLE_GAP_MAX_MS: f64 = 10.0;

/// Gaps a report lists one by one: the first few when only long ones are listed (a 2^27
/// partition proof has a few), more when shorter ones are asked for.
const LONG_GAPS_LISTED: usize = 24;
const GAPS_LISTED: usize = 400;

/// One recorded command: name, event, and for a kernel launch its resources on the device
/// (work-group size limit, private bytes per work item: registers spilled; both 0 for the
/// transfers, named in parentheses).
type Recorded = (String, Event, usize, u64);

/// The commands one device's queues ran since its last report, for a profile.
pub(crate) struct ProfileLog {
    events: Mutex<Vec<Recorded>>,
    /// The shortest gap listed one by one, in ms.
    list_ms: f64,
}

impl ProfileLog {
    /// An empty log whose reports list gaps of `list_ms` or more one by one (`None`:
    /// [`IDLE_GAP_MAX_MS`]).
    pub(crate) fn new(list_ms: Option<u32>) -> Self {
        ProfileLog {
            events: Mutex::new(Vec::new()),
            list_ms: list_ms.map_or(IDLE_GAP_MAX_MS, f64::from),
        }
    }

    /// Records one command; `work_group_limit` and `private_bytes` are 0 for transfers.
    pub(crate) fn record(
        &self,
        name: String,
        event: Event,
        work_group_limit: usize,
        private_bytes: u64,
    ) {
        lock(&self.events).push((name, event, work_group_limit, private_bytes));
    }

    /// The device time of the commands recorded since the last report, summed per kernel
    /// name or transfer direction, and the idle time between them; the log starts anew.
    /// The caller waits for the queue first, so that every event is complete.
    pub(crate) fn report(&self) -> ProfileReport {
        let events = std::mem::take(&mut *lock(&self.events));
        let mut busy: Vec<KernelProfile> = Vec::new();
        let mut spans = Vec::with_capacity(events.len());
        for (name, event, wg, private) in events {
            let time = |what| {
                core::get_event_profiling_info(&event, what)
                    .and_then(|r| r.time())
                    .unwrap_or(0)
            };
            let (start, end) = (
                time(core::ProfilingInfo::Start),
                time(core::ProfilingInfo::End),
            );
            let ms = end.saturating_sub(start) as f64 * 1e-6;
            add_to_row(&mut busy, &name, ms, wg, private);
            spans.push((start, end, name));
        }
        let (idle, long_gaps, long_list) = idle_gaps(spans, self.list_ms);
        let listed = match self.list_ms < IDLE_GAP_MAX_MS {
            true => GAPS_LISTED,
            false => LONG_GAPS_LISTED,
        };
        ProfileReport {
            busy,
            idle,
            long_gaps,
            long_list,
            listed,
        }
    }
}

/// One device's profile since its last report.
pub(crate) struct ProfileReport {
    /// Device time per kernel or transfer direction.
    busy: Vec<KernelProfile>,
    /// Device idle time before each kind of command, over gaps shorter than
    /// [`IDLE_GAP_MAX_MS`] (`launches`: how many gaps).
    idle: Vec<KernelProfile>,
    /// Gaps of [`IDLE_GAP_MAX_MS`] or more, not in `idle`, per kind of command that ends
    /// them: the caller's own work between operations, or host work inside one (an index
    /// built, a vector freed), told apart by the command that follows.
    long_gaps: Vec<KernelProfile>,
    /// The gaps of the log's listing length or more one by one, in time order: where each
    /// lies tells a gap inside an operation from one between operations (a proof's own
    /// from the bench's between proofs).
    long_list: Vec<LongGap>,
    /// How many of `long_list` the report prints.
    listed: usize,
}

/// One idle gap listed one by one.
struct LongGap {
    /// When it began, in milliseconds from the first command of the profile.
    at_ms: f64,
    ms: f64,
    /// The long-gap row it is in (`X (after W)`).
    row: String,
}

/// One kernel's line of a profile report.
struct KernelProfile {
    name: String,
    launches: usize,
    /// Device time of all launches.
    ms: f64,
    /// The kernel's work-group size limit on the device (falls as registers per item rise).
    work_group_limit: usize,
    /// Private memory per work item: registers spilled to memory.
    private_bytes: u64,
}

/// Adds `ms` to the row named `name`, or starts it.
fn add_to_row(rows: &mut Vec<KernelProfile>, name: &str, ms: f64, wg: usize, private: u64) {
    match rows.iter_mut().find(|r| r.name == name) {
        Some(entry) => {
            entry.launches += 1;
            entry.ms += ms;
        }
        None => rows.push(KernelProfile {
            name: name.to_owned(),
            launches: 1,
            ms,
            work_group_limit: wg,
            private_bytes: private,
        }),
    }
}

/// The device's idle time between commands, from their `(start, end, name)` in device
/// nanoseconds: each gap is charged to the command that ends it (the device idles while
/// the host copies, waits or enqueues). Gaps of [`IDLE_GAP_MAX_MS`] or more go to a second
/// set of rows: mostly the caller's own work between operations (a bench preparing its
/// next row), but also host work inside one. Their rows also name the command the gap
/// follows (`X (after W)`: the one that ended last), which tells a late upload (after an
/// upload piece) from late host work (after a kernel). Gaps of `list_ms` or more are also
/// listed one by one.
fn idle_gaps(
    mut spans: Vec<(u64, u64, String)>,
    list_ms: f64,
) -> (Vec<KernelProfile>, Vec<KernelProfile>, Vec<LongGap>) {
    spans.sort_by_key(|s| s.0);
    let first = spans.first().map_or(0, |s| s.0);
    let (mut idle, mut long_gaps, mut long_list) = (Vec::new(), Vec::new(), Vec::new());
    // The latest end so far, and the command it belongs to.
    let mut last: Option<(u64, String)> = None;
    for (start, end, name) in spans {
        if let Some((prev, before)) = &last {
            let gap_ms = start.saturating_sub(*prev) as f64 * 1e-6;
            let row = format!("{name} (after {before})");
            if gap_ms >= IDLE_GAP_MAX_MS {
                add_to_row(&mut long_gaps, &row, gap_ms, 0, 0);
            } else if gap_ms > 0.0 {
                add_to_row(&mut idle, &name, gap_ms, 0, 0);
            }
            if gap_ms >= list_ms && gap_ms > 0.0 {
                long_list.push(LongGap {
                    at_ms: prev.saturating_sub(first) as f64 * 1e-6,
                    ms: gap_ms,
                    row,
                });
            }
        }
        if last.as_ref().map_or(true, |(prev, _)| end > *prev) {
            last = Some((end, name));
        }
    }
    (idle, long_gaps, long_list)
}

/// The report of each device (its position and name, and its profile) as a table: per
/// device its busy rows, then its idle time before each kind of command (gaps under
/// [`IDLE_GAP_MAX_MS`], then the longer ones in rows of their own and one by one).
pub(crate) fn format_report(devices: &[(usize, &str, ProfileReport)]) -> String {
    let line = |r: &KernelProfile, prefix: &str| {
        let mut l = format!(
            "  {:<36} {:>7} launches {:>12.3} ms",
            format!("{prefix}{}", r.name),
            r.launches,
            r.ms
        );
        // Transfers and idle rows have no kernel resources.
        if r.work_group_limit > 0 {
            l += &format!(
                "   wg<={} private {} B",
                r.work_group_limit, r.private_bytes
            );
        }
        l + "\n"
    };
    fn sorted(rows: &[KernelProfile]) -> (Vec<&KernelProfile>, f64) {
        let mut rows: Vec<&KernelProfile> = rows.iter().collect();
        rows.sort_by(|a, b| b.ms.total_cmp(&a.ms));
        // From +0.0: an empty sum of f64 is -0.0, printed as "-0.000".
        let total = rows.iter().fold(0.0, |t, r| t + r.ms);
        (rows, total)
    }
    let mut out = String::new();
    for (d, name, report) in devices {
        let (busy, total) = sorted(&report.busy);
        out += &format!("profile device {d} ({name}): {total:.3} ms\n");
        busy.iter().for_each(|r| out += &line(r, ""));
        let (idle, total) = sorted(&report.idle);
        let (long, long_total) = sorted(&report.long_gaps);
        let long_count: usize = long.iter().map(|r| r.launches).sum();
        out += &format!(
            "  device idle between commands: {total:.3} ms in gaps under {max} ms, \
             {long_total:.3} ms in {long_count} of {max} ms or more\n",
            max = IDLE_GAP_MAX_MS
        );
        idle.iter().for_each(|r| out += &line(r, "idle before "));
        long.iter()
            .for_each(|r| out += &line(r, "long idle before "));
        // One by one, the first few in time order.
        for g in report.long_list.iter().take(report.listed) {
            out += &format!(
                "  gap at {:>10.1} ms: {:>9.3} ms before {}\n",
                g.at_ms, g.ms, g.row
            );
        }
        if report.long_list.len() > report.listed {
            out += &format!(
                "  ({} more gaps not listed)\n",
                report.long_list.len() - report.listed
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{idle_gaps, IDLE_GAP_MAX_MS};

    #[test]
    fn idle_gaps_are_charged_to_the_next_command_and_long_ones_kept_apart() {
        let ms = 1_000_000;
        let spans = vec![
            // Out of order on purpose: the report sorts by start.
            (5 * ms, 6 * ms, "b".to_string()),
            (0, 2 * ms, "a".to_string()),
            // Overlaps b: no gap.
            (5 * ms + 10, 7 * ms, "c".to_string()),
            (8 * ms, 9 * ms, "b".to_string()),
            // Starts after b and ends before it: the gap below still follows b.
            (8 * ms + ms / 2, 8 * ms + ms * 7 / 10, "d".to_string()),
            // 20 ms after the last end: a long gap, in its own rows.
            (29 * ms, 30 * ms, "a".to_string()),
        ];
        let (idle, long_gaps, long_list) = idle_gaps(spans.clone(), IDLE_GAP_MAX_MS);
        assert_eq!(long_gaps.len(), 1);
        // One by one: from 9 ms (b's end) after the first start, 20 ms long.
        assert_eq!(long_list.len(), 1);
        assert_eq!(long_list[0].row, "a (after b)");
        assert!((long_list[0].at_ms - 9.0).abs() < 1e-9 && (long_list[0].ms - 20.0).abs() < 1e-9);
        // d started last, but b ended last: the gap follows b.
        assert_eq!(
            (long_gaps[0].name.as_str(), long_gaps[0].launches),
            ("a (after b)", 1)
        );
        assert!((long_gaps[0].ms - 20.0).abs() < 1e-9, "{}", long_gaps[0].ms);
        assert_eq!(idle.len(), 1, "only b ends gaps shorter than the limit");
        assert_eq!(idle[0].name, "b");
        assert_eq!(idle[0].launches, 2);
        // 2 -> 5 ms and 7 -> 8 ms.
        assert!((idle[0].ms - 4.0).abs() < 1e-9, "{}", idle[0].ms);
        // Listing from 2 ms adds the 3 ms gap before b, in time order, and not the 1 ms one.
        let (idle2, long2, list) = idle_gaps(spans, 2.0);
        assert_eq!((idle2.len(), long2.len()), (idle.len(), long_gaps.len()));
        let rows: Vec<_> = list
            .iter()
            .map(|g| (g.row.as_str(), g.at_ms.round(), g.ms.round()))
            .collect();
        assert_eq!(
            rows,
            [("b (after a)", 2.0, 3.0), ("a (after b)", 9.0, 20.0)]
        );
    }
}
