//! The shape of an MSM's launches: window bits and bucket sets chosen by a cost model
//! within the device's largest allocation, and the device buffers each launch allocates.

use crate::device::DeviceInfo;
use crate::tuning::MsmTuning;

/// Bits of a scalar the windows cover (Fr::NUM_BITS).
const SCALAR_BITS: usize = 255;

/// `windows` windows in groups of `per`: each group's `(w0, wn)`.
pub(super) fn window_groups(windows: usize, per: usize) -> Vec<(usize, usize)> {
    (0..windows)
        .step_by(per)
        .map(|w0| (w0, per.min(windows - w0)))
        .collect()
}

/// The table's windows for bases chunks of up to `chunk_len` elements of `bytes` each:
/// `(c, windows per buffer)` whose folded plans ([`Plan::folded`], one per buffer) cost the
/// least ([`Plan::cost`]) for a dense MSM over a whole chunk.
pub(super) fn table_window(
    chunk_len: usize,
    bytes: usize,
    max_alloc: u64,
    t: &MsmTuning,
) -> (usize, usize) {
    // Entries name (k - w0) stride + i in 31 bits.
    let per_buffer = (max_alloc / (chunk_len as u64 * bytes as u64).max(1))
        .min(((1u64 << 31) - 1) / chunk_len.max(1) as u64)
        .max(1) as usize;
    let window = t.window_bits;
    (2..=MAX_WINDOW_BITS)
        .filter(|&c| window.map_or(c <= CHOSEN_WINDOW_BITS, |w| w == c))
        .filter_map(|c| {
            let windows = DIGIT_BITS.div_ceil(c);
            let cost = window_groups(windows, per_buffer)
                .into_iter()
                .map(|(w0, wn)| {
                    Plan::folded(chunk_len, chunk_len, (c, w0, wn), max_alloc, 2 * bytes, t)
                        .map(|p| p.cost(chunk_len))
                })
                .sum::<Option<usize>>()?;
            Some((cost, c, per_buffer.min(windows)))
        })
        .min()
        .map_or((16, 1), |(_, c, per)| (c, per))
}

/// The largest window the kernels take ([`MsmTuning::window_bits`] reaches it).
const MAX_WINDOW_BITS: usize = 24;

/// The largest window the planners choose: on an H200 c = 22 lost to c = 20 wherever both
/// ran, plain and folded, G1 and G2 (BENCHMARKS.md#msm-gpu); a 21-bit window has 20's
/// window count (13) with twice the buckets.
const CHOSEN_WINDOW_BITS: usize = 20;

/// What a piece slot of a plan (a bucket, or a segment's partial sum) costs the count,
/// scan, scatter, reduce and window sums, in mixed additions of the accumulate: fitted to
/// an H200's kernel times over window sweeps (5 to 17 by plan and group), 8 makes the model
/// pick the fastest measured window of every swept size, or one within 3%, plain and
/// folded, G1 and G2 (BENCHMARKS.md#msm-gpu).
const PIECE_COST: usize = 8;

/// Scalars below 2^16 are small: the planner counts the others (`large`), and only those
/// have digits in the windows above bit 16.
const SMALL_SCALAR_BITS: usize = 16;

/// Bits the signed windows cover: one more than the scalars' 255, for the last borrow.
pub(super) const DIGIT_BITS: usize = SCALAR_BITS + 1;

/// Reduce outputs added per work item in each `sum_groups` round. The later rounds have
/// few work items, so their time is the chain of additions in one item: with 4 the rounds
/// down to one point chain about half the additions that 16 did.
const SUM_GROUP: usize = 4;

/// The `sum_groups` rounds stop once at most this many points are left over all the
/// launch's windows; the host adds those: a few microseconds per point, where a GPU's
/// last rounds run one long chain of additions in a single work item.
const HOST_SUM: usize = 64;

