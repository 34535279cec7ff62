//! `ComputeBackend` on OpenCL devices: BLS12-381 field, NTT and MSM kernels.
//!
//! - Devices are discovered once per process ([`devices`]); a backend uses one, several or
//!   all of them ([`DeviceSelector`]), each with its own context and queue.
//! - Kernels are `.cl` files under `kernels/`, assembled per job (an Fr program, a G1 MSM
//!   program, a G2 MSM program) with a header generated from `sluice-field`'s constants.
//!   Fields use 32-bit limbs in Montgomery form, the host's bytes exactly; on NVIDIA the
//!   carry chains are inline PTX (`-DKERNEL_NVIDIA`), elsewhere portable C.
//! - Built program binaries are cached on disk ([`KernelCache`]) and in the process; every
//!   build's duration is recorded ([`OpenClBackend::program_build_times`]). NVIDIA's
//!   OpenCL gives PTX as a program's binary, so a load from the disk cache still compiles
//!   PTX to machine code; the driver's own cache (`~/.nv/ComputeCache`, on unless
//!   `CUDA_CACHE_DISABLE=1`) makes that milliseconds; without it a load takes about half
//!   of a cold build on an H200 (BENCHMARKS.md#build-and-load).
//! - Buffers larger than the device's largest allocation are split into chunks.
//!
//! # Placement
//! Fr buffers live on the backend's first device (NTTs and pointwise operations run there);
//! MSM bases are split evenly across all its devices, and an MSM runs on all of them at
//! once, scalars being copied to the devices that need them. Partial sums are added on the
//! host.
//!
//! # Configuration
//! [`OpenClConfig`] says which devices, and [`OpenClTuning`] every knob (MSM plans, NTT
//! passes, staging, lent host memory, build options, profiling, launch capture), with
//! defaults the backend was measured fastest with. The environment is read in one place,
//! [`OpenClConfig::with_env_overrides`], for runs that tune without a rebuild; a bad value
//! is an error, never a silent default. With [`OpenClTuning::profile`] the queues record
//! every command's device time, which [`OpenClBackend::profile_report`] returns when asked.
//!
//! # Unsupported
//! An NTT over a buffer split into several chunks (more than the device's largest single
//! allocation: 2^25 elements on PoCL's 1 GiB cap; 2^30 on an H200), and segmented transforms
//! whose segments are longer than such a buffer's chunks, return
//! [`BackendError::Unsupported`].

mod capture;
mod chunked;
mod compact;
mod context;
mod device;
mod fr_ops;
mod host_pool;
mod msm;
mod ntt;
mod pinned;
mod profile;
mod program;
mod ptx;
mod release;
mod repr;
mod source;
// Test suites' device picking (feature `testing`): no part of the library's API.
#[cfg(any(test, feature = "testing"))]
pub mod test_support;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
mod tuning;
mod util;

use std::ffi::OsString;
use std::ops::Range;
use std::sync::Arc;

use sluice_backend::{
    check_range, BackendError, BackendInfo, Buffer, CompactVec, ComputeBackend, CurveAffine,
    Density, MemoryInfo, MemoryTracker, NttOrder, Scalars, Transform,
};
use sluice_field::Fr;

use crate::chunked::Chunked;
use crate::context::{ContextSettings, DeviceCtx, LaunchObserver};
use crate::fr_ops::FrOps;
use crate::msm::{Msm, MsmScalars};
use crate::ntt::Ntt;
use crate::repr::{as_words, as_words_mut};

