//! Progress of long work (checked parameter reads, setup, synthesis, proofs, a pipeline's
//! partitions), reported to one process-wide hook, as `log` reports to one logger.
//!
//! Work reports [`ProgressEvent`]s through [`report`]: `done == 0` when a piece of work
//! starts, then as it goes, `done == total` when it ends. The hook is a [`Progress`]: by
//! default a [`LogProgress`], which logs at info only for work that has run for a while
//! (five seconds), and then at most every five seconds per [`Task`]; [`set_progress`]
//! replaces it (a progress bar, a metrics exporter, or [`NoProgress`]).
//!
//! # Reporting from new work
//! A few lines where the work loops; a report costs a read lock and the hook's call, so
//! report every few milliseconds of work, not per item (e.g. every 2^16 constraints):
//!
//! ```
//! use sluice_groth16::progress::{report, ProgressEvent, Task};
//! let total = 1 << 20;
//! report(&ProgressEvent { task: Task::Synthesis, what: "partition 3", done: 0, total });
//! for done in (0..=total).step_by(1 << 16) {
//!     // ... synthesize up to `done` constraints ...
//!     report(&ProgressEvent { task: Task::Synthesis, what: "partition 3", done, total });
//! }
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

/// The kinds of long work, each with its unit of `done` and `total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Task {
    /// Decoding parameter points (with `checked`, their subgroup checks, the costly part):
    /// points of one query (`what`: the query's name).
    ReadParameters,
    /// Groth16 setup: query points computed, of all the queries' points.
    Setup,
    /// Synthesis of one circuit: constraints so far, of about `total` (0: unknown).
    Synthesis,
    /// One proof: phases done (H, then the MSMs L, A, B in G1 and B in G2), of 5.
    Proof,
    /// One proof of a pipeline: partitions proved, of its partitions.
    Partitions,
}

impl std::fmt::Display for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Task {
    fn name(self) -> &'static str {
        match self {
            Task::ReadParameters => "reading parameters",
            Task::Setup => "setup",
            Task::Synthesis => "synthesis",
            Task::Proof => "proof",
            Task::Partitions => "partitions",
        }
    }

    /// The unit of `done` and `total` ("points", "constraints", ...).
    pub fn unit(self) -> &'static str {
        match self {
            Task::ReadParameters | Task::Setup => "points",
            Task::Synthesis => "constraints",
            Task::Proof => "phases",
            Task::Partitions => "partitions",
        }
    }
}

/// One report: `done` of `total` units of `task` (see [`Task`] for the units; `total` 0
/// when unknown), `what` naming the piece of work (a query, a partition; may be empty).
#[derive(Clone, Copy, Debug)]
pub struct ProgressEvent<'a> {
    /// The kind of work.
    pub task: Task,
    /// Which piece of it.
    pub what: &'a str,
    /// Units done; 0 when the piece starts.
    pub done: u64,
    /// Units in all (0: unknown); `done == total` when it ends.
    pub total: u64,
}

/// A progress hook. Called from the working threads, so it must be quick and must not
/// block for long.
pub trait Progress: Send + Sync {
    /// Takes one report.
    fn report(&self, event: &ProgressEvent<'_>);
}

/// Ignores every report.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn report(&self, _: &ProgressEvent<'_>) {}
}

/// The default hook: logs at info, through `log`, work that has run for at least
/// `interval`, at most once per `interval` for each [`Task`] and once more when it ends.
/// Short work logs nothing here (the prover logs each proof's phases itself).
#[derive(Debug)]
pub struct LogProgress {
    interval: Duration,
    /// Per task: when its latest piece started, and when it was last logged.
    state: Mutex<HashMap<Task, (Instant, Instant)>>,
}

impl LogProgress {
    /// Logs work past `interval`, every `interval`.
    pub fn new(interval: Duration) -> Self {
        LogProgress {
            interval,
            state: Mutex::new(HashMap::new()),
        }
    }

