//! One device's context, queue and programs, and the small helpers every operation uses:
//! chunked buffers and kernel launches.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ocl::core::{self, ArgVal, Event, MemFlags};
use sluice_backend::{Allocation, BackendError, MemoryKind, MemoryTracker};

use crate::capture;
use crate::device::DeviceInfo;
use crate::pinned::{mapped_host_buffer, PinnedPool};
use crate::program::{self, KernelCache};
use crate::source::ProgramKind;
use crate::{driver_error, lock};

/// A program kind's build, once done.
type ProgramSlot = Arc<Mutex<Option<Arc<core::Program>>>>;

/// Commands recorded for profiling: name, event, and for a kernel launch its resources on
/// the device (work-group size limit, private bytes per work item: registers spilled; both
/// 0 for the transfers, named in parentheses).
type ProfileLog = Mutex<Vec<(String, Event, usize, u64)>>;

/// The profile's names of the transfers.
const TO_DEVICE: &str = "(host to device)";
const TO_HOST: &str = "(device to host)";
const ON_DEVICE: &str = "(device copy or fill)";

/// Device idle gaps at least this long get rows of their own in a profile (see [`idle_gaps`]).
pub(crate) const IDLE_GAP_MAX_MS: f64 = 10.0;

/// One device's profile since its last report.
pub(crate) struct ProfileReport {
    /// Device time per kernel or transfer direction.
    pub(crate) busy: Vec<KernelProfile>,
    /// Device idle time before each kind of command, over gaps shorter than
    /// [`IDLE_GAP_MAX_MS`] (`launches`: how many gaps).
    pub(crate) idle: Vec<KernelProfile>,
    /// Gaps of [`IDLE_GAP_MAX_MS`] or more, not in `idle`, per kind of command that ends
    /// them: the caller's own work between operations, or host work inside one (an index
    /// built, a vector freed), told apart by the command that follows.
    pub(crate) long_gaps: Vec<KernelProfile>,
    /// The same gaps one by one, in time order: where each lies tells a gap inside an
    /// operation from one between operations (a proof's own from the bench's between
    /// proofs).
    pub(crate) long_list: Vec<LongGap>,
}

