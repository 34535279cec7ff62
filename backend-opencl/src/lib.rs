//! `ComputeBackend` on OpenCL devices: BLS12-381 field, NTT and MSM kernels.
//!
//! - Devices are discovered once per process ([`devices`]); a backend uses one, several or
//!   all of them ([`DeviceSelector`]), each with its own context and queue.
//! - Kernels are `.cl` files under `kernels/`, assembled per job (an Fr program, a G1 MSM
//!   program, a G2 MSM program) with a header generated from `sluice-field`'s constants.
//!   Fields use 32-bit limbs in Montgomery form, the host's bytes exactly; on NVIDIA the
//!   carry chains are inline PTX (`-DSLUICE_NVIDIA`), elsewhere portable C.
//! - Built program binaries are cached on disk ([`KernelCache`]) and in the process; every
//!   build's duration is recorded ([`OpenClBackend::program_build_times`]). NVIDIA's
//!   OpenCL gives PTX as a program's binary, so a load from the disk cache still compiles
//!   PTX to machine code; the driver's own cache (`~/.nv/ComputeCache`, on unless
//!   `CUDA_CACHE_DISABLE=1`) makes that milliseconds. Without it an H200 took 9.5 s for
//!   the three programs, against 17-20 s for a cold build (BENCHMARKS.md, item 71).
//! - Buffers larger than the device's largest allocation are split into chunks.
//!
//! # Placement
//! Fr buffers live on the backend's first device (NTTs and pointwise operations run there);
//! MSM bases are split evenly across all its devices, and an MSM runs on all of them at
//! once, scalars being copied to the devices that need them. Partial sums are added on the
//! host.
//!
//! # Environment overrides (experiments)
//! `SLUICE_OPENCL_OPTIONS`: extra program build options. `SLUICE_MSM_WINDOW`,
//! `SLUICE_MSM_CHUNK`, `SLUICE_MSM_SLICE`, `SLUICE_MSM_GROUP`, `SLUICE_MSM_PER_ITEM`: the
//! MSM's window bits, entries per accumulate segment, pieces per reduce work item, the point
//! kernels' work-group size (0: the driver's choice) and the scalars per work item of the
//! count and the scatter, instead of the defaults (see `kernels/msm.cl`).
//! `SLUICE_STAGING_KIB`: the size of each pinned staging piece (default 16384).
//! `SLUICE_CAPTURE_DIR` / `SLUICE_CAPTURE_KERNEL` / `SLUICE_CAPTURE_COUNT`: record chosen
//! launches for replay under NVIDIA's profiler (see `capture.rs`).
//! `SLUICE_PROFILE=1`: queues record every kernel's and every transfer's device time;
//! [`OpenClBackend::profile_report`] sums it per kernel and per transfer direction, with
//! the device's idle time between commands charged to the command after it, and a
//! backend prints what is left unreported to stderr when it is dropped.
//!
//! # Unsupported
//! An NTT over a buffer split into several chunks (more than the device's largest single
//! allocation: 2^25 elements on PoCL's 1 GiB cap; 2^30 on an H200), and segmented transforms
//! whose segments are longer than such a buffer's chunks, return
//! [`BackendError::Unsupported`].

mod capture;
// Wired into `ComputeBackend::write_compact` once the slimmer trait lands.
#[allow(dead_code)]
mod compact;
mod context;
mod device;
mod msm;
mod ntt;
mod pinned;
mod program;
mod ptx;
mod repr;
mod source;

use std::sync::{Mutex, MutexGuard};

use ff::Field;
use sluice_backend::{
    check_len, check_range, check_segment, BackendError, BackendInfo, Buffer, ComputeBackend,
    CurveAffine, Density, MemoryInfo, MemoryTracker, NttOrder, Scalars, Transform,
};
use sluice_field::Fr;

use crate::context::{Chunked, DeviceCtx};
use crate::repr::{as_words, as_words_mut};

pub use crate::device::{devices, DeviceInfo, DeviceSelector};
pub use crate::msm::{OpenClBases, OpenClG1Bases, OpenClG2Bases};
pub use crate::program::{BuildSource, KernelCache, ProgramBuildTime};
pub use crate::source::ProgramKind;

/// How to set up an [`OpenClBackend`].
#[derive(Clone, Debug)]
pub struct OpenClConfig {
    /// The devices to use.
    pub devices: DeviceSelector,
    /// Where program binaries are cached.
    pub kernel_cache: KernelCache,
    /// Caps the size of one cl buffer below the device's largest allocation (tests use it
    /// to exercise split buffers at small sizes).
    pub max_chunk_bytes: Option<u64>,
    /// The tracker to count allocations in (a fresh, unlimited one if `None`).
    pub tracker: Option<MemoryTracker>,
    /// Large transfers through pinned staging buffers: `None` (the default) on GPUs only,
    /// where pageable transfers measured 4-5 GB/s on the H200; a CPU driver gains nothing
    /// from the extra copy. Tests force it on to cover the path on PoCL. Where it is on,
    /// the backend also lends page-locked host vectors
    /// ([`host_allocator`](sluice_backend::ComputeBackend::host_allocator)), which uploads
    /// send with no staging copy: up to a quarter of the host's memory, or
    /// `SLUICE_PINNED_HOST_MIB` (0 lends none).
    pub pinned_staging: Option<bool>,
    /// Precompute shifted bases at upload: for every window k of the MSM's signed digits,
    /// 2^(c k) P for each base P, so an MSM sorts all its windows into one bucket set (a
    /// larger c, fewer windows, one bucket reduction). It costs about ceil(256 / c) times
    /// the bases' device memory (12-16 times at 2^20-2^26 bases) and a one-time
    /// computation at upload; an MSM still takes the plain windows where they cost less
    /// (few or small scalars). Off by default: the prover's memory planning counts bases
    /// at their plain size.
    pub shifted_bases: bool,
}

impl Default for OpenClConfig {
    fn default() -> Self {
        OpenClConfig {
            devices: DeviceSelector::Index(0),
            kernel_cache: KernelCache::Default,
            max_chunk_bytes: None,
            tracker: None,
            pinned_staging: None,
            shifted_bases: false,
        }
    }
}

