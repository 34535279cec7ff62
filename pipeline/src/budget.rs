//! The host budget partitions draw on as they synthesize.
//!
//! A partition's host memory is counted as its vectors allocate it
//! ([`HostBudget`](sluice_backend::HostBudget)): a synthesizing worker waits when the budget
//! is full and goes on when another partition's data has gone to its device and been
//! freed. How much a partition will hold is known only once its values are (a boolean-heavy
//! 2^27 partition holds about a tenth of a vector compactly, a dense one three vectors), so:
//!
//! - **No overshoot, no deadlock.** The bytes of one worst-case partition
//!   ([`PartitionFootprint::worst_case_host_bytes`](crate::PartitionFootprint)) are kept in
//!   reserve for the oldest partition in synthesis: what every other partition holds stays
//!   within the budget less that reserve, and the oldest's own bytes (never more than the
//!   reserve) come on top. Partitions older than the oldest in synthesis have finished
//!   theirs and free their bytes once proved, so the oldest always finishes, and the next
//!   becomes the oldest: synthesis always progresses, and what is held never exceeds the
//!   budget.
//! - **Admission by estimate.** A partition starts synthesis when the budget left (less the
//!   reserve, and less what the partitions in synthesis are expected to add) holds the
//!   expected size of one more: the largest partition synthesized so far, or while none
//!   has been, the partitions in synthesis projected from their progress, with a margin;
//!   the worst case before either is known. A wrong estimate costs waiting, never memory.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use sluice_backend::HostBudget;

use crate::sync::lock;

/// Progress below which a partition's size is not projected from it.
const MIN_PROJECTION_PROGRESS: f64 = 1.0 / 64.0;

/// Estimates are raised by this factor (5/4) against the spread between partitions.
fn with_margin(bytes: u64) -> u64 {
    bytes.saturating_add(bytes / 4)
}

/// A partition in synthesis, as the pool sees it.
#[derive(Clone, Copy, Debug, Default)]
struct InSynthesis {
    held: u64,
    /// Its final size projected from its progress, once it has made enough.
    projected: Option<u64>,
}

#[derive(Debug, Default)]
struct PoolState {
    /// Bytes every partition holds.
    held: u64,
    peak: u64,
    /// Partitions in synthesis by ticket (admission order): the first is the oldest.
    synthesizing: BTreeMap<u64, InSynthesis>,
    next_ticket: u64,
    /// The largest size a partition reached by the end of its synthesis.
    largest: Option<u64>,
    /// Partitions admitted and not yet released, and their peak.
    live: usize,
    live_peak: usize,
    synthesizing_peak: usize,
}

/// What the pool measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PoolFigures {
    /// Peak bytes held by all partitions together.
    pub(crate) held_peak: u64,
    /// Peak partitions held at once (synthesizing, waiting or proving).
    pub(crate) partitions_peak: usize,
    /// Peak partitions in synthesis at once.
    pub(crate) synthesizing_peak: usize,
}

/// The host budget of a pipeline's partitions.
pub(crate) struct HostPool {
    /// Bytes all partitions may hold together.
    limit: u64,
    /// Bytes kept for the oldest partition in synthesis: one worst-case partition.
    reserve: u64,
    state: Mutex<PoolState>,
    changed: Condvar,
}

impl HostPool {
    /// A pool of `limit` bytes whose partitions hold at most `worst_case` bytes each.
    /// `worst_case <= limit` (the planner checks it).
    pub(crate) fn new(limit: u64, worst_case: u64) -> Arc<Self> {
        Arc::new(HostPool {
            limit,
            reserve: worst_case.min(limit),
            state: Mutex::new(PoolState::default()),
            changed: Condvar::new(),
        })
    }

    /// Bytes held by every partition but the oldest in synthesis (whose bytes the reserve
    /// covers).
    fn held_by_others(s: &PoolState) -> u64 {
        s.held - s.synthesizing.values().next().map_or(0, |p| p.held)
    }

    /// The expected size of a partition about to start.
    fn estimate(&self, s: &PoolState) -> u64 {
        let projected = s.synthesizing.values().filter_map(|p| p.projected).max();
        match s.largest.or(projected) {
            Some(bytes) => with_margin(bytes).min(self.reserve),
            None => self.reserve,
        }
    }

