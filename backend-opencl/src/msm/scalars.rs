//! An MSM's scalars on the devices that use them: from the host, or from a device buffer
//! (in place where the MSM owns it, compacted by a density on the device), converted out
//! of Montgomery form; and the count of the large ones the plans are sized by.

use std::borrow::Cow;

use sluice_backend::{BackendError, Density, MemoryTracker};
use sluice_field::Fr;

use super::curve::GpuCurve;
use crate::chunked::Chunked;
use crate::context::DeviceCtx;
use crate::release::DeviceTemp;
use crate::repr::{as_words, as_words_mut, u64_as_words};
use crate::source::ProgramKind;

/// An MSM's scalars as the backend hands them in: host memory, a buffer of the first
/// device, or such a buffer the MSM takes over (and may overwrite).
pub(crate) enum MsmScalars<'a> {
    /// Scalars in host memory.
    Host(&'a [Fr]),
    /// Scalars in a buffer the MSM only reads.
    Buffer(&'a Chunked),
    /// Scalars in a buffer the MSM owns and frees.
    Owned(Chunked),
}

impl MsmScalars<'_> {
    /// The number of scalars.
    pub(super) fn len(&self) -> usize {
        match self {
            MsmScalars::Host(s) => s.len(),
            MsmScalars::Buffer(b) => b.len,
            MsmScalars::Owned(b) => b.len,
        }
    }
}

/// A scalar buffer a [`Source`] reads: borrowed, or owned by the MSM until it returns.
pub(super) enum Held<'a> {
    Borrowed(&'a Chunked),
    Owned(Chunked),
}

impl std::ops::Deref for Held<'_> {
    type Target = Chunked;
    fn deref(&self) -> &Chunked {
        match self {
            Held::Borrowed(b) => b,
            Held::Owned(b) => b,
        }
    }
}

/// One device's share of an MSM: (bases chunk, first base in it, first scalar, count, the
/// scalars if already prepared).
pub(super) type Batch = (usize, usize, usize, usize, Option<PreparedScalars>);

/// A batch's canonical scalars on its device (untracked where they were converted in place
/// in a buffer the MSM owns, which counts them already).
pub(super) type PreparedScalars = DeviceTemp;

/// Where the MSM's scalars come from, after density compaction: the k-th used scalar is
/// `host[k]`, or the k-th used element of the device buffer (element k without a density,
/// `used` `None`).
pub(super) enum Source<'a> {
    Host(Cow<'a, [Fr]>),
    Buffer {
        buf: Held<'a>,
        used: Option<UsedElements<'a>>,
        /// The MSM owns `buf` ([`MsmScalars::Owned`]): its leading scalars may be converted
        /// where they are.
        owned: bool,
    },
}

/// Density words per parallel task of [`count_used`] and [`UsedElements::new`]: 2^20
/// positions.
const WORDS_PER_TASK: usize = 1 << 14;

/// The used positions of `density`, counted in parallel: one core takes milliseconds over
/// a 2^27 density's two million words (a popcount is no single instruction on baseline
/// x86-64), with the device idle before the MSM starts (BENCHMARKS.md#partition).
pub(super) fn count_used(density: &Density) -> usize {
    use rayon::prelude::*;
    crate::host_pool::install(|| {
        density
            .words()
            .par_chunks(WORDS_PER_TASK)
            .map(|c| c.iter().map(|w| w.count_ones() as usize).sum::<usize>())
            .sum()
    })
}

/// The used elements of a density-masked buffer, from the density's words: `before[w]`
/// used elements precede word `w` (one more entry holds the total). The host finds a used
/// element's position by a search, the device a position's rank by a popcount
/// (`fr_gather_used_from_mont`), so no index of every used position is built, held or
/// uploaded (4 bytes per used scalar, half a gigabyte at 2^27).
pub(super) struct UsedElements<'a> {
    density: &'a Density,
    pub(super) before: Vec<u32>,
}

