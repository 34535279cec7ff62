//! Deferred releases: a device buffer dropped while its queue may still run work is freed
//! at the queue's next drain, not at the drop.
//!
//! On NVIDIA `clReleaseMemObject` waits for the queue's work (not only the kernels that use
//! the buffer) before it frees, so a temporary dropped in the middle of a phase (a coset
//! shift's generators, an NTT's constants, H's spent vectors) holds the host until the
//! device has caught up, and the host cannot queue the next phase's uploads beside the
//! kernels before them (BENCHMARKS.md#partition). Held here instead, a buffer is freed
//! after the next blocking read, write or finish on the device's queue, when it has drained
//! and a release is quick. It stays counted in its tracker until then, so budgets hold: an
//! allocation the tracker refuses, or one that would pass the device's memory, first frees
//! what is held and tries again.
//!
//! MSM scratch is reused rather than freed
//! ([`DeviceCtx::scratch`](crate::context::DeviceCtx::scratch)): freeing an MSM's gigabytes
//! of buffers at its end took 3-6 ms with the device idle, once per MSM, and the next MSM
//! asks for buffers of nearly the same sizes. Dropped scratch gets a marker on the queue
//! (behind every command that used it, the queue being in order); once the marker has run
//! the buffer is idle, and a drain makes it spare, handed out again for a request it fits
//! whatever thread or queue uses it next. Spares stay counted, and are freed by a finish,
//! by a refused allocation, or when more than [`SPARES`] are held.

use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex};

use ocl::core::{self, Event};
use sluice_backend::{Allocation, BackendError, MemoryKind, MemoryTracker};

use crate::util::lock;

/// The most spare scratch buffers held; the oldest goes past it. An MSM launch holds about
/// a dozen temporaries.
const SPARES: usize = 24;

/// A dropped buffer awaiting the drain: its chunks, the allocation that counts them, and
/// for scratch its bytes and the marker behind its last use (it becomes spare once the
/// marker has run).
struct Dropped {
    mems: Vec<core::Mem>,
    tracked: Option<Allocation>,
    scratch: Option<(u64, Event)>,
}

/// A spare scratch buffer, its allocation and its bytes.
type Spare = (core::Mem, Allocation, u64);

/// Device buffers dropped but not yet released, with their tracked bytes, and spare
/// scratch.
pub(crate) struct Releases {
    /// `false`: each drop releases at once (`OpenClTuning::immediate_releases`), and no
    /// scratch is kept.
    defer: bool,
    /// Whether idle MSM scratch is kept as spares (`OpenClTuning::free_msm_scratch` off).
    keep_spares: bool,
    /// The in-order queue the device's kernels run on, for scratch's markers.
    queue: core::CommandQueue,
    held: Mutex<Vec<Dropped>>,
    spares: Mutex<Vec<Spare>>,
}

impl Releases {
    /// Deferred releases of buffers used on `queue`, or (`defer` false) releases at each
    /// drop; deferred ones keep idle MSM scratch as spares if `keep_spares`.
    pub(crate) fn new(defer: bool, keep_spares: bool, queue: core::CommandQueue) -> Arc<Self> {
        Arc::new(Releases {
            defer,
            keep_spares: defer && keep_spares,
            queue,
            held: Mutex::new(Vec::new()),
            spares: Mutex::new(Vec::new()),
        })
    }

    /// Takes `mems` (and the allocation that counts them) to release at the next drain.
    pub(crate) fn retire(&self, mems: Vec<core::Mem>, tracked: Option<Allocation>) {
        self.retire_dropped(Dropped {
            mems,
            tracked,
            scratch: None,
        });
    }

    fn retire_dropped(&self, dropped: Dropped) {
        if self.defer && !dropped.mems.is_empty() {
            lock(&self.held).push(dropped);
        }
    }

