//! Page-locked host memory the backend lends for host vectors ([`sluice_backend::FrVec`]):
//! synthesis writes a, b and the witness there, and their uploads go straight to the DMA,
//! with no copy into the staging buffers (which sets a staged upload's pace on the H200).
//!
//! Each block is a `CL_MEM_ALLOC_HOST_PTR` buffer of the device's context, mapped once; the
//! driver page-locks it (NVIDIA) or keeps it in ordinary memory (PoCL). Page-locking gigabytes
//! takes the driver a while, and proofs come one after another with vectors of the same
//! sizes, so a block given back is kept for the next vector (at most [`IDLE_BLOCKS`] of
//! them) rather than freed. A pool lends at most a limit of bytes (in use and kept), a
//! quarter of the host's memory unless `SLUICE_PINNED_HOST_MIB` says otherwise (0: lend
//! none); past it, vectors are ordinary memory and upload through staging as before.

use std::sync::{Arc, Mutex};

use ocl::core::{self, Event, MemFlags};
use sluice_backend::{FrVec, HostAllocator, LentMemory};

use crate::util::lock;

/// Blocks kept for reuse once given back: a proof's a, b and witness.
const IDLE_BLOCKS: usize = 3;

/// A `CL_MEM_ALLOC_HOST_PTR` buffer of `words` words in `context`, mapped (blocking, on
/// `queue`) for reading and writing: host memory the driver page-locks on a GPU. The
/// caller keeps the buffer while it uses the mapping.
pub(crate) fn mapped_host_buffer(
    context: &core::Context,
    queue: &core::CommandQueue,
    words: usize,
) -> Result<(core::Mem, core::MemMap<u32>), core::Error> {
    // SAFETY: no host pointer is passed; the mapping is written before it is read.
    let mem = unsafe {
        core::create_buffer(
            context,
            MemFlags::new().read_write().alloc_host_ptr(),
            words,
            None::<&[u32]>,
        )
    }?;
    // SAFETY: a blocking map of the whole buffer, which the caller keeps.
    let map = unsafe {
        core::enqueue_map_buffer::<u32, _, _, _>(
            queue,
            &mem,
            true,
            core::MapFlags::new().read().write(),
            0,
            words,
            None::<Event>,
            None::<&mut Event>,
        )
    }?;
    Ok((mem, map))
}

/// One mapped `CL_MEM_ALLOC_HOST_PTR` buffer.
struct Block {
    mem: core::Mem,
    map: core::MemMap<u32>,
    bytes: usize,
}

// SAFETY: the mapping is plain host memory, valid while `mem` lives; a block has one owner
// at a time (the pool's idle list or one `Lent`).
unsafe impl Send for Block {}
unsafe impl Sync for Block {}

impl Block {
    fn addr(&self) -> usize {
        self.map.as_ptr() as usize
    }
}

#[derive(Default)]
struct PoolState {
    /// Bytes of every block that exists (lent or idle).
    bytes: u64,
    /// (address, bytes) of every block that exists: what uploads may send directly.
    ranges: Vec<(usize, usize)>,
    idle: Vec<Block>,
}

/// One device context's lent host memory (see the module docs).
pub(crate) struct PinnedPool {
    context: core::Context,
    /// Maps and unmaps blocks; apart from the device's queues, so it never waits for kernels.
    queue: core::CommandQueue,
    limit: u64,
    state: Mutex<PoolState>,
}

impl PinnedPool {
    /// A pool for `context`'s device lending at most `limit` bytes.
    pub(crate) fn new(
        context: &core::Context,
        device: core::DeviceId,
        limit: u64,
    ) -> Result<Self, core::Error> {
        Ok(PinnedPool {
            context: context.clone(),
            queue: core::create_command_queue(context, device, None)?,
            limit,
            state: Mutex::new(PoolState::default()),
        })
    }

    /// The limit `bytes` sets, by default a quarter of the host's memory (none where it
    /// cannot be read).
    pub(crate) fn limit(bytes: Option<u64>) -> u64 {
        bytes.unwrap_or_else(|| {
            sluice_backend::host_memory_bytes().map_or(0, |(total, _)| total / 4)
        })
    }

    /// Whether `data` lies wholly in one block (lent or idle): an upload may hand it to the
    /// DMA as it is.
    pub(crate) fn holds(&self, data: &[u32]) -> bool {
        let (start, end) = (
            data.as_ptr() as usize,
            data.as_ptr() as usize + data.len() * 4,
        );
        lock(&self.state)
            .ranges
            .iter()
            .any(|&(at, bytes)| at <= start && end <= at + bytes)
    }