/// One idle gap of [`IDLE_GAP_MAX_MS`] or more.
pub(crate) struct LongGap {
    /// When it began, in milliseconds from the first command of the profile.
    pub(crate) at_ms: f64,
    pub(crate) ms: f64,
    /// The long-gap row it is in (`X (after W)`).
    pub(crate) row: String,
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
/// upload piece) from late host work (after a kernel).
fn idle_gaps(
    mut spans: Vec<(u64, u64, String)>,
) -> (Vec<KernelProfile>, Vec<KernelProfile>, Vec<LongGap>) {
    spans.sort_by_key(|s| s.0);
    let first = spans.first().map_or(0, |s| s.0);
    let (mut idle, mut long_gaps, mut long_list) = (Vec::new(), Vec::new(), Vec::new());
    // The latest end so far, and the command it belongs to.
    let mut last: Option<(u64, String)> = None;
    for (start, end, name) in spans {
        if let Some((prev, before)) = &last {
            let gap_ms = start.saturating_sub(*prev) as f64 * 1e-6;
            if gap_ms >= IDLE_GAP_MAX_MS {
                let row = format!("{name} (after {before})");
                add_to_row(&mut long_gaps, &row, gap_ms, 0, 0);
                long_list.push(LongGap {
                    at_ms: prev.saturating_sub(first) as f64 * 1e-6,
                    ms: gap_ms,
                    row,
                });
            } else if gap_ms > 0.0 {
                add_to_row(&mut idle, &name, gap_ms, 0, 0);
            }
        }
        if last.as_ref().map_or(true, |(prev, _)| end > *prev) {
            last = Some((end, name));
        }
    }
    (idle, long_gaps, long_list)
}

/// One kernel's line of a profile report.
pub(crate) struct KernelProfile {
    pub(crate) name: String,
    pub(crate) launches: usize,
    /// Device time of all launches.
    pub(crate) ms: f64,
    /// The kernel's work-group size limit on the device (falls as registers per item rise).
    pub(crate) work_group_limit: usize,
    /// Private memory per work item: registers spilled to memory.
    pub(crate) private_bytes: u64,
}

/// A device with its own context and in-order queue, and a second queue for uploads into
/// fresh buffers ([`DeviceCtx::write_fresh`]).
pub(crate) struct DeviceCtx {
    pub(crate) info: &'static DeviceInfo,
    pub(crate) context: core::Context,
    pub(crate) queue: core::CommandQueue,
    /// Uploads that no queued command depends on or conflicts with, so that the copy
    /// engine sends them while `queue`'s kernels run. Every write on it is waited for
    /// before it returns, so [`DeviceCtx::finish`] need not cover it.
    transfers: core::CommandQueue,
    /// One slot per program kind, each with its own lock: building one program does not
    /// hold back another's build or a built program's users.
    programs: Mutex<HashMap<ProgramKind, ProgramSlot>>,
    /// Twiddle tables per (log2 size, inverse), built on first use.
    pub(crate) twiddles: Mutex<HashMap<(u32, bool), Arc<crate::ntt::Twiddles>>>,
    /// The largest chunk of one buffer, in bytes.
    pub(crate) max_chunk_bytes: u64,
    cache: KernelCache,
    /// With `SLUICE_PROFILE=1`: every kernel launch's and transfer's name and event, for
    /// [`DeviceCtx::profile_report`].
    profile: Option<ProfileLog>,
    /// Pinned staging for large transfers: `None` when off, else created on first use
    /// (`Err` remembers that the driver refused, and transfers stay direct).
    staging: Option<Mutex<Option<Result<Staging, ()>>>>,
    /// Page-locked host memory lent for host vectors, which uploads send with no staging
    /// copy; `None` where transfers are not staged or the limit is 0.
    pub(crate) pinned: Option<Arc<PinnedPool>>,
}

/// Transfers at least this large go through the pinned staging buffers.
const STAGED_MIN_WORDS: usize = 1 << 20;
/// Pinned staging buffers: up to this many pieces in flight while the host copies the next.
/// Two, as since the third session: four (the ninth session's A/B runs) were never
/// measured against two, and pin twice the host memory.
const STAGING_SLOTS: usize = 2;

/// Words per staging buffer: 16 MiB by default, `SLUICE_STAGING_KIB` (64 to 65536) for
/// experiments; read once. Smaller pieces start the first DMA sooner, but on the H200
/// 4 MiB pieces made a G1 2^20 MSM 3% slower than 16 MiB ones (BENCHMARKS.md, ninth
/// session): the host's copy into pinned memory, not the DMA, sets the pace, and each
/// piece costs a gap.
fn staging_words() -> usize {
    static WORDS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *WORDS.get_or_init(|| crate::env_in("SLUICE_STAGING_KIB", 64..=65536).unwrap_or(16384) * 256)
}

/// Pinned (`CL_MEM_ALLOC_HOST_PTR`, mapped) host buffers: a transfer copies one piece into
/// a free one while the device reads the others, so DMA runs at pinned speed.
struct Staging {
    /// Kept alive: the mapped memory belongs to them.
    _buffers: Vec<core::Mem>,
    ptrs: Vec<*mut u32>,
    words: usize,
}

// SAFETY: the raw pointers are the mappings of `buffers`, valid as long as they live; they
// are only dereferenced under the DeviceCtx's staging lock.
unsafe impl Send for Staging {}

impl Staging {
    fn new(ctx: &DeviceCtx) -> Result<Self, core::Error> {
        let words = staging_words();
        let make = || -> Result<(core::Mem, *mut u32), core::Error> {
            // It stays mapped while `mem` lives.
            let (mem, mut map) = mapped_host_buffer(&ctx.context, &ctx.queue, words)?;
            Ok((mem, map.as_mut_ptr()))
        };
        let (buffers, ptrs) = (0..STAGING_SLOTS)
            .map(|_| make())
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .unzip();
        Ok(Staging {
            _buffers: buffers,
            ptrs,
            words,
        })
    }