    /// Takes scratch `mem` of `bytes` to keep as a spare once idle: a marker queued now
    /// runs after every command that used it. Without the marker it is only released.
    fn retire_scratch(&self, mem: core::Mem, tracked: Option<Allocation>, bytes: u64) {
        let mut event = Event::null();
        let marked =
            core::enqueue_marker_with_wait_list(&self.queue, None::<Event>, Some(&mut event), None);
        let scratch = marked.is_ok().then_some((bytes, event));
        self.retire_dropped(Dropped {
            mems: vec![mem],
            tracked,
            scratch,
        });
    }

    /// Releases what is held, keeping idle scratch as spares and scratch still in use
    /// held; call it once the queue has drained (after a blocking read, write or finish),
    /// when a release does not wait.
    pub(crate) fn drain(&self) {
        let held = std::mem::take(&mut *lock(&self.held));
        let (mut freed, mut busy) = (Vec::new(), Vec::new());
        let mut spares = lock(&self.spares);
        for d in held {
            let Some((bytes, marker)) = &d.scratch else {
                freed.push(d);
                continue;
            };
            // A marker that cannot be read counts as busy: the buffer is released later.
            if !core::event_is_complete(marker).unwrap_or(false) {
                busy.push(d);
                continue;
            }
            let bytes = *bytes;
            match (d.tracked, <[core::Mem; 1]>::try_from(d.mems)) {
                (Some(tracked), Ok([mem])) => spares.push((mem, tracked, bytes)),
                (tracked, mems) => drop((tracked, mems)),
            }
        }
        let over = spares.len().saturating_sub(SPARES);
        let old: Vec<Spare> = spares.drain(..over).collect();
        drop(spares);
        lock(&self.held).extend(busy);
        // Released outside the locks: a release may still take a while.
        drop((freed, old));
    }

    /// Releases everything held and every spare (a release of a buffer still in use waits
    /// for the queue on NVIDIA).
    pub(crate) fn drain_all(&self) {
        let held = std::mem::take(&mut *lock(&self.held));
        let spares = std::mem::take(&mut *lock(&self.spares));
        drop((held, spares));
    }

    /// The smallest spare of at least `bytes`, if any. Any size serves: a spare is counted
    /// whether it is used or not, so a later MSM that reuses the larger spares of an
    /// earlier one allocates nothing beyond what that one held.
    fn take_spare(&self, bytes: u64) -> Option<Spare> {
        let mut spares = lock(&self.spares);
        let (i, _) = spares
            .iter()
            .enumerate()
            .filter(|(_, s)| s.2 >= bytes)
            .min_by_key(|(_, s)| s.2)?;
        Some(spares.remove(i))
    }

    /// Whether anything is held or spare.
    fn holds_any(&self) -> bool {
        !lock(&self.held).is_empty() || !lock(&self.spares).is_empty()
    }

    /// `bytes` of device memory counted in `tracker` as `what`. Where the tracker refuses,
    /// or the total would pass `device_bytes`, what is held or spare is released first
    /// (waiting for the queue) and the allocation tried again.
    pub(crate) fn allocate(
        &self,
        tracker: &MemoryTracker,
        device_bytes: u64,
        what: &str,
        bytes: u64,
    ) -> Result<Allocation, BackendError> {
        if self.holds_any() && tracker.current(MemoryKind::Device) + bytes > device_bytes {
            self.drain_all();
        }
        match tracker.allocate(MemoryKind::Device, what, bytes) {
            Err(BackendError::OutOfMemory { .. }) if self.holds_any() => {
                self.drain_all();
                tracker.allocate(MemoryKind::Device, what, bytes)
            }
            r => r,
        }
    }

    /// Runs a driver allocation, freeing what is held and trying once more if it fails.
    pub(crate) fn create<T>(
        &self,
        mut make: impl FnMut() -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        match make() {
            Err(_) if self.holds_any() => {
                self.drain_all();
                make()
            }
            r => r,
        }
    }
}