/// A [`ComputeBackend`] on one or more OpenCL devices.
pub struct OpenClBackend {
    info: BackendInfo,
    devices: Vec<DeviceCtx>,
    tracker: MemoryTracker,
    /// [`OpenClConfig::shifted_bases`].
    shifted_bases: bool,
}

/// A buffer of Fr scalars on the backend's first device.
pub struct OpenClFrBuffer {
    data: Chunked,
}

impl Buffer for OpenClFrBuffer {
    fn len(&self) -> usize {
        self.data.len
    }
}

impl OpenClBackend {
    /// A backend as `config` describes.
    pub fn new(config: OpenClConfig) -> Result<Self, BackendError> {
        let devices = config
            .devices
            .select()?
            .into_iter()
            .map(|info| {
                let staged = config.pinned_staging.unwrap_or(info.is_gpu);
                DeviceCtx::new(
                    info,
                    config.kernel_cache.clone(),
                    config.max_chunk_bytes,
                    staged,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let names: Vec<&str> = devices.iter().map(|d| d.info.name.as_str()).collect();
        let info = BackendInfo {
            name: format!("opencl ({})", names.join(" + ")),
            // A CPU driver such as PoCL is no accelerator.
            accelerator: devices.iter().all(|d| d.info.is_gpu),
            // Kernels and device copies are queued in order; uploads, downloads and MSM
            // results wait for what they need.
            queues_work: true,
            host_memory_shared: devices.iter().all(|d| d.info.host_unified_memory),
        };
        Ok(OpenClBackend {
            info,
            devices,
            tracker: config.tracker.unwrap_or_default(),
            shifted_bases: config.shifted_bases,
        })
    }

    /// A backend on the first device.
    pub fn first() -> Result<Self, BackendError> {
        Self::new(OpenClConfig::default())
    }

    /// A backend on every device (MSMs spread across all of them).
    pub fn all() -> Result<Self, BackendError> {
        Self::new(OpenClConfig {
            devices: DeviceSelector::All,
            ..OpenClConfig::default()
        })
    }

    /// The devices this backend computes on, in order (the first holds the Fr buffers).
    pub fn device_infos(&self) -> Vec<&'static DeviceInfo> {
        self.devices.iter().map(|d| d.info).collect()
    }

    /// Builds (or loads from the cache) every program on every device now, so that later
    /// operations do not pay for it and the build time can be measured on its own. The
    /// builds run at once, one thread each, where a driver compiles them in parallel: one
    /// after another the three programs took 23-26 s cold on the H200 host, and PoCL,
    /// which serializes them, took the same either way (BENCHMARKS.md, item 69). The
    /// first error is returned.
    pub fn build_programs(&self) -> Result<(), BackendError> {
        std::thread::scope(|scope| {
            let builds: Vec<_> = self
                .devices
                .iter()
                .flat_map(|d| {
                    ProgramKind::ALL.map(|kind| scope.spawn(move || d.program(kind).map(drop)))
                })
                .collect();
            builds
                .into_iter()
                .try_for_each(|b| b.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        })
    }

    /// Every program build of this process (all backends), with its duration and whether
    /// it was compiled or loaded from a cache.
    pub fn program_build_times() -> Vec<ProgramBuildTime> {
        program::program_build_times()
    }

    /// With `SLUICE_PROFILE=1`: per device, the device time of each kernel launched since
    /// the last report (launches, total milliseconds) and of the transfers each way, then
    /// the time the device idled before each kind of command (gaps under 10 ms: the host
    /// copying, waiting or enqueueing; longer gaps, mostly the caller's own work between
    /// operations, in rows of their own, then one by one with the time each began), as a
    /// table, after waiting for the queues; `None` when profiling is off.
    pub fn profile_report(&self) -> Option<String> {
        let line = |r: &context::KernelProfile, prefix: &str| {
            let mut l = format!(
                "  {:<36} {:>7} launches {:>12.3} ms",
                format!("{prefix}{}", r.name),
                r.launches,
                r.ms
            );
            // Transfers and idle rows have no kernel resources.
            if r.work_group_limit > 0 {
                l += &format!(
                    "   wg<={} private {} B",
                    r.work_group_limit, r.private_bytes
                );
            }
            l + "\n"
        };
        let sorted = |mut rows: Vec<context::KernelProfile>| {
            rows.sort_by(|a, b| b.ms.total_cmp(&a.ms));
            // From +0.0: an empty sum of f64 is -0.0, printed as "-0.000".
            let total = rows.iter().fold(0.0, |t, r| t + r.ms);
            (rows, total)
        };
        let mut out = String::new();
        for (d, ctx) in self.devices.iter().enumerate() {
            let report = ctx.profile_report()?;
            let (busy, total) = sorted(report.busy);
            out += &format!("profile device {d} ({}): {total:.3} ms\n", ctx.info.name);
            busy.iter().for_each(|r| out += &line(r, ""));
            let (idle, total) = sorted(report.idle);
            let (long, long_total) = sorted(report.long_gaps);
            let long_count: usize = long.iter().map(|r| r.launches).sum();
            out += &format!(
                "  device idle between commands: {total:.3} ms in gaps under {max} ms, \
                 {long_total:.3} ms in {long_count} of {max} ms or more\n",
                max = context::IDLE_GAP_MAX_MS
            );
            idle.iter().for_each(|r| out += &line(r, "idle before "));
            long.iter()
                .for_each(|r| out += &line(r, "long idle before "));
            // One by one, the first LONG_GAPS_LISTED in time order.
            for g in report.long_list.iter().take(LONG_GAPS_LISTED) {
                out += &format!(
                    "  long gap at {:>10.1} ms: {:>9.3} ms before {}\n",
                    g.at_ms, g.ms, g.row
                );
            }
            if report.long_list.len() > LONG_GAPS_LISTED {
                out += &format!(
                    "  ({} more long gaps not listed)\n",
                    report.long_list.len() - LONG_GAPS_LISTED
                );
            }
        }
        Some(out)
    }

    fn primary(&self) -> &DeviceCtx {
        &self.devices[0]
    }

    /// Element-wise `a op= b` over matching chunks.
    fn pointwise(
        &self,
        kernel: &str,
        a: &mut OpenClFrBuffer,
        b: &OpenClFrBuffer,
    ) -> Result<(), BackendError> {
        check_len("pointwise operands", a.data.len, b.data.len)?;
        let ctx = self.primary();
        for (i, (ca, cb)) in a.data.chunks.iter().zip(&b.data.chunks).enumerate() {
            let n = a.data.chunk_elems(i);
            ctx.kernel(ProgramKind::Fr, kernel)?
                .mem(ca)?
                .mem(cb)?
                .u32(n as u32)?
                .run(n, None)?;
        }
        Ok(())
    }

    /// A device buffer holding `v`, for kernels that take scalar operands. It goes up on
    /// the transfer queue ([`DeviceCtx::write_fresh`]): a blocking write behind the queued
    /// kernels would wait for them, and each NTT's 1/n and each coset shift would then hold
    /// the host until the device had caught up.
    fn constants(&self, ctx: &DeviceCtx, v: &[Fr]) -> Result<ocl::core::Mem, BackendError> {
        let m = ctx.raw_buffer("fr constants", 8 * v.len())?;
        ctx.write_fresh(&m, 0, as_words(v))?;
        Ok(m)
    }

    pub(crate) fn scale_chunk(
        &self,
        ctx: &DeviceCtx,
        mem: &ocl::core::Mem,
        n: usize,
        s: Fr,
    ) -> Result<(), BackendError> {
        let s = self.constants(ctx, &[s])?;
        ctx.kernel(ProgramKind::Fr, "fr_scale")?
            .mem(mem)?
            .mem(&s)?
            .u32(n as u32)?
            .run(n, None)
    }

    /// `a[i] *= factor g^rev(j)` over the `count` elements of `mem`, runs of 2^log_n
    /// (`log_n >= ntt::COSET_BR_MIN_LOG`) in bit-reversed order, element `i` being element `j` of
    /// its run: the coset shift of bit-reversed evaluations, without reversing them.
    pub(crate) fn coset_powers_br_chunk(
        &self,
        ctx: &DeviceCtx,
        mem: &ocl::core::Mem,
        count: usize,
        log_n: u32,
        g: Fr,
        factor: Fr,
    ) -> Result<(), BackendError> {
        // The kernel's blocks: 32 items of 64 elements each (see `fr_coset_powers_br`).
        const BLOCK: usize = 1 << crate::ntt::COSET_BR_MIN_LOG;
        let step = g.pow_vartime([1u64 << (log_n - crate::ntt::COSET_BR_MIN_LOG)]);
        let c = self.constants(ctx, &[factor, g, step])?;
        ctx.kernel(ProgramKind::Fr, "fr_coset_powers_br")?
            .mem(mem)?
            .mem(&c)?
            .u32(count as u32)?
            .u32(log_n)?
            .run(count.div_ceil(BLOCK) * 32, None)
    }

    /// `a[i] *= g_k^j` over one chunk of `n` elements starting at element `first` of its
    /// buffer, element `first + i` being element `j` of segment `k`: `g_k` is
    /// `gens[k - first / segment]`, or `gens[0]` for every segment when `gens` holds one
    /// value (a coset shift; or a chunk within one segment, where both agree).
    pub(crate) fn segment_powers_chunk(
        &self,
        ctx: &DeviceCtx,
        mem: &ocl::core::Mem,
        n: usize,
        first: u64,
        segment: u64,
        gens: &[Fr],
    ) -> Result<(), BackendError> {
        // Elements per work item: one exponentiation (log2 of the index, square and
        // multiply) per 64 multiplications; items in blocks of a warp's width (see the
        // kernel: each step of a block touches consecutive elements).
        const PER_ITEM: usize = 64;
        const LANES: usize = 32;
        let (g, _tracked) = ctx.temp(&self.tracker, "segment generators", gens.len() * 8)?;
        // Not behind the queued kernels (see `constants`).
        ctx.write_fresh(&g, 0, as_words(gens))?;
        ctx.kernel(ProgramKind::Fr, "fr_segment_powers")?
            .mem(mem)?
            .mem(&g)?
            .u32(n as u32)?
            .u32(PER_ITEM as u32)?
            .u32(LANES as u32)?
            .u64(first)?
            .u64(segment)?
            .u64(first / segment)?
            .u32(u32::from(gens.len() == 1))?
            .run(n.div_ceil(PER_ITEM * LANES) * LANES, None)
    }
}

/// Maps a driver error, keeping the OpenCL status code.
pub(crate) fn driver_error(what: &str, e: &ocl::core::Error) -> BackendError {
    BackendError::Driver {
        code: e.api_status().map_or(0, |s| s as i32),
        message: format!("{what}: {e}"),
        build_log: None,
    }
}

/// Locks a mutex, ignoring poisoning (the guarded caches stay consistent on panic).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Long idle gaps a profile report lists one by one (a 2^27 partition proof has a few).
const LONG_GAPS_LISTED: usize = 24;

impl Drop for OpenClBackend {
    fn drop(&mut self) {
        if let Some(report) = self.profile_report() {
            eprint!("{report}");
        }
    }
}

impl ComputeBackend for OpenClBackend {
    type FrBuffer = OpenClFrBuffer;
    type Bases<A: CurveAffine> = OpenClBases<A>;

    fn info(&self) -> &BackendInfo {
        &self.info
    }

    fn tracker(&self) -> &MemoryTracker {
        &self.tracker
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.devices.iter().try_for_each(DeviceCtx::finish)
    }

    fn msm_scratch_bytes<A: CurveAffine>(&self, scalars: usize) -> u64 {
        self.msm_scratch::<A>(scalars)
    }

    /// The first device's page-locked host memory (see [`OpenClConfig::pinned_staging`]):
    /// uploads to that device send vectors there with no staging copy.
    fn host_allocator(&self) -> Option<std::sync::Arc<dyn sluice_backend::HostAllocator>> {
        let pool = self.primary().pinned.clone()?;
        Some(std::sync::Arc::new(pinned::PinnedLender(pool)))
    }

    /// The first device's memory when there is one device; with several, the totals add up
    /// and the largest allocation is the smallest device's.
    fn memory_info(&self) -> Result<MemoryInfo, BackendError> {
        Ok(MemoryInfo {
            total_bytes: self.devices.iter().map(|d| d.info.global_mem_bytes).sum(),
            free_bytes: None,
            max_alloc_bytes: self
                .devices
                .iter()
                .map(|d| d.info.max_alloc_bytes)
                .min()
                .unwrap_or(0),
        })
    }

    fn alloc_fr(&self, name: &str, len: usize) -> Result<OpenClFrBuffer, BackendError> {
        let ctx = self.primary();
        let data = Chunked::alloc(ctx, 0, &self.tracker, name, len, 8)?;
        for (i, c) in data.chunks.iter().enumerate() {
            ctx.fill_zero(c, data.chunk_elems(i) * 8)?;
        }
        Ok(OpenClFrBuffer { data })
    }

    /// The values go up on the device's transfer queue, overlapping the kernels already
    /// queued (a new buffer: nothing queued uses it); the zeros after them are queued.
    fn upload_fr(
        &self,
        name: &str,
        values: &[Fr],
        len: usize,
    ) -> Result<OpenClFrBuffer, BackendError> {
        check_range("upload_fr", len, 0, values.len())?;
        let ctx = self.primary();
        let data = Chunked::upload(ctx, 0, &self.tracker, name, len, 8, as_words(values))?;
        Ok(OpenClFrBuffer { data })
    }

    fn copy_fr(&self, name: &str, src: &OpenClFrBuffer) -> Result<OpenClFrBuffer, BackendError> {
        let ctx = self.primary();
        let data = Chunked::alloc(ctx, 0, &self.tracker, name, src.data.len, 8)?;
        // Same device, length and element size: the chunks line up one to one.
        for (i, (dst, from)) in data.chunks.iter().zip(&src.data.chunks).enumerate() {
            ctx.copy(from, dst, data.chunk_elems(i) * 8)?;
        }
        Ok(OpenClFrBuffer { data })
    }

    fn write_fr(
        &self,
        buf: &mut OpenClFrBuffer,
        offset: usize,
        values: &[Fr],
    ) -> Result<(), BackendError> {
        check_range("write_fr range", buf.data.len, offset, values.len())?;
        buf.data.write(self.primary(), offset, as_words(values))
    }

    fn read_fr(
        &self,
        buf: &OpenClFrBuffer,
        offset: usize,
        out: &mut [Fr],
    ) -> Result<(), BackendError> {
        check_range("read_fr range", buf.data.len, offset, out.len())?;
        buf.data.read(self.primary(), offset, as_words_mut(out))
    }

    /// All four transforms in every [`NttOrder`], on buffers that fit one allocation.
    fn transform(
        &self,
        buf: &mut OpenClFrBuffer,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        self.ntt_transform(buf, transform, order)
    }

    /// Batched per chunk: every launch transforms all the segments of a chunk. Buffers split
    /// into chunks smaller than a segment return [`BackendError::Unsupported`].
    fn transform_segments(
        &self,
        buf: &mut OpenClFrBuffer,
        segment: usize,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        self.ntt_transform_segments(buf, segment, transform, order)
    }

    fn domain_to_coset(&self, buf: &mut OpenClFrBuffer) -> Result<(), BackendError> {
        self.ntt_domain_to_coset(buf)
    }

    fn coset_intt_scaled(&self, buf: &mut OpenClFrBuffer, factor: Fr) -> Result<(), BackendError> {
        self.ntt_coset_intt_scaled(buf, factor)
    }

    fn mul_assign(&self, a: &mut OpenClFrBuffer, b: &OpenClFrBuffer) -> Result<(), BackendError> {
        self.pointwise("fr_mul_assign", a, b)
    }

    fn sub_assign(&self, a: &mut OpenClFrBuffer, b: &OpenClFrBuffer) -> Result<(), BackendError> {
        self.pointwise("fr_sub_assign", a, b)
    }

    fn scale(&self, a: &mut OpenClFrBuffer, s: Fr) -> Result<(), BackendError> {
        let ctx = self.primary();
        for (i, c) in a.data.chunks.iter().enumerate() {
            self.scale_chunk(ctx, c, a.data.chunk_elems(i), s)?;
        }
        Ok(())
    }

    /// One launch per chunk, with the generators `base · ratio^k` of the chunk's segments
    /// computed on the host. Any `segment` dividing the length, on any chunking.
    fn segment_powers(
        &self,
        buf: &mut OpenClFrBuffer,
        segment: usize,
        base: Fr,
        ratio: Fr,
    ) -> Result<(), BackendError> {
        let len = buf.data.len;
        check_segment("segment_powers", len, segment)?;
        let ctx = self.primary();
        if segment == len {
            if base == Fr::ONE {
                return Ok(());
            }
            for (i, c) in buf.data.chunks.iter().enumerate() {
                let first = (i * buf.data.chunk_len) as u64;
                // One segment longer than any buffer: base^(first + i).
                let n = buf.data.chunk_elems(i);
                self.segment_powers_chunk(ctx, c, n, first, u64::MAX, &[base])?;
            }
            return Ok(());
        }
        if segment == 1 {
            return Ok(()); // every element is the 0th of its segment: g^0
        }
        for (i, c) in buf.data.chunks.iter().enumerate() {
            let first = i * buf.data.chunk_len;
            let n = buf.data.chunk_elems(i);
            let (k0, k1) = (first / segment, (first + n - 1) / segment);
            // Variable time in the exponent k0 only, a public segment index.
            let mut g = base * ratio.pow_vartime([k0 as u64]);
            let gens: Vec<Fr> = (k0..=k1)
                .map(|_| {
                    let gk = g;
                    g *= ratio;
                    gk
                })
                .collect();
            self.segment_powers_chunk(ctx, c, n, first as u64, segment as u64, &gens)?;
        }
        Ok(())
    }

    fn upload_bases<A: CurveAffine>(
        &self,
        name: &str,
        bases: &[A],
    ) -> Result<OpenClBases<A>, BackendError> {
        self.upload_msm_bases(name, bases)
    }

    fn msm_vartime<A: CurveAffine>(
        &self,
        bases: &OpenClBases<A>,
        skip: usize,
        scalars: Scalars<'_, Self>,
        density: Option<&Density>,
    ) -> Result<A::Group, BackendError> {
        self.msm_on_devices(bases, skip, scalars, density)
    }
}

/// What test suites (this crate's and the differential suite in `tests/`) need to pick an
/// OpenCL device or skip cleanly.
pub mod test_support {
    use super::{DeviceSelector, OpenClBackend, OpenClConfig};

    /// Whether a missing OpenCL platform must fail the tests (CI sets
    /// `SLUICE_REQUIRE_OPENCL=1`) rather than skip them.
    pub fn opencl_required() -> bool {
        std::env::var("SLUICE_REQUIRE_OPENCL").is_ok_and(|v| v == "1")
    }

    /// A backend with `config`, or `None` after printing why when no OpenCL platform exists
    /// and `SLUICE_REQUIRE_OPENCL` is not `1`.
    ///
    /// # Panics
    /// When the backend cannot be created and `SLUICE_REQUIRE_OPENCL=1`: in CI a missing
    /// platform is a failure, never a silent skip.
    pub fn backend_or_skip(config: OpenClConfig) -> Option<OpenClBackend> {
        match OpenClBackend::new(config) {
            Ok(b) => Some(b),
            Err(e) if opencl_required() => {
                panic!("SLUICE_REQUIRE_OPENCL=1 but no OpenCL backend: {e}")
            }
            Err(e) => {
                eprintln!("skipping: no OpenCL backend ({e}); set SLUICE_REQUIRE_OPENCL=1 to fail instead");
                None
            }
        }
    }

    /// The device tests run on: the first of [`test_devices`].
    pub fn test_device() -> usize {
        test_devices()[0]
    }

    /// The devices multi-device tests run on: every device `$SLUICE_TEST_OPENCL_DEVICE`
    /// picks (a selector as [`DeviceSelector::parse`] reads it, e.g. `NVIDIA` on a machine
    /// that also lists PoCL), else device 0; the only device twice (two contexts and queues
    /// on it) where the selector picks one, so the multi-device paths always run.
    pub fn test_devices() -> Vec<usize> {
        let sel = std::env::var("SLUICE_TEST_OPENCL_DEVICE")
            .map_or(DeviceSelector::Index(0), |s| DeviceSelector::parse(&s));
        let mut picked: Vec<usize> = sel
            .select()
            .map(|d| d.iter().map(|d| d.index).collect())
            .unwrap_or_default();
        match picked.len() {
            0 => vec![0, 0],
            1 => {
                picked.push(picked[0]);
                picked
            }
            _ => picked,
        }
    }
}

/// The environment variable `name` parsed as a `T` within `range`; `None` when unset,
/// unparsable or out of range (the experiment overrides fall back to their defaults).
pub(crate) fn env_in<T: std::str::FromStr + PartialOrd>(
    name: &str,
    range: std::ops::RangeInclusive<T>,
) -> Option<T> {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|v| range.contains(v))
}

#[cfg(test)]
pub(crate) mod testing {
    //! What every test needs: one backend per process (programs build once), seeded RNGs.

    use std::sync::OnceLock;

    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    pub(crate) use super::test_support::{backend_or_skip as backend_with, test_device};
    use super::{DeviceSelector, OpenClBackend, OpenClConfig};

    /// The process-wide backend on the test device (its programs build once for all tests).
    pub(crate) fn backend() -> Option<&'static OpenClBackend> {
        static B: OnceLock<Option<OpenClBackend>> = OnceLock::new();
        B.get_or_init(|| {
            backend_with(OpenClConfig {
                devices: DeviceSelector::Index(test_device()),
                ..OpenClConfig::default()
            })
        })
        .as_ref()
    }

    /// A backend on the test device with transfers staged and host vectors lent (forced
    /// on: PoCL would not use them). Not shared: each test sees its own pool and staging.
    pub(crate) fn staged_backend() -> Option<OpenClBackend> {
        backend_with(OpenClConfig {
            devices: DeviceSelector::Index(test_device()),
            pinned_staging: Some(true),
            ..OpenClConfig::default()
        })
    }

    /// Two contexts on the test device with small chunks: the multi-device and split-buffer
    /// paths at test sizes (process-wide too).
    pub(crate) fn split_backend() -> Option<&'static OpenClBackend> {
        static B: OnceLock<Option<OpenClBackend>> = OnceLock::new();
        B.get_or_init(|| {
            backend_with(OpenClConfig {
                devices: DeviceSelector::Indices(vec![test_device(); 2]),
                max_chunk_bytes: Some(SPLIT_CHUNK_BYTES),
                ..OpenClConfig::default()
            })
        })
        .as_ref()
    }