    /// Waits until one more partition may start synthesis (see the module docs), then
    /// admits it.
    pub(crate) fn admit(self: &Arc<Self>) -> Arc<PartitionBudget> {
        let mut s = lock(&self.state);
        loop {
            let estimate = self.estimate(&s);
            // What the younger partitions in synthesis are still expected to add.
            let coming: u64 = s
                .synthesizing
                .values()
                .skip(1)
                .map(|p| p.projected.unwrap_or(estimate).saturating_sub(p.held))
                .sum();
            let shared = self.limit - self.reserve;
            let fits = Self::held_by_others(&s) + coming + estimate <= shared;
            // With none in synthesis it becomes the oldest, which the reserve serves.
            if s.synthesizing.is_empty() || fits {
                break;
            }
            s = self.wait(s);
        }
        let ticket = s.next_ticket;
        s.next_ticket += 1;
        s.synthesizing.insert(ticket, InSynthesis::default());
        s.live += 1;
        s.live_peak = s.live_peak.max(s.live);
        s.synthesizing_peak = s.synthesizing_peak.max(s.synthesizing.len());
        Arc::new(PartitionBudget {
            pool: Arc::clone(self),
            ticket,
            held: AtomicU64::new(0),
        })
    }

    fn wait<'a>(&self, s: MutexGuard<'a, PoolState>) -> MutexGuard<'a, PoolState> {
        // Every change notifies; the timeout only bounds a missed wake-up.
        self.changed
            .wait_timeout(s, Duration::from_millis(100))
            .unwrap_or_else(PoisonError::into_inner)
            .0
    }

    /// What the pool measured so far.
    pub(crate) fn figures(&self) -> PoolFigures {
        let s = lock(&self.state);
        PoolFigures {
            held_peak: s.peak,
            partitions_peak: s.live_peak,
            synthesizing_peak: s.synthesizing_peak,
        }
    }

    /// Bytes held now by all partitions.
    #[cfg(test)]
    pub(crate) fn held(&self) -> u64 {
        lock(&self.state).held
    }
}

/// One partition's share of a [`HostPool`]: the [`HostBudget`] its vectors draw on.
pub(crate) struct PartitionBudget {
    pool: Arc<HostPool>,
    ticket: u64,
    held: AtomicU64,
}

impl PartitionBudget {
    /// Records how far synthesis has come (`done` of `total` constraints), which projects
    /// the partition's final size for admitting others.
    pub(crate) fn progress(&self, done: usize, total: usize) {
        let fraction = done as f64 / total.max(1) as f64;
        if fraction < MIN_PROJECTION_PROGRESS {
            return;
        }
        let mut s = lock(&self.pool.state);
        if let Some(p) = s.synthesizing.get_mut(&self.ticket) {
            p.projected = Some((p.held as f64 / fraction.min(1.0)) as u64);
        }
        drop(s);
        self.pool.changed.notify_all();
    }

    /// Synthesis is over: the partition is no longer the oldest in synthesis (the next one
    /// is), and its size informs later admissions.
    pub(crate) fn synthesized(&self) {
        let mut s = lock(&self.pool.state);
        if s.synthesizing.remove(&self.ticket).is_some() {
            let held = self.held.load(Ordering::SeqCst);
            s.largest = Some(s.largest.map_or(held, |l| l.max(held)));
        }
        drop(s);
        self.pool.changed.notify_all();
    }

    /// Bytes this partition holds now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> u64 {
        self.held.load(Ordering::SeqCst)
    }
}

impl HostBudget for PartitionBudget {
    fn acquire(&self, bytes: u64) {
        let pool = &*self.pool;
        let mut s = lock(&pool.state);
        loop {
            let fits = match s.synthesizing.keys().next() == Some(&self.ticket) {
                true => s.held + bytes <= pool.limit,
                false => HostPool::held_by_others(&s) + bytes <= pool.limit - pool.reserve,
            };
            if fits {
                break;
            }
            s = pool.wait(s);
        }
        s.held += bytes;
        s.peak = s.peak.max(s.held);
        if let Some(p) = s.synthesizing.get_mut(&self.ticket) {
            p.held += bytes;
        }
        self.held.fetch_add(bytes, Ordering::SeqCst);
    }

    fn release(&self, bytes: u64) {
        let mut s = lock(&self.pool.state);
        s.held -= bytes;
        if let Some(p) = s.synthesizing.get_mut(&self.ticket) {
            p.held -= bytes;
        }
        self.held.fetch_sub(bytes, Ordering::SeqCst);
        drop(s);
        self.pool.changed.notify_all();
    }
}