    /// The mapped words of buffer `i` (any index: taken modulo the slot count).
    #[allow(clippy::mut_from_ref)]
    fn slot(&self, i: usize) -> &mut [u32] {
        // SAFETY: each pointer maps `words` words that live as long as self; callers hold
        // the staging lock and wait for a slot's transfer before touching it again.
        unsafe { std::slice::from_raw_parts_mut(self.ptrs[i % STAGING_SLOTS], self.words) }
    }
}

/// A parallel copy (a single thread copies far below the DMA's speed). Streaming
/// (non-temporal) stores were tried here and made the 2^27 partition slower on the H200
/// (BENCHMARKS.md, item 66).
fn copy_words(dst: &mut [u32], src: &[u32]) {
    use rayon::prelude::*;
    dst.par_chunks_mut(1 << 16)
        .zip(src.par_chunks(1 << 16))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

impl DeviceCtx {
    pub(crate) fn new(
        info: &'static DeviceInfo,
        cache: KernelCache,
        max_chunk_bytes: Option<u64>,
        pinned_staging: bool,
    ) -> Result<Self, BackendError> {
        let props = core::ContextProperties::new().platform(info.platform_id);
        let context = core::create_context(Some(&props), &[info.device_id], None, None)
            .map_err(|e| driver_error("clCreateContext", &e))?;
        let profiling = std::env::var("SLUICE_PROFILE").is_ok_and(|v| v == "1");
        let new_queue = || {
            core::create_command_queue(
                &context,
                info.device_id,
                profiling.then_some(core::QUEUE_PROFILING_ENABLE),
            )
            .map_err(|e| driver_error("clCreateCommandQueue", &e))
        };
        let (queue, transfers) = (new_queue()?, new_queue()?);
        let cap = info.max_alloc_bytes.max(1 << 20);
        let pinned = match (pinned_staging, PinnedPool::default_limit()) {
            (true, limit) if limit > 0 => Some(Arc::new(
                PinnedPool::new(&context, info.device_id, limit)
                    .map_err(|e| driver_error("clCreateCommandQueue", &e))?,
            )),
            _ => None,
        };
        Ok(DeviceCtx {
            info,
            context,
            queue,
            transfers,
            programs: Mutex::new(HashMap::new()),
            twiddles: Mutex::new(HashMap::new()),
            max_chunk_bytes: max_chunk_bytes.map_or(cap, |m| m.min(cap)),
            cache,
            profile: profiling.then(|| Mutex::new(Vec::new())),
            staging: pinned_staging.then(|| Mutex::new(None)),
            pinned,
        })
    }

    /// Runs `f` with the staging buffers when this device stages and they exist (created on
    /// first use); `None` when transfers are direct.
    fn with_staging<R>(
        &self,
        f: impl FnOnce(&Staging) -> Result<R, BackendError>,
    ) -> Option<Result<R, BackendError>> {
        let mut guard = lock(self.staging.as_ref()?);
        let staging = guard.get_or_insert_with(|| {
            Staging::new(self).map_err(|e| {
                log::warn!(
                    "no pinned staging on {} ({e}); direct transfers",
                    self.info.name
                )
            })
        });
        staging.as_ref().ok().map(f)
    }

    /// Waits for a transfer's event.
    fn wait(event: &Event) -> Result<(), BackendError> {
        core::wait_for_event(event).map_err(|e| driver_error("clWaitForEvents", &e))
    }

    /// A write in staged pieces: piece k is copied into slot k mod `STAGING_SLOTS` once
    /// that slot's previous transfer is done, then sent without blocking.
    fn write_staged(
        &self,
        queue: &core::CommandQueue,
        st: &Staging,
        mem: &core::Mem,
        offset: usize,
        data: &[u32],
    ) -> Result<(), BackendError> {
        let mut pending: [Option<Event>; STAGING_SLOTS] = Default::default();
        for (k, piece) in data.chunks(st.words).enumerate() {
            let slot = k % STAGING_SLOTS;
            if let Some(e) = pending[slot].take() {
                Self::wait(&e)?;
            }
            let buf = &mut st.slot(slot)[..piece.len()];
            copy_words(buf, piece);
            let mut event = Event::null();
            // SAFETY: `buf` is pinned memory that is not touched again until `event` is
            // waited for (next use of the slot, or the end of this function).
            unsafe {
                core::enqueue_write_buffer(
                    queue,
                    mem,
                    false,
                    offset + k * st.words,
                    buf,
                    None::<Event>,
                    Some(&mut event),
                )
            }
            .map_err(|e| alloc_error("buffer write", (piece.len() * 4) as u64, &e))?;
            self.log_transfer(TO_DEVICE, &event);
            pending[slot] = Some(event);
        }
        pending.iter().flatten().try_for_each(Self::wait)
    }

    /// A read in staged pieces: one request per slot in flight; piece k's slot takes piece
    /// k + `STAGING_SLOTS` once piece k is copied out.
    fn read_staged(
        &self,
        st: &Staging,
        mem: &core::Mem,
        offset: usize,
        out: &mut [u32],
    ) -> Result<(), BackendError> {
        let request = |k: usize, len: usize| -> Result<Event, BackendError> {
            let mut event = Event::null();
            // SAFETY: the slot is not read until `event` is waited for.
            unsafe {
                core::enqueue_read_buffer(
                    &self.queue,
                    mem,
                    false,
                    offset + k * st.words,
                    &mut st.slot(k)[..len],
                    None::<Event>,
                    Some(&mut event),
                )
            }
            .map_err(|e| driver_error("clEnqueueReadBuffer", &e))?;
            self.log_transfer(TO_HOST, &event);
            Ok(event)
        };
        let pieces: Vec<&mut [u32]> = out.chunks_mut(st.words).collect();
        let lens: Vec<usize> = pieces.iter().map(|p| p.len()).collect();
        let mut requested = std::collections::VecDeque::with_capacity(STAGING_SLOTS);
        for (k, &len) in lens.iter().enumerate().take(STAGING_SLOTS) {
            requested.push_back(request(k, len)?);
        }
        for (k, piece) in pieces.into_iter().enumerate() {
            if let Some(e) = requested.pop_front() {
                Self::wait(&e)?;
            }
            copy_words(piece, &st.slot(k)[..lens[k]]);
            // The slot is free again: it takes the piece STAGING_SLOTS further on.
            if let Some(&len) = lens.get(k + STAGING_SLOTS) {
                requested.push_back(request(k + STAGING_SLOTS, len)?);
            }
        }
        Ok(())
    }

    /// With `SLUICE_PROFILE=1`, the device time of the kernels launched and the transfers
    /// made since the last report, summed per kernel name or transfer direction (after
    /// waiting for the queue); `None` otherwise.
    pub(crate) fn profile_report(&self) -> Option<ProfileReport> {
        let profile = self.profile.as_ref()?;
        core::finish(&self.queue).ok()?;
        let events = std::mem::take(&mut *lock(profile));
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
        let (idle, long_gaps, long_list) = idle_gaps(spans);
        Some(ProfileReport {
            busy,
            idle,
            long_gaps,
            long_list,
        })
    }

    /// Submits what is queued without waiting for it: a device whose work is only
    /// enqueued starts it now, while the host goes on to other devices.
    pub(crate) fn flush(&self) -> Result<(), BackendError> {
        core::flush(&self.queue).map_err(|e| driver_error("clFlush", &e))
    }

    /// The program of `kind`, built on first use. Its slot's lock is held while building,
    /// so concurrent first users of one kind wait for one build, while other kinds build
    /// beside it.
    pub(crate) fn program(&self, kind: ProgramKind) -> Result<Arc<core::Program>, BackendError> {
        let slot = lock(&self.programs).entry(kind).or_default().clone();
        let mut built = lock(&slot);
        if let Some(p) = built.as_ref() {
            return Ok(p.clone());
        }
        let p = Arc::new(program::build(&self.context, self.info, kind, &self.cache)?);
        *built = Some(p.clone());
        Ok(p)
    }

    /// Starts a launch of `name` from the program of `kind`.
    pub(crate) fn kernel(&self, kind: ProgramKind, name: &str) -> Result<Launch<'_>, BackendError> {
        let program = self.program(kind)?;
        let kernel =
            core::create_kernel(&program, name).map_err(|e| driver_error("clCreateKernel", &e))?;
        Ok(Launch {
            ctx: self,
            kernel,
            next: 0,
            profile: self.profile.as_ref().map(|p| (p, name.to_owned())),
            capture: capture::wanted(name).then(|| Capturing {
                name: name.to_owned(),
                program,
                args: Vec::new(),
            }),
        })
    }

    pub(crate) fn finish(&self) -> Result<(), BackendError> {
        core::finish(&self.queue).map_err(|e| driver_error("clFinish", &e))
    }

    /// One raw buffer of `words` 32-bit words, not tracked (the caller holds the tracking).
    pub(crate) fn raw_buffer(&self, what: &str, words: usize) -> Result<core::Mem, BackendError> {
        // SAFETY: no host pointer is passed; the buffer is written before it is read.
        unsafe {
            core::create_buffer(
                &self.context,
                MemFlags::new().read_write(),
                words.max(1),
                None::<&[u32]>,
            )
        }
        .map_err(|e| alloc_error(what, (words * 4) as u64, &e))
    }

    /// A tracked single cl buffer of `words` words for a temporary that fits one
    /// allocation whatever the chunk cap (MSM scalars, buckets, results).
    pub(crate) fn temp(
        &self,
        tracker: &MemoryTracker,
        what: &str,
        words: usize,
    ) -> Result<(core::Mem, Allocation), BackendError> {
        let tracked = tracker.allocate(MemoryKind::Device, what, (words * 4) as u64)?;
        Ok((self.raw_buffer(what, words)?, tracked))
    }

    /// Writes `data` into `mem` at word `offset` (blocking), behind everything queued.
    pub(crate) fn write(
        &self,
        mem: &core::Mem,
        offset: usize,
        data: &[u32],
    ) -> Result<(), BackendError> {
        self.write_on(&self.queue, mem, offset, data)
    }

    /// [`write`](Self::write) into a buffer that no queued command uses (one just made by
    /// [`raw_buffer`](Self::raw_buffer) and not yet written or filled), on the transfer
    /// queue: it goes up while the kernels already queued run, where a write behind them
    /// would wait for them. Blocking, so commands queued after it see the data.
    pub(crate) fn write_fresh(
        &self,
        mem: &core::Mem,
        offset: usize,
        data: &[u32],
    ) -> Result<(), BackendError> {
        // The queued kernels are what the upload overlaps: submit them first.
        self.flush()?;
        self.write_on(&self.transfers, mem, offset, data)
    }

    /// A blocking write on `queue`: straight from `data` where it is lent page-locked
    /// memory ([`PinnedPool`]), else through the pinned staging pieces when large.
    fn write_on(
        &self,
        queue: &core::CommandQueue,
        mem: &core::Mem,
        offset: usize,
        data: &[u32],
    ) -> Result<(), BackendError> {
        if data.is_empty() {
            return Ok(());
        }
        let lent = self.pinned.as_ref().is_some_and(|p| p.holds(data));
        if data.len() >= STAGED_MIN_WORDS && !lent {
            if let Some(r) = self.with_staging(|st| self.write_staged(queue, st, mem, offset, data))
            {
                return r;
            }
        }
        let mut event = self.profile.is_some().then(Event::null);
        // SAFETY: a blocking write: `data` outlives the transfer.
        unsafe {
            core::enqueue_write_buffer(
                queue,
                mem,
                true,
                offset,
                data,
                None::<Event>,
                event.as_mut(),
            )
        }
        .map_err(|e| alloc_error("buffer write", (data.len() * 4) as u64, &e))?;
        self.log_optional(TO_DEVICE, event);
        Ok(())
    }

    /// Reads `out.len()` words of `mem` from word `offset` (blocking).
    pub(crate) fn read(
        &self,
        mem: &core::Mem,
        offset: usize,
        out: &mut [u32],
    ) -> Result<(), BackendError> {
        if out.is_empty() {
            return Ok(());
        }
        if out.len() >= STAGED_MIN_WORDS {
            if let Some(r) = self.with_staging(|st| self.read_staged(st, mem, offset, out)) {
                return r;
            }
        }
        let mut event = self.profile.is_some().then(Event::null);
        // SAFETY: a blocking read into a live slice of the right length.
        unsafe {
            core::enqueue_read_buffer(
                &self.queue,
                mem,
                true,
                offset,
                out,
                None::<Event>,
                event.as_mut(),
            )
        }
        .map_err(|e| driver_error("clEnqueueReadBuffer", &e))?;
        self.log_optional(TO_HOST, event);
        Ok(())
    }

    /// Enqueues a copy of the first `words` words of `src` into `dst`, on the device.
    pub(crate) fn copy(
        &self,
        src: &core::Mem,
        dst: &core::Mem,
        words: usize,
    ) -> Result<(), BackendError> {
        self.copy_at((src, 0), (dst, 0), words)
    }

    /// Enqueues a copy of `words` words from word `src.1` of `src.0` to word `dst.1` of
    /// `dst.0`, on the device.
    pub(crate) fn copy_at(
        &self,
        (src, src_at): (&core::Mem, usize),
        (dst, dst_at): (&core::Mem, usize),
        words: usize,
    ) -> Result<(), BackendError> {
        if words == 0 {
            return Ok(());
        }
        let mut event = self.profile.is_some().then(Event::null);
        core::enqueue_copy_buffer::<u32, _, _, _>(
            &self.queue,
            src,
            dst,
            src_at,
            dst_at,
            words,
            None::<Event>,
            event.as_mut(),
        )
        .map_err(|e| driver_error("clEnqueueCopyBuffer", &e))?;
        self.log_optional(ON_DEVICE, event);
        Ok(())
    }

    /// Zero-fills `words` words of `mem`.
    pub(crate) fn fill_zero(&self, mem: &core::Mem, words: usize) -> Result<(), BackendError> {
        self.fill_zero_at(mem, 0, words)
    }

    /// Zeroes `words` words of `mem` from word `offset` (queued).
    pub(crate) fn fill_zero_at(
        &self,
        mem: &core::Mem,
        offset: usize,
        words: usize,
    ) -> Result<(), BackendError> {
        if words == 0 {
            return Ok(());
        }
        let mut event = self.profile.is_some().then(Event::null);
        core::enqueue_fill_buffer(
            &self.queue,
            mem,
            0u32,
            offset,
            words,
            None::<Event>,
            event.as_mut(),
            None,
        )
        .map_err(|e| alloc_error("buffer fill", (words * 4) as u64, &e))?;
        self.log_optional(ON_DEVICE, event);
        Ok(())
    }

    /// With `SLUICE_PROFILE=1`, records a transfer's event for the profile report.
    fn log_transfer(&self, name: &str, event: &Event) {
        if let Some(profile) = &self.profile {
            lock(profile).push((name.to_owned(), event.clone(), 0, 0));
        }
    }

    /// [`log_transfer`](Self::log_transfer) for an event made only when profiling.
    fn log_optional(&self, name: &str, event: Option<Event>) {
        if let Some(event) = event {
            self.log_transfer(name, &event);
        }
    }
}

/// Maps an allocation-time error: out-of-memory codes become [`BackendError::OutOfMemory`].
pub(crate) fn alloc_error(what: &str, bytes: u64, e: &core::Error) -> BackendError {
    // CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY,
    // CL_INVALID_BUFFER_SIZE.
    match e.api_status().map(|s| s as i32) {
        Some(-4 | -5 | -6 | -61) => BackendError::OutOfMemory {
            kind: MemoryKind::Device,
            what: what.to_owned(),
            requested: bytes,
            available: 0,
        },
        _ => driver_error(what, e),
    }
}

/// A kernel launch being assembled: arguments in order, then [`Launch::run`].
pub(crate) struct Launch<'a> {
    ctx: &'a DeviceCtx,
    kernel: core::Kernel,
    next: u32,
    profile: Option<(&'a ProfileLog, String)>,
    capture: Option<Capturing>,
}

/// A launch being recorded for `SLUICE_CAPTURE_DIR` (see [`capture`]).
struct Capturing {
    name: String,
    program: Arc<core::Program>,
    args: Vec<capture::Arg>,
}

impl Launch<'_> {
    fn arg(
        mut self,
        v: ArgVal<'_>,
        record: impl FnOnce() -> capture::Arg,
    ) -> Result<Self, BackendError> {
        core::set_kernel_arg(&self.kernel, self.next, v)
            .map_err(|e| driver_error("clSetKernelArg", &e))?;
        self.next += 1;
        if let Some(c) = &mut self.capture {
            c.args.push(record());
        }
        Ok(self)
    }