pub use crate::device::{devices, DeviceInfo, DeviceSelector};
pub use crate::msm::{OpenClBases, OpenClG1Bases, OpenClG2Bases};
pub use crate::program::{BuildSource, KernelCache, ProgramBuildTime};
pub use crate::source::ProgramKind;
pub use crate::tuning::{
    BuildOptions, CaptureConfig, MsmTuning, NttTuning, OpenClConfigError, OpenClTuning,
    StagingTuning, WorkGroup,
};

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
    /// where pageable transfers run at a fraction of pinned ones
    /// (BENCHMARKS.md#pipeline-and-residency); a CPU driver gains nothing from the extra
    /// copy. Tests force it on to cover the path on PoCL. Where it is on, the backend also
    /// lends page-locked host vectors
    /// ([`host_allocator`](sluice_backend::ComputeBackend::host_allocator)), which uploads
    /// send with no staging copy ([`OpenClTuning::pinned_host_bytes`]).
    pub pinned_staging: Option<bool>,
    /// Precompute shifted bases at upload: for every window k of the MSM's signed digits,
    /// 2^(c k) P for each base P, so an MSM sorts all its windows into one bucket set (a
    /// larger c, fewer windows, one bucket reduction). It costs about ceil(256 / c) times
    /// the bases' device memory (12-16 times at 2^20-2^26 bases) and a one-time
    /// computation at upload; an MSM still takes the plain windows where they cost less
    /// (few or small scalars). Off by default: the prover's memory planning counts bases
    /// at their plain size.
    pub shifted_bases: bool,
    /// Decode parameter files' points on the devices
    /// ([`upload_bases_encoded`](sluice_backend::ComputeBackend::upload_bases_encoded)), so
    /// the host only copies bytes: `None` (the default) where every device is a GPU. A CPU
    /// driver's device is the host's own cores, where the host's decoder ran 2.5-3.1x
    /// faster than the kernel on PoCL (BENCHMARKS.md#field-and-curve); tests force it on
    /// to cover the kernel on PoCL.
    pub device_decode: Option<bool>,
    /// Every tuning knob, by default what the backend was measured fastest with.
    pub tuning: OpenClTuning,
}

impl Default for OpenClConfig {
    /// Every GPU, or the first device where there is none
    /// ([`DeviceSelector::GpusOrFirst`]): a CPU driver such as PoCL, often listed first,
    /// is never taken over a GPU.
    fn default() -> Self {
        OpenClConfig {
            devices: DeviceSelector::GpusOrFirst,
            kernel_cache: KernelCache::Default,
            max_chunk_bytes: None,
            tracker: None,
            pinned_staging: None,
            shifted_bases: false,
            device_decode: None,
            tuning: OpenClTuning::default(),
        }
    }
}

impl OpenClConfig {
    /// The default configuration with the environment's overrides
    /// ([`with_env_overrides`](Self::with_env_overrides)).
    pub fn from_env() -> Result<Self, OpenClConfigError> {
        Self::default().with_env_overrides()
    }

    /// This configuration with operator overrides from the environment, where set (each
    /// checked: a bad value is [`OpenClConfigError::BadOverride`] naming the variable):
    ///
    /// | variable | setting |
    /// |---|---|
    /// | `SLUICE_KERNEL_CACHE` | [`kernel_cache`](Self::kernel_cache): this directory |
    /// | `XDG_CACHE_HOME`, else `HOME` | a [`KernelCache::Default`] resolved to the user's cache |
    /// | `SLUICE_MSM_WINDOW`, `SLUICE_MSM_CHUNK`, `SLUICE_MSM_SLICE`, `SLUICE_MSM_PER_ITEM` | [`MsmTuning`]'s window bits, segment length, reduce slice, scalars per item |
    /// | `SLUICE_MSM_GROUP` | [`MsmTuning::point_group`] (0: the driver's choice) |
    /// | `SLUICE_NTT_COLUMNS`, `SLUICE_NTT_RADIX`, `SLUICE_NTT_TILES` | [`NttTuning`] |
    /// | `SLUICE_STAGING_KIB` | [`StagingTuning::piece_kib`] |
    /// | `SLUICE_PINNED_HOST_MIB` | [`OpenClTuning::pinned_host_bytes`], in MiB |
    /// | `SLUICE_OPENCL_OPTIONS`, `SLUICE_OPENCL_OPTIONS_FR` / `_G1_MSM` / `_G2_MSM` | [`BuildOptions`] |
    /// | `SLUICE_BUILD_LOG` (`0`, `1`) | [`BuildOptions::print_log`] |
    /// | `SLUICE_PROFILE` (`0`, `1`) | [`OpenClTuning::profile`] |
    /// | `SLUICE_PROFILE_GAPS_MS` | [`OpenClTuning::profile_gaps_listed_ms`] |
    /// | `SLUICE_OPENCL_IMMEDIATE_RELEASES` (`0`, `1`) | [`OpenClTuning::immediate_releases`] |
    /// | `SLUICE_OPENCL_FREE_MSM_SCRATCH` (`0`, `1`) | [`OpenClTuning::free_msm_scratch`] |
    /// | `SLUICE_CAPTURE_DIR`, `SLUICE_CAPTURE_KERNEL`, `SLUICE_CAPTURE_COUNT` | [`OpenClTuning::capture`] |
    /// | `SLUICE_OPENCL_DEVICE_DECODE` (`0`, `1`) | [`device_decode`](Self::device_decode) |
    pub fn with_env_overrides(self) -> Result<Self, OpenClConfigError> {
        self.with_overrides(&|name| std::env::var_os(name))
    }