    /// [`backend`] and [`split_backend`] with shifted bases ([`OpenClConfig::shifted_bases`]);
    /// `split` picks which.
    pub(crate) fn shifted_backend(split: bool) -> Option<&'static OpenClBackend> {
        static B: [OnceLock<Option<OpenClBackend>>; 2] = [OnceLock::new(), OnceLock::new()];
        B[split as usize]
            .get_or_init(|| {
                backend_with(OpenClConfig {
                    devices: match split {
                        true => DeviceSelector::Indices(vec![test_device(); 2]),
                        false => DeviceSelector::Index(test_device()),
                    },
                    max_chunk_bytes: split.then_some(SPLIT_CHUNK_BYTES),
                    shifted_bases: true,
                    ..OpenClConfig::default()
                })
            })
            .as_ref()
    }

    /// The chunk cap of [`split_backend`]: 2^12 bytes, 128 Fr or 42 G1 bases per chunk.
    pub(crate) const SPLIT_CHUNK_BYTES: u64 = 1 << 12;

    pub(crate) fn rng(seed: u64) -> ChaCha20Rng {
        ChaCha20Rng::seed_from_u64(seed)
    }
}

#[cfg(test)]
mod tests {
    use ff::Field;
    use sluice_backend::{BackendError, ComputeBackend, MemoryKind};
    use sluice_field::Fr;