    pub(crate) fn mem(self, m: &core::Mem) -> Result<Self, BackendError> {
        self.arg(ArgVal::mem(m), || capture::Arg::Mem(m.clone()))
    }

    pub(crate) fn u32(self, v: u32) -> Result<Self, BackendError> {
        self.arg(ArgVal::scalar(&v), || capture::Arg::U32(v))
    }

    pub(crate) fn u64(self, v: u64) -> Result<Self, BackendError> {
        self.arg(ArgVal::scalar(&v), || capture::Arg::U64(v))
    }

    /// A `__local` argument of `words` 32-bit words.
    pub(crate) fn local_words(self, words: usize) -> Result<Self, BackendError> {
        self.arg(ArgVal::local::<u32>(&words), || {
            capture::Arg::Local(words * 4)
        })
    }

    /// The most work items a group of this kernel may have on its device (0 if unknown).
    pub(crate) fn work_group_limit(&self) -> usize {
        match core::get_kernel_work_group_info(
            &self.kernel,
            self.ctx.info.device_id,
            core::KernelWorkGroupInfo::WorkGroupSize,
        ) {
            Ok(core::KernelWorkGroupInfoResult::WorkGroupSize(v)) => v,
            _ => 0,
        }
    }

    /// [`Launch::run`] for a kernel that checks its own bounds and whose result does not
    /// depend on its group size: a `local` above the kernel's limit on this device is
    /// lowered to the limit rather than failing the launch.
    pub(crate) fn run_any_group(
        self,
        global: usize,
        local: Option<usize>,
    ) -> Result<(), BackendError> {
        let limit = self.work_group_limit();
        let local = local.map(|l| if limit > 0 { l.min(limit) } else { l });
        self.run(global, local)
    }

