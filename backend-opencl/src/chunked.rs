//! Device buffers of whole elements in one or more cl buffers (chunks), so a buffer may be
//! larger than the device's largest single allocation.

use std::sync::Arc;

use sluice_backend::{Allocation, BackendError, MemoryTracker};

use ocl::core;

use crate::context::DeviceCtx;
use crate::release::Releases;

/// Elements of a fixed number of 32-bit words in one or more cl buffers ("chunks"): a
/// buffer larger than the device's largest single allocation is split. Every chunk holds
/// `chunk_len` elements (a power of two) except the last. Dropped, its chunks go to the
/// device's [`Releases`], freed at the queue's next drain.
pub(crate) struct Chunked {
    pub(crate) device: usize,
    pub(crate) chunks: Vec<core::Mem>,
    pub(crate) chunk_len: usize,
    pub(crate) len: usize,
    pub(crate) words: usize,
    tracked: Option<Allocation>,
    releases: Arc<Releases>,
}

impl Drop for Chunked {
    fn drop(&mut self) {
        let chunks = std::mem::take(&mut self.chunks);
        self.releases.retire(chunks, self.tracked.take());
    }
}

impl Chunked {
    /// Elements of `words` words per chunk on `ctx`: the largest power of two that fits
    /// its chunk cap (at least one).
    pub(crate) fn chunk_len(ctx: &DeviceCtx, words: usize) -> usize {
        let per_chunk = (ctx.max_chunk_bytes / (words as u64 * 4)).max(1);
        1usize << (63 - per_chunk.leading_zeros())
    }

    /// Allocates `len` elements of `words` words on device `device` (tracked as `name`).
    pub(crate) fn alloc(
        ctx: &DeviceCtx,
        device: usize,
        tracker: &MemoryTracker,
        name: &str,
        len: usize,
        words: usize,
    ) -> Result<Self, BackendError> {
        let bytes = (len as u64) * (words as u64) * 4;
        let tracked = ctx.track(tracker, name, bytes)?;
        let chunk_len = Self::chunk_len(ctx, words);
        let mut chunks = Vec::with_capacity(len.div_ceil(chunk_len));
        let mut start = 0;
        while start < len {
            let n = chunk_len.min(len - start);
            chunks.push(ctx.raw_buffer(name, n * words)?);
            start += n;
        }
        Ok(Chunked {
            device,
            chunks,
            chunk_len,
            len,
            words,
            tracked: Some(tracked),
            releases: ctx.releases.clone(),
        })
    }

    /// Elements in chunk `i`.
    pub(crate) fn chunk_elems(&self, i: usize) -> usize {
        self.chunk_len.min(self.len - i * self.chunk_len)
    }

    /// Writes `data` (whole elements) at element `offset`, across chunks as needed, on the
    /// kernels' queue, behind what is queued.
    pub(crate) fn write(
        &self,
        ctx: &DeviceCtx,
        offset: usize,
        data: &[u32],
    ) -> Result<(), BackendError> {
        self.write_on(ctx, offset, data, false)
    }

    /// [`write`](Self::write) into a buffer no queued command uses yet (one just
    /// [`alloc`](Self::alloc)ed): on the transfer queue ([`DeviceCtx::write_fresh`]), so
    /// it goes up while the kernels already queued run. Blocking, so commands queued after
    /// it see the data.
    pub(crate) fn write_fresh(
        &self,
        ctx: &DeviceCtx,
        offset: usize,
        data: &[u32],
    ) -> Result<(), BackendError> {
        self.write_on(ctx, offset, data, true)
    }

    fn write_on(
        &self,
        ctx: &DeviceCtx,
        offset: usize,
        data: &[u32],
        fresh: bool,
    ) -> Result<(), BackendError> {
        self.each_range(offset, data.len() / self.words, |chunk, at, from, n| {
            let (mem, at) = (&self.chunks[chunk], at * self.words);
            let data = &data[from * self.words..(from + n) * self.words];
            match fresh {
                true => ctx.write_fresh(mem, at, data),
                false => ctx.write(mem, at, data),
            }
        })
    }

    /// A new buffer of `len` elements holding `data` (whole elements, at most `len`) then
    /// zeros. The data goes up on the transfer queue ([`DeviceCtx::write_fresh`]), so it
    /// overlaps the kernels already queued; the zeros are queued after it.
    pub(crate) fn upload(
        ctx: &DeviceCtx,
        device: usize,
        tracker: &MemoryTracker,
        name: &str,
        len: usize,
        words: usize,
        data: &[u32],
    ) -> Result<Self, BackendError> {
        let buf = Self::alloc(ctx, device, tracker, name, len, words)?;
        let filled = data.len() / words;
        buf.each_range(0, filled, |chunk, at, from, n| {
            ctx.write_fresh(
                &buf.chunks[chunk],
                at * words,
                &data[from * words..(from + n) * words],
            )
        })?;
        buf.each_range(filled, len - filled, |chunk, at, _, n| {
            ctx.fill_zero_at(&buf.chunks[chunk], at * words, n * words)
        })?;
        Ok(buf)
    }

    /// Reads `out.len() / words` elements from element `offset`.
    pub(crate) fn read(
        &self,
        ctx: &DeviceCtx,
        offset: usize,
        out: &mut [u32],
    ) -> Result<(), BackendError> {
        let w = self.words;
        self.each_range(offset, out.len() / w, |chunk, at, from, n| {
            ctx.read(
                &self.chunks[chunk],
                at * w,
                &mut out[from * w..(from + n) * w],
            )
        })
    }

    /// Calls `f(chunk, offset in chunk, offset in the range, count)` for each piece of the
    /// element range `[offset, offset + len)`; the range must lie within the buffer.
    pub(crate) fn each_range(
        &self,
        offset: usize,
        len: usize,
        mut f: impl FnMut(usize, usize, usize, usize) -> Result<(), BackendError>,
    ) -> Result<(), BackendError> {
        let mut done = 0;
        while done < len {
            let pos = offset + done;
            let (chunk, at) = (pos / self.chunk_len, pos % self.chunk_len);
            let n = (self.chunk_len - at).min(len - done);
            f(chunk, at, done, n)?;
            done += n;
        }
        Ok(())
    }
}