    /// [`with_env_overrides`](Self::with_env_overrides) through `var`.
    fn with_overrides(
        mut self,
        var: &dyn Fn(&'static str) -> Option<OsString>,
    ) -> Result<Self, OpenClConfigError> {
        let env = tuning::Overrides(var);
        if let Some(dir) = env.path("SLUICE_KERNEL_CACHE") {
            self.kernel_cache = KernelCache::Dir(dir);
        } else if self.kernel_cache == KernelCache::Default {
            self.kernel_cache = KernelCache::user_cache(&env);
        }
        if let Some(on) = env.switch("SLUICE_OPENCL_DEVICE_DECODE")? {
            self.device_decode = Some(on);
        }
        self.tuning = self.tuning.with_overrides(var)?;
        Ok(self)
    }
}

/// [`OpenClConfig::from_env`] with its error as a backend's.
fn config_from_env() -> Result<OpenClConfig, BackendError> {
    OpenClConfig::from_env().map_err(|e| BackendError::InvalidInput(e.to_string()))
}

/// A [`ComputeBackend`] on one or more OpenCL devices.
pub struct OpenClBackend {
    info: BackendInfo,
    devices: Vec<DeviceCtx>,
    tracker: MemoryTracker,
    /// [`OpenClConfig::shifted_bases`].
    shifted_bases: bool,
    /// [`OpenClConfig::device_decode`], resolved.
    device_decode: bool,
    msm_tuning: MsmTuning,
    ntt: Ntt,
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
    /// A backend as `config` describes; a tuning setting out of its range is
    /// [`BackendError::InvalidInput`] naming it.
    pub fn new(config: OpenClConfig) -> Result<Self, BackendError> {
        let tuning = config.tuning;
        tuning
            .check()
            .map_err(|e| BackendError::InvalidInput(e.to_string()))?;
        let settings = ContextSettings {
            cache: config.kernel_cache,
            build_options: tuning.build_options,
            max_chunk_bytes: config.max_chunk_bytes,
            pinned_staging: config.pinned_staging,
            staging_words: tuning.staging.piece_kib * 256,
            pinned_host_bytes: tuning.pinned_host_bytes,
            profile: tuning.profile,
            profile_gaps_listed_ms: tuning.profile_gaps_listed_ms,
            immediate_releases: tuning.immediate_releases,
            free_msm_scratch: tuning.free_msm_scratch,
            observer: tuning
                .capture
                .map(|c| Arc::new(capture::Capture::new(c)) as Arc<dyn LaunchObserver>),
        };
        let devices = config
            .devices
            .select()?
            .into_iter()
            .map(|info| DeviceCtx::new(info, &settings))
            .collect::<Result<Vec<_>, _>>()?;
        for d in &devices {
            log::info!("OpenCL backend on {}", d.info);
        }
        let all_gpus = devices.iter().all(|d| d.info.is_gpu);
        let names: Vec<&str> = devices.iter().map(|d| d.info.name.as_str()).collect();
        let info = BackendInfo {
            name: format!("opencl ({})", names.join(" + ")),
            // A CPU driver such as PoCL is no accelerator.
            accelerator: all_gpus,
            // A CPU device's memory is host memory whatever it reports.
            host_memory_shared: devices
                .iter()
                .all(|d| d.info.host_unified_memory || !d.info.is_gpu),
        };
        Ok(OpenClBackend {
            info,
            devices,
            tracker: config.tracker.unwrap_or_default(),
            shifted_bases: config.shifted_bases,
            device_decode: config.device_decode.unwrap_or(all_gpus),
            msm_tuning: tuning.msm,
            ntt: Ntt::new(tuning.ntt),
        })
    }