/// One temporary cl buffer, and the allocation that counts it (if any): it dereferences to
/// the buffer, and a drop hands both to the device's [`Releases`].
pub(crate) struct DeviceTemp {
    mem: ManuallyDrop<core::Mem>,
    tracked: Option<Allocation>,
    /// For scratch, its bytes: it becomes spare once idle rather than freed.
    scratch: Option<u64>,
    releases: Arc<Releases>,
}

impl DeviceTemp {
    /// `mem`, counted by `tracked`, released through `releases`.
    pub(crate) fn new(
        mem: core::Mem,
        tracked: Option<Allocation>,
        releases: Arc<Releases>,
    ) -> Self {
        DeviceTemp {
            mem: ManuallyDrop::new(mem),
            tracked,
            scratch: None,
            releases,
        }
    }

    /// A spare of `releases` that holds at least `bytes` (counted as it was), if any.
    pub(crate) fn spare(releases: &Arc<Releases>, bytes: u64) -> Option<Self> {
        let (mem, tracked, held) = releases.take_spare(bytes)?;
        Some(DeviceTemp::new(mem, Some(tracked), releases.clone()).into_scratch(held))
    }

    /// This temporary as scratch of `bytes`: spare once dropped and drained.
    pub(crate) fn into_scratch(mut self, bytes: u64) -> Self {
        self.scratch = Some(bytes);
        self
    }
}

impl std::ops::Deref for DeviceTemp {
    type Target = core::Mem;
    fn deref(&self) -> &core::Mem {
        &self.mem
    }
}

impl Drop for DeviceTemp {
    fn drop(&mut self) {
        // SAFETY: `mem` is taken once, here, and not used after.
        let mem = unsafe { ManuallyDrop::take(&mut self.mem) };
        let tracked = self.tracked.take();
        match self.scratch {
            Some(bytes) if self.releases.keep_spares => {
                self.releases.retire_scratch(mem, tracked, bytes)
            }
            _ => self.releases.retire(vec![mem], tracked),
        }
    }
}

#[cfg(test)]
mod tests {
    use sluice_backend::{ComputeBackend, MemoryKind, MemoryTracker};

    use crate::testing::{backend_with, test_device};
    use crate::{DeviceSelector, OpenClBackend, OpenClConfig, OpenClTuning};

    /// A backend on the test device counting in a tracker limited to `limit` bytes.
    fn limited(limit: u64, immediate_releases: bool) -> Option<OpenClBackend> {
        backend_with(OpenClConfig {
            devices: DeviceSelector::Index(test_device()),
            tracker: Some(MemoryTracker::new(None, Some(limit))),
            tuning: OpenClTuning {
                immediate_releases,
                ..OpenClTuning::default()
            },
            ..OpenClConfig::default()
        })
    }

    /// A dropped buffer stays counted until the queue drains (a read, a finish), and is
    /// then freed; with immediate releases it goes at the drop.
    #[test]
    fn dropped_buffers_are_counted_until_the_queue_drains() {
        for immediate in [false, true] {
            let Some(b) = limited(1 << 20, immediate) else {
                return;
            };
            let device = || b.tracker().current(MemoryKind::Device);
            let kept = b.alloc_fr("kept", 1000).unwrap();
            let spent = b.alloc_fr("spent", 3000).unwrap();
            drop(spent);
            let held = if immediate { 0 } else { 3000 * 32 };
            assert_eq!(device(), 1000 * 32 + held, "immediate {immediate}");
            let mut out = vec![sluice_field::Fr::from(7u64); 10];
            b.read_fr(&kept, 0, &mut out).unwrap();
            assert_eq!(
                device(),
                1000 * 32,
                "immediate {immediate}: freed at the read"
            );
            let temp = b.primary().temp(b.tracker(), "temp", 100).unwrap();
            drop(temp);
            b.synchronize().unwrap();
            assert_eq!(
                device(),
                1000 * 32,
                "immediate {immediate}: freed at the finish"
            );
        }
    }

