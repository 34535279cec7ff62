//! Multi-scalar multiplication on the device(s): bases resident and split across devices,
//! scalars prepared on the device that uses them, one Pippenger launch per (device, bases
//! chunk), partial sums added on the host.

use std::marker::PhantomData;

use sluice_backend::{BackendError, Density, MemoryKind, Scalars};
use sluice_field::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

use crate::context::{Chunked, DeviceCtx};
use crate::repr::{as_words, as_words_mut, DeviceRepr};
use crate::source::ProgramKind;
use crate::OpenClBackend;

/// Bits of a scalar the windows cover (Fr::NUM_BITS).
const SCALAR_BITS: usize = 255;

/// Bases resident on the backend's devices: device `d` holds `parts[d]`, the bases
/// `starts[d]..starts[d] + parts[d].len`, so an MSM runs on every device at once.
pub struct OpenClBases<A> {
    pub(crate) parts: Vec<Chunked>,
    pub(crate) starts: Vec<usize>,
    pub(crate) len: usize,
    _affine: PhantomData<fn() -> A>,
}

/// G1 bases resident in an [`OpenClBackend`].
pub type OpenClG1Bases = OpenClBases<G1Affine>;
/// G2 bases resident in an [`OpenClBackend`].
pub type OpenClG2Bases = OpenClBases<G2Affine>;

/// What the MSM needs of a group, on the host and on the device.
pub(crate) trait GpuCurve: DeviceRepr {
    type Proj: DeviceRepr;
    const PROGRAM: ProgramKind;
    const KERNEL: &'static str;
    fn identity() -> Self::Proj;
    fn add(a: &Self::Proj, b: &Self::Proj) -> Self::Proj;
    fn double(a: &Self::Proj) -> Self::Proj;
}

macro_rules! gpu_curve {
    ($affine:ty, $proj:ty, $program:expr, $kernel:literal) => {
        impl GpuCurve for $affine {
            type Proj = $proj;
            const PROGRAM: ProgramKind = $program;
            const KERNEL: &'static str = $kernel;
            fn identity() -> $proj {
                <$proj>::identity()
            }
            fn add(a: &$proj, b: &$proj) -> $proj {
                a.add_vartime(b)
            }
            fn double(a: &$proj) -> $proj {
                a.double()
            }
        }
    };
}

gpu_curve!(G1Affine, G1Projective, ProgramKind::G1Msm, "G1_msm_partial");
gpu_curve!(G2Affine, G2Projective, ProgramKind::G2Msm, "G2_msm_partial");

/// Window width and work split of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plan {
    window_bits: usize,
    windows: usize,
    groups: usize,
}

impl Plan {
    /// Minimises the launch's time estimate: work items run in `ceil(items / target)` waves,
    /// each item adds `n / groups` bases and reduces `2^c` buckets (twice).
    fn new(n: usize, ctx: &DeviceCtx, proj_bytes: usize) -> Plan {
        let per_cu = if ctx.info.is_gpu { 128 } else { 8 };
        let target = (ctx.info.compute_units.max(1) as usize) * per_cu;
        let bucket_budget = (ctx.max_chunk_bytes / 2) as usize;
        let mut best = (
            usize::MAX,
            Plan {
                window_bits: 1,
                windows: SCALAR_BITS,
                groups: 1,
            },
        );
        for c in 1..=16usize {
            let windows = SCALAR_BITS.div_ceil(c);
            let mut groups = (target / windows).clamp(1, n.max(1));
            while groups > 1 && groups * windows * ((1 << c) - 1) * proj_bytes > bucket_budget {
                groups /= 2;
            }
            if windows * ((1 << c) - 1) * proj_bytes > bucket_budget {
                break;
            }
            let waves = (windows * groups).div_ceil(target);
            let cost = waves * (n.div_ceil(groups) + (2 << c));
            if cost < best.0 {
                best = (
                    cost,
                    Plan {
                        window_bits: c,
                        windows,
                        groups,
                    },
                );
            }
        }
        best.1
    }
}

