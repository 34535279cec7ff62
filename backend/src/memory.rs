//! Memory accounting: every backend allocation is tracked, so residency is a number the
//! prover can report, test, and plan concurrency with.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::memory_kind::MemoryKind;
use crate::BackendError;

/// Current and peak bytes of one memory kind.
#[derive(Default)]
struct Counter {
    current: AtomicU64,
    peak: AtomicU64,
    /// `u64::MAX` means unlimited.
    limit: AtomicU64,
}

impl Counter {
    fn new(limit: Option<u64>) -> Self {
        Counter {
            current: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            limit: AtomicU64::new(limit.unwrap_or(u64::MAX)),
        }
    }

    /// Adds `bytes` if the limit allows; returns the bytes that were available otherwise.
    fn try_add(&self, bytes: u64) -> Result<(), u64> {
        let limit = self.limit.load(Ordering::Relaxed);
        let mut current = self.current.load(Ordering::Relaxed);
        loop {
            let next = current.saturating_add(bytes);
            if next > limit {
                return Err(limit.saturating_sub(current));
            }
            match self.current.compare_exchange_weak(
                current,
                next,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    self.peak.fetch_max(next, Ordering::AcqRel);
                    return Ok(());
                }
                Err(seen) => current = seen,
            }
        }
    }

    fn sub(&self, bytes: u64) {
        self.current.fetch_sub(bytes, Ordering::AcqRel);
    }
}

/// Tracks the bytes held in host and device memory, their peaks, and optional limits.
///
/// An allocation made through [`MemoryTracker::allocate`] is refused with
/// [`BackendError::OutOfMemory`] when it would exceed the limit: a budget is enforced, not
/// just observed. Clones share the same counters.
#[derive(Clone)]
pub struct MemoryTracker {
    inner: Arc<[Counter; 2]>,
}

impl Default for MemoryTracker {
    fn default() -> Self {
        Self::new(None, None)
    }
}

impl fmt::Debug for MemoryTracker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryTracker")
            .field("report", &self.report())
            .finish()
    }
}

impl MemoryTracker {
    /// A tracker with optional host and device limits in bytes (`None`: unlimited).
    pub fn new(host_limit: Option<u64>, device_limit: Option<u64>) -> Self {
        MemoryTracker {
            inner: Arc::new([Counter::new(host_limit), Counter::new(device_limit)]),
        }
    }

    fn counter(&self, kind: MemoryKind) -> &Counter {
        &self.inner[kind as usize]
    }

    /// Records an allocation of `bytes` named `what`, refusing it if it exceeds the limit.
    /// The returned guard releases the bytes when dropped.
    pub fn allocate(
        &self,
        kind: MemoryKind,
        what: &str,
        bytes: u64,
    ) -> Result<Allocation, BackendError> {
        self.counter(kind)
            .try_add(bytes)
            .map_err(|available| BackendError::OutOfMemory {
                kind,
                what: what.to_owned(),
                requested: bytes,
                available,
            })?;
        Ok(Allocation {
            tracker: self.clone(),
            kind,
            bytes,
        })
    }