    /// Buffers awaiting release do not make an allocation within the limit fail: the
    /// tracker's refusal frees them first, and the peak stays within the limit.
    #[test]
    fn a_refused_allocation_frees_what_is_held_and_succeeds() {
        let limit = 1 << 20;
        let Some(b) = limited(limit, false) else {
            return;
        };
        let tracker = b.tracker();
        let len = (limit as usize / 32) * 3 / 4;
        drop(b.alloc_fr("first", len).unwrap());
        assert_eq!(tracker.current(MemoryKind::Device), (len * 32) as u64);
        let second = b.alloc_fr("second", len).unwrap();
        assert_eq!(tracker.current(MemoryKind::Device), (len * 32) as u64);
        assert!(tracker.peak(MemoryKind::Device) <= limit);
        // Beyond the limit with nothing held, it is still refused.
        assert!(b.alloc_fr("third", len).is_err());
        drop(second);
    }

    /// Scratch dropped and drained once idle stays counted as a spare, is handed out again
    /// for a request it fits, and is freed by a finish or by an allocation the tracker refuses;
    /// with immediate releases none is kept.
    #[test]
    fn spare_scratch_is_reused_and_freed_when_needed() {
        let limit = 1 << 20;
        for immediate in [false, true] {
            let Some(b) = limited(limit, immediate) else {
                return;
            };
            let (ctx, tracker) = (b.primary(), b.tracker());
            let device = || tracker.current(MemoryKind::Device);
            drop(ctx.scratch(tracker, "first", 1000).unwrap());
            ctx.wait_and_drain().unwrap();
            let kept = if immediate { 0 } else { 4000 };
            assert_eq!(
                device(),
                kept,
                "immediate {immediate}: spare, still counted"
            );
            // Deferred: the 4000-byte spare again; immediate: a new 3600-byte buffer.
            let fits = ctx.scratch(tracker, "fits", 900).unwrap();
            let first = if immediate { 3600 } else { 4000 };
            assert_eq!(device(), first, "immediate {immediate}: the spare again");
            let larger = ctx.scratch(tracker, "larger", 3000).unwrap();
            assert_eq!(device(), first + 12000, "immediate {immediate}");
            drop((fits, larger));
            if !immediate {
                // Spares of 4000 and 12000 bytes: a far smaller request takes the smaller.
                ctx.wait_and_drain().unwrap();
                let small = ctx.scratch(tracker, "small", 10).unwrap();
                assert_eq!(device(), 16000, "a spare of any larger size serves");
                drop(small);
            }
            b.synchronize().unwrap();
            assert_eq!(device(), 0, "immediate {immediate}: a finish frees spares");
        }
        let Some(b) = limited(limit, false) else {
            return;
        };
        let (ctx, tracker) = (b.primary(), b.tracker());
        drop(ctx.scratch(tracker, "spare", 100_000).unwrap());
        ctx.wait_and_drain().unwrap();
        assert_eq!(tracker.current(MemoryKind::Device), 400_000);
        let big = b.alloc_fr("big", (limit as usize - 200_000) / 32).unwrap();
        assert!(tracker.peak(MemoryKind::Device) <= limit);
        drop(big);
    }

    /// With `free_msm_scratch`, idle scratch is freed at the drain, not kept as a spare.
    #[test]
    fn freed_scratch_is_not_kept() {
        let Some(b) = backend_with(OpenClConfig {
            devices: DeviceSelector::Index(test_device()),
            tracker: Some(MemoryTracker::new(None, Some(1 << 20))),
            tuning: OpenClTuning {
                free_msm_scratch: true,
                ..OpenClTuning::default()
            },
            ..OpenClConfig::default()
        }) else {
            return;
        };
        let (ctx, tracker) = (b.primary(), b.tracker());
        drop(ctx.scratch(tracker, "scratch", 1000).unwrap());
        assert_eq!(
            tracker.current(MemoryKind::Device),
            4000,
            "held until the drain"
        );
        ctx.wait_and_drain().unwrap();
        assert_eq!(tracker.current(MemoryKind::Device), 0, "freed, not spare");
    }
}