    use super::testing::{backend, rng, split_backend};
    use super::OpenClBackend;

    fn random(n: usize, seed: u64) -> Vec<Fr> {
        let mut r = rng(seed);
        (0..n).map(|_| Fr::random(&mut r)).collect()
    }

    fn pointwise_ops_match_host(b: &OpenClBackend, n: usize, seed: u64) {
        let (x, y) = (random(n, seed), random(n, seed + 1));
        let s = Fr::random(rng(seed + 2));
        let mut a = b.upload_fr("a", &x, x.len()).unwrap();
        let c = b.upload_fr("c", &y, y.len()).unwrap();
        let read = |a: &super::OpenClFrBuffer| {
            let mut out = vec![Fr::ZERO; n];
            b.read_fr(a, 0, &mut out).unwrap();
            out
        };
        b.mul_assign(&mut a, &c).unwrap();
        let mut want: Vec<Fr> = x.iter().zip(&y).map(|(p, q)| p * q).collect();
        assert_eq!(read(&a), want, "mul_assign, n {n}, seed {seed}");
        b.sub_assign(&mut a, &c).unwrap();
        want.iter_mut().zip(&y).for_each(|(w, q)| *w -= q);
        assert_eq!(read(&a), want, "sub_assign, n {n}, seed {seed}");
        b.scale(&mut a, s).unwrap();
        want.iter_mut().for_each(|w| *w *= s);
        assert_eq!(read(&a), want, "scale, n {n}, seed {seed}");
        b.distribute_powers(&mut a, s).unwrap();
        let mut p = Fr::ONE;
        for w in want.iter_mut() {
            *w *= p;
            p *= s;
        }
        assert_eq!(read(&a), want, "distribute_powers, n {n}, seed {seed}");
        // Partial writes and reads across chunk boundaries.
        let patch = random(n / 3 + 1, seed + 3);
        let at = n / 2;
        let end = (at + patch.len()).min(n);
        b.write_fr(&mut a, at, &patch[..end - at]).unwrap();
        want[at..end].copy_from_slice(&patch[..end - at]);
        let mut part = vec![Fr::ZERO; end - at / 2];
        b.read_fr(&a, at / 2, &mut part).unwrap();
        assert_eq!(
            part,
            want[at / 2..end],
            "write_fr/read_fr, n {n}, seed {seed}"
        );
    }