    /// The log line for `event`, `elapsed` after its piece started; `None` when nothing
    /// is due (the decision without the clock, for tests).
    fn line(
        &self,
        event: &ProgressEvent<'_>,
        elapsed: Duration,
        since_logged: Duration,
    ) -> Option<String> {
        let ended = event.total > 0 && event.done >= event.total;
        if elapsed < self.interval || (!ended && since_logged < self.interval) {
            return None;
        }
        let what = match event.what {
            "" => String::new(),
            w => format!(" ({w})"),
        };
        let amount = match event.total {
            0 => format!("{} {}", event.done, event.task.unit()),
            t => format!(
                "{} of {} {} ({:.0}%)",
                event.done,
                t,
                event.task.unit(),
                event.done as f64 * 100.0 / t as f64
            ),
        };
        let verb = if ended { "done" } else { "at" };
        Some(format!(
            "{}{what}: {verb} {amount} after {:.1} s",
            event.task.name(),
            elapsed.as_secs_f64()
        ))
    }
}

impl Default for LogProgress {
    /// Every five seconds, for work past five seconds.
    fn default() -> Self {
        Self::new(Duration::from_secs(5))
    }
}

impl Progress for LogProgress {
    fn report(&self, event: &ProgressEvent<'_>) {
        let now = Instant::now();
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if event.done == 0 {
            state.insert(event.task, (now, now));
            return;
        }
        let Some((started, logged)) = state.get_mut(&event.task) else {
            // No start seen: count from now.
            state.insert(event.task, (now, now));
            return;
        };
        if let Some(line) = self.line(event, now - *started, now - *logged) {
            *logged = now;
            log::info!("{line}");
        }
    }
}

/// The hook in use; `None` until [`set_progress`] (the default [`LogProgress`] then).
static HOOK: RwLock<Option<Arc<dyn Progress>>> = RwLock::new(None);

/// Replaces the process-wide progress hook (by default a [`LogProgress`]).
pub fn set_progress(hook: Arc<dyn Progress>) {
    *HOOK.write().unwrap_or_else(PoisonError::into_inner) = Some(hook);
}

/// The process-wide progress hook.
pub fn progress() -> Arc<dyn Progress> {
    let hook = HOOK.read().unwrap_or_else(PoisonError::into_inner).clone();
    match hook {
        Some(h) => h,
        None => {
            let mut slot = HOOK.write().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(slot.get_or_insert_with(|| Arc::new(LogProgress::default())))
        }
    }
}

/// Reports `event` to the process-wide hook.
pub fn report(event: &ProgressEvent<'_>) {
    progress().report(event);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(done: u64, total: u64) -> ProgressEvent<'static> {
        ProgressEvent {
            task: Task::Setup,
            what: "h",
            done,
            total,
        }
    }

    /// Nothing for short work or within an interval of the last line; a line past both,
    /// and at the end of long work whenever it comes.
    #[test]
    fn log_lines_only_for_long_work_and_at_most_every_interval() {
        let p = LogProgress::new(Duration::from_secs(5));
        let s = Duration::from_secs;
        assert_eq!(p.line(&event(3, 10), s(4), s(4)), None);
        assert_eq!(p.line(&event(10, 10), s(4), s(4)), None);
        assert_eq!(p.line(&event(3, 10), s(9), s(2)), None);
        assert_eq!(
            p.line(&event(3, 10), s(9), s(6)).as_deref(),
            Some("setup (h): at 3 of 10 points (30%) after 9.0 s")
        );
        assert_eq!(
            p.line(&event(10, 10), s(9), s(1)).as_deref(),
            Some("setup (h): done 10 of 10 points (100%) after 9.0 s")
        );
        let unknown = ProgressEvent {
            task: Task::Synthesis,
            what: "",
            done: 7,
            total: 0,
        };
        assert_eq!(
            p.line(&unknown, s(6), s(6)).as_deref(),
            Some("synthesis: at 7 constraints after 6.0 s")
        );
    }

    /// A hook set replaces the default, and reports reach it.
    #[test]
    fn reports_reach_the_hook_set() {
        struct Count(Mutex<Vec<(Task, u64, u64)>>);
        impl Progress for Count {
            fn report(&self, e: &ProgressEvent<'_>) {
                self.0
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((e.task, e.done, e.total));
            }
        }
        let hook = Arc::new(Count(Mutex::new(Vec::new())));
        set_progress(hook.clone());
        report(&event(0, 2));
        report(&event(2, 2));
        set_progress(Arc::new(NoProgress));
        report(&event(1, 2));
        let seen = hook
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        // Other tests of this process may report too: look for ours.
        let ours: Vec<_> = seen
            .into_iter()
            .filter(|(t, _, total)| *t == Task::Setup && *total == 2)
            .collect();
        assert_eq!(ours, [(Task::Setup, 0, 2), (Task::Setup, 2, 2)]);
    }
}
