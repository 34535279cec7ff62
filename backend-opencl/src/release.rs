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

use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex};

use ocl::core;
use sluice_backend::{Allocation, BackendError, MemoryKind, MemoryTracker};

use crate::util::lock;

/// Device buffers dropped but not yet released, with their tracked bytes.
pub(crate) struct Releases {
    /// `false`: each drop releases at once (`OpenClTuning::immediate_releases`).
    defer: bool,
    held: Mutex<Vec<(Vec<core::Mem>, Option<Allocation>)>>,
}

impl Releases {
    /// Deferred releases, or (`defer` false) releases at each drop.
    pub(crate) fn new(defer: bool) -> Arc<Self> {
        Arc::new(Releases {
            defer,
            held: Mutex::new(Vec::new()),
        })
    }

    /// Takes `mems` (and the allocation that counts them) to release at the next drain.
    pub(crate) fn retire(&self, mems: Vec<core::Mem>, tracked: Option<Allocation>) {
        if self.defer && !mems.is_empty() {
            lock(&self.held).push((mems, tracked));
        }
    }

    /// Releases everything held; call it once the queue has drained (after a blocking
    /// read, write or finish), when a release does not wait.
    pub(crate) fn drain(&self) {
        // Released outside the lock: a release may still take a while.
        let held = std::mem::take(&mut *lock(&self.held));
        drop(held);
    }

    /// Whether anything is held.
    fn holds_any(&self) -> bool {
        !lock(&self.held).is_empty()
    }

    /// `bytes` of device memory counted in `tracker` as `what`. Where the tracker refuses,
    /// or the total would pass `device_bytes`, what is held is released first (waiting for
    /// the queue) and the allocation tried again.
    pub(crate) fn allocate(
        &self,
        tracker: &MemoryTracker,
        device_bytes: u64,
        what: &str,
        bytes: u64,
    ) -> Result<Allocation, BackendError> {
        if self.holds_any() && tracker.current(MemoryKind::Device) + bytes > device_bytes {
            self.drain();
        }
        match tracker.allocate(MemoryKind::Device, what, bytes) {
            Err(BackendError::OutOfMemory { .. }) if self.holds_any() => {
                self.drain();
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
                self.drain();
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
            releases,
        }
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
        self.releases.retire(vec![mem], self.tracked.take());
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
}