/// The shape of one launch (see `kernels/msm.cl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Plan {
    /// Window bits c.
    pub(super) c: usize,
    /// Bucket sets: one per window, or one for all (`fold`).
    pub(super) windows: usize,
    /// Buckets per set: 2^(c-1).
    pub(super) buckets: usize,
    /// Entry slots per set: n, or wn n when folded (a set has at most that many entries).
    pub(super) span: usize,
    /// The first sets, which any scalar may have a digit in: [`span`](Self::span) slots
    /// each. A scalar below 2^16 has nonzero digits only in windows 0 to ceil(16 / c)
    /// (the last from a borrow), so each later set holds at most one entry per large
    /// scalar: [`large_span`](Self::large_span) slots.
    pub(super) full_sets: usize,
    /// Entry slots of each set after the first [`full_sets`](Self::full_sets).
    pub(super) large_span: usize,
    /// Entries per accumulate segment (L).
    pub(super) seg_len: usize,
    /// Segment slots per set: span / L rounded up.
    pub(super) segs: usize,
    /// Piece slots per set: one per non-empty bucket plus one per segment at most.
    pub(super) cap: usize,
    /// Reduce work items per set (a power of two).
    pub(super) slices: usize,
    /// Scalars per work item of the count and the scatter.
    pub(super) per_item: usize,
    /// The digit windows the launch sorts, `[w0, w0 + wn)`.
    pub(super) w0: usize,
    pub(super) wn: usize,
    /// All of them into one bucket set, over shifted bases.
    pub(super) fold: bool,
}

impl Plan {
    /// Window bits `c`, `sets` bucket sets of `span` entry slots each, for `n` scalars of
    /// which `large` are 2^16 or more; every window, not folded.
    pub(super) fn shape(
        c: usize,
        sets: usize,
        (span, n, large): (usize, usize, usize),
        t: &MsmTuning,
    ) -> Plan {
        let (chunk, slice, per_item) = (t.segment_len, t.reduce_slice, t.scalars_per_item);
        let buckets = 1usize << (c - 1);
        let seg_len = chunk.unwrap_or_else(|| segment_len(span, sets, buckets));
        let full_sets = sets.min(SMALL_SCALAR_BITS.div_ceil(c) + 1);
        let segs = span.div_ceil(seg_len).max(1);
        let cap = buckets + segs;
        Plan {
            c,
            windows: sets,
            buckets,
            span,
            full_sets,
            large_span: large.min(span),
            seg_len,
            segs,
            cap,
            slices: cap.div_ceil(slice.unwrap_or(16)).next_power_of_two(),
            per_item: per_item.unwrap_or_else(|| scalars_per_item(n, large)),
            w0: 0,
            wn: DIGIT_BITS.div_ceil(c),
            fold: false,
        }
    }

    /// Where set `k`'s entries start (see [`full_sets`](Self::full_sets)).
    pub(super) fn set_start(&self, k: usize) -> usize {
        let full = k.min(self.full_sets);
        full * self.span + (k - full) * self.large_span
    }

    /// Entry slots of every set together.
    pub(super) fn entry_slots(&self) -> usize {
        self.set_start(self.windows)
    }

    /// Whether every buffer of the launch fits one allocation.
    pub(super) fn fits(&self, max_alloc: u64, piece_bytes: usize) -> bool {
        let fits = |bytes: usize| bytes as u64 <= max_alloc;
        fits(self.windows * self.cap * piece_bytes) && fits(self.entry_slots().max(1) * 4)
    }

    /// The launch's cost in mixed additions (see [`Plan::new`]) for `m` scalars that cost
    /// one per window: their entries, and [`PIECE_COST`] per piece slot (per set, one per
    /// bucket and one per segment of the set's entries).
    pub(super) fn cost(&self, m: usize) -> usize {
        let per_set = if self.fold { m * self.wn } else { m };
        let slots = self.buckets + per_set.div_ceil(self.seg_len);
        m * self.wn + PIECE_COST * slots * self.windows
    }

    /// Windows `[w0, w0 + wn)` of `c` bits folded into one bucket set over shifted bases;
    /// `None` where its buffers do not fit one allocation each.
    pub(super) fn folded(
        n: usize,
        large: usize,
        (c, w0, wn): (usize, usize, usize),
        max_alloc: u64,
        piece_bytes: usize,
        t: &MsmTuning,
    ) -> Option<Plan> {
        let shape = Plan::shape(c, 1, (wn * n, n, large), t);
        // One set, which every window's digits share.
        let plan = Plan {
            w0,
            wn,
            fold: true,
            full_sets: 1,
            large_span: shape.span,
            ..shape
        };
        plan.fits(max_alloc, piece_bytes).then_some(plan)
    }

