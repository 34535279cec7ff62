//! Multi-scalar multiplication on the device(s): bases resident and split across devices,
//! scalars prepared on the device that uses them, one Pippenger launch per (device, bases
//! chunk), partial sums added on the host.

use std::marker::PhantomData;

use group::Group;
use sluice_backend::{
    Allocation, BackendError, Buffer, CurveAffine, CurveGroup, Density, GroupKind, MemoryKind,
    Scalars,
};
use sluice_field::{Fr, G1Affine, G2Affine};

use crate::context::{Chunked, DeviceCtx, Launch};
use crate::repr::{as_words, as_words_mut, u64_as_words, DeviceRepr};
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
    /// The shifted-bases table, when the backend precomputes one
    /// ([`crate::OpenClConfig::shifted_bases`]).
    shifted: Option<ShiftedTable>,
    _affine: PhantomData<fn() -> A>,
}

impl<A> Buffer for OpenClBases<A> {
    fn len(&self) -> usize {
        self.len
    }
}

/// Precomputed shifted bases: `groups[d][ch][g]` holds windows `[g per_group, ..)` of
/// 2^(c k) P for the bases of chunk `ch` of device part `d`, window k's at element
/// `(k - g per_group) chunk_elems(ch)` (the stride the scatter writes into its entries).
struct ShiftedTable {
    /// Window bits of the table: the digits' c whenever an MSM uses it.
    c: usize,
    /// Each buffer's digit windows `(w0, wn)`: ceil(256 / c) windows in groups of
    /// `per_group`.
    spans: Vec<(usize, usize)>,
    /// Windows per buffer (a group).
    per_group: usize,
    groups: Vec<Vec<Vec<ocl::core::Mem>>>,
    _tracked: Vec<Allocation>,
}

/// `windows` windows in groups of `per`: each group's `(w0, wn)`.
fn window_groups(windows: usize, per: usize) -> Vec<(usize, usize)> {
    (0..windows)
        .step_by(per)
        .map(|w0| (w0, per.min(windows - w0)))
        .collect()
}

/// The table's windows for bases chunks of up to `chunk_len` elements of `bytes` each:
/// `(c, windows per buffer)` whose folded plans ([`Plan::folded`], one per buffer) cost the
/// least ([`Plan::cost`]) for a dense MSM over a whole chunk.
fn table_window(chunk_len: usize, bytes: usize, max_alloc: u64) -> (usize, usize) {
    // Entries name (k - w0) stride + i in 31 bits.
    let per_buffer = (max_alloc / (chunk_len as u64 * bytes as u64).max(1))
        .min(((1u64 << 31) - 1) / chunk_len.max(1) as u64)
        .max(1) as usize;
    let window = tuning()[0];
    (2..=MAX_WINDOW_BITS)
        .filter(|&c| window.map_or(c <= CHOSEN_WINDOW_BITS, |w| w == c))
        .filter_map(|c| {
            let windows = DIGIT_BITS.div_ceil(c);
            let cost = window_groups(windows, per_buffer)
                .into_iter()
                .map(|(w0, wn)| {
                    Plan::folded(chunk_len, chunk_len, (c, w0, wn), max_alloc, 2 * bytes)
                        .map(|p| p.cost(chunk_len))
                })
                .sum::<Option<usize>>()?;
            Some((cost, c, per_buffer.min(windows)))
        })
        .min()
        .map_or((16, 1), |(_, c, per)| (c, per))
}

/// The largest window the kernels take (`SLUICE_MSM_WINDOW` reaches it).
const MAX_WINDOW_BITS: usize = 24;

/// The largest window the planners choose. On an H200 c = 22 lost to c = 20 wherever both
/// ran (BENCHMARKS.md, seventh and eighth sessions): G1 2^22 plain 253.7 against 78.1 ms,
/// 2^26 plain 765 against 669; folded G1 2^24 168.2 against 162.8, 2^26 633.2 against
/// 629.5, G2 2^24 560.6 against 534.1 (and a 24-bit table 681.5). A 21-bit window has
/// 20's window count (13) with twice the buckets.
const CHOSEN_WINDOW_BITS: usize = 20;

/// What a piece slot of a plan (a bucket, or a segment's partial sum) costs the count,
/// scan, scatter, reduce and window sums, in mixed additions of the accumulate. Fitted to
/// an H200's kernel times over window sweeps (BENCHMARKS.md, eighth session, call 2): about
/// 5 in the per-window sets of a plain G1 MSM of 2^20, 10 in a folded one, 17 in a folded
/// G2 MSM of 2^24 (where the model used to count 3 per bucket and so chose the largest
/// window allowed). With 8, and windows up to [`CHOSEN_WINDOW_BITS`], the model picks the
/// fastest measured window of every swept size or one within 3%: plain c = 16 / 16 / 18
/// / 20 at 2^20 / 2^22 / 2^24 / 2^26 (2^26 at 22, the old choice, ran 14% slower; 2^24 at
/// 18 ran 2.3% faster than at 20), folded c = 16 / 20 / 20 / 20 at 2^20 / 2^22 / 2^24 /
/// 2^26, and G2 2^24 folded at 20. (Without the cap it would fold G1 2^24 and 2^26 at 22,
/// measured 3.3% and 0.6% slower than 20.)
const PIECE_COST: usize = 8;

/// G1 bases resident in an [`OpenClBackend`].
pub type OpenClG1Bases = OpenClBases<G1Affine>;
/// G2 bases resident in an [`OpenClBackend`].
pub type OpenClG2Bases = OpenClBases<G2Affine>;

/// What the MSM needs of a group on the device: its program and kernel names, chosen by
/// the group's kind, for every [`CurveAffine`].
pub(crate) trait GpuCurve: CurveAffine {
    const PROGRAM: ProgramKind;
    /// The kernels' name prefix (`G1_msm_count`, ...).
    const PREFIX: &'static str;
    /// Work-group size of the point kernels (accumulate, reduce, sum_groups); `None` leaves
    /// it to the driver. They use no local memory, so the size only sets how many groups
    /// fit an SM. On an H200 the G1 kernels (about 140 registers per item) fit one group of
    /// 256 (8 warps) where seven of 64 (14 warps) fit, and ran 12-14% faster with 64
    /// (accumulate 421 -> 369 ms over a 2^20 and a 2^22 MSM); the G2 kernels, at the
    /// register cap either way, ran 5% slower with 64 than with the driver's choice. On
    /// GPUs only: CPU devices use [`CPU_POINT_GROUP`].
    const POINT_GROUP: Option<usize>;
}

impl<A: CurveAffine> GpuCurve for A {
    const PROGRAM: ProgramKind = match A::KIND {
        GroupKind::G1 => ProgramKind::G1Msm,
        GroupKind::G2 => ProgramKind::G2Msm,
    };
    const PREFIX: &'static str = match A::KIND {
        GroupKind::G1 => "G1",
        GroupKind::G2 => "G2",
    };
    const POINT_GROUP: Option<usize> = match A::KIND {
        GroupKind::G1 => Some(64),
        GroupKind::G2 => None,
    };
}

/// Work-group size of the point kernels on CPU devices (see `launch`).
const CPU_POINT_GROUP: usize = 64;

/// Bits the signed windows cover: one more than the scalars' 255, for the last borrow.
const DIGIT_BITS: usize = SCALAR_BITS + 1;

/// Reduce outputs added per work item in each `sum_groups` round. The later rounds have
/// few work items, so their time is the chain of additions in one item: with 4 the rounds
/// down to one point chain about half the additions that 16 did.
const SUM_GROUP: usize = 4;

/// The `sum_groups` rounds stop once at most this many points are left over all the
/// launch's windows; the host adds those (a few microseconds per point, where the H200's
/// later rounds took 15-75 per addition in their one chain, G1 to G2).
const HOST_SUM: usize = 64;