    /// A backend on the first GPU, or on the first device where there is no GPU (a CPU
    /// driver such as PoCL); the device taken is logged at info. Configured by
    /// [`OpenClConfig::from_env`] (the user's kernel cache among its settings); a bad
    /// override is [`BackendError::InvalidInput`] naming it.
    pub fn first() -> Result<Self, BackendError> {
        let all = devices()?;
        let first = all.iter().find(|d| d.is_gpu).map_or(0, |d| d.index);
        Self::new(OpenClConfig {
            devices: DeviceSelector::Index(first),
            ..config_from_env()?
        })
    }

    /// A backend on every device (MSMs spread across all of them), configured as
    /// [`first`](Self::first) is.
    pub fn all() -> Result<Self, BackendError> {
        Self::new(OpenClConfig {
            devices: DeviceSelector::All,
            ..config_from_env()?
        })
    }

    /// The devices this backend computes on, in order (the first holds the Fr buffers).
    pub fn device_infos(&self) -> Vec<&'static DeviceInfo> {
        self.devices.iter().map(|d| d.info).collect()
    }

    /// Builds (or loads from the cache) every program on every device now, so that later
    /// operations do not pay for it and the build time can be measured on its own. The
    /// builds run at once, one thread each: a driver that compiles them in parallel (an
    /// H200's) finishes sooner, and one that serializes them (PoCL) takes the same either
    /// way (BENCHMARKS.md#build-and-load).
    /// The first error is returned.
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

    /// With [`OpenClTuning::profile`]: per device, the device time of each kernel launched since
    /// the last report (launches, total milliseconds) and of the transfers each way, then
    /// the time the device idled before each kind of command (gaps under 10 ms: the host
    /// copying, waiting or enqueueing; longer gaps, mostly the caller's own work between
    /// operations, in rows of their own, then one by one with the time each began: from
    /// [`OpenClTuning::profile_gaps_listed_ms`] where set), as a
    /// table, after waiting for the queues; `None` when profiling is off.
    pub fn profile_report(&self) -> Option<String> {
        let reports = self
            .devices
            .iter()
            .enumerate()
            .map(|(d, ctx)| Some((d, ctx.info.name.as_str(), ctx.profile_report()?)))
            .collect::<Option<Vec<_>>>()?;
        Some(profile::format_report(&reports))
    }

    /// The device the Fr buffers live on.
    fn primary(&self) -> &DeviceCtx {
        &self.devices[0]
    }

