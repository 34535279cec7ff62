//! One device's context, queues and programs, its transfers (staged through pinned memory
//! where that pays), and kernel launches, which an observer may record.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ocl::core::{self, ArgVal, Event, MemFlags};
use sluice_backend::{Allocation, BackendError, MemoryKind, MemoryTracker};

use crate::device::DeviceInfo;
use crate::pinned::{mapped_host_buffer, PinnedPool};
use crate::profile::{ProfileLog, ProfileReport, ON_DEVICE, TO_DEVICE, TO_HOST};
use crate::program::{self, KernelCache};
use crate::release::{DeviceTemp, Releases};
use crate::source::ProgramKind;
use crate::tuning::BuildOptions;
use crate::util::{copy_words, driver_error, lock};

/// A program kind's build, once done.
type ProgramSlot = Arc<Mutex<Option<Arc<core::Program>>>>;

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
    /// Watches chosen launches (the capture for replay under a profiler), if any.
    observer: Option<Arc<dyn LaunchObserver>>,
    /// Extra build options of the programs, and whether their build logs are printed.
    pub(crate) build_options: BuildOptions,
    /// 32-bit words per staging piece.
    staging_words: usize,
    /// Buffers dropped while the queue may run, freed at its next drain.
    pub(crate) releases: Arc<Releases>,
}

/// Transfers at least this large go through the pinned staging buffers.
const STAGED_MIN_WORDS: usize = 1 << 20;
/// Pinned staging buffers: up to this many pieces in flight while the host copies the next.
/// Two: more pin more host memory and were never measured faster.
const STAGING_SLOTS: usize = 2;

/// How a backend sets up each of its devices' contexts.
pub(crate) struct ContextSettings {
    /// Where program binaries are cached.
    pub(crate) cache: KernelCache,
    /// Extra build options and the build log.
    pub(crate) build_options: BuildOptions,
    /// A cap on one cl buffer below the device's largest allocation.
    pub(crate) max_chunk_bytes: Option<u64>,
    /// Staging on (`Some`) or off (`None`: on GPUs only).
    pub(crate) pinned_staging: Option<bool>,
    /// Staging pieces, in 32-bit words ([`StagingTuning`](crate::StagingTuning)).
    pub(crate) staging_words: usize,
    /// The most page-locked host memory lent ([`PinnedPool::limit`]).
    pub(crate) pinned_host_bytes: Option<u64>,
    /// Whether the queues record device times.
    pub(crate) profile: bool,
    /// The shortest gap a profile lists one by one, in ms (`None`: the report's default).
    pub(crate) profile_gaps_listed_ms: Option<u32>,
    /// Watches chosen launches, if any.
    pub(crate) observer: Option<Arc<dyn LaunchObserver>>,
    /// Whether each dropped buffer is released at once, not at the queue's next drain.
    pub(crate) immediate_releases: bool,
    /// Whether MSM scratch is freed at each MSM's end rather than kept for the next.
    pub(crate) free_msm_scratch: bool,
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
        let words = ctx.staging_words;
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

impl DeviceCtx {
    pub(crate) fn new(
        info: &'static DeviceInfo,
        settings: &ContextSettings,
    ) -> Result<Self, BackendError> {
        let props = core::ContextProperties::new().platform(info.platform_id);
        let context = core::create_context(Some(&props), &[info.device_id], None, None)
            .map_err(|e| driver_error("clCreateContext", &e))?;
        let profiling = settings.profile;
        let pinned_staging = settings.pinned_staging.unwrap_or(info.is_gpu);
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
        let pinned = match (
            pinned_staging,
            PinnedPool::limit(settings.pinned_host_bytes),
        ) {
            (true, limit) if limit > 0 => Some(Arc::new(
                PinnedPool::new(&context, info.device_id, limit)
                    .map_err(|e| driver_error("clCreateCommandQueue", &e))?,
            )),
            _ => None,
        };
        let (defer, keep) = (!settings.immediate_releases, !settings.free_msm_scratch);
        let releases = Releases::new(defer, keep, queue.clone());
        Ok(DeviceCtx {
            info,
            context,
            queue,
            releases,
            transfers,
            programs: Mutex::new(HashMap::new()),
            max_chunk_bytes: settings.max_chunk_bytes.map_or(cap, |m| m.min(cap)),
            cache: settings.cache.clone(),
            build_options: settings.build_options.clone(),
            profile: profiling.then(|| ProfileLog::new(settings.profile_gaps_listed_ms)),
            observer: settings.observer.clone(),
            staging_words: settings.staging_words,
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
        Some(profile.report())
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
        let p = Arc::new(program::build(
            &self.context,
            self.info,
            kind,
            &self.cache,
            &self.build_options,
        )?);
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
            watched: self
                .observer
                .as_ref()
                .filter(|o| o.watches(name))
                .map(|_| Watched {
                    name: name.to_owned(),
                    program,
                    args: Vec::new(),
                }),
        })
    }

