//! One Pippenger launch of a [`Plan`]: the kernels of `kernels/msm.cl` in order, in named
//! phases (count, scan, scatter, accumulate, reduce, window sums), over the buffers the
//! plan's [`LaunchBuffers`] sizes.

use std::marker::PhantomData;

use sluice_backend::{BackendError, MemoryTracker};

use super::curve::GpuCurve;
use super::finish::Pending;
use super::plan::{LaunchBuffers, Plan, SCAN_PER};
use crate::context::{DeviceCtx, Launch};
use crate::release::DeviceTemp;
use crate::tuning::WorkGroup;

/// A temporary device buffer and its tracked bytes.
type Temp = DeviceTemp;

/// The buffers of the bucket sort: per bucket its entries' offset, end (the scatter's
/// cursor) and rank among the non-empty, and each set's totals.
struct Sorted {
    offsets: Temp,
    ends: Temp,
    ranks: Temp,
    totals: Temp,
}

/// One launch being queued on one device.
struct Run<'a, A> {
    ctx: &'a DeviceCtx,
    tracker: &'a MemoryTracker,
    plan: Plan,
    sizes: LaunchBuffers,
    count: usize,
    /// Elements between one window's bases and the next in a folded plan's table.
    stride: usize,
    /// Work items of the count and the scatter.
    items: usize,
    point_group: Option<usize>,
    _curve: PhantomData<A>,
}

/// Enqueues one launch of `plan` over `count` scalars and the bases from element `offset`
/// of `bases` (`(bases, offset, stride)`: a folded plan's window k lies `stride` elements
/// after window k - 1); one point per bucket set stays on the device. `point_group` is the
/// tuned work-group size of the point kernels, if any.
pub(super) fn launch<'a, A: GpuCurve>(
    ctx: &'a DeviceCtx,
    tracker: &MemoryTracker,
    (bases, base_offset, stride): (&ocl::core::Mem, usize, usize),
    scalars: &ocl::core::Mem,
    count: usize,
    plan: Plan,
    point_group: Option<WorkGroup>,
) -> Result<Pending<'a, A>, BackendError> {
    let run = Run::<A> {
        ctx,
        tracker,
        plan,
        sizes: plan.buffers(ctx.info, A::xyzz_words(), A::point_words()),
        count,
        stride,
        items: count.div_ceil(plan.per_item),
        point_group: A::point_group(point_group, ctx.info.is_gpu),
        _curve: PhantomData,
    };
    // Temporaries (scratch) are dropped once every kernel of the launch is queued, and
    // kept as spares for the next launch once idle ([`crate::release`]): on NVIDIA a
    // release waits for the queued kernels, and released between two kernels it held the
    // next one back with the device idle before each reduce (BENCHMARKS.md#msm-gpu). They
    // coexist at the end either way: `scratch_bytes` reserves them all.
    let counts = run.count_buckets(scalars)?;
    let (sorted, block_sums) = run.scan_buckets(&counts)?;
    let entries = run.scatter(scalars, &sorted)?;
    let (pieces, piece_buckets) = run.accumulate((bases, base_offset), &entries, &sorted)?;
    let slices = run.reduce(&pieces, &piece_buckets, &sorted.totals)?;
    let (result, per_window, rounds) = run.sum_windows(slices)?;
    ctx.flush()?;
    drop((
        counts,
        block_sums,
        sorted,
        entries,
        pieces,
        piece_buckets,
        rounds,
    ));
    Ok(Pending::new(ctx, result, per_window, plan))
}