/// Tuning overrides for experiments, read once: `SLUICE_MSM_WINDOW` (window bits c, of
/// the plans and of a shifted-bases table),
/// `SLUICE_MSM_CHUNK` (entries per accumulate segment L), `SLUICE_MSM_SLICE` (pieces per
/// reduce work item), `SLUICE_MSM_GROUP` (work-group size of the point kernels, 0 for the driver's
/// choice; see [`GpuCurve::POINT_GROUP`]), `SLUICE_MSM_PER_ITEM` (scalars per work item of
/// the count and the scatter). Unset, unparsable or out-of-range values leave the defaults.
fn tuning() -> [Option<usize>; 5] {
    static T: std::sync::OnceLock<[Option<usize>; 5]> = std::sync::OnceLock::new();
    *T.get_or_init(|| {
        let var = |k: &str, lo: usize, hi: usize| crate::env_in(k, lo..=hi);
        [
            var("SLUICE_MSM_WINDOW", 2, 24),
            var("SLUICE_MSM_CHUNK", 1, 1 << 20),
            var("SLUICE_MSM_SLICE", 1, 1 << 20),
            var("SLUICE_MSM_GROUP", 0, 1024),
            var("SLUICE_MSM_PER_ITEM", 1, 64),
        ]
    })
}

/// The shape of one launch (see `kernels/msm.cl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plan {
    /// Window bits c.
    c: usize,
    /// Bucket sets: one per window, or one for all (`fold`).
    windows: usize,
    /// Buckets per set: 2^(c-1).
    buckets: usize,
    /// Entry slots per set: n, or wn n when folded (a set has at most that many entries).
    span: usize,
    /// Entries per accumulate segment (L).
    seg_len: usize,
    /// Segment slots per set: span / L rounded up.
    segs: usize,
    /// Piece slots per set: one per non-empty bucket plus one per segment at most.
    cap: usize,
    /// Reduce work items per set (a power of two).
    slices: usize,
    /// Scalars per work item of the count and the scatter.
    per_item: usize,
    /// The digit windows the launch sorts, `[w0, w0 + wn)`.
    w0: usize,
    wn: usize,
    /// All of them into one bucket set, over shifted bases.
    fold: bool,
}