    /// The Fr kernels on the first device, where the Fr buffers live.
    fn fr_ops(&self) -> FrOps<'_> {
        FrOps {
            ctx: self.primary(),
            tracker: &self.tracker,
        }
    }

    /// The MSMs over every device.
    fn msm(&self) -> Msm<'_> {
        Msm {
            devices: &self.devices,
            tracker: &self.tracker,
            tuning: &self.msm_tuning,
            shifted_bases: self.shifted_bases,
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
        self.msm().scratch_bytes::<A>(scalars)
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

    /// Raw vectors go up as [`upload_fr`](ComputeBackend::upload_fr) sends them; compact
    /// ones as their code bytes and exceptions, expanded by two kernels on the device.
    fn upload_compact(
        &self,
        name: &str,
        data: &CompactVec,
        len: usize,
    ) -> Result<OpenClFrBuffer, BackendError> {
        check_range("upload_compact", len, 0, data.len())?;
        if let Some(raw) = data.as_raw() {
            return self.upload_fr(name, raw, len);
        }
        let ctx = self.primary();
        ctx.mark("compact upload");
        let buf = Chunked::alloc(ctx, 0, &self.tracker, name, len, 8)?;
        self.fr_ops()
            .write_compact_into(&buf, 0, data, 0..data.len(), true)?;
        buf.each_range(data.len(), len - data.len(), |chunk, at, _, n| {
            ctx.fill_zero_at(&buf.chunks[chunk], at * 8, n * 8)
        })?;
        Ok(OpenClFrBuffer { data: buf })
    }

    fn upload_compact_range(
        &self,
        name: &str,
        data: &CompactVec,
        range: Range<usize>,
    ) -> Result<OpenClFrBuffer, BackendError> {
        check_range("upload_compact_range", data.len(), range.start, range.len())?;
        let ctx = self.primary();
        let buf = Chunked::alloc(ctx, 0, &self.tracker, name, range.len(), 8)?;
        self.fr_ops()
            .write_compact_into(&buf, 0, data, range, true)?;
        Ok(OpenClFrBuffer { data: buf })
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
        self.ntt
            .transform(self.fr_ops(), &buf.data, transform, order)
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
        self.ntt
            .transform_segments(self.fr_ops(), &buf.data, segment, transform, order)
    }

    fn domain_to_coset(&self, buf: &mut OpenClFrBuffer) -> Result<(), BackendError> {
        self.ntt.domain_to_coset(self.fr_ops(), &buf.data)
    }

    fn coset_intt_scaled(&self, buf: &mut OpenClFrBuffer, factor: Fr) -> Result<(), BackendError> {
        self.ntt.coset_intt_scaled(self.fr_ops(), &buf.data, factor)
    }

    /// Queues before it frees: c's copy and a's coset transform go to the device before
    /// a's host vector is freed and b goes up (the copy engine runs beside the kernels),
    /// and b and c are released after `beside`, whose work (the witness's upload) then
    /// runs beside H's last kernels: a release waits for the kernels using the buffer.
    fn h_device_work<E, Ha, Hb, T>(
        &self,
        upload_a: impl FnOnce() -> Result<(OpenClFrBuffer, Ha), E>,
        upload_b: impl FnOnce() -> Result<(OpenClFrBuffer, Hb), E>,
        quotient: impl FnOnce(&mut OpenClFrBuffer) -> Result<(), E>,
        beside: impl FnOnce() -> Result<T, E>,
    ) -> Result<(OpenClFrBuffer, Option<T>), E>
    where
        E: From<BackendError>,
    {
        let (mut a, host_a) = upload_a()?;
        // c = a b pointwise, from a copy of a made on the device (not a third upload).
        let mut c = self.copy_fr("c", &a)?;
        self.domain_to_coset(&mut a)?;
        drop(host_a);
        let (mut b, host_b) = upload_b()?;
        self.mul_assign(&mut c, &b)?;
        for buf in [&mut b, &mut c] {
            self.domain_to_coset(buf)?;
        }
        // Freed once the device has work queued behind the upload (tens of ms at 2^27).
        drop(host_b);
        self.mul_assign(&mut a, &b)?;
        self.sub_assign(&mut a, &c)?;
        quotient(&mut a)?;
        let beside = beside()?;
        drop((b, c));
        Ok((a, Some(beside)))
    }

    fn mul_assign(&self, a: &mut OpenClFrBuffer, b: &OpenClFrBuffer) -> Result<(), BackendError> {
        self.fr_ops().pointwise("fr_mul_assign", &a.data, &b.data)
    }

    fn sub_assign(&self, a: &mut OpenClFrBuffer, b: &OpenClFrBuffer) -> Result<(), BackendError> {
        self.fr_ops().pointwise("fr_sub_assign", &a.data, &b.data)
    }

    fn scale(&self, a: &mut OpenClFrBuffer, s: Fr) -> Result<(), BackendError> {
        self.fr_ops().scale(&a.data, s)
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
        self.fr_ops()
            .segment_powers(&buf.data, segment, base, ratio)
    }

    fn upload_bases<A: CurveAffine>(
        &self,
        name: &str,
        bases: &[A],
    ) -> Result<OpenClBases<A>, BackendError> {
        self.msm().upload_bases(name, bases)
    }

    /// Decoded on the devices where [`OpenClConfig::device_decode`] says so: the host copies
    /// the file's bytes and nothing more. Elsewhere `None`: the caller decodes on the host.
    fn upload_bases_encoded<A: CurveAffine>(
        &self,
        name: &str,
        encoded: &[u8],
    ) -> Result<Option<OpenClBases<A>>, BackendError> {
        if !self.device_decode {
            return Ok(None);
        }
        self.msm().upload_bases_encoded(name, encoded).map(Some)
    }

    fn msm_vartime<A: CurveAffine>(
        &self,
        bases: &OpenClBases<A>,
        skip: usize,
        scalars: Scalars<'_, Self>,
        density: Option<&Density>,
    ) -> Result<A::Group, BackendError> {
        let scalars = match scalars {
            Scalars::Host(s) => MsmScalars::Host(s),
            Scalars::Buffer(b) => MsmScalars::Buffer(&b.data),
            Scalars::Owned(b) => MsmScalars::Owned(b.data),
        };
        self.msm().run(bases, skip, scalars, density)
    }
}