/// Where the MSM's scalars come from, after density compaction: the k-th used scalar is
/// `host[k]`, or element `index[k]` of the device buffer.
enum Source<'a> {
    Host(std::borrow::Cow<'a, [Fr]>),
    Buffer { buf: &'a Chunked, index: Vec<u32> },
}

impl OpenClBackend {
    pub(crate) fn upload_bases<A: GpuCurve>(
        &self,
        name: &str,
        bases: &[A],
    ) -> Result<OpenClBases<A>, BackendError> {
        let d = self.devices.len();
        let mut parts = Vec::with_capacity(d);
        let mut starts = Vec::with_capacity(d);
        for (i, ctx) in self.devices.iter().enumerate() {
            let (start, end) = (bases.len() * i / d, bases.len() * (i + 1) / d);
            let part = Chunked::alloc(ctx, i, &self.tracker, name, end - start, A::WORDS)?;
            part.write(ctx, 0, as_words(&bases[start..end]))?;
            parts.push(part);
            starts.push(start);
        }
        Ok(OpenClBases {
            parts,
            starts,
            len: bases.len(),
            _affine: PhantomData,
        })
    }

    pub(crate) fn msm<A: GpuCurve>(
        &self,
        bases: &OpenClBases<A>,
        skip: usize,
        scalars: Scalars<'_, Self>,
        density: Option<&Density>,
    ) -> Result<A::Proj, BackendError> {
        let scalars_len = match &scalars {
            Scalars::Host(s) => s.len(),
            Scalars::Buffer(b) => b.data.len,
        };
        if let Some(d) = density {
            if d.len() != scalars_len {
                return Err(BackendError::LengthMismatch {
                    what: "msm scalars (density length)",
                    expected: d.len(),
                    got: scalars_len,
                });
            }
        }
        let used = density.map_or(scalars_len, Density::count_ones);
        let available = bases.len.saturating_sub(skip);
        if used > available {
            return Err(BackendError::LengthMismatch {
                what: "msm bases (after skip)",
                expected: used,
                got: available,
            });
        }
        let used_positions = || -> Box<dyn Iterator<Item = usize> + '_> {
            match density {
                Some(d) => Box::new((0..d.len()).filter(|&i| d.get(i))),
                None => Box::new(0..scalars_len),
            }
        };
        let source = match scalars {
            Scalars::Host(s) => Source::Host(match density {
                Some(_) => used_positions().map(|i| s[i]).collect::<Vec<_>>().into(),
                None => s.into(),
            }),
            Scalars::Buffer(b) => {
                if scalars_len > u32::MAX as usize {
                    return Err(BackendError::Unsupported(
                        "an MSM over a scalar buffer of 2^32 or more elements".into(),
                    ));
                }
                Source::Buffer {
                    buf: &b.data,
                    index: used_positions().map(|i| i as u32).collect(),
                }
            }
        };

        // Batches: the used range [skip, skip + used) cut along parts and chunks. Devices
        // other than the scalars' are prepared first, so reading scalars back for them never
        // waits behind an MSM already queued there.
        let mut batches = Vec::new();
        for (d, part) in bases.parts.iter().enumerate().rev() {
            for c in 0..part.chunks.len() {
                let chunk_start = bases.starts[d] + c * part.chunk_len;
                let lo = chunk_start.max(skip);
                let hi = (chunk_start + part.chunk_elems(c)).min(skip + used);
                if lo < hi {
                    batches.push((d, c, lo - chunk_start, lo - skip, hi - lo));
                }
            }
        }
        let mut pending = Vec::with_capacity(batches.len());
        for (d, c, base_offset, k0, count) in batches {
            let scalars = self.prepare_scalars(d, &source, k0, count)?;
            pending.push(self.launch::<A>(
                d,
                &bases.parts[d].chunks[c],
                base_offset,
                &scalars,
                count,
            )?);
        }
        let mut total = A::identity();
        for p in pending {
            total = A::add(&total, &p.finish()?);
        }
        Ok(total)
    }

    /// The canonical (non-Montgomery) scalars `k0..k0 + count` of `source`, on device `d`.
    fn prepare_scalars(
        &self,
        d: usize,
        source: &Source<'_>,
        k0: usize,
        count: usize,
    ) -> Result<Chunked, BackendError> {
        let ctx = &self.devices[d];
        let out = Chunked::alloc(ctx, d, &self.tracker, "msm scalars", count, 8)?;
        let out_mem = single(&out)?;
        let host_scalars: std::borrow::Cow<'_, [Fr]> = match source {
            Source::Host(s) => s[k0..k0 + count].into(),
            Source::Buffer { buf, index } if buf.device == d => {
                let idx = &index[k0..k0 + count];
                let idx_mem = ctx.raw_buffer("msm scalar indices", count)?;
                let _tracked = self.tracker.allocate(
                    MemoryKind::Device,
                    "msm scalar indices",
                    (count * 4) as u64,
                )?;
                ctx.write(&idx_mem, 0, idx)?;
                for (i, chunk) in buf.chunks.iter().enumerate() {
                    ctx.kernel(ProgramKind::Fr, "fr_gather_from_mont")?
                        .mem(out_mem)?
                        .mem(chunk)?
                        .mem(&idx_mem)?
                        .u32(count as u32)?
                        .u32((i * buf.chunk_len) as u32)?
                        .u32(buf.chunk_elems(i) as u32)?
                        .run(count, None)?;
                }
                return Ok(out);
            }
            Source::Buffer { buf, index } => {
                // Another device holds the scalars: read the span they cover, pick the used.
                let idx = &index[k0..k0 + count];
                let (first, last) = (idx[0] as usize, idx[count - 1] as usize);
                let mut span = vec![<Fr as ff::Field>::ZERO; last + 1 - first];
                buf.read(&self.devices[buf.device], first, as_words_mut(&mut span))?;
                idx.iter()
                    .map(|&i| span[i as usize - first])
                    .collect::<Vec<_>>()
                    .into()
            }
        };
        ctx.write(out_mem, 0, as_words(&host_scalars))?;
        ctx.kernel(ProgramKind::Fr, "fr_from_mont")?
            .mem(out_mem)?
            .mem(out_mem)?
            .u32(count as u32)?
            .run(count, None)?;
        Ok(out)
    }

    /// Enqueues one Pippenger launch over `count` bases from `base_offset` of `bases`.
    fn launch<A: GpuCurve>(
        &self,
        d: usize,
        bases: &ocl::core::Mem,
        base_offset: usize,
        scalars: &Chunked,
        count: usize,
    ) -> Result<Pending<'_, A>, BackendError> {
        let ctx = &self.devices[d];
        let proj_bytes = A::Proj::WORDS * 4;
        let plan = Plan::new(count, ctx, proj_bytes);
        let items = plan.windows * plan.groups;
        let bucket_words = items * ((1 << plan.window_bits) - 1) * A::Proj::WORDS;
        let buckets_tracked =
            self.tracker
                .allocate(MemoryKind::Device, "msm buckets", (bucket_words * 4) as u64)?;
        let buckets = ctx.raw_buffer("msm buckets", bucket_words)?;
        let results = Chunked::alloc(ctx, d, &self.tracker, "msm results", items, A::Proj::WORDS)?;
        ctx.kernel(A::PROGRAM, A::KERNEL)?
            .mem(bases)?
            .mem(single(scalars)?)?
            .mem(&buckets)?
            .mem(single(&results)?)?
            .u32(base_offset as u32)?
            .u32(count as u32)?
            .u32(plan.groups as u32)?
            .u32(plan.windows as u32)?
            .u32(plan.window_bits as u32)?
            .run(items, None)?;
        drop((buckets, buckets_tracked));
        Ok(Pending {
            ctx,
            results,
            plan,
            _curve: PhantomData,
        })
    }
}