impl Plan {
    /// Window bits `c`, `sets` bucket sets of `span` entry slots each, for `n` scalars of
    /// which `large` are 2^16 or more; every window, not folded.
    fn shape(c: usize, sets: usize, span: usize, n: usize, large: usize) -> Plan {
        let [_, chunk, slice, _, per_item] = tuning();
        let buckets = 1usize << (c - 1);
        let seg_len = chunk.unwrap_or_else(|| segment_len(span, sets, buckets));
        let segs = span.div_ceil(seg_len).max(1);
        let cap = buckets + segs;
        Plan {
            c,
            windows: sets,
            buckets,
            span,
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

    /// Whether every buffer of the launch fits one allocation.
    fn fits(&self, max_alloc: u64, piece_bytes: usize) -> bool {
        let fits = |bytes: usize| bytes as u64 <= max_alloc;
        fits(self.windows * self.cap * piece_bytes) && fits(self.windows * self.span.max(1) * 4)
    }

    /// The launch's cost in mixed additions (see [`Plan::new`]) for `m` scalars that cost
    /// one per window: their entries, and [`PIECE_COST`] per piece slot (per set, one per
    /// bucket and one per segment of the set's entries).
    fn cost(&self, m: usize) -> usize {
        let per_set = if self.fold { m * self.wn } else { m };
        let slots = self.buckets + per_set.div_ceil(self.seg_len);
        m * self.wn + PIECE_COST * slots * self.windows
    }

    /// Windows `[w0, w0 + wn)` of `c` bits folded into one bucket set over shifted bases;
    /// `None` where its buffers do not fit one allocation each.
    fn folded(
        n: usize,
        large: usize,
        (c, w0, wn): (usize, usize, usize),
        max_alloc: u64,
        piece_bytes: usize,
    ) -> Option<Plan> {
        let plan = Plan {
            w0,
            wn,
            fold: true,
            ..Plan::shape(c, 1, wn * n, n, large)
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
    fn new(n: usize, large: usize, max_alloc: u64, piece_bytes: usize) -> Plan {
        let m = large_cost_scalars(n, large);
        let window = tuning()[0];
        let mut best: Option<(usize, Plan)> = None;
        for c in 2..=MAX_WINDOW_BITS {
            if window.map_or(c > CHOSEN_WINDOW_BITS, |w| w != c) {
                continue;
            }
            let plan = Plan::shape(c, DIGIT_BITS.div_ceil(c), n, n, large);
            if !plan.fits(max_alloc, piece_bytes) {
                continue;
            }
            let cost = plan.cost(m);
            if best.map_or(true, |(b, _)| cost < b) {
                best = Some((cost, plan));
            }
        }
        best.map_or_else(|| Plan::new(n, large, u64::MAX, piece_bytes), |(_, p)| p)
    }

    /// The launches of an MSM of `n` scalars (`large` of them 2^16 or more): one plain plan
    /// ([`Plan::new`]), or one folded plan per buffer of a shifted-bases `table` (`(c,
    /// groups)`) where those cost fewer additions and fit.
    fn launches(
        n: usize,
        large: usize,
        table: Option<(usize, &[(usize, usize)])>,
        max_alloc: u64,
        piece_bytes: usize,
    ) -> Vec<Plan> {
        let plain = Plan::new(n, large, max_alloc, piece_bytes);
        let m = large_cost_scalars(n, large);
        let folded = table.and_then(|(c, groups)| {
            groups
                .iter()
                .map(|&(w0, wn)| Plan::folded(n, large, (c, w0, wn), max_alloc, piece_bytes))
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
/// keeping at least 2^18 items. Dense MSMs keep one scalar per item: on an H200, 16 per
/// item made G1 2^22 1.7% slower (BENCHMARKS.md, sixth session).
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

/// One device's share of an MSM: (bases chunk, first base in it, first scalar, count, the
/// scalars if already prepared).
type Batch = (usize, usize, usize, usize, Option<PreparedScalars>);

/// A batch's canonical scalars on its device, and their tracked allocation (`None` where
/// they were converted in place in a buffer the MSM owns, which counts them already).
type PreparedScalars = (ocl::core::Mem, Option<Allocation>);

/// Where the MSM's scalars come from, after density compaction: the k-th used scalar is
/// `host[k]`, or the k-th used element of the device buffer (element k without a density,
/// `used` `None`).
enum Source<'a> {
    Host(std::borrow::Cow<'a, [Fr]>),
    Buffer {
        buf: &'a Chunked,
        used: Option<UsedElements<'a>>,
        /// The MSM owns `buf` ([`Scalars::Owned`]): its leading scalars may be converted
        /// where they are.
        owned: bool,
    },
}

/// The used elements of a density-masked buffer, from the density's words: `before[w]`
/// used elements precede word `w` (one more entry holds the total). The host finds a used
/// element's position by a search, the device a position's rank by a popcount
/// (`fr_gather_used_from_mont`), so no index of every used position is built, held or
/// uploaded (4 bytes per used scalar: 512 MB for 2^27, built on one host in ~90 ms).
struct UsedElements<'a> {
    density: &'a Density,
    before: Vec<u32>,
}

impl<'a> UsedElements<'a> {
    fn new(density: &'a Density) -> Self {
        let words = density.words();
        let mut before = Vec::with_capacity(words.len() + 1);
        let mut total = 0u32;
        for w in words {
            before.push(total);
            total += w.count_ones();
        }
        before.push(total);
        UsedElements { density, before }
    }

    /// The density's 64-bit words.
    fn words(&self) -> &'a [u64] {
        self.density.words()
    }

    /// The position of used element `k` (below the used count).
    fn position(&self, k: usize) -> usize {
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
    fn span(&self, k0: usize, count: usize) -> (usize, usize) {
        (self.position(k0), self.position(k0 + count - 1) + 1)
    }
}

impl OpenClBackend {
    pub(crate) fn upload_msm_bases<A: GpuCurve>(
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
        let shifted = match self.shifted_bases {
            true => Some(self.shift_bases::<A>(name, &parts)?),
            false => None,
        };
        Ok(OpenClBases {
            parts,
            starts,
            len: bases.len(),
            shifted,
            _affine: PhantomData,
        })
    }

    /// The shifted table's window bits and windows per buffer when the longest chunk of
    /// any part holds `chunk_len` bases of `bytes` each: one shape for every part, so its
    /// buffers fit the smallest allocation limit of any device.
    fn table_shape(&self, chunk_len: usize, bytes: usize) -> (usize, usize) {
        let max_alloc = self
            .devices
            .iter()
            .map(|c| c.max_chunk_bytes)
            .min()
            .unwrap_or(1);
        table_window(chunk_len, bytes, max_alloc)
    }

    /// The shifted-bases table of `parts` (see [`ShiftedTable`]): window 0 a copy of the
    /// bases, window k 2^c times window k - 1, computed on each part's device.
    fn shift_bases<A: GpuCurve>(
        &self,
        name: &str,
        parts: &[Chunked],
    ) -> Result<ShiftedTable, BackendError> {
        let bytes = A::WORDS * 4;
        // One table shape for every part, sized for the longest chunk of any.
        let chunk_len = parts
            .iter()
            .map(|p| p.chunk_len.min(p.len))
            .max()
            .unwrap_or(1)
            .max(1);
        let (c, per_group) = self.table_shape(chunk_len, bytes);
        let windows = DIGIT_BITS.div_ceil(c);
        let spans = window_groups(windows, per_group);
        let what = format!("{name} (shifted)");
        let mut groups = Vec::with_capacity(parts.len());
        let mut tracked = Vec::with_capacity(parts.len());
        for part in parts {
            let ctx = &self.devices[part.device];
            let total = (windows * part.len * bytes) as u64;
            tracked.push(self.tracker.allocate(MemoryKind::Device, &what, total)?);
            let mut per_chunk = Vec::with_capacity(part.chunks.len());
            for (ch, src) in part.chunks.iter().enumerate() {
                let n = part.chunk_elems(ch);
                let bufs = spans
                    .iter()
                    .map(|&(_, wn)| ctx.raw_buffer(&what, wn * n * A::WORDS))
                    .collect::<Result<Vec<_>, _>>()?;
                for k in 0..windows {
                    // Window k from window k - 1 (from the bases for k = 0, unshifted).
                    let (from, from_off, shift) = match k {
                        0 => (src, 0, 0),
                        _ => (&bufs[(k - 1) / per_group], ((k - 1) % per_group) * n, c),
                    };
                    ctx.kernel(A::PROGRAM, &format!("{}_msm_shift", A::PREFIX))?
                        .mem(from)?
                        .mem(&bufs[k / per_group])?
                        .u32(from_off as u32)?
                        .u32(((k % per_group) * n) as u32)?
                        .u32(n as u32)?
                        .u32(shift as u32)?
                        .run(n.div_ceil(SHIFT_BATCH), None)?;
                }
                per_chunk.push(bufs);
            }
            groups.push(per_chunk);
            ctx.flush()?;
        }
        self.devices.iter().try_for_each(DeviceCtx::finish)?;
        Ok(ShiftedTable {
            c,
            spans,
            per_group,
            groups,
            _tracked: tracked,
        })
    }

    pub(crate) fn msm_on_devices<A: GpuCurve>(
        &self,
        bases: &OpenClBases<A>,
        skip: usize,
        scalars: Scalars<'_, Self>,
        density: Option<&Density>,
    ) -> Result<A::Group, BackendError> {
        let scalars_len = match &scalars {
            Scalars::Host(s) => s.len(),
            Scalars::Buffer(b) => b.data.len,
            Scalars::Owned(b) => b.data.len,
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
        // An owned buffer lives here until the MSM returns; the source borrows it.
        let owned_buf;
        let source = match scalars {
            Scalars::Host(s) => Source::Host(match density {
                Some(d) => d.gather(s)?.into(),
                None => s.into(),
            }),
            Scalars::Buffer(_) | Scalars::Owned(_) => {
                let (buf, owned) = match scalars {
                    Scalars::Owned(b) => {
                        owned_buf = b;
                        (&owned_buf.data, true)
                    }
                    Scalars::Buffer(b) => (&b.data, false),
                    Scalars::Host(_) => unreachable!("matched above"),
                };
                if scalars_len > u32::MAX as usize {
                    return Err(BackendError::Unsupported(
                        "an MSM over a scalar buffer of 2^32 or more elements".into(),
                    ));
                }
                Source::Buffer {
                    buf,
                    // A density of the first k scalars (h's) reads them in place.
                    used: density
                        .filter(|d| d.used_prefix().is_none())
                        .map(UsedElements::new),
                    owned,
                }
            }
        };

        // Batches: the used range [skip, skip + used) cut along parts and chunks, grouped
        // by device.
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
        // Scalars that another device holds are read back first, before any MSM is queued
        // there (a read behind a queued MSM would wait for it).
        let mut work: Vec<Vec<_>> = (0..bases.parts.len()).map(|_| Vec::new()).collect();
        for &(d, c, base_offset, k0, count) in &batches {
            let early = match &source {
                Source::Buffer { buf, .. } if buf.device != d => {
                    Some(self.prepare_scalars(d, &source, k0, count)?)
                }
                _ => None,
            };
            work[d].push((c, base_offset, k0, count, early));
        }
        // One host thread per device: each uploads its scalars, launches its batches and
        // reads its sums, so the devices compute at once whatever the driver's submission
        // policy (one thread queueing for both measured no overlap on two H200s).
        let table = bases.shifted.as_ref().map(|t| (t.c, t.spans.as_slice()));
        let per_device = |d: usize, batches: Vec<Batch>| -> Result<A::Group, BackendError> {
            let mut pending = Vec::with_capacity(batches.len());
            for (c, base_offset, k0, count, early) in batches {
                let scalars = match early {
                    Some(s) => s,
                    None => self.prepare_scalars(d, &source, k0, count)?,
                };
                let large = self.count_large::<A>(d, &scalars.0, count)?;
                let ctx = &self.devices[d];
                let piece = xyzz_words::<A>() * 4;
                for plan in Plan::launches(count, large, table, ctx.max_chunk_bytes, piece) {
                    log::debug!("{} MSM of {count} on device {d}: {plan:?}", A::PREFIX);
                    // A folded plan reads its group's table buffer, window k's bases a
                    // chunk's length apart.
                    let (mem, stride) = match (bases.shifted.as_ref(), plan.fold) {
                        (Some(t), true) => (
                            &t.groups[d][c][plan.w0 / t.per_group],
                            bases.parts[d].chunk_elems(c),
                        ),
                        _ => (&bases.parts[d].chunks[c], 0),
                    };
                    pending.push(self.launch::<A>(
                        d,
                        (mem, base_offset, stride),
                        &scalars.0,
                        count,
                        plan,
                    )?);
                }
                // Submit now: the next batch's upload then overlaps this one's compute.
                self.devices[d].flush()?;
            }
            let mut total = A::Group::identity();
            for p in pending {
                total = total.add_vartime(&p.finish()?);
            }
            Ok(total)
        };
        let work: Vec<(usize, Vec<_>)> = work
            .into_iter()
            .enumerate()
            .filter(|(_, w)| !w.is_empty())
            .collect();
        let partials: Vec<Result<A::Group, BackendError>> = if work.len() <= 1 {
            work.into_iter().map(|(d, w)| per_device(d, w)).collect()
        } else {
            std::thread::scope(|scope| {
                let per_device = &per_device;
                let handles: Vec<_> = work
                    .into_iter()
                    .map(|(d, w)| scope.spawn(move || per_device(d, w)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(BackendError::Driver {
                                code: 0,
                                message: "an MSM device thread panicked".into(),
                                build_log: None,
                            })
                        })
                    })
                    .collect()
            })
        };
        let mut total = A::Group::identity();
        for p in partials {
            total = total.add_vartime(&p?);
        }
        Ok(total)
    }

    /// The most device bytes an MSM over `n` scalars allocates at once beyond its bases,
    /// summed over the devices (each runs one batch of its share at a time): every
    /// temporary of [`OpenClBackend::launch`] for the largest batch, plus its scalars and
    /// their index.
    pub(crate) fn msm_scratch<A: GpuCurve>(&self, n: usize) -> u64 {
        let d = self.devices.len().max(1);
        // Each device's largest batch: its share of n, at most one chunk of bases.
        let batch = |ctx: &DeviceCtx| n.div_ceil(d).min(Chunked::chunk_len(ctx, A::WORDS));
        // With shifted bases, the folded plans of the table `upload_bases` makes for bases
        // split like these scalars: one shape for every device (`table_shape`), from the
        // longest chunk of any.
        let table = self.shifted_bases.then(|| {
            let longest = self.devices.iter().map(batch).max().unwrap_or(1).max(1);
            let (c, per) = self.table_shape(longest, A::WORDS * 4);
            (c, window_groups(DIGIT_BITS.div_ceil(c), per))
        });
        self.devices
            .iter()
            .map(|ctx| {
                let count = batch(ctx);
                let proj = <A::Group as DeviceRepr>::WORDS as u64 * 4;
                let piece = xyzz_words::<A>() as u64 * 4;
                // The plan depends on how many scalars are large: the fewest give the most
                // windows (entries), all of them the most buckets (pieces). Each term at
                // its largest over both bounds every plan in between.
                let plans: Vec<Plan> = [0, count]
                    .iter()
                    .flat_map(|&large| {
                        let table = table.as_ref().map(|(c, s)| (*c, s.as_slice()));
                        let mut all = Plan::launches(
                            count,
                            large,
                            table,
                            ctx.max_chunk_bytes,
                            piece as usize,
                        );
                        all.push(Plan::new(count, large, ctx.max_chunk_bytes, piece as usize));
                        all
                    })
                    .collect();
                let most = |f: &dyn Fn(&Plan) -> u64| plans.iter().map(f).max().unwrap_or(0);
                let count = count as u64;
                // Scalars, with 4 bytes more each for a density's words and ranks (12
                // bytes per 64 elements of the span: within that unless fewer than 3 in 64
                // are used); the large-scalar count; counts, offsets, ends and ranks;
                // their block sums; window totals; sorted entries; pieces and their
                // buckets; window slices twice.
                count * (32 + 4)
                    + 4
                    + most(&|p| 4 * (p.windows * p.buckets) as u64 * 4)
                    + most(&|p| 2 * (p.windows * p.buckets.div_ceil(SCAN_PER)) as u64 * 4)
                    + most(&|p| 2 * p.windows as u64 * 4)
                    + most(&|p| p.windows as u64 * count * 4)
                    + most(&|p| (p.windows * p.cap) as u64 * (piece + 4))
                    + most(&|p| 2 * (p.windows * p.slices) as u64 * proj)
            })
            .sum()
    }

    /// The canonical (non-Montgomery) scalars `k0..k0 + count` of `source`, on device `d`.
    fn prepare_scalars(
        &self,
        d: usize,
        source: &Source<'_>,
        k0: usize,
        count: usize,
    ) -> Result<PreparedScalars, BackendError> {
        let ctx = &self.devices[d];
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
                return Ok((mem, None));
            }
        }
        let (out_mem, tracked) = ctx.temp(&self.tracker, "msm scalars", count * 8)?;
        let out = (out_mem, Some(tracked));
        let out_mem = &out.0;
        let host_scalars: std::borrow::Cow<'_, [Fr]> = match source {
            Source::Host(s) => s[k0..k0 + count].into(),
            Source::Buffer {
                buf, used: None, ..
            } if buf.device == d => {
                // Elements k0.. in order: copied on the device, converted below.
                buf.each_range(k0, count, |chunk, at, from, n| {
                    let w = buf.words;
                    ctx.copy_at((&buf.chunks[chunk], at * w), (out_mem, from * w), n * w)
                })?;
                std::borrow::Cow::Borrowed(&[])
            }
            Source::Buffer {
                buf,
                used: Some(used),
                ..
            } if buf.device == d => {
                // The density's words over the span, and the used counts before each.
                let (lo, hi) = used.span(k0, count);
                let (w0, w1) = (lo / 64, hi.div_ceil(64));
                let tracked = |what, words| ctx.temp(&self.tracker, what, words);
                let (words_mem, _w) = tracked("msm density words", 2 * (w1 - w0))?;
                let (before_mem, _b) = tracked("msm density ranks", w1 - w0)?;
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
                buf.read(&self.devices[buf.device], lo, as_words_mut(&mut span))?;
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

    /// How many of the `count` scalars on device `d` are 2^16 or more: it decides the
    /// windows ([`Plan::new`]). One word read back.
    fn count_large<A: GpuCurve>(
        &self,
        d: usize,
        scalars: &ocl::core::Mem,
        count: usize,
    ) -> Result<usize, BackendError> {
        let ctx = &self.devices[d];
        let large = ctx.temp(&self.tracker, "msm large scalars", 1)?;
        ctx.fill_zero(&large.0, 1)?;
        ctx.kernel(A::PROGRAM, &format!("{}_msm_count_large", A::PREFIX))?
            .mem(scalars)?
            .mem(&large.0)?
            .u32(count as u32)?
            .run(count, Some(COUNT_LARGE_GROUP))?;
        let mut word = [0u32];
        ctx.read(&large.0, 0, &mut word)?;
        Ok(word[0] as usize)
    }

    /// Enqueues one Pippenger launch (the kernels of `kernels/msm.cl`, in order) of `plan`
    /// over `count` scalars and the bases from element `offset` of `bases` (`(bases,
    /// offset, stride)`: a folded plan's window k lies `stride` elements after window k -
    /// 1); one point per bucket set stays on the device.
    fn launch<A: GpuCurve>(
        &self,
        d: usize,
        (bases, base_offset, stride): (&ocl::core::Mem, usize, usize),
        scalars: &ocl::core::Mem,
        count: usize,
        plan: Plan,
    ) -> Result<Pending<'_, A>, BackendError> {
        let ctx = &self.devices[d];
        let pw = <A::Group as DeviceRepr>::WORDS;
        let xw = xyzz_words::<A>();
        let name = |k: &str| format!("{}_{k}", A::PREFIX);
        let temp = |what: &str, words: usize| ctx.temp(&self.tracker, what, words);
        let Plan {
            c,
            windows,
            buckets,
            span,
            seg_len,
            segs,
            cap,
            slices,
            per_item,
            w0,
            wn,
            fold,
        } = plan;
        let point_group = match tuning()[3] {
            Some(0) => None,
            Some(g) => Some(g),
            None if ctx.info.is_gpu => A::POINT_GROUP,
            // A CPU driver runs a group's items on one thread, each item's private memory
            // at once: PoCL's own choice (4096) overflowed that for G2 and crashed in the
            // reduce from 2^15 scalars on.
            None => Some(CPU_POINT_GROUP),
        };
        // Temporaries are released once every kernel of the launch is queued. On NVIDIA a
        // release waits for the kernels using the buffer and then frees it (milliseconds
        // for the sorted entries' gigabytes): released between two launches it held the
        // next one back with the device idle, about 3 ms before each reduce (BENCHMARKS.md,
        // item 68). They coexist at the end either way: `msm_scratch` reserves them all.
        let mut spent = Vec::with_capacity(12);
        let counts = temp("msm bucket counts", windows * buckets)?;
        ctx.fill_zero(&counts.0, windows * buckets)?;
        let items = count.div_ceil(per_item);
        ctx.kernel(A::PROGRAM, &name("msm_count"))?
            .mem(scalars)?
            .mem(&counts.0)?
            .u32(count as u32)?
            .u32(c as u32)?
            .u32(items as u32)?
            .u32(per_item as u32)?
            .u32(w0 as u32)?
            .u32(wn as u32)?
            .u32(fold as u32)?
            .run(items, None)?;

        let off = temp("msm bucket offsets", windows * buckets)?;
        let cursor = temp("msm bucket ends", windows * buckets)?;
        let rank = temp("msm bucket ranks", windows * buckets)?;
        let totals = temp("msm window totals", 2 * windows)?;
        // Blocks of SCAN_PER buckets per item, a group each (see kernels/msm.cl).
        let scan_items = SCAN_ITEMS.min(ctx.info.max_work_group_size.max(1));
        let block = SCAN_PER * scan_items;
        let blocks = buckets.div_ceil(block);
        let block_sums = temp("msm bucket block sums", 2 * windows * blocks)?;
        let scan_local = 2 * scan_items + 2;
        // The two kernels over every block of every set: the same trailing arguments and
        // one group per block.
        let over_blocks = |launch: Launch<'_>| {
            launch
                .local_words(scan_local)?
                .u32(buckets as u32)?
                .u32(block as u32)?
                .u32(windows as u32)?
                .run(windows * blocks * scan_items, Some(scan_items))
        };
        over_blocks(
            ctx.kernel(A::PROGRAM, &name("msm_scan_blocks"))?
                .mem(&counts.0)?
                .mem(&block_sums.0)?,
        )?;
        ctx.kernel(A::PROGRAM, &name("msm_scan_sets"))?
            .mem(&block_sums.0)?
            .mem(&totals.0)?
            .local_words(scan_local)?
            .u32(blocks as u32)?
            .u32(seg_len as u32)?
            .run(windows * scan_items, Some(scan_items))?;
        over_blocks(
            ctx.kernel(A::PROGRAM, &name("msm_scan"))?
                .mem(&counts.0)?
                .mem(&block_sums.0)?
                .mem(&off.0)?
                .mem(&cursor.0)?
                .mem(&rank.0)?,
        )?;
        spent.extend([counts, block_sums]);

        let entries = temp("msm sorted entries", windows * span)?;
        ctx.kernel(A::PROGRAM, &name("msm_scatter"))?
            .mem(scalars)?
            .mem(&cursor.0)?
            .mem(&entries.0)?
            .u32(count as u32)?
            .u32(c as u32)?
            .u32(items as u32)?
            .u32(per_item as u32)?
            .u32(w0 as u32)?
            .u32(wn as u32)?
            .u32(fold as u32)?
            .u32(stride as u32)?
            .run(items, None)?;

        let partials = temp("msm pieces", windows * cap * xw)?;
        let keys = temp("msm piece buckets", windows * cap)?;
        ctx.kernel(A::PROGRAM, &name("msm_accumulate"))?
            .mem(bases)?
            .mem(&entries.0)?
            .mem(&off.0)?
            .mem(&cursor.0)?
            .mem(&rank.0)?
            .mem(&totals.0)?
            .mem(&partials.0)?
            .mem(&keys.0)?
            .u32(base_offset as u32)?
            .u32(span as u32)?
            .u32(buckets as u32)?
            .u32(seg_len as u32)?
            .u32(segs as u32)?
            .u32(cap as u32)?
            .u32(windows as u32)?
            .run_any_group(windows * segs, point_group)?;
        spent.extend([entries, off, cursor, rank]);

        let mut sums = temp("msm window slices", windows * slices * pw)?;
        ctx.kernel(A::PROGRAM, &name("msm_reduce"))?
            .mem(&partials.0)?
            .mem(&keys.0)?
            .mem(&totals.0)?
            .mem(&sums.0)?
            .u32(cap as u32)?
            .u32(slices as u32)?
            .u32(windows as u32)?
            .run_any_group(windows * slices, point_group)?;
        spent.extend([partials, keys, totals]);

        // Slices are a power of two, so every group lies within one window.
        let mut per_window = slices;
        while per_window > 1 && windows * per_window > HOST_SUM {
            let group = SUM_GROUP.min(per_window);
            per_window /= group;
            let next = temp("msm window sums", windows * per_window * pw)?;
            ctx.kernel(A::PROGRAM, &name("sum_groups"))?
                .mem(&sums.0)?
                .mem(&next.0)?
                .u32((windows * per_window) as u32)?
                .u32(group as u32)?
                .run_any_group(windows * per_window, point_group)?;
            spent.push(std::mem::replace(&mut sums, next));
        }
        ctx.flush()?;
        drop(spent);
        Ok(Pending {
            ctx,
            results: sums,
            per_window,
            plan,
            _curve: PhantomData,
        })
    }
}

/// 32-bit words of a partial sum in XYZZ coordinates (`POINT_xyzz`: four coordinates where
/// the projective point has three).
fn xyzz_words<A: GpuCurve>() -> usize {
    <A::Group as DeviceRepr>::WORDS / 3 * 4
}

/// Points per work item of the shift kernel (`POINT_SHIFT_BATCH` in `kernels/msm.cl`).
const SHIFT_BATCH: usize = 16;

/// Work items of a scan kernel's work group.
const SCAN_ITEMS: usize = 256;

/// Buckets per item of the scan kernels: a group scans SCAN_PER SCAN_ITEMS buckets. With
/// one group per set, one SM scanned a folded set's 2^23 buckets alone; blocks spread a
/// set over the GPU.
const SCAN_PER: usize = 16;

/// Work items of a group of the large-scalar count (one atomic per group).
const COUNT_LARGE_GROUP: usize = 256;

/// A launched MSM batch whose window sums are still on the device.
struct Pending<'a, A: GpuCurve> {
    ctx: &'a DeviceCtx,
    /// `per_window` points per window, window by window, that add up to its sum.
    results: (ocl::core::Mem, Allocation),
    per_window: usize,
    plan: Plan,
    _curve: PhantomData<A>,
}

impl<A: GpuCurve> Pending<'_, A> {
    /// Reads what is left of the bucket sets' sums, adds each set's points, and combines
    /// the sets: sum_w 2^(c w) S_w, or the one sum of a folded plan (its shifted bases did
    /// the doublings).
    fn finish(self) -> Result<A::Group, BackendError> {
        let Plan { c, windows, .. } = self.plan;
        let mut points = vec![A::Group::identity(); windows * self.per_window];
        self.ctx
            .read(&self.results.0, 0, as_words_mut(&mut points))?;
        let mut acc = A::Group::identity();
        for window in points.chunks(self.per_window).rev() {
            for _ in 0..c {
                acc = acc.double();
            }
            acc = window.iter().fold(acc, |a, p| a.add_vartime(p));
        }
        Ok(acc)
    }
}

#[cfg(test)]
mod tests {
    use ff::Field;
    use group::{Curve, Group};
    use sluice_backend::{BackendError, ComputeBackend, Density, Scalars};
    use sluice_field::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

    use super::{table_window, window_groups, Plan, DIGIT_BITS};
    use crate::testing::{backend, rng, shifted_backend, split_backend};
    use crate::OpenClBackend;

    /// `n` distinct bases (a seeded random start plus multiples of a random step), with the
    /// identity at a few positions.
    fn bases<G: Group + Curve>(n: usize, seed: u64) -> Vec<G::AffineRepr>
    where
        G::AffineRepr: Default + Copy,
    {
        let mut r = rng(seed);
        let step = G::random(&mut r);
        let mut p = G::random(&mut r);
        let mut v: Vec<G> = (0..n)
            .map(|i| {
                p += step;
                if i % 97 == 5 {
                    G::identity()
                } else {
                    p
                }
            })
            .collect();
        if let Some(last) = v.last_mut() {
            *last = G::identity();
        }
        let mut out = vec![G::AffineRepr::default(); n];
        G::batch_normalize(&v, &mut out);
        v.clear();
        out
    }

    /// Random scalars with 0, 1 and -1 sprinkled in.
    fn scalars(n: usize, seed: u64) -> Vec<Fr> {
        let mut r = rng(seed);
        (0..n)
            .map(|i| match i % 11 {
                3 => Fr::ZERO,
                4 => Fr::ONE,
                5 => -Fr::ONE,
                _ => Fr::random(&mut r),
            })
            .collect()
    }

    fn density(n: usize, seed: u64) -> Density {
        let mut r = rng(seed);
        (0..n).map(|_| r.next_u32() % 3 != 0).collect()
    }

    use rand_core::RngCore;

    /// Every way of calling `msm_vartime` against sluice-msm on the same inputs.
    macro_rules! check_msm {
        ($b:expr, $n:expr, $seed:expr, $proj:ty, $upload:ident, $msm:ident, $cpu:path) => {{
            let (b, n, seed): (&OpenClBackend, usize, u64) = ($b, $n, $seed);
            let skip = 3;
            let all = bases::<$proj>(n + skip, seed);
            let resident = b.$upload("bases", &all).unwrap();
            let s = scalars(n, seed + 1);
            let want = $cpu(&all[skip..], &s, None).unwrap();
            let got = b.$msm(&resident, skip, Scalars::Host(&s), None).unwrap();
            assert!(got == want, "host scalars, n {n}, seed {seed}");
            let sbuf = b.upload_fr("scalars", &s, s.len()).unwrap();
            let got = b
                .$msm(&resident, skip, Scalars::Buffer(&sbuf), None)
                .unwrap();
            assert!(got == want, "buffer scalars, n {n}, seed {seed}");
            let owned = b.upload_fr("owned scalars", &s, s.len()).unwrap();
            let got = b
                .$msm(&resident, skip, Scalars::Owned(owned), None)
                .unwrap();
            assert!(got == want, "owned scalars, n {n}, seed {seed}");

            // Density: the bases are dense over the used variables. A density of the first
            // n - 1 scalars (h's shape) reads a scalar buffer in place.
            let mut prefix = Density::full(n - 1);
            prefix.push(false);
            for (d, what) in [
                (density(n, seed + 2), "density"),
                (prefix, "prefix density"),
            ] {
                let used = d.count_ones();
                let want = $cpu(&all[skip..skip + used], &s, Some(&d)).unwrap();
                let got = b
                    .$msm(&resident, skip, Scalars::Host(&s), Some(&d))
                    .unwrap();
                assert!(got == want, "host scalars with {what}, n {n}, seed {seed}");
                let got = b
                    .$msm(&resident, skip, Scalars::Buffer(&sbuf), Some(&d))
                    .unwrap();
                assert!(
                    got == want,
                    "buffer scalars with {what}, n {n}, seed {seed}"
                );
                let owned = b.upload_fr("owned scalars", &s, s.len()).unwrap();
                let got = b
                    .$msm(&resident, skip, Scalars::Owned(owned), Some(&d))
                    .unwrap();
                assert!(got == want, "owned scalars with {what}, n {n}, seed {seed}");
            }

            // Fewer scalars than bases uses a prefix; more is an error.
            let got = b
                .$msm(&resident, 0, Scalars::Host(&s[..n / 2]), None)
                .unwrap();
            let want = $cpu(&all[..n / 2], &s[..n / 2], None).unwrap();
            assert!(got == want, "prefix, n {n}, seed {seed}");
            let too_many = vec![Fr::ONE; n + skip + 1];
            assert!(matches!(
                b.$msm(&resident, 0, Scalars::Host(&too_many), None),
                Err(BackendError::LengthMismatch { .. })
            ));
            let empty = b.$msm(&resident, 0, Scalars::Host(&[]), None).unwrap();
            assert!(bool::from(empty.is_identity()), "empty msm, seed {seed}");
        }};
    }

    #[test]
    fn g1_msm_matches_sluice_msm() {
        let Some(b) = backend() else { return };
        for (i, n) in [1usize, 2, 100, 1 << 12].into_iter().enumerate() {
            check_msm!(
                b,
                n,
                1000 + i as u64,
                G1Projective,
                upload_bases,
                msm_vartime,
                sluice_msm::msm_g1_vartime
            );
        }
    }

    /// The tracked device peak of an MSM (host scalars, and a density-masked buffer) stays
    /// within what `msm_scratch_bytes` reserves, on one device and on two.
    #[test]
    fn msm_scratch_covers_the_tracked_peak() {
        use crate::testing::{backend_with, test_device};
        use crate::{DeviceSelector, OpenClConfig};
        use sluice_backend::{MemoryKind, MemoryTracker};
        let seed = 3100;
        // The last case makes the devices unequal: the second's allocations are capped at
        // 64 KiB (its chunks of bases split, and the shared table takes its limit).
        for (devices, shifted_bases, second_cap) in [
            (vec![test_device()], false, None),
            (vec![test_device(); 2], false, None),
            (vec![test_device()], true, None),
            (vec![test_device(); 2], true, Some(64 << 10)),
        ] {
            let tracker = MemoryTracker::default();
            let Some(mut b) = backend_with(OpenClConfig {
                devices: DeviceSelector::Indices(devices.clone()),
                tracker: Some(tracker.clone()),
                shifted_bases,
                ..OpenClConfig::default()
            }) else {
                return;
            };
            if let Some(cap) = second_cap {
                b.devices[1].max_chunk_bytes = cap;
            }
            let n = 3000;
            let g1 = b
                .upload_bases("g1", &bases::<G1Projective>(n, seed))
                .unwrap();
            let g2 = b
                .upload_bases("g2", &bases::<G2Projective>(n, seed))
                .unwrap();
            let mut r = rng(seed);
            let scalars: Vec<Fr> = (0..n).map(|_| Fr::random(&mut r)).collect();
            let mut buf = b.alloc_fr("scalars", n).unwrap();
            b.write_fr(&mut buf, 0, &scalars).unwrap();
            let density: Density = (0..n).map(|i| i % 3 != 0).collect();
            let resident = tracker.current(MemoryKind::Device);
            let within = |peak: u64, reserved: u64, what: &str| {
                let own = peak - resident;
                assert!(
                    own <= reserved,
                    "{what} on {devices:?} (second capped at {second_cap:?}): {own} bytes > \
                     {reserved} reserved (seed {seed})"
                );
            };
            tracker.reset_peaks();
            b.msm_vartime(&g1, 0, Scalars::Host(&scalars), None)
                .unwrap();
            within(
                tracker.peak(MemoryKind::Device),
                b.msm_scratch_bytes::<G1Affine>(n),
                "G1 host scalars",
            );
            tracker.reset_peaks();
            b.msm_vartime(&g1, 0, Scalars::Buffer(&buf), Some(&density))
                .unwrap();
            within(
                tracker.peak(MemoryKind::Device),
                b.msm_scratch_bytes::<G1Affine>(n),
                "G1 buffer",
            );
            tracker.reset_peaks();
            b.msm_vartime(&g2, 0, Scalars::Host(&scalars), None)
                .unwrap();
            within(
                tracker.peak(MemoryKind::Device),
                b.msm_scratch_bytes::<G2Affine>(n),
                "G2 host scalars",
            );
        }
    }

    /// An MSM that owns its scalar buffer (h's prefix density) converts the scalars where
    /// they are: its tracked peak is a borrowed buffer's less the copy (32 bytes a used
    /// scalar), and the buffer is freed when it returns.
    #[test]
    fn owned_scalars_convert_in_place() {
        use crate::testing::{backend_with, test_device};
        use crate::{DeviceSelector, OpenClConfig};
        use sluice_backend::{MemoryKind, MemoryTracker};
        let seed = 3200;
        let tracker = MemoryTracker::default();
        let Some(b) = backend_with(OpenClConfig {
            devices: DeviceSelector::Index(test_device()),
            tracker: Some(tracker.clone()),
            ..OpenClConfig::default()
        }) else {
            return;
        };
        let n = 3000;
        let all = bases::<G1Projective>(n, seed);
        let g1 = b.upload_bases("g1", &all).unwrap();
        let s = scalars(n, seed + 1);
        let mut prefix = Density::full(n - 1);
        prefix.push(false);
        let want = sluice_msm::msm_g1_vartime(&all[..n - 1], &s, Some(&prefix)).unwrap();
        let own_peak = |scalars: Scalars<'_, OpenClBackend>, what: &str| {
            let held = tracker.current(MemoryKind::Device);
            tracker.reset_peaks();
            let got = b.msm_vartime(&g1, 0, scalars, Some(&prefix)).unwrap();
            assert!(got == want, "{what} scalars (seed {seed})");
            tracker.peak(MemoryKind::Device) - held
        };
        let buf = b.upload_fr("borrowed scalars", &s, s.len()).unwrap();
        let borrowed = own_peak(Scalars::Buffer(&buf), "borrowed");
        drop(buf);
        let buf = b.upload_fr("owned scalars", &s, s.len()).unwrap();
        let held = tracker.current(MemoryKind::Device);
        let owned = own_peak(Scalars::Owned(buf), "owned");
        assert_eq!(
            borrowed - owned,
            (n as u64 - 1) * 32,
            "peaks {borrowed} borrowed, {owned} owned (seed {seed})"
        );
        assert_eq!(
            tracker.current(MemoryKind::Device),
            held - n as u64 * 32,
            "the owned buffer is freed (seed {seed})"
        );
    }

    #[test]
    fn g2_msm_matches_sluice_msm() {
        let Some(b) = backend() else { return };
        for (i, n) in [1usize, 37, 1 << 10].into_iter().enumerate() {
            check_msm!(
                b,
                n,
                2000 + i as u64,
                G2Projective,
                upload_bases,
                msm_vartime,
                sluice_msm::msm_g2_vartime
            );
        }
    }

    /// A G2 MSM of 2^15 scalars: on a CPU driver the point kernels once ran in PoCL's
    /// 4096-item groups, whose private memory crashed the reduce from this size on.
    #[test]
    fn g2_msm_of_2_15_matches_sluice_msm() {
        let Some(b) = backend() else { return };
        let (n, seed) = (1 << 15, 2100);
        let all = bases::<G2Projective>(n, seed);
        let resident = b.upload_bases("bases", &all).unwrap();
        let s = scalars(n, seed + 1);
        let want = sluice_msm::msm_g2_vartime(&all, &s, None).unwrap();
        let got = b
            .msm_vartime(&resident, 0, Scalars::Host(&s), None)
            .unwrap();
        assert!(got == want, "G2 MSM of 2^15, seed {seed}");
    }

    /// Shifted bases, on one context and on two with small chunks (a table buffer per
    /// window there): every way of calling the MSMs, folded where the plans say so. At
    /// 2^15 the folded set has 2^13 buckets, two scan blocks.
    #[test]
    fn msms_over_shifted_bases_match_sluice_msm() {
        for split in [false, true] {
            let Some(b) = shifted_backend(split) else {
                return;
            };
            let largest = if split { 1 << 12 } else { 1 << 15 };
            for (i, n) in [1usize, 100, largest].into_iter().enumerate() {
                check_msm!(
                    b,
                    n,
                    5000 + i as u64,
                    G1Projective,
                    upload_bases,
                    msm_vartime,
                    sluice_msm::msm_g1_vartime
                );
            }
            check_msm!(
                b,
                300,
                5100,
                G2Projective,
                upload_bases,
                msm_vartime,
                sluice_msm::msm_g2_vartime
            );
        }
    }

    /// The table's windows at the sizes the tests above use take the folded plans for dense
    /// scalars (so those tests cover them); a 2^26 partition's stay plain. At 2^20 and 2^26
    /// on an H200 they fold c = 16 (one buffer) and c = 20 (three buffers of up to five
    /// windows), against a plain c = 16 and 20; G2 at 2^24 folds c = 20 in two.
    #[test]
    fn shifted_table_plans_at_test_and_h200_sizes() {
        let folds = |n: usize, chunk: usize, bytes: usize, max_alloc: u64, large: usize| {
            let (c, per) = table_window(chunk, bytes, max_alloc);
            let groups = window_groups(DIGIT_BITS.div_ceil(c), per);
            let plans = Plan::launches(n, large, Some((c, &groups)), max_alloc, 2 * bytes);
            assert!(plans.iter().all(|p| p.fold == plans[0].fold), "{plans:?}");
            (plans[0].fold, c, groups.len())
        };
        // (n, chunk, bytes, max alloc): the tests' sizes on one context (PoCL's 1 GiB cap)
        // and on two with 4 KiB chunks (G1: 32 bases, G2: 16).
        for (n, chunk, bytes, max_alloc) in [
            (100, 103, 96, 1 << 30),
            (1 << 12, (1 << 12) + 3, 96, 1 << 30),
            (1 << 15, (1 << 15) + 3, 96, 1 << 30),
            (300, 303, 192, 1 << 30),
            (32, 32, 96, 1 << 12),
            (16, 16, 192, 1 << 12),
        ] {
            assert!(folds(n, chunk, bytes, max_alloc, n).0, "dense {n}");
        }
        assert_eq!(
            table_window((1 << 15) + 3, 96, 1 << 30).0,
            14,
            "two scan blocks"
        );
        // A partition's MSM (1 scalar in 65 large) over a 2^26 table: three sets of 2^19
        // buckets cost more than the plain c = 16's sixteen of 2^15.
        assert!(!folds(1 << 26, 1 << 26, 96, 35 << 30, (1 << 26) / 65).0);
        assert_eq!(
            folds(1 << 20, 1 << 20, 96, 35 << 30, 1 << 20),
            (true, 16, 1)
        );
        assert_eq!(
            folds(1 << 26, 1 << 26, 96, 35 << 30, 1 << 26),
            (true, 20, 3)
        );
        assert_eq!(
            folds(1 << 24, 1 << 24, 192, 35 << 30, 1 << 24),
            (true, 20, 2)
        );
        assert_eq!(Plan::new(1 << 20, 1 << 20, 35 << 30, 192).c, 16);
    }

    /// A G1 MSM of `scalars` over resident `bases` equals sluice-msm's.
    fn assert_g1_msm_matches(
        b: &OpenClBackend,
        bases: &[G1Affine],
        scalars: &[Fr],
        what: &str,
        seed: u64,
    ) {
        let resident = b.upload_bases("bases", bases).unwrap();
        let want = sluice_msm::msm_g1_vartime(bases, scalars, None).unwrap();
        let got = b
            .msm_vartime(&resident, 0, Scalars::Host(scalars), None)
            .unwrap();
        let n = scalars.len();
        assert!(got == want, "{what}, n {n}, seed {seed}");
    }

    /// A partition's scalars (0 or 1, one dense in 65, a few 2 and -1) at a size where the
    /// count and the scatter give each item two scalars (one past a multiple of two, so
    /// the last item has one): every item reserves its window-0 bucket in one atomic, some
    /// in bucket 1 and some in bucket 2, and items whose scalars differ take both paths.
    #[test]
    fn boolean_scalars_in_multi_scalar_items_match_sluice_msm() {
        let Some(b) = backend() else { return };
        let seed = 4300;
        let n = (1 << 19) + 1;
        assert_eq!(
            Plan::new(n, n / 65, 1 << 30, 192).per_item,
            2,
            "the test's premise"
        );
        let all = bases::<G1Projective>(n, seed);
        let mut r = rng(seed);
        let s: Vec<Fr> = (0..n)
            .map(|i| match (i % 65, r.next_u32() % 16) {
                (0, _) => Fr::random(&mut r),
                (_, 0) => Fr::from(2),
                (_, 1) => -Fr::ONE,
                (_, k) => Fr::from(u64::from(k % 2)),
            })
            .collect();
        assert_g1_msm_matches(b, &all, &s, "boolean scalars, two per item", seed);
    }

    /// Buckets of half a segment each, every other bucket empty, zero scalars after them:
    /// each segment but the first starts exactly at a bucket (the skipped piece slot it fills
    /// with the identity), and each bucket change inside a segment skips an empty bucket
    /// (the binary search).
    #[test]
    fn segments_aligned_with_buckets_match_sluice_msm() {
        let Some(b) = backend() else { return };
        let seed = 4100;
        let n = 512;
        let plan = Plan::new(n, n, 1 << 30, 192);
        // Even digits 2, 4, ..., 2^(c-1) in window 0, half a segment of each.
        let per = plan.seg_len / 2;
        let used = per << (plan.c - 2);
        assert!(
            used < n && used >= 4 * plan.seg_len,
            "the test's premise: {plan:?}"
        );
        let all = bases::<G1Projective>(n, seed);
        let s: Vec<Fr> = (0..n)
            .map(|i| match i < used {
                true => Fr::from(2 * (i / per) as u64 + 2),
                false => Fr::ZERO,
            })
            .collect();
        assert_g1_msm_matches(b, &all, &s, "aligned segments", seed);
    }

    /// One base repeated, every scalar 1: the mixed additions double, and so do the XYZZ
    /// additions of the reduce (equal pieces of one bucket, split across segments).
    #[test]
    fn repeated_bases_take_the_doubling_paths() {
        let Some(b) = backend() else { return };
        let seed = 4200;
        let n = 512;
        let p = bases::<G1Projective>(2, seed)[0]; // the last one is the identity
        let all = vec![p; n];
        let s = vec![Fr::ONE; n];
        assert_g1_msm_matches(b, &all, &s, "repeated bases", seed);
    }

    /// Skewed scalars (mostly 1, the rest small or -1): one bucket holds most entries and is
    /// cut into many segments, whose reduce slices start and end inside buckets.
    #[test]
    fn skewed_scalars_match_sluice_msm() {
        let Some(b) = backend() else { return };
        let seed = 4000;
        let n = 1 << 12;
        let all = bases::<G1Projective>(n, seed);
        let mut r = rng(seed);
        let s: Vec<Fr> = (0..n)
            .map(|i| match i % 16 {
                0 => Fr::from(u64::from(r.next_u32() % 8)),
                1 => -Fr::ONE,
                _ => Fr::ONE,
            })
            .collect();
        assert_g1_msm_matches(b, &all, &s, "skewed scalars", seed);
    }

    /// Two contexts (two "devices") and chunks of 42 G1 / 21 G2 bases: bases split across
    /// devices and chunks, scalars read back across devices.
    #[test]
    fn msm_across_two_contexts_and_split_buffers() {
        let Some(b) = split_backend() else { return };
        assert_eq!(b.device_infos().len(), 2);
        check_msm!(
            b,
            500,
            3000,
            G1Projective,
            upload_bases,
            msm_vartime,
            sluice_msm::msm_g1_vartime
        );
        check_msm!(
            b,
            130,
            3001,
            G2Projective,
            upload_bases,
            msm_vartime,
            sluice_msm::msm_g2_vartime
        );
    }

    /// A partition's MSM (1 scalar in 65 large) at 2^26 gets the windows of a dense MSM of
    /// 2^20 and 16 scalars per count/scatter item; a dense one the windows of its size and
    /// one scalar per item.
    #[test]
    fn plans_size_the_windows_for_the_large_scalars() {
        let n = 1 << 26;
        let dense = Plan::new(n, n, 35 << 30, 288);
        let partition = Plan::new(n, n / 65, 35 << 30, 288);
        assert_eq!((dense.c, partition.c), (20, 16), "{dense:?} {partition:?}");
        assert_eq!((dense.per_item, partition.per_item), (1, 16));
        assert_eq!(partition.c, Plan::new(1 << 20, 1 << 20, 35 << 30, 288).c);
    }

    /// `UsedElements` against the density's own positions: every used element's position,
    /// and spans of runs of them (with the used positions there); densities with empty
    /// words, full words and partial last words.
    #[test]
    fn used_elements_match_the_density() {
        use rand_core::RngCore;
        let seed = 3300;
        let mut r = rng(seed);
        for (len, one_in) in [
            (1usize, 1u32),
            (64, 1),
            (200, 2),
            (1000, 9),
            (1000, 200),
            (777, 1),
        ] {
            let density: Density = (0..len).map(|_| r.next_u32() % one_in == 0).collect();
            let used = super::UsedElements::new(&density);
            let want: Vec<usize> = density.positions().collect();
            assert_eq!(used.before.last().map(|&t| t as usize), Some(want.len()));
            for (k, &p) in want.iter().enumerate() {
                assert_eq!(used.position(k), p, "seed {seed}: len {len}, element {k}");
            }
            for (k0, count) in [(0, want.len()), (want.len() / 3, want.len() / 2)] {
                if count == 0 {
                    continue;
                }
                let (lo, hi) = used.span(k0, count);
                assert_eq!(
                    (lo, hi),
                    (want[k0], want[k0 + count - 1] + 1),
                    "seed {seed}"
                );
                let got: Vec<usize> = density.positions_in(lo..hi).collect();
                assert_eq!(got, want[k0..k0 + count], "seed {seed}: len {len}");
            }
        }
    }

    #[test]
    fn plans_cover_the_scalars_and_fit_one_allocation() {
        // (n, largest allocation): PoCL's 1 GiB cap at test sizes, the H200's 35 GiB.
        for (n, max_alloc) in [1usize, 10, 1000, 1 << 20]
            .into_iter()
            .map(|n| (n, 1u64 << 30))
            .chain([(1 << 20, 35 << 30), (1 << 26, 35 << 30)])
        {
            for large in [0, n / 65, n] {
                let p = Plan::new(n, large, max_alloc, 288);
                assert!(p.windows * p.c >= 256, "{p:?} for {n}");
                assert!(p.buckets == 1 << (p.c - 1) && p.slices.is_power_of_two());
                assert!(p.segs * p.seg_len >= n, "{p:?} for {n}");
                assert!(p.cap >= p.buckets + p.segs, "{p:?} for {n}");
                assert!((16..=512).contains(&p.seg_len), "{p:?} for {n}");
                assert!(
                    (p.windows * p.cap * 288) as u64 <= max_alloc
                        && (p.windows * n * 4) as u64 <= max_alloc,
                    "{p:?} for {n}"
                );
            }
        }
    }
}