    /// Waits for the queue, then frees the buffers dropped meanwhile and the spare scratch.
    pub(crate) fn finish(&self) -> Result<(), BackendError> {
        self.wait_and_drain()?;
        self.releases.drain_all();
        Ok(())
    }

    /// Waits for the queue, then frees what was dropped meanwhile, keeping scratch spare.
    pub(crate) fn wait_and_drain(&self) -> Result<(), BackendError> {
        core::finish(&self.queue).map_err(|e| driver_error("clFinish", &e))?;
        self.releases.drain();
        Ok(())
    }

    /// One raw buffer of `words` 32-bit words, not tracked (the caller holds the tracking).
    pub(crate) fn raw_buffer(&self, what: &str, words: usize) -> Result<core::Mem, BackendError> {
        self.releases.create(|| {
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
        })
    }

    /// `bytes` of this device's memory counted in `tracker` as `what`; buffers awaiting
    /// release are freed first where the tracker refuses or the device would be full.
    pub(crate) fn track(
        &self,
        tracker: &MemoryTracker,
        what: &str,
        bytes: u64,
    ) -> Result<Allocation, BackendError> {
        self.releases
            .allocate(tracker, self.info.global_mem_bytes, what, bytes)
    }

    /// A tracked single cl buffer of `words` words for a temporary that fits one
    /// allocation whatever the chunk cap (MSM scalars, buckets, results).
    pub(crate) fn temp(
        &self,
        tracker: &MemoryTracker,
        what: &str,
        words: usize,
    ) -> Result<DeviceTemp, BackendError> {
        let tracked = self.track(tracker, what, (words * 4) as u64)?;
        let mem = self.raw_buffer(what, words)?;
        Ok(DeviceTemp::new(mem, Some(tracked), self.releases.clone()))
    }

    /// [`temp`](Self::temp) for an MSM's scratch: a spare buffer that fits is handed out
    /// again (its contents undefined), and the buffer becomes spare once dropped and
    /// drained ([`crate::release`]). Every caller counts in the backend's one tracker.
    pub(crate) fn scratch(
        &self,
        tracker: &MemoryTracker,
        what: &str,
        words: usize,
    ) -> Result<DeviceTemp, BackendError> {
        let bytes = (words.max(1) * 4) as u64;
        match DeviceTemp::spare(&self.releases, bytes) {
            Some(spare) => Ok(spare),
            None => Ok(self.temp(tracker, what, words)?.into_scratch(bytes)),
        }
    }

    /// `mem`, not tracked, as a temporary released like the tracked ones.
    pub(crate) fn untracked_temp(&self, mem: core::Mem) -> DeviceTemp {
        DeviceTemp::new(mem, None, self.releases.clone())
    }