    /// A block of at least `bytes` (at most twice that, so a small vector does not hold a
    /// large block): a kept one where one fits, else a new one within the limit (kept
    /// blocks that do not fit are freed first to make room). `None` past the limit or when
    /// the driver refuses. The driver's work (page-locking gigabytes takes it a while) runs
    /// outside the lock, so uploads asking [`holds`](Self::holds) meanwhile do not wait.
    fn take(&self, bytes: usize) -> Option<Block> {
        let mut freed = Vec::new();
        {
            let mut st = lock(&self.state);
            let fits = |b: &Block| b.bytes >= bytes && b.bytes <= bytes.saturating_mul(2);
            if let Some(i) = (0..st.idle.len())
                .filter(|&i| fits(&st.idle[i]))
                .min_by_key(|&i| st.idle[i].bytes)
            {
                return Some(st.idle.swap_remove(i));
            }
            while st.bytes + bytes as u64 > self.limit {
                let Some(block) = st.idle.pop() else {
                    // Kept ones popped so far are freed all the same: none fitted.
                    drop(st);
                    freed.into_iter().for_each(|b| self.unmap(b));
                    return None;
                };
                Self::forget(&mut st, &block);
                freed.push(block);
            }
            // Reserved now, so that concurrent takes keep the limit.
            st.bytes += bytes as u64;
        }
        freed.into_iter().for_each(|b| self.unmap(b));
        let block = self.map_new(bytes);
        let mut st = lock(&self.state);
        match &block {
            Some(b) => st.ranges.push((b.addr(), b.bytes)),
            None => st.bytes -= bytes as u64,
        }
        block
    }

    /// A new mapped block, or `None` (logged) when the driver refuses.
    fn map_new(&self, bytes: usize) -> Option<Block> {
        let words = bytes.div_ceil(4).max(1);
        match mapped_host_buffer(&self.context, &self.queue, words) {
            // Unmapped before `mem` is released (`unmap`).
            Ok((mem, map)) => Some(Block { mem, map, bytes }),
            Err(e) => {
                log::warn!("no page-locked host vector of {bytes} bytes ({e})");
                None
            }
        }
    }

    /// Takes `block`, which the caller has removed from wherever it was, out of the
    /// pool's accounting: uploads no longer send from it.
    fn forget(st: &mut PoolState, block: &Block) {
        st.bytes -= block.bytes as u64;
        st.ranges.retain(|&(at, _)| at != block.addr());
    }

    /// Unmaps `block` and frees it (with the pool's lock not held: driver work).
    fn unmap(&self, block: Block) {
        let unmapped = core::enqueue_unmap_mem_object(
            &self.queue,
            &block.mem,
            &block.map,
            None::<Event>,
            None::<&mut Event>,
        )
        .and_then(|()| core::finish(&self.queue));
        if let Err(e) = unmapped {
            log::warn!("unmapping a page-locked host vector failed ({e})");
        }
    }

    /// Takes `block` back: kept for the next vector, or freed where enough are kept.
    fn give_back(&self, block: Block) {
        let mut st = lock(&self.state);
        if st.idle.len() < IDLE_BLOCKS {
            st.idle.push(block);
            return;
        }
        Self::forget(&mut st, &block);
        drop(st);
        self.unmap(block);
    }

    /// Bytes of every block that exists, lent or kept.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> u64 {
        lock(&self.state).bytes
    }

    /// How many blocks are kept for reuse.
    #[cfg(test)]
    pub(crate) fn kept(&self) -> usize {
        lock(&self.state).idle.len()
    }
}

impl Drop for PinnedPool {
    fn drop(&mut self) {
        // Lent blocks hold the pool (an Arc), so only kept ones remain.
        let kept = std::mem::take(&mut lock(&self.state).idle);
        kept.into_iter().for_each(|b| self.unmap(b));
    }
}

/// A block lent to one [`FrVec`]; given back to its pool when dropped.
struct Lent {
    block: Option<Block>,
    pool: Arc<PinnedPool>,
}

// SAFETY: the mapping is valid for `bytes` while the block lives, which is as long as this
// value (it goes back to the pool only on drop), and the block is lent to no one else.
unsafe impl LentMemory for Lent {
    fn ptr(&self) -> *mut u8 {
        self.block
            .as_ref()
            .map_or(std::ptr::null_mut(), |b| b.map.as_ptr() as *mut u8)
    }
    fn bytes(&self) -> usize {
        self.block.as_ref().map_or(0, |b| b.bytes)
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if let Some(block) = self.block.take() {
            self.pool.give_back(block);
        }
    }
}

/// The [`HostAllocator`] of a device's pool.
pub(crate) struct PinnedLender(pub(crate) Arc<PinnedPool>);

impl HostAllocator for PinnedLender {
    fn fr_vec(&self, len: usize) -> Option<FrVec> {
        // An empty vector needs no memory, lent or not.
        let bytes = len.checked_mul(std::mem::size_of::<sluice_backend::Fr>())?;
        let block = self.0.take((bytes > 0).then_some(bytes)?)?;
        FrVec::in_lent(Box::new(Lent {
            block: Some(block),
            pool: self.0.clone(),
        }))
    }
}