    /// A group size over the kernel's limit is lowered to it (`Launch::run_any_group`, the
    /// MSM point kernels' launch), and the bounds-checked kernel still covers every item.
    #[test]
    fn oversized_groups_are_lowered_to_the_kernel_limit() {
        use crate::repr::{as_words, as_words_mut};
        use crate::source::ProgramKind;
        let Some(b) = backend() else { return };
        let ctx = &b.devices[0];
        let seed = 4200;
        let mut r = rng(seed);
        let n = 1000;
        let x: Vec<Fr> = (0..n).map(|_| Fr::random(&mut r)).collect();
        let y: Vec<Fr> = (0..n).map(|_| Fr::random(&mut r)).collect();
        let (xm, ym) = (
            ctx.raw_buffer("x", n * 8).unwrap(),
            ctx.raw_buffer("y", n * 8).unwrap(),
        );
        ctx.write(&xm, 0, as_words(&x)).unwrap();
        ctx.write(&ym, 0, as_words(&y)).unwrap();
        let launch = ctx
            .kernel(ProgramKind::Fr, "fr_sub_assign")
            .unwrap()
            .mem(&xm)
            .unwrap()
            .mem(&ym)
            .unwrap()
            .u32(n as u32)
            .unwrap();
        let limit = launch.work_group_limit();
        assert!(limit > 0, "the driver reports no work-group limit");
        launch.run_any_group(n, Some(4 * limit)).unwrap();
        let mut got = vec![Fr::ZERO; n];
        ctx.read(&xm, 0, as_words_mut(&mut got)).unwrap();
        let want: Vec<Fr> = x.iter().zip(&y).map(|(a, b)| a - b).collect();
        assert!(
            got == want,
            "seed {seed}: x - y differs with a lowered group"
        );
    }