    /// Enqueues over `global` work items (rounded up to a multiple of `local`).
    pub(crate) fn run(self, global: usize, local: Option<usize>) -> Result<(), BackendError> {
        if global == 0 {
            return Ok(());
        }
        let global = local.map_or(global, |l| global.div_ceil(l) * l);
        // A launch only built to query the kernel (say its group limit) never claims a slot.
        let capture = self
            .capture
            .as_ref()
            .and_then(|c| Some((c, capture::slot(&c.name)?)));
        if let Some((c, dir)) = &capture {
            if let Err(e) = capture::write_buffers(dir, self.ctx, &c.args, "") {
                log::warn!("capture of {} into {}: {e}", c.name, dir.display());
            }
        }
        let mut event = self.profile.is_some().then(Event::null);
        // SAFETY: every argument is set; the buffers outlive the queue's use of them because
        // every operation that reads results synchronises (blocking read or finish) before
        // its buffers can be dropped.
        unsafe {
            core::enqueue_kernel(
                &self.ctx.queue,
                &self.kernel,
                1,
                None,
                &[global, 1, 1],
                local.map(|l| [l, 1, 1]),
                None::<Event>,
                event.as_mut(),
            )
        }
        .map_err(|e| driver_error("clEnqueueNDRangeKernel", &e))?;
        if let Some(event) = event {
            let wg = self.work_group_limit();
            let private = match core::get_kernel_work_group_info(
                &self.kernel,
                self.ctx.info.device_id,
                core::KernelWorkGroupInfo::PrivateMemSize,
            ) {
                Ok(core::KernelWorkGroupInfoResult::PrivateMemSize(v)) => v,
                _ => 0,
            };
            if let Some((events, name)) = self.profile {
                lock(events).push((name, event, wg, private));
            }
        }
        if let Some((c, dir)) = &capture {
            let written = capture::write_buffers(dir, self.ctx, &c.args, ".after")
                .and_then(|()| program::program_binary(&c.program).map_err(|e| e.to_string()))
                .and_then(|bin| capture::write_launch(dir, &c.name, &bin, &c.args, global, local));
            match written {
                Ok(()) => log::info!("captured a launch of {} into {}", c.name, dir.display()),
                Err(e) => log::warn!("capture of {} into {}: {e}", c.name, dir.display()),
            }
        }
        Ok(())
    }
}