impl<'a> UsedElements<'a> {
    /// The counts before each word, computed in parallel on the device's host pool (see
    /// [`count_used`]).
    pub(super) fn new(density: &'a Density) -> Self {
        use rayon::prelude::*;
        let words = density.words();
        let before = crate::host_pool::install(|| {
            let sums: Vec<u32> = words
                .par_chunks(WORDS_PER_TASK)
                .map(|c| c.iter().map(|w| w.count_ones()).sum())
                .collect();
            let mut total = 0u32;
            let starts: Vec<u32> = sums
                .iter()
                .map(|&s| {
                    let start = total;
                    total += s;
                    start
                })
                .collect();
            let mut before = vec![0u32; words.len() + 1];
            before[..words.len()]
                .par_chunks_mut(WORDS_PER_TASK)
                .zip(words.par_chunks(WORDS_PER_TASK))
                .zip(starts)
                .for_each(|((out, words), mut running)| {
                    for (o, w) in out.iter_mut().zip(words) {
                        *o = running;
                        running += w.count_ones();
                    }
                });
            before[words.len()] = total;
            before
        });
        UsedElements { density, before }
    }

    /// The density's 64-bit words.
    fn words(&self) -> &'a [u64] {
        self.density.words()
    }

    /// The position of used element `k` (below the used count).
    pub(super) fn position(&self, k: usize) -> usize {
        // The last word with at most k used elements before it holds element k.
        let w = self.before.partition_point(|&b| b as usize <= k) - 1;
        let mut word = self.words()[w];
        for _ in 0..k - self.before[w] as usize {
            word &= word - 1;
        }
        w * 64 + word.trailing_zeros() as usize
    }

    /// The positions `[lo, hi)` that hold exactly used elements `k0..k0 + count`
    /// (`count` at least 1).
    pub(super) fn span(&self, k0: usize, count: usize) -> (usize, usize) {
        (self.position(k0), self.position(k0 + count - 1) + 1)
    }
}

impl<'a> Source<'a> {
    /// Where the k-th used scalar of `scalars` comes from under `density` (all of them
    /// without one), checked to be in range for an MSM on the device.
    pub(super) fn new(
        scalars: MsmScalars<'a>,
        density: Option<&'a Density>,
    ) -> Result<Self, BackendError> {
        let (buf, owned) = match scalars {
            MsmScalars::Host(s) => {
                return Ok(Source::Host(match density {
                    // Gathered in parallel on the device's host pool.
                    Some(d) => crate::host_pool::install(|| d.gather(s))?.into(),
                    None => s.into(),
                }));
            }
            MsmScalars::Buffer(b) => (Held::Borrowed(b), false),
            MsmScalars::Owned(b) => (Held::Owned(b), true),
        };
        if buf.len > u32::MAX as usize {
            return Err(BackendError::Unsupported(
                "an MSM over a scalar buffer of 2^32 or more elements".into(),
            ));
        }
        Ok(Source::Buffer {
            buf,
            // A density of the first k scalars (h's) reads them in place.
            used: density
                .filter(|d| d.used_prefix().is_none())
                .map(UsedElements::new),
            owned,
        })
    }

    /// Whether the scalars are in a buffer on another device than `d`.
    pub(super) fn elsewhere_than(&self, d: usize) -> bool {
        matches!(self, Source::Buffer { buf, .. } if buf.device != d)
    }