/// The one cl buffer of a buffer that is known to fit one allocation.
fn single(c: &Chunked) -> Result<&ocl::core::Mem, BackendError> {
    match c.chunks.as_slice() {
        [m] => Ok(m),
        _ => Err(BackendError::Unsupported(format!(
            "an MSM temporary of {} elements split into {} chunks",
            c.len,
            c.chunks.len()
        ))),
    }
}

/// A launched MSM batch whose window sums are still on the device.
struct Pending<'a, A: GpuCurve> {
    ctx: &'a DeviceCtx,
    results: Chunked,
    plan: Plan,
    _curve: PhantomData<A>,
}

impl<A: GpuCurve> Pending<'_, A> {
    /// Reads the (group, window) sums and combines them: sum_w 2^(c w) sum_g result[g][w].
    fn finish(self) -> Result<A::Proj, BackendError> {
        let Plan {
            window_bits,
            windows,
            groups,
        } = self.plan;
        let mut sums = vec![A::identity(); windows * groups];
        self.results.read(self.ctx, 0, as_words_mut(&mut sums))?;
        let mut acc = A::identity();
        for w in (0..windows).rev() {
            for _ in 0..window_bits {
                acc = A::double(&acc);
            }
            for g in 0..groups {
                acc = A::add(&acc, &sums[g * windows + w]);
            }
        }
        Ok(acc)
    }
}