/// Elements of a fixed number of 32-bit words in one or more cl buffers ("chunks"): a
/// buffer larger than the device's largest single allocation is split. Every chunk holds
/// `chunk_len` elements (a power of two) except the last.
pub(crate) struct Chunked {
    pub(crate) device: usize,
    pub(crate) chunks: Vec<core::Mem>,
    pub(crate) chunk_len: usize,
    pub(crate) len: usize,
    pub(crate) words: usize,
    _tracked: Allocation,
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
        let tracked = tracker.allocate(MemoryKind::Device, name, bytes)?;
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
            _tracked: tracked,
        })
    }

    /// Elements in chunk `i`.
    pub(crate) fn chunk_elems(&self, i: usize) -> usize {
        self.chunk_len.min(self.len - i * self.chunk_len)
    }

    /// Writes `data` (whole elements) at element `offset`, across chunks as needed.
    pub(crate) fn write(
        &self,
        ctx: &DeviceCtx,
        offset: usize,
        data: &[u32],
    ) -> Result<(), BackendError> {
        self.each_range(offset, data.len() / self.words, |chunk, at, from, n| {
            ctx.write(
                &self.chunks[chunk],
                at * self.words,
                &data[from * self.words..(from + n) * self.words],
            )
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

#[cfg(test)]
mod tests {
    use super::idle_gaps;

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
        let (idle, long_gaps, long_list) = idle_gaps(spans);
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
    }
}