    /// The window minimising the cost ([`Plan::cost`]: m W mixed additions to fill the
    /// buckets, and the pieces they leave) among those whose buffers fit one allocation, for
    /// `n` scalars of which `large` are 2^16 or more; `piece_bytes` is the size of one
    /// partial sum (an XYZZ point).
    ///
    /// The others (booleans, small constants) have one nonzero digit, in window 0, for a
    /// window of 17 bits or more (two at most for smaller ones): only the large ones cost
    /// an addition per window. So m = max(large, n / 64): a partition's MSMs (1 scalar in
    /// 65 large) get the windows of a dense MSM of n / 64 rather than of n (c = 16 instead
    /// of 20 at n = 2^26), and far fewer buckets to scan and reduce. The floor bounds the
    /// windows, and with them the sorted entries (W n words), when hardly any scalar is
    /// large.
    pub(super) fn new(
        n: usize,
        large: usize,
        max_alloc: u64,
        piece_bytes: usize,
        t: &MsmTuning,
    ) -> Plan {
        let m = large_cost_scalars(n, large);
        let window = t.window_bits;
        let mut best: Option<(usize, Plan)> = None;
        for c in 2..=MAX_WINDOW_BITS {
            if window.map_or(c > CHOSEN_WINDOW_BITS, |w| w != c) {
                continue;
            }
            let plan = Plan::shape(c, DIGIT_BITS.div_ceil(c), (n, n, large), t);
            if !plan.fits(max_alloc, piece_bytes) {
                continue;
            }
            let cost = plan.cost(m);
            if best.map_or(true, |(b, _)| cost < b) {
                best = Some((cost, plan));
            }
        }
        best.map_or_else(|| Plan::new(n, large, u64::MAX, piece_bytes, t), |(_, p)| p)
    }

    /// The launches of an MSM of `n` scalars (`large` of them 2^16 or more): one plain plan
    /// ([`Plan::new`]), or one folded plan per buffer of a shifted-bases `table` (`(c,
    /// groups)`) where those cost fewer additions and fit.
    pub(super) fn launches(
        n: usize,
        large: usize,
        table: Option<(usize, &[(usize, usize)])>,
        max_alloc: u64,
        piece_bytes: usize,
        t: &MsmTuning,
    ) -> Vec<Plan> {
        let plain = Plan::new(n, large, max_alloc, piece_bytes, t);
        let m = large_cost_scalars(n, large);
        let folded = table.and_then(|(c, groups)| {
            groups
                .iter()
                .map(|&(w0, wn)| Plan::folded(n, large, (c, w0, wn), max_alloc, piece_bytes, t))
                .collect::<Option<Vec<Plan>>>()
        });
        match folded {
            // On a tie the folded plans win: they leave no windows to combine.
            Some(f) if f.iter().map(|p| p.cost(m)).sum::<usize>() <= plain.cost(m) => f,
            _ => vec![plain],
        }
    }
}

/// The scalars that cost an addition in every window, as the planner counts them (see
/// [`Plan::new`]).
fn large_cost_scalars(n: usize, large: usize) -> usize {
    large.max(n / 64).max(1)
}

/// Accumulate work items the segment length keeps at least, so that every SM of a large
/// GPU has several waves of them (an H200 holds about 60k items of the G1 kernel at once).
const MIN_SEGMENTS: usize = 1 << 18;

/// Scalars per work item of the count and the scatter. An item reserves one window-0
/// bucket's entries for all its scalars at once (`kernels/msm.cl`), which relieves a hot
/// bucket: with fewer than half the scalars large, 1 up to 2^19 scalars, then up to 16,
/// keeping at least 2^18 items. Dense MSMs keep one scalar per item: more made a dense G1
/// MSM slower on an H200 (BENCHMARKS.md#msm-gpu).
fn scalars_per_item(n: usize, large: usize) -> usize {
    match large >= n / 2 {
        true => 1,
        false => (n >> 18).clamp(1, 16),
    }
}

/// Entries per accumulate segment: four times the mean bucket (of `span` entries over
/// `buckets`), so a segment touches about five buckets (a piece each, for the reduce) while
/// runs of mixed additions stay long, but short enough for [`MIN_SEGMENTS`] work items over
/// the `sets` bucket sets; 16 to 512.
fn segment_len(span: usize, sets: usize, buckets: usize) -> usize {
    let mut len = (4 * span.div_ceil(buckets))
        .next_power_of_two()
        .clamp(16, 512);
    while len > 16 && sets * span.div_ceil(len) < MIN_SEGMENTS {
        len /= 2;
    }
    len
}

/// Work items of a scan kernel's work group.
const SCAN_ITEMS: usize = 256;