    #[test]
    fn pointwise_ops_match_the_host() {
        let Some(b) = backend() else { return };
        for (i, n) in [1usize, 2, 3, 255, 1000, 4096].into_iter().enumerate() {
            pointwise_ops_match_host(b, n, 100 + i as u64);
        }
    }

    #[test]
    fn pointwise_ops_match_the_host_on_split_buffers() {
        let Some(b) = split_backend() else { return };
        for (i, n) in [127usize, 128, 129, 1000].into_iter().enumerate() {
            pointwise_ops_match_host(b, n, 200 + i as u64);
        }
    }

    /// `segment_powers` of `len` random elements against the definition, element `j` of
    /// segment `k` times `(base ratio^k)^j` by independent exponentiations.
    fn segment_powers_match_host(b: &OpenClBackend, len: usize, segment: usize, seed: u64) {
        let x = random(len, seed);
        let (base, ratio) = (Fr::random(rng(seed + 1)), Fr::random(rng(seed + 2)));
        let want: Vec<Fr> = x
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let (k, j) = ((i / segment) as u64, (i % segment) as u64);
                v * (base * ratio.pow_vartime([k])).pow_vartime([j])
            })
            .collect();
        let mut a = b.upload_fr("a", &x, x.len()).unwrap();
        b.segment_powers(&mut a, segment, base, ratio).unwrap();
        let mut got = vec![Fr::ZERO; len];
        b.read_fr(&a, 0, &mut got).unwrap();
        assert!(
            got == want,
            "segment_powers of {len} in segments of {segment} (seed {seed})"
        );
    }

    #[test]
    fn segment_powers_match_the_definition() {
        let Some(b) = backend() else { return };
        // Work items' runs (64 elements, 32 apart, in blocks of 2048) that cross segments
        // (1, 2, 40, 100, 1000), that stay within one (1024), and the whole buffer; a
        // partial last block (5000, 6000).
        for (i, (len, segment)) in [
            (1024, 1),
            (1024, 2),
            (1000, 40),
            (1000, 100),
            (4096, 1024),
            (300, 300),
            (5000, 1000),
            (6000, 6000),
        ]
        .into_iter()
        .enumerate()
        {
            segment_powers_match_host(b, len, segment, 500 + 10 * i as u64);
        }
        let mut a = b.alloc_fr("a", 1000).unwrap();
        for segment in [0, 3, 2000] {
            assert!(
                matches!(
                    b.segment_powers(&mut a, segment, Fr::ONE, Fr::ONE),
                    Err(BackendError::InvalidInput(_))
                ),
                "segment {segment} of 1000"
            );
        }
    }

    #[test]
    fn segment_powers_match_the_definition_on_split_buffers() {
        let Some(b) = split_backend() else { return };
        // Chunks of 128: segments straddling chunks (48, 250), within them (32), and a last
        // partial chunk.
        for (i, (len, segment)) in [(384, 48), (1000, 250), (1000, 40), (320, 32)]
            .into_iter()
            .enumerate()
        {
            segment_powers_match_host(b, len, segment, 600 + 10 * i as u64);
        }
    }

    /// Transfers through the pinned staging buffers (forced on, as PoCL would not use them)
    /// round-trip exactly: several staging pieces, a partial last piece, offsets.
    #[test]
    fn staged_transfers_round_trip() {
        let Some(b) = super::testing::staged_backend() else {
            return;
        };
        let seed = 4100;
        let mut r = rng(seed);
        // 2^20 + 12345 scalars: two full 16 MiB pieces and a partial one (with
        // SLUICE_STAGING_KIB=4096, more pieces than slots: each slot reused both ways).
        let n = (1 << 20) + 12345;
        let x: Vec<Fr> = (0..n).map(|_| Fr::random(&mut r)).collect();
        let mut buf = b.alloc_fr("staged", n).unwrap();
        b.write_fr(&mut buf, 0, &x).unwrap();
        let mut y = vec![Fr::ZERO; n];
        b.read_fr(&buf, 0, &mut y).unwrap();
        assert!(x == y, "seed {seed}: staged round trip differs");
        // At an offset, longer than the staging threshold.
        let at = 777;
        let tail: Vec<Fr> = (0..n - at).map(|_| Fr::random(&mut r)).collect();
        b.write_fr(&mut buf, at, &tail).unwrap();
        let mut z = vec![Fr::ZERO; n - at - 5];
        b.read_fr(&buf, at + 5, &mut z).unwrap();
        assert!(
            z[..] == tail[5..],
            "seed {seed}: staged transfer at an offset differs"
        );
        b.read_fr(&buf, 0, &mut y[..at]).unwrap();
        assert!(y[..at] == x[..at], "seed {seed}: the head was overwritten");
        // Staged through the transfer queue while a transform of `buf` is queued, padded.
        b.scale(&mut buf, Fr::from(3)).unwrap();
        let padded = b.upload_fr("padded", &x[..n - 99], n).unwrap();
        b.read_fr(&padded, 0, &mut y).unwrap();
        assert!(
            y[..n - 99] == x[..n - 99] && y[n - 99..].iter().all(|v| v.is_zero_vartime()),
            "seed {seed}: staged padded upload differs"
        );
    }

    /// Lent page-locked host vectors (staging forced on, as for PoCL it is not): their
    /// uploads are recognised as lent and sent directly, whole, in part and padded, and
    /// round-trip exactly; ordinary vectors are not recognised.
    #[test]
    fn lent_host_vectors_upload_directly_and_exactly() {
        let Some(b) = super::testing::staged_backend() else {
            return;
        };
        let seed = 4200;
        let lender = b
            .host_allocator()
            .expect("staged transfers lend host vectors");
        let pool = b.primary().pinned.clone().expect("a pool");
        // Longer than the staging threshold (2^20 words), so an ordinary vector is staged.
        let n = (1 << 18) + 4321;
        let x = random(n, seed);
        let mut lent = lender.fr_vec(n).expect("the pool lends");
        lent.extend_from_slice(&x);
        assert!(lent.is_lent() && lent.capacity() == n);
        assert!(pool.holds(crate::repr::as_words(&lent)));
        assert!(pool.holds(crate::repr::as_words(&lent[1000..2000])));
        assert!(
            !pool.holds(crate::repr::as_words(&x)),
            "an ordinary vector is staged"
        );
        let mut y = vec![Fr::ZERO; n + 77];
        let whole = b.upload_fr("lent", &lent, n + 77).unwrap();
        b.read_fr(&whole, 0, &mut y).unwrap();
        assert!(
            y[..n] == x[..] && y[n..].iter().all(|v| v.is_zero_vartime()),
            "seed {seed}: lent padded upload differs"
        );
        let mut part = b.alloc_fr("part", n).unwrap();
        b.write_fr(&mut part, 5, &lent[10..n - 3]).unwrap();
        b.read_fr(&part, 5, &mut y[..n - 13]).unwrap();
        assert!(
            y[..n - 13] == x[10..n - 3],
            "seed {seed}: lent partial write differs"
        );
        let bytes = pool.bytes();
        // A vector given back is kept: the next of its size reuses the block, no new one.
        let at = lent.as_ptr();
        drop(lent);
        let again = lender.fr_vec(n).unwrap();
        assert!(again.as_ptr() == at && again.is_empty() && pool.bytes() == bytes);
    }

    /// A pool lends up to its limit, then refuses (callers use ordinary memory); kept blocks
    /// are reused, freed to make room for others, and at most `IDLE_BLOCKS` are kept.
    #[test]
    fn pinned_pool_keeps_its_limit() {
        use super::pinned::{PinnedLender, PinnedPool};
        use sluice_backend::HostAllocator;
        let Some(b) = backend() else { return };
        let ctx = b.primary();
        let pool = std::sync::Arc::new(
            PinnedPool::new(&ctx.context, ctx.info.device_id, 1 << 20).unwrap(),
        );
        let lender = PinnedLender(pool.clone());
        let kib = |k: usize| k * 1024 / 32;
        let (v1, v2) = (
            lender.fr_vec(kib(400)).unwrap(),
            lender.fr_vec(kib(400)).unwrap(),
        );
        assert_eq!(pool.bytes(), 800 << 10);
        assert!(lender.fr_vec(kib(400)).is_none(), "past the limit");
        assert!(lender.fr_vec(0).is_none(), "an empty vector needs no block");
        // A block given back is kept and lent again, for its size or down to half of it.
        let at = v1.as_ptr();
        drop(v1);
        let again = lender.fr_vec(kib(400)).unwrap();
        assert!(again.as_ptr() == at && pool.bytes() == 800 << 10);
        assert!(
            lender.fr_vec(kib(300)).is_none(),
            "past the limit, nothing kept"
        );
        drop(again);
        let smaller = lender.fr_vec(kib(300)).unwrap();
        assert!(smaller.as_ptr() == at && pool.bytes() == 800 << 10);
        drop(smaller);
        // Under half: a block of its own.
        let quarter = lender.fr_vec(kib(100)).unwrap();
        assert!(quarter.as_ptr() != at && pool.bytes() == 900 << 10);
        drop(quarter);
        // No kept block fits 500 KiB and the limit is reached: kept blocks are freed.
        let big = lender
            .fr_vec(kib(500))
            .expect("room made by freeing kept blocks");
        assert_eq!((pool.bytes(), pool.kept()), (900 << 10, 0));
        drop((big, v2));
        let many: Vec<_> = (0..5).map(|_| lender.fr_vec(kib(50)).unwrap()).collect();
        drop(many);
        assert_eq!(pool.kept(), 3, "at most three blocks kept");
        assert!(pool.bytes() <= 1 << 20);
    }

    /// `upload_fr` with padding: the data then zeros, across chunk boundaries of a split buffer,
    /// with kernels queued on another buffer while it goes up; longer data is refused.
    #[test]
    fn padded_uploads_hold_the_data_then_zeros() {
        for b in [backend(), split_backend()].into_iter().flatten() {
            let seed = 4200;
            let x = random(1000, seed);
            let s = Fr::random(rng(seed + 1));
            let mut busy = b.upload_fr("busy", &x[..512], x[..512].len()).unwrap();
            let mut want: Vec<Fr> = x[..512].to_vec();
            let cases = [
                (1000, 0),
                (1000, 1),
                (1000, 128),
                (1000, 300),
                (1000, 1000),
                (128, 127),
            ];
            for (len, filled) in cases {
                // Queued work on another buffer: the upload must neither wait for it nor
                // disturb it.
                b.scale(&mut busy, s).unwrap();
                want.iter_mut().for_each(|w| *w *= s);
                let buf = b.upload_fr("padded", &x[..filled], len).unwrap();
                let mut got = vec![Fr::ONE; len];
                b.read_fr(&buf, 0, &mut got).unwrap();
                assert!(
                    got[..filled] == x[..filled]
                        && got[filled..].iter().all(|v| v.is_zero_vartime()),
                    "seed {seed}: {filled} values padded to {len}"
                );
            }
            let mut back = vec![Fr::ZERO; 512];
            b.read_fr(&busy, 0, &mut back).unwrap();
            assert!(back == want, "seed {seed}: the queued work was disturbed");
            assert!(matches!(
                b.upload_fr("long", &x[..10], 9),
                Err(BackendError::LengthMismatch { .. })
            ));
        }
    }

    #[test]
    fn alloc_is_zeroed_tracked_and_limited() {
        let Some(b) = backend() else { return };
        let before = b.tracker().current(MemoryKind::Device);
        let buf = b.alloc_fr("zeros", 300).unwrap();
        assert!(b.tracker().current(MemoryKind::Device) >= before + 300 * 32);
        let mut out = vec![Fr::ONE; 300];
        b.read_fr(&buf, 0, &mut out).unwrap();
        assert!(out.iter().all(|v| bool::from(v.is_zero())));
        assert!(matches!(
            b.read_fr(&buf, 299, &mut [Fr::ZERO; 2]),
            Err(BackendError::LengthMismatch { .. })
        ));
        let other = b.alloc_fr("other", 3).unwrap();
        let mut buf = buf;
        assert!(matches!(
            b.mul_assign(&mut buf, &other),
            Err(BackendError::LengthMismatch { .. })
        ));
        drop((buf, other));

        let info = b.memory_info().unwrap();
        assert!(
            info.total_bytes > 0
                && info.max_alloc_bytes > 0
                && info.max_alloc_bytes <= info.total_bytes
        );
        let limited = super::testing::backend_with(super::OpenClConfig {
            devices: super::DeviceSelector::Index(super::testing::test_device()),
            tracker: Some(sluice_backend::MemoryTracker::new(None, Some(1 << 20))),
            ..Default::default()
        })
        .unwrap();
        match limited.alloc_fr("too big", (1 << 15) + 1) {
            Err(BackendError::OutOfMemory {
                requested, what, ..
            }) => {
                assert_eq!(
                    (requested, what.as_str()),
                    (((1 << 15) + 1) * 32, "too big")
                );
            }
            Err(e) => panic!("expected OutOfMemory, got {e}"),
            Ok(_) => panic!("expected OutOfMemory, got a buffer"),
        }
        assert_eq!(limited.tracker().current(MemoryKind::Device), 0);
    }
}