    /// The canonical (non-Montgomery) scalars `k0..k0 + count` of `source`, on device `d`.
    pub(super) fn prepare(
        &self,
        devices: &[DeviceCtx],
        tracker: &MemoryTracker,
        d: usize,
        k0: usize,
        count: usize,
    ) -> Result<PreparedScalars, BackendError> {
        let source = self;
        let ctx = &devices[d];
        let to_canonical = |mem: &ocl::core::Mem| {
            ctx.kernel(ProgramKind::Fr, "fr_from_mont")?
                .mem(mem)?
                .mem(mem)?
                .u32(count as u32)?
                .run(count, None)
        };
        if let Source::Buffer {
            buf,
            used: None,
            owned: true,
        } = source
        {
            // The owned buffer's leading scalars, all in its first chunk: converted where
            // they are, without a copy of them.
            if buf.device == d && k0 == 0 && count <= buf.chunk_elems(0) {
                let mem = buf.chunks[0].clone();
                to_canonical(&mem)?;
                return Ok(ctx.untracked_temp(mem));
            }
        }
        let out = ctx.scratch(tracker, "msm scalars", count * 8)?;
        ctx.mark("msm scalars buffer");
        let out_mem: &ocl::core::Mem = &out;
        let host_scalars: Cow<'_, [Fr]> = match source {
            Source::Host(s) => s[k0..k0 + count].into(),
            Source::Buffer {
                buf, used: None, ..
            } if buf.device == d => {
                // Elements k0.. in order: copied on the device, converted below.
                buf.each_range(k0, count, |chunk, at, from, n| {
                    let w = buf.words;
                    ctx.copy_at((&buf.chunks[chunk], at * w), (out_mem, from * w), n * w)
                })?;
                Cow::Borrowed(&[])
            }
            Source::Buffer {
                buf,
                used: Some(used),
                ..
            } if buf.device == d => {
                // The density's words over the span, and the used counts before each.
                let (lo, hi) = used.span(k0, count);
                let (w0, w1) = (lo / 64, hi.div_ceil(64));
                let tracked = |what, words| ctx.scratch(tracker, what, words);
                let words_mem = tracked("msm density words", 2 * (w1 - w0))?;
                let before_mem = tracked("msm density ranks", w1 - w0)?;
                ctx.mark("msm density buffers");
                ctx.write_fresh(&words_mem, 0, u64_as_words(&used.words()[w0..w1]))?;
                ctx.write_fresh(&before_mem, 0, &used.before[w0..w1])?;
                for (i, chunk) in buf.chunks.iter().enumerate() {
                    let start = i * buf.chunk_len;
                    let (a, b) = (lo.max(start), hi.min(start + buf.chunk_elems(i)));
                    if a >= b {
                        continue;
                    }
                    ctx.kernel(ProgramKind::Fr, "fr_gather_used_from_mont")?
                        .mem(out_mem)?
                        .mem(chunk)?
                        .mem(&words_mem)?
                        .mem(&before_mem)?
                        .u32(k0 as u32)?
                        .u64(w0 as u64)?
                        .u64(a as u64)?
                        .u64(b as u64)?
                        .u64(start as u64)?
                        .run(b - a, None)?;
                }
                return Ok(out);
            }
            Source::Buffer { buf, used, .. } => {
                // Another device holds the scalars: read the span they cover, pick the used.
                let (lo, hi) = used
                    .as_ref()
                    .map_or((k0, k0 + count), |u| u.span(k0, count));
                let mut span = vec![<Fr as ff::Field>::ZERO; hi - lo];
                buf.read(&devices[buf.device], lo, as_words_mut(&mut span))?;
                match used {
                    Some(u) => u
                        .density
                        .positions_in(lo..hi)
                        .map(|i| span[i - lo])
                        .collect(),
                    None => span,
                }
                .into()
            }
        };
        // A new buffer: on the transfer queue, beside the kernels already queued.
        ctx.write_fresh(out_mem, 0, as_words(&host_scalars))?;
        to_canonical(out_mem)?;
        Ok(out)
    }
}

/// How many of the `count` scalars on `ctx` are 2^16 or more: it decides the windows
/// ([`Plan::new`](super::plan::Plan::new)). One word read back.
pub(super) fn count_large<A: GpuCurve>(
    ctx: &DeviceCtx,
    tracker: &MemoryTracker,
    scalars: &ocl::core::Mem,
    count: usize,
) -> Result<usize, BackendError> {
    let large = ctx.scratch(tracker, "msm large scalars", 1)?;
    ctx.fill_zero(&large, 1)?;
    ctx.kernel(A::PROGRAM, &format!("{}_msm_count_large", A::PREFIX))?
        .mem(scalars)?
        .mem(&large)?
        .u32(count as u32)?
        .run(count, Some(COUNT_LARGE_GROUP))?;
    let mut word = [0u32];
    ctx.read(&large, 0, &mut word)?;
    Ok(word[0] as usize)
}

/// Work items of a group of the large-scalar count (one atomic per group).
const COUNT_LARGE_GROUP: usize = 256;