    /// Writes `data` into `mem` at word `offset` (blocking), behind everything queued.
    pub(crate) fn write(
        &self,
        mem: &core::Mem,
        offset: usize,
        data: &[u32],
    ) -> Result<(), BackendError> {
        self.write_on(&self.queue, mem, offset, data)?;
        // Blocking, behind everything queued: the queue has drained.
        self.releases.drain();
        Ok(())
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
                return r.map(|()| self.releases.drain());
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
        // Blocking, behind everything queued: the queue has drained.
        self.releases.drain();
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

    /// With `SLUICE_PROFILE=1`, a marker named `what` on the queue, flushed: on an idle
    /// queue it runs at once, so the profile's gap list shows where in a gap the host
    /// reached this point (`(mark: what)`); a no-op otherwise.
    pub(crate) fn mark(&self, what: &str) {
        let Some(profile) = &self.profile else { return };
        let mut event = Event::null();
        let queued =
            core::enqueue_marker_with_wait_list(&self.queue, None::<Event>, Some(&mut event), None)
                .and_then(|()| core::flush(&self.queue));
        match queued {
            Ok(()) => profile.record(format!("(mark: {what})"), event, 0, 0),
            Err(e) => log::debug!("no profile mark {what}: {e}"),
        }
    }

    /// With `SLUICE_PROFILE=1`, records a transfer's event for the profile report.
    fn log_transfer(&self, name: &str, event: &Event) {
        if let Some(profile) = &self.profile {
            profile.record(name.to_owned(), event.clone(), 0, 0);
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

/// One argument of a kernel launch, as a [`LaunchObserver`] sees it.
pub(crate) enum LaunchArg {
    /// A buffer (a handle: the contents are read at launch time).
    Mem(core::Mem),
    U32(u32),
    U64(u64),
    /// A `__local` argument of this many bytes.
    Local(usize),
}

/// A watched launch: its kernel, program, arguments and sizes.
pub(crate) struct ObservedLaunch<'a> {
    pub(crate) kernel: &'a str,
    pub(crate) program: &'a core::Program,
    pub(crate) args: &'a [LaunchArg],
    pub(crate) global: usize,
    pub(crate) local: Option<usize>,
}

/// What an observer does once a launch it took is queued.
pub(crate) type AfterLaunch = Box<dyn FnOnce(&DeviceCtx, &ObservedLaunch<'_>)>;

/// Watches chosen kernel launches (the capture for replay under a profiler): a context
/// keeps the arguments of the launches it watches and calls it around each.
pub(crate) trait LaunchObserver: Send + Sync {
    /// Whether launches of `kernel` are watched.
    fn watches(&self, kernel: &str) -> bool;
    /// Called before a watched launch is queued; what it returns is called after.
    fn before(&self, ctx: &DeviceCtx, launch: &ObservedLaunch<'_>) -> Option<AfterLaunch>;
}

/// A kernel launch being assembled: arguments in order, then [`Launch::run`].
pub(crate) struct Launch<'a> {
    ctx: &'a DeviceCtx,
    kernel: core::Kernel,
    next: u32,
    profile: Option<(&'a ProfileLog, String)>,
    watched: Option<Watched>,
}

/// What a watched launch keeps for its observer.
struct Watched {
    name: String,
    program: Arc<core::Program>,
    args: Vec<LaunchArg>,
}

impl Launch<'_> {
    fn arg(
        mut self,
        v: ArgVal<'_>,
        record: impl FnOnce() -> LaunchArg,
    ) -> Result<Self, BackendError> {
        core::set_kernel_arg(&self.kernel, self.next, v)
            .map_err(|e| driver_error("clSetKernelArg", &e))?;
        self.next += 1;
        if let Some(w) = &mut self.watched {
            w.args.push(record());
        }
        Ok(self)
    }

    pub(crate) fn mem(self, m: &core::Mem) -> Result<Self, BackendError> {
        self.arg(ArgVal::mem(m), || LaunchArg::Mem(m.clone()))
    }

    pub(crate) fn u32(self, v: u32) -> Result<Self, BackendError> {
        self.arg(ArgVal::scalar(&v), || LaunchArg::U32(v))
    }

    pub(crate) fn u64(self, v: u64) -> Result<Self, BackendError> {
        self.arg(ArgVal::scalar(&v), || LaunchArg::U64(v))
    }

    /// A `__local` argument of `words` 32-bit words.
    pub(crate) fn local_words(self, words: usize) -> Result<Self, BackendError> {
        self.arg(ArgVal::local::<u32>(&words), || LaunchArg::Local(words * 4))
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
        let watched = self.watched.as_ref().map(|w| ObservedLaunch {
            kernel: &w.name,
            program: &w.program,
            args: &w.args,
            global,
            local,
        });
        // A launch only built to query the kernel (say its group limit) is never observed.
        let after = match (&watched, &self.ctx.observer) {
            (Some(launch), Some(observer)) => observer.before(self.ctx, launch),
            _ => None,
        };
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
            if let Some((log, name)) = self.profile {
                log.record(name, event, wg, private);
            }
        }
        if let (Some(after), Some(launch)) = (after, &watched) {
            after(self.ctx, launch);
        }
        Ok(())
    }
}