/// Buckets per item of the scan kernels: a group scans SCAN_PER SCAN_ITEMS buckets. With
/// one group per set, one SM scanned a folded set's 2^23 buckets alone; blocks spread a
/// set over the GPU.
pub(super) const SCAN_PER: usize = 16;

/// The device buffers one launch of a [`Plan`] allocates, in 32-bit words: what the launch
/// allocates ([`super::launch`]) and what [`Msm::scratch_bytes`](super::Msm::scratch_bytes) reserves, from the one
/// computation. Every one lives until the launch is queued, the last window sums (`result`)
/// until its [`super::finish::Pending`] is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct LaunchBuffers {
    /// Bucket counts; bucket offsets, ends and ranks are as large.
    pub(super) per_bucket: usize,
    /// Work items of a scan group on the device.
    pub(super) scan_items: usize,
    /// Blocks of buckets per set, one scan group each.
    pub(super) blocks: usize,
    /// The blocks' sums.
    pub(super) block_sums: usize,
    /// Window totals.
    pub(super) totals: usize,
    /// Sorted entries.
    pub(super) entries: usize,
    /// Pieces (XYZZ partial sums).
    pub(super) pieces: usize,
    /// The pieces' buckets.
    pub(super) piece_buckets: usize,
    /// The reduce's window slices.
    pub(super) slices: usize,
    /// Every `sum_groups` round's output together.
    pub(super) window_sums: usize,
    /// The last of the slices and rounds: what the launch leaves on the device.
    pub(super) result: usize,
}

impl LaunchBuffers {
    /// Every buffer's words.
    pub(super) fn words(&self) -> usize {
        4 * self.per_bucket
            + self.block_sums
            + self.totals
            + self.entries
            + self.pieces
            + self.piece_buckets
            + self.slices
            + self.window_sums
    }

    /// Each buffer at the larger of the two: a bound on both launches, and on launches
    /// whose plans lie between them buffer by buffer.
    pub(super) fn max(self, o: LaunchBuffers) -> LaunchBuffers {
        LaunchBuffers {
            per_bucket: self.per_bucket.max(o.per_bucket),
            scan_items: self.scan_items.max(o.scan_items),
            blocks: self.blocks.max(o.blocks),
            block_sums: self.block_sums.max(o.block_sums),
            totals: self.totals.max(o.totals),
            entries: self.entries.max(o.entries),
            pieces: self.pieces.max(o.pieces),
            piece_buckets: self.piece_buckets.max(o.piece_buckets),
            slices: self.slices.max(o.slices),
            window_sums: self.window_sums.max(o.window_sums),
            result: self.result.max(o.result),
        }
    }
}

impl Plan {
    /// The `sum_groups` rounds after the reduce: each round's group (outputs added per work
    /// item) and the points per window it leaves. Slices are a power of two, so every
    /// group lies within one window; the rounds stop at [`HOST_SUM`] points.
    pub(super) fn sum_rounds(&self) -> Vec<(usize, usize)> {
        let mut rounds = Vec::new();
        let mut per_window = self.slices;
        while per_window > 1 && self.windows * per_window > HOST_SUM {
            let group = SUM_GROUP.min(per_window);
            per_window /= group;
            rounds.push((group, per_window));
        }
        rounds
    }

    /// The buffers a launch of this plan allocates on `device`, for partial sums of
    /// `piece_words` and points of `point_words` words.
    pub(super) fn buffers(
        &self,
        device: &DeviceInfo,
        piece_words: usize,
        point_words: usize,
    ) -> LaunchBuffers {
        let w = self.windows;
        // Blocks of SCAN_PER buckets per item, a group each (see kernels/msm.cl).
        let scan_items = SCAN_ITEMS.min(device.max_work_group_size.max(1));
        let blocks = self.buckets.div_ceil(SCAN_PER * scan_items);
        let slices = w * self.slices * point_words;
        let rounds: Vec<usize> = self
            .sum_rounds()
            .iter()
            .map(|&(_, per_window)| w * per_window * point_words)
            .collect();
        LaunchBuffers {
            per_bucket: w * self.buckets,
            scan_items,
            blocks,
            block_sums: 2 * w * blocks,
            totals: 2 * w,
            entries: self.entry_slots(),
            pieces: w * self.cap * piece_words,
            piece_buckets: w * self.cap,
            slices,
            window_sums: rounds.iter().sum(),
            result: rounds.last().copied().unwrap_or(slices),
        }
    }
}