impl Drop for PartitionBudget {
    /// Everything the partition's vectors held was released as they dropped (they hold
    /// this budget); a partition whose synthesis failed leaves the synthesis order too.
    fn drop(&mut self) {
        let mut s = lock(&self.pool.state);
        s.synthesizing.remove(&self.ticket);
        s.live -= 1;
        let left = self.held.load(Ordering::SeqCst);
        if left > 0 {
            // Bytes acquired outside a vector (a partition's fixed parts): free them too.
            s.held -= left;
        }
        drop(s);
        self.pool.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;
    use std::thread;

    /// A partition that grows to `total` bytes in steps of `step`, then (after synthesis)
    /// waits for `release` before freeing.
    fn grow(budget: &PartitionBudget, total: u64, step: u64) {
        let mut done = 0;
        while done < total {
            let b = step.min(total - done);
            budget.acquire(b);
            done += b;
            budget.progress(done as usize, total as usize);
        }
    }

    /// Many partitions whose sizes exceed every estimate at once: none deadlocks, the
    /// budget is never exceeded, every byte is released, and several ran at once.
    #[test]
    fn the_budget_holds_and_synthesis_always_progresses() {
        let (limit, worst) = (1000, 400);
        let pool = HostPool::new(limit, worst);
        let (done_tx, done_rx) = channel();
        let mut threads = Vec::new();
        // Sizes chosen so that admission estimates from the small first ones are far too
        // low for the later ones.
        let sizes = [20, 20, 20, 390, 380, 400, 350, 300, 390, 10, 400, 399];
        for (i, &size) in sizes.iter().enumerate() {
            let pool = Arc::clone(&pool);
            let done = done_tx.clone();
            threads.push(thread::spawn(move || {
                let budget = pool.admit();
                grow(&budget, size, 7 + i as u64);
                budget.synthesized();
                // "Device work": hold a moment, then free.
                thread::sleep(Duration::from_millis(2));
                let held = budget.held();
                budget.release(held);
                done.send(i).unwrap();
            }));
        }
        drop(done_tx);
        let finished: Vec<usize> = done_rx.iter().collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(finished.len(), sizes.len());
        let f = pool.figures();
        assert!(f.held_peak <= limit, "{f:?}");
        assert!(f.partitions_peak >= 2, "{f:?}");
        assert_eq!(pool.held(), 0);
    }

    /// Admission follows what partitions really take: after a small partition, many are
    /// admitted; before anything is known, one worst case at a time (plus the oldest).
    #[test]
    fn admission_follows_the_sizes_seen() {
        let pool = HostPool::new(1000, 400);
        let first = pool.admit();
        // Nothing known: the oldest draws on the reserve, a second on the shared 600.
        let second = pool.admit();
        let (tx, rx) = channel();
        let third = {
            let pool = Arc::clone(&pool);
            thread::spawn(move || {
                let b = pool.admit();
                tx.send(()).unwrap();
                b
            })
        };
        assert!(
            rx.recv_timeout(Duration::from_millis(150)).is_err(),
            "a third worst case does not fit beside the second"
        );
        first.acquire(10);
        first.synthesized();
        // Largest seen 10: estimate 12; the shared 600 less 10 held leaves room for dozens.
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
        let third = third.join().unwrap();
        let more: Vec<_> = (0..20).map(|_| pool.admit()).collect();
        assert_eq!(pool.figures().synthesizing_peak, 22);
        drop(more);
        drop((second, third));
        first.release(10);
        drop(first);
        assert_eq!(pool.held(), 0);
        assert_eq!(pool.figures().partitions_peak, 23);
    }

    /// A young partition waits at the shared limit while the oldest may use the reserve.
    #[test]
    fn only_the_oldest_uses_the_reserve() {
        let pool = HostPool::new(1000, 400);
        let oldest = pool.admit();
        oldest.progress(1, 1);
        let young = pool.admit();
        young.acquire(600);
        // The young one is at the shared limit; the oldest takes the reserve.
        oldest.acquire(400);
        assert_eq!(pool.held(), 1000);
        let (tx, rx) = channel();
        let waiter = {
            let young = Arc::clone(&young);
            thread::spawn(move || {
                young.acquire(1);
                tx.send(()).unwrap();
            })
        };
        assert!(
            rx.recv_timeout(Duration::from_millis(150)).is_err(),
            "must wait"
        );
        // The oldest finishes and frees: the young one becomes the oldest and proceeds.
        oldest.synthesized();
        oldest.release(400);
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
        waiter.join().unwrap();
        young.release(601);
        assert_eq!(pool.held(), 0);
    }
}