impl<A: GpuCurve> Run<'_, A> {
    fn temp(&self, what: &str, words: usize) -> Result<Temp, BackendError> {
        self.ctx.scratch(self.tracker, what, words)
    }

    fn kernel(&self, name: &str) -> Result<Launch<'_>, BackendError> {
        self.ctx
            .kernel(A::PROGRAM, &format!("{}_{name}", A::PREFIX))
    }

    /// Entries per bucket: every scalar's digits counted into its windows' buckets.
    fn count_buckets(&self, scalars: &ocl::core::Mem) -> Result<Temp, BackendError> {
        let p = &self.plan;
        let counts = self.temp("msm bucket counts", self.sizes.per_bucket)?;
        self.ctx.fill_zero(&counts, self.sizes.per_bucket)?;
        self.kernel("msm_count")?
            .mem(scalars)?
            .mem(&counts)?
            .u32(self.count as u32)?
            .u32(p.c as u32)?
            .u32(self.items as u32)?
            .u32(p.per_item as u32)?
            .u32(p.w0 as u32)?
            .u32(p.wn as u32)?
            .u32(p.fold as u32)?
            .run(self.items, None)?;
        Ok(counts)
    }

    /// The buckets' offsets, ends and ranks from their counts: a scan of the blocks of each
    /// set, of the sets' block sums, then of every block again with its offset.
    fn scan_buckets(&self, counts: &Temp) -> Result<(Sorted, Temp), BackendError> {
        let (p, s) = (&self.plan, &self.sizes);
        let sorted = Sorted {
            offsets: self.temp("msm bucket offsets", s.per_bucket)?,
            ends: self.temp("msm bucket ends", s.per_bucket)?,
            ranks: self.temp("msm bucket ranks", s.per_bucket)?,
            totals: self.temp("msm window totals", s.totals)?,
        };
        let block_sums = self.temp("msm bucket block sums", s.block_sums)?;
        let scan_local = 2 * s.scan_items + 2;
        // The two kernels over every block of every set: the same trailing arguments and
        // one group per block.
        let over_blocks = |launch: Launch<'_>| {
            launch
                .local_words(scan_local)?
                .u32(p.buckets as u32)?
                .u32((SCAN_PER * s.scan_items) as u32)?
                .u32(p.windows as u32)?
                .run(p.windows * s.blocks * s.scan_items, Some(s.scan_items))
        };
        over_blocks(
            self.kernel("msm_scan_blocks")?
                .mem(counts)?
                .mem(&block_sums)?,
        )?;
        self.kernel("msm_scan_sets")?
            .mem(&block_sums)?
            .mem(&sorted.totals)?
            .local_words(scan_local)?
            .u32(s.blocks as u32)?
            .u32(p.seg_len as u32)?
            .run(p.windows * s.scan_items, Some(s.scan_items))?;
        over_blocks(
            self.kernel("msm_scan")?
                .mem(counts)?
                .mem(&block_sums)?
                .mem(&sorted.offsets)?
                .mem(&sorted.ends)?
                .mem(&sorted.ranks)?,
        )?;
        Ok((sorted, block_sums))
    }

    /// Every (bucket, base) entry into its bucket's place, sorted.
    fn scatter(&self, scalars: &ocl::core::Mem, sorted: &Sorted) -> Result<Temp, BackendError> {
        let p = &self.plan;
        let entries = self.temp("msm sorted entries", self.sizes.entries)?;
        self.kernel("msm_scatter")?
            .mem(scalars)?
            .mem(&sorted.ends)?
            .mem(&entries)?
            .u32(self.count as u32)?
            .u32(p.c as u32)?
            .u32(self.items as u32)?
            .u32(p.per_item as u32)?
            .u32(p.w0 as u32)?
            .u32(p.wn as u32)?
            .u32(p.fold as u32)?
            .u32(self.stride as u32)?
            .u32(p.full_sets as u32)?
            .u32(p.large_span as u32)?
            .run(self.items, None)?;
        Ok(entries)
    }

    /// Each segment of sorted entries summed per bucket into pieces (XYZZ partial sums),
    /// with the bucket each belongs to.
    fn accumulate(
        &self,
        (bases, base_offset): (&ocl::core::Mem, usize),
        entries: &Temp,
        sorted: &Sorted,
    ) -> Result<(Temp, Temp), BackendError> {
        let (p, s) = (&self.plan, &self.sizes);
        let pieces = self.temp("msm pieces", s.pieces)?;
        let piece_buckets = self.temp("msm piece buckets", s.piece_buckets)?;
        self.kernel("msm_accumulate")?
            .mem(bases)?
            .mem(entries)?
            .mem(&sorted.offsets)?
            .mem(&sorted.ends)?
            .mem(&sorted.ranks)?
            .mem(&sorted.totals)?
            .mem(&pieces)?
            .mem(&piece_buckets)?
            .u32(base_offset as u32)?
            .u32(p.span as u32)?
            .u32(p.buckets as u32)?
            .u32(p.seg_len as u32)?
            .u32(p.segs as u32)?
            .u32(p.cap as u32)?
            .u32(p.windows as u32)?
            .u32(p.full_sets as u32)?
            .u32(p.large_span as u32)?
            .run_any_group(p.windows * p.segs, self.point_group)?;
        Ok((pieces, piece_buckets))
    }

    /// The pieces of each set reduced to `slices` weighted partial sums of its buckets.
    fn reduce(
        &self,
        pieces: &Temp,
        piece_buckets: &Temp,
        totals: &Temp,
    ) -> Result<Temp, BackendError> {
        let p = &self.plan;
        let slices = self.temp("msm window slices", self.sizes.slices)?;
        self.kernel("msm_reduce")?
            .mem(pieces)?
            .mem(piece_buckets)?
            .mem(totals)?
            .mem(&slices)?
            .u32(p.cap as u32)?
            .u32(p.slices as u32)?
            .u32(p.windows as u32)?
            .run_any_group(p.windows * p.slices, self.point_group)?;
        Ok(slices)
    }

    /// Each set's slices added in rounds ([`Plan::sum_rounds`]) until few enough are left
    /// for the host: the last round's points, their count per set, and the earlier
    /// rounds' buffers (the caller keeps them until the launch is queued).
    fn sum_windows(&self, slices: Temp) -> Result<(Temp, usize, Vec<Temp>), BackendError> {
        let p = &self.plan;
        let mut sums = slices;
        let mut spent = Vec::new();
        let mut per_window = p.slices;
        for (group, next_per_window) in p.sum_rounds() {
            let words = p.windows * next_per_window * A::point_words();
            let next = self.temp("msm window sums", words)?;
            self.kernel("sum_groups")?
                .mem(&sums)?
                .mem(&next)?
                .u32((p.windows * next_per_window) as u32)?
                .u32(group as u32)?
                .run_any_group(p.windows * next_per_window, self.point_group)?;
            spent.push(std::mem::replace(&mut sums, next));
            per_window = next_per_window;
        }
        Ok((sums, per_window, spent))
    }
}