    /// Sets (or with `None` removes) the limit of one memory kind. Existing allocations are
    /// kept even if they now exceed it; only new ones are refused.
    pub fn set_limit(&self, kind: MemoryKind, limit: Option<u64>) {
        self.counter(kind)
            .limit
            .store(limit.unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// The limit of one memory kind, if any.
    pub fn limit(&self, kind: MemoryKind) -> Option<u64> {
        match self.counter(kind).limit.load(Ordering::Relaxed) {
            u64::MAX => None,
            l => Some(l),
        }
    }

    /// Bytes held now.
    pub fn current(&self, kind: MemoryKind) -> u64 {
        self.counter(kind).current.load(Ordering::Acquire)
    }

    /// The most bytes held at once since creation or the last [`reset_peaks`](Self::reset_peaks).
    pub fn peak(&self, kind: MemoryKind) -> u64 {
        self.counter(kind).peak.load(Ordering::Acquire)
    }

    /// Lowers both peaks to the current figures, to measure one phase of work.
    pub fn reset_peaks(&self) {
        for c in self.inner.iter() {
            c.peak
                .store(c.current.load(Ordering::Acquire), Ordering::Release);
        }
    }

    /// All four figures at once.
    pub fn report(&self) -> MemoryReport {
        MemoryReport {
            host_current: self.current(MemoryKind::Host),
            host_peak: self.peak(MemoryKind::Host),
            device_current: self.current(MemoryKind::Device),
            device_peak: self.peak(MemoryKind::Device),
        }
    }
}

/// A tracked allocation: holding it counts its bytes; dropping it releases them.
#[derive(Debug)]
#[must_use = "dropping the guard releases the tracked bytes at once"]
pub struct Allocation {
    tracker: MemoryTracker,
    kind: MemoryKind,
    bytes: u64,
}

impl Allocation {
    /// The tracked size in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Which memory it is counted in.
    pub fn kind(&self) -> MemoryKind {
        self.kind
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        self.tracker.counter(self.kind).sub(self.bytes);
    }
}

/// A snapshot of a tracker's figures, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryReport {
    /// Host bytes held when the snapshot was taken.
    pub host_current: u64,
    /// Peak host bytes.
    pub host_peak: u64,
    /// Device bytes held when the snapshot was taken.
    pub device_current: u64,
    /// Peak device bytes.
    pub device_peak: u64,
}

impl MemoryReport {
    /// A peak expressed as a multiple of one full evaluation vector of `domain_size` scalars
    /// (n x 32 bytes): the unit residency targets are stated in.
    pub fn in_vectors(bytes: u64, domain_size: usize) -> f64 {
        bytes as f64 / (domain_size as f64 * 32.0)
    }
}

/// What a backend reports about the memory it computes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryInfo {
    /// Total bytes of the device's memory.
    pub total_bytes: u64,
    /// Bytes free now, where the driver can tell.
    pub free_bytes: Option<u64>,
    /// The largest single allocation the device accepts (OpenCL's
    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE`); larger buffers must be split.
    pub max_alloc_bytes: u64,
}

/// (total, available) bytes of the host's RAM from `/proc/meminfo`; `None` where it cannot
/// be read (off Linux).
pub fn host_memory_bytes() -> Option<(u64, u64)> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = info.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    };
    Some((field("MemTotal:")?, field("MemAvailable:")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_current_and_peak_per_kind() {
        let t = MemoryTracker::default();
        let a = t.allocate(MemoryKind::Host, "a", 100).unwrap();
        let b = t.allocate(MemoryKind::Host, "b", 50).unwrap();
        let d = t.allocate(MemoryKind::Device, "d", 7).unwrap();
        assert_eq!(t.current(MemoryKind::Host), 150);
        assert_eq!(t.current(MemoryKind::Device), 7);
        drop(a);
        assert_eq!(t.current(MemoryKind::Host), 50);
        assert_eq!(t.peak(MemoryKind::Host), 150);
        let c = t.allocate(MemoryKind::Host, "c", 30).unwrap();
        assert_eq!(t.peak(MemoryKind::Host), 150, "peak is a high-water mark");
        t.reset_peaks();
        assert_eq!(t.peak(MemoryKind::Host), 80);
        drop((b, c, d));
        assert_eq!(
            t.report(),
            MemoryReport {
                host_current: 0,
                host_peak: 80,
                device_current: 0,
                device_peak: 7
            }
        );
    }

    #[test]
    fn limit_refuses_with_out_of_memory_and_keeps_counters() {
        let t = MemoryTracker::new(None, Some(1000));
        let _a = t.allocate(MemoryKind::Device, "bases", 600).unwrap();
        match t.allocate(MemoryKind::Device, "scalars", 500) {
            Err(BackendError::OutOfMemory {
                kind,
                what,
                requested,
                available,
            }) => {
                assert_eq!(kind, MemoryKind::Device);
                assert_eq!(what, "scalars");
                assert_eq!(requested, 500);
                assert_eq!(available, 400);
            }
            other => panic!("expected OutOfMemory, got {other:?}"),
        }
        assert_eq!(
            t.current(MemoryKind::Device),
            600,
            "a refused allocation holds nothing"
        );
        assert!(t.allocate(MemoryKind::Device, "fits", 400).is_ok());
        assert!(t
            .allocate(MemoryKind::Host, "host is unlimited", 1 << 40)
            .is_ok());
    }

    #[test]
    fn concurrent_allocations_never_exceed_the_limit() {
        let t = MemoryTracker::new(Some(10_000), None);
        std::thread::scope(|s| {
            for _ in 0..4 {
                let t = t.clone();
                s.spawn(move || {
                    for _ in 0..1000 {
                        if let Ok(a) = t.allocate(MemoryKind::Host, "x", 3_000) {
                            drop(a);
                        }
                    }
                });
            }
        });
        assert!(t.peak(MemoryKind::Host) <= 10_000);
        assert_eq!(t.current(MemoryKind::Host), 0);
    }

    #[test]
    fn residency_in_vectors() {
        assert_eq!(MemoryReport::in_vectors(2 * 1024 * 32, 1024), 2.0);
    }
}
