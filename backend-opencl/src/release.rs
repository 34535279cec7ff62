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
//! With a release thread (`OpenClTuning::release_thread`) a drain hands what it holds to
//! a thread of the device's own, which frees it: a drained queue still took 3-6 ms to free
//! an MSM's gigabytes of scratch, with the device idle, since the host queued the next
//! phase only after. A finish, and an allocation that needs the memory, wait for that
//! thread, so budgets and "freed after a synchronize" hold as before.

use std::mem::ManuallyDrop;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use ocl::core;
use sluice_backend::{Allocation, BackendError, MemoryKind, MemoryTracker};

use crate::util::lock;

/// Dropped buffers and the allocation that counts them.
type Held = Vec<(Vec<core::Mem>, Option<Allocation>)>;

/// Device buffers dropped but not yet released, with their tracked bytes.
pub(crate) struct Releases {
    /// `false`: each drop releases at once (`OpenClTuning::immediate_releases`).
    defer: bool,
    held: Mutex<Held>,
    /// Frees what a drain hands it, if there is one.
    thread: Option<ReleaseThread>,
}

/// A thread that frees batches of dropped buffers, and how many it has not finished.
struct ReleaseThread {
    send: Mutex<Option<Sender<Held>>>,
    pending: Arc<(Mutex<usize>, Condvar)>,
    handle: Option<JoinHandle<()>>,
}

impl ReleaseThread {
    fn spawn(name: String) -> Option<Self> {
        let (send, receive) = channel::<Held>();
        let pending = Arc::new((Mutex::new(0usize), Condvar::new()));
        let done = pending.clone();
        let handle = std::thread::Builder::new()
            .name(name)
            .spawn(move || {
                for batch in receive {
                    drop(batch);
                    *lock(&done.0) -= 1;
                    done.1.notify_all();
                }
            })
            .map_err(|e| log::warn!("no release thread ({e}); buffers are freed at the drain"))
            .ok()?;
        Some(ReleaseThread {
            send: Mutex::new(Some(send)),
            pending,
            handle: Some(handle),
        })
    }

    /// Hands `batch` to the thread; gives it back if the thread is gone.
    fn free(&self, batch: Held) -> Option<Held> {
        let mut pending = lock(&self.pending.0);
        match lock(&self.send).as_ref().map(|s| s.send(batch)) {
            Some(Ok(())) => {
                *pending += 1;
                None
            }
            Some(Err(e)) => Some(e.0),
            None => None,
        }
    }

    fn busy(&self) -> bool {
        *lock(&self.pending.0) > 0
    }

    /// Waits until every batch handed over is freed.
    fn wait(&self) {
        let (count, done) = &*self.pending;
        let mut pending = lock(count);
        while *pending > 0 {
            pending = done.wait(pending).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for ReleaseThread {
    fn drop(&mut self) {
        // The sender's drop ends the thread's loop once it has freed what it was given.
        drop(lock(&self.send).take());
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Releases {
    /// Deferred releases, or (`defer` false) releases at each drop; deferred ones are
    /// freed on a thread named `thread` if given.
    pub(crate) fn new(defer: bool, thread: Option<String>) -> Arc<Self> {
        Arc::new(Releases {
            defer,
            held: Mutex::new(Vec::new()),
            thread: thread.filter(|_| defer).and_then(ReleaseThread::spawn),
        })
    }

    /// Takes `mems` (and the allocation that counts them) to release at the next drain.
    pub(crate) fn retire(&self, mems: Vec<core::Mem>, tracked: Option<Allocation>) {
        if self.defer && !mems.is_empty() {
            lock(&self.held).push((mems, tracked));
        }
    }

    /// Releases everything held, on the release thread if there is one; call it once the
    /// queue has drained (after a blocking read, write or finish), when a release does not
    /// wait.
    pub(crate) fn drain(&self) {
        // Released outside the lock: a release may still take a while.
        let held = std::mem::take(&mut *lock(&self.held));
        if held.is_empty() {
            return;
        }
        let left = match &self.thread {
            Some(t) => t.free(held),
            None => Some(held),
        };
        drop(left);
    }

    /// Releases everything held and waits until the release thread has freed what it was
    /// given: afterwards nothing dropped is still counted.
    pub(crate) fn drain_now(&self) {
        let held = std::mem::take(&mut *lock(&self.held));
        drop(held);
        if let Some(t) = &self.thread {
            t.wait();
        }
    }

    /// Whether anything is held or still being freed.
    fn holds_any(&self) -> bool {
        !lock(&self.held).is_empty() || self.thread.as_ref().is_some_and(ReleaseThread::busy)
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
            self.drain_now();
        }
        match tracker.allocate(MemoryKind::Device, what, bytes) {
            Err(BackendError::OutOfMemory { .. }) if self.holds_any() => {
                self.drain_now();
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
                self.drain_now();
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

    /// The release modes: (immediate releases, release thread).
    const MODES: [(bool, bool); 3] = [(false, false), (true, false), (false, true)];

    /// A backend on the test device counting in a tracker limited to `limit` bytes.
    fn limited(
        limit: u64,
        (immediate_releases, release_thread): (bool, bool),
    ) -> Option<OpenClBackend> {
        backend_with(OpenClConfig {
            devices: DeviceSelector::Index(test_device()),
            tracker: Some(MemoryTracker::new(None, Some(limit))),
            tuning: OpenClTuning {
                immediate_releases,
                release_thread,
                ..OpenClTuning::default()
            },
            ..OpenClConfig::default()
        })
    }

    /// A dropped buffer stays counted until the queue drains (a read, a finish), and is
    /// then freed (by the release thread, if there is one, which a finish waits for); with
    /// immediate releases it goes at the drop.
    #[test]
    fn dropped_buffers_are_counted_until_the_queue_drains() {
        for mode in MODES {
            let (immediate, thread) = mode;
            let Some(b) = limited(1 << 20, mode) else {
                return;
            };
            let device = || b.tracker().current(MemoryKind::Device);
            let kept = b.alloc_fr("kept", 1000).unwrap();
            let spent = b.alloc_fr("spent", 3000).unwrap();
            drop(spent);
            let held = if immediate { 0 } else { 3000 * 32 };
            assert_eq!(device(), 1000 * 32 + held, "mode {mode:?}");
            let mut out = vec![sluice_field::Fr::from(7u64); 10];
            b.read_fr(&kept, 0, &mut out).unwrap();
            if thread {
                // Handed to the thread at the read; wait for it (what a finish does).
                b.primary().releases.drain_now();
            }
            assert_eq!(device(), 1000 * 32, "mode {mode:?}: freed at the read");
            let temp = b.primary().temp(b.tracker(), "temp", 100).unwrap();
            drop(temp);
            b.synchronize().unwrap();
            assert_eq!(device(), 1000 * 32, "mode {mode:?}: freed at the finish");
        }
    }

    /// Buffers awaiting release do not make an allocation within the limit fail: the
    /// tracker's refusal frees them first, and the peak stays within the limit.
    #[test]
    fn a_refused_allocation_frees_what_is_held_and_succeeds() {
        let limit = 1 << 20;
        for mode in [MODES[0], MODES[2]] {
            let Some(b) = limited(limit, mode) else {
                return;
            };
            let tracker = b.tracker();
            let len = (limit as usize / 32) * 3 / 4;
            drop(b.alloc_fr("first", len).unwrap());
            assert_eq!(tracker.current(MemoryKind::Device), (len * 32) as u64);
            if mode.1 {
                // Handed to the release thread: the refusal must wait for it.
                b.primary().releases.drain();
            }
            let second = b.alloc_fr("second", len).unwrap();
            assert_eq!(
                tracker.current(MemoryKind::Device),
                (len * 32) as u64,
                "mode {mode:?}"
            );
            assert!(tracker.peak(MemoryKind::Device) <= limit, "mode {mode:?}");
            // Beyond the limit with nothing held, it is still refused.
            assert!(b.alloc_fr("third", len).is_err());
            drop(second);
        }
    }
}
