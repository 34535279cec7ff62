//! Pippenger's bucket method with signed-digit windows.
//!
//! Scalars are written in a balanced radix-2^c form, digits in `[-2^(c-1), 2^(c-1))`, so each
//! window needs `2^(c-1)` buckets (a negative digit adds the negated base). The digits come
//! without a carry chain: with `K = sum_j 2^(c-1) * 2^(c*j)`, digit `j` of `s` is
//! `((s + K) >> c*j) mod 2^c - 2^(c-1)`, so every window reads its digit independently and
//! windows run in parallel. `s + K < 2^(c*w)` holds for `c >= 4` and `c*w >= 256` because
//! `s < r < 0.91 * 2^255`.
//!
//! Buckets are kept in affine coordinates and filled by batch affine additions (one
//! inversion per batch, see [`crate::batch`]). A point whose bucket already waits in the
//! current batch joins the next batch (a pending queue); only when that queue is full (many
//! equal digits) does it go to a Jacobian overflow bucket, which keeps the method correct and
//! fast whatever the digit distribution. The bucket sums `sum_b (b + 1) * bucket_b` are
//! reduced by running sums over bucket ranges advanced in lockstep, so their additions are
//! batched too. [`Buckets::Jacobian`] uses only Jacobian buckets and running sums.
//!
//! The window width comes from a cost model (field multiplications per bucket addition and
//! per bucket reduced, a penalty once the buckets outgrow the cache, windows spread over
//! threads); see `plan`.

use alloc::vec::Vec;
use ff::PrimeField;
use sluice_field::Fr;

use crate::batch::{batch_add, tree_sum, Pt};
use crate::{Buckets, Density, MsmConfig, MsmCurve, MsmError};

/// Smallest window: the carry-free digit recoding needs `c >= 4`.
pub(crate) const MIN_WINDOW: usize = 4;
/// Largest window: 2^19 affine buckets per window and thread already take 50 MB (G1).
pub(crate) const MAX_WINDOW: usize = 20;

/// Limbs per recoded scalar: `s + K` may exceed 256 bits (up to `c*w < 276`).
const LIMBS: usize = 5;

/// The terms of one contiguous range of variables, after dropping zero scalars and identity
/// bases.
struct Segment {
    /// Base indices whose scalar is one (0/1 fast path).
    ones: Vec<u32>,
    /// Base indices of the remaining terms.
    bases: Vec<u32>,
    /// Canonical scalars of the remaining terms (recoded with `+ K` once the window is known).
    scalars: Vec<[u64; LIMBS]>,
}

/// Window width, number of windows, bucket strategy and how points are split across threads.
#[derive(Clone, Copy, Debug)]
struct Plan {
    c: usize,
    windows: usize,
    /// Batch size of the batch affine additions; 0 for Jacobian buckets.
    batch: usize,
    /// Number of point ranges per window (more than one only when windows < threads).
    chunks: usize,
    /// The cost of one base-field inversion, in base-field multiplications.
    inversion: usize,
}

fn threads() -> usize {
    #[cfg(feature = "parallel")]
    {
        rayon::current_num_threads().max(1)
    }
    #[cfg(not(feature = "parallel"))]
    {
        1
    }
}

/// `items.map(f)`, in parallel under the `parallel` feature.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        items.par_iter().map(f).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        items.iter().map(f).collect()
    }
}

/// Checks the lengths (bellperson's density semantics, see [`Density`]).
pub(crate) fn check_lengths(
    bases: usize,
    scalars: usize,
    density: Option<&Density>,
) -> Result<(), MsmError> {
    let mismatch = |what, expected, got| {
        Err(MsmError::LengthMismatch {
            what,
            expected,
            got,
        })
    };
    match density {
        None if bases != scalars => mismatch("bases (must equal scalars)", scalars, bases),
        Some(d) if scalars != d.len() => {
            mismatch("scalars (must equal density length)", d.len(), scalars)
        }
        Some(d) if bases != d.count_ones() => {
            mismatch("bases (must equal density set bits)", d.count_ones(), bases)
        }
        _ if bases > u32::MAX as usize => Err(MsmError::TooManyBases { bases }),
        _ => Ok(()),
    }
}

#[inline]
fn canonical(s: &Fr) -> [u64; LIMBS] {
    let repr = s.to_repr();
    let mut limbs = [0u64; LIMBS];
    for (limb, bytes) in limbs.iter_mut().zip(repr.chunks_exact(8)) {
        let mut b = [0u8; 8];
        b.copy_from_slice(bytes);
        *limb = u64::from_le_bytes(b);
    }
    limbs
}

/// Converts the used scalars to canonical limbs in one parallel pass, splitting off the
/// zero scalars (dropped), the ones (fast path) and identity bases (dropped).
fn prepare<C: MsmCurve>(
    bases: &[C::Affine],
    scalars: &[Fr],
    density: Option<&Density>,
    fast_path: bool,
) -> Vec<Segment> {
    let nvars = scalars.len();
    // Ranges aligned to density words; a few per thread for balance.
    let per = nvars.div_ceil(4 * threads()).max(4096).next_multiple_of(64);
    let mut ranges = Vec::with_capacity(nvars.div_ceil(per));
    let mut first_base = 0usize;
    for start in (0..nvars).step_by(per) {
        let end = (start + per).min(nvars);
        ranges.push((start, end, first_base));
        first_base += match density {
            Some(d) => d.words()[start / 64..end.div_ceil(64)]
                .iter()
                .map(|w| w.count_ones() as usize)
                .sum(),
            None => end - start,
        };
    }
    par_map(&ranges, |&(start, end, first_base)| {
        let mut seg = Segment {
            ones: Vec::new(),
            bases: Vec::with_capacity(end - start),
            scalars: Vec::with_capacity(end - start),
        };
        let mut k = first_base;
        let visit = |var: usize| {
            let bi = k;
            k += 1;
            if C::affine_is_identity(&bases[bi]) {
                return;
            }
            let s = canonical(&scalars[var]);
            if s == [0; LIMBS] {
                return;
            }
            if fast_path && s == [1, 0, 0, 0, 0] {
                seg.ones.push(bi as u32);
            } else {
                seg.bases.push(bi as u32);
                seg.scalars.push(s);
            }
        };
        match density {
            Some(d) => d.positions_in(start..end).for_each(visit),
            None => (start..end).for_each(visit),
        }
        seg
    })
}

/// Cost model, in field multiplications (measured: BENCHMARKS.md#msm-cpu).
mod cost {
    /// Mixed Jacobian + affine addition (7M + 4S).
    pub const MIXED: usize = 11;
    /// Jacobian + Jacobian addition (11M + 5S).
    pub const FULL: usize = 16;
    /// One affine addition inside a batch (5M + 1S + subtractions and bookkeeping).
    pub const BATCH_ADD: usize = 7;
    /// One inversion of the curve's base field (safegcd), in its multiplications: measured
    /// 77 for Fq against the portable Fq product (about 100 against the assembly one, which
    /// was not measured as a model input) and 28 for Fq2, whose product costs about three of
    /// Fq's.
    pub fn inversion(kind: sluice_field::GroupKind) -> usize {
        match kind {
            sluice_field::GroupKind::G1 => 77,
            sluice_field::GroupKind::G2 => 28,
        }
    }
    /// Extra cost of a bucket addition once a thread's buckets outgrow [`CACHE`]: measured
    /// 7.2-7.5 per addition up to 2^14 G1 buckets (768 KiB), 10-11 beyond.
    pub const OUT_OF_CACHE: usize = 3;
    /// Bucket memory per thread that still runs at in-cache speed (a typical L2).
    pub const CACHE: usize = 1 << 20;
}

/// Batch size near the minimum of `inversion / b + MIXED * b / (2 * buckets)` (the
/// inversion's share against the chance that a bucket already waits in the batch and the
/// point overflows), rounded to a power of two.
fn batch_size(buckets: usize, inversion: usize) -> usize {
    let mut b = 16;
    while b < 4096 && b * b * cost::MIXED < 2 * buckets * inversion {
        b *= 2;
    }
    b
}

/// The cheapest plan for `terms` terms on `threads` threads by the [`cost`] model;
/// `affine_bytes`/`jacobian_bytes` size one bucket of either kind, `inversion` is
/// [`cost::inversion`] of the curve.
fn plan(
    terms: usize,
    threads: usize,
    affine_bytes: usize,
    jacobian_bytes: usize,
    inversion: usize,
    cfg: &MsmConfig,
) -> Plan {
    let windows_for = |c: usize| 256usize.div_ceil(c);
    let candidates = match cfg.window_bits {
        Some(c) => c..=c,
        None => MIN_WINDOW..=MAX_WINDOW,
    };
    let mut best: Option<(usize, Plan)> = None;
    for c in candidates {
        let windows = windows_for(c);
        let buckets = 1usize << (c - 1);
        let affine_batch = batch_size(buckets, inversion);
        // All costs in 1/16 multiplications, so small shares do not round away.
        let penalty = |bytes: usize| {
            if buckets * bytes > cost::CACHE {
                16 * cost::OUT_OF_CACHE
            } else {
                0
            }
        };
        // Collisions only defer a point to the next batch (about one unit each).
        let affine_add = 16 * cost::BATCH_ADD
            + 16 * inversion / affine_batch
            + 16 * affine_batch / (2 * buckets)
            + penalty(affine_bytes);
        let jacobian_add = 16 * cost::MIXED + penalty(jacobian_bytes);
        let options = match cfg.buckets {
            Some(Buckets::Jacobian) => [Some((0, jacobian_add)), None],
            Some(Buckets::BatchAffine) => [None, Some((affine_batch, affine_add))],
            None => [Some((0, jacobian_add)), Some((affine_batch, affine_add))],
        };
        for (batch, add) in options.into_iter().flatten() {
            // Reduction: a running sum over the buckets plus the total, per window and chunk.
            let per_bucket = match reduction_chains(buckets, inversion) {
                Some((_, per_bucket)) if batch > 0 => per_bucket,
                _ => 16 * (cost::MIXED + cost::FULL),
            };
            let reduce = buckets * per_bucket;
            for chunks in 1..=threads {
                let rounds = (windows * chunks).div_ceil(threads);
                let total = rounds * (terms.div_ceil(chunks) * add + reduce);
                if best.map_or(true, |(b, _)| total < b) {
                    let p = Plan {
                        c,
                        windows,
                        batch,
                        chunks,
                        inversion,
                    };
                    best = Some((total, p));
                }
            }
        }
    }
    best.map(|(_, p)| p).unwrap_or(Plan {
        c: MIN_WINDOW,
        windows: windows_for(MIN_WINDOW),
        batch: 0,
        chunks: 1,
        inversion,
    })
}

/// `s += K` with `K = sum_{j < windows} 2^(c-1) * 2^(c*j)`.
fn recode(scalars: &mut [[u64; LIMBS]], c: usize, windows: usize) {
    let mut k = [0u64; LIMBS];
    for j in 0..windows {
        let bit = c * j + c - 1;
        k[bit / 64] |= 1 << (bit % 64);
    }
    for s in scalars {
        let mut carry = false;
        for (a, b) in s.iter_mut().zip(k) {
            let (t, c1) = a.overflowing_add(b);
            let (t, c2) = t.overflowing_add(carry as u64);
            *a = t;
            carry = c1 | c2;
        }
    }
}

/// Signed digit of window `j` of a recoded scalar.
#[inline(always)]
fn digit(s: &[u64; LIMBS], j: usize, c: usize) -> i32 {
    let bit = j * c;
    let (limb, shift) = (bit / 64, bit % 64);
    let mut v = s[limb] >> shift;
    if shift + c > 64 && limb + 1 < LIMBS {
        v |= s[limb + 1] << (64 - shift);
    }
    (v & ((1 << c) - 1)) as i32 - (1 << (c - 1))
}

const SET: u8 = 1;
const IN_BATCH: u8 = 2;
const OVERFLOW: u8 = 4;

/// Number of lockstep chains for the affine bucket reduction and its cost per bucket (in
/// 1/16 multiplications), or `None` where Jacobian running sums are cheaper (few buckets).
/// Minimises the per-bucket cost `2 * BATCH_ADD + 2 * inversion / chains + 3 * FULL * chains
/// / buckets` (two batched additions per bucket, then about three Jacobian additions per
/// chain to combine the chains).
fn reduction_chains(buckets: usize, inversion: usize) -> Option<(usize, usize)> {
    let cost = |s: usize| {
        2 * cost::BATCH_ADD * 16 + 2 * inversion * 16 / s + 3 * cost::FULL * 16 * s / buckets
    };
    let mut s = 1;
    while 2 * s <= buckets && cost(2 * s) < cost(s) {
        s *= 2;
    }
    (cost(s) < 16 * (cost::MIXED + cost::FULL)).then_some((s, cost(s)))
}

/// Per-thread bucket memory, reused across the windows a thread processes.
struct Scratch<C: MsmCurve> {
    /// Affine buckets (valid where `state & SET`).
    buckets: Vec<Pt<C::Base>>,
    /// Jacobian buckets (valid where `state & OVERFLOW`).
    overflow: Vec<C>,
    state: Vec<u8>,
    /// The current batch: `lhs[i] + rhs[i]` goes to bucket `dst[i]`.
    lhs: Vec<Pt<C::Base>>,
    rhs: Vec<Pt<C::Base>>,
    dst: Vec<u32>,
    prefix: Vec<C::Base>,
    /// Points whose bucket already waits in the batch; they join the next batch.
    pending: Vec<(u32, Pt<C::Base>)>,
    retry: Vec<(u32, Pt<C::Base>)>,
    /// Running sums and totals of the reduction chains.
    running: Vec<Option<Pt<C::Base>>>,
    totals: Vec<Option<Pt<C::Base>>>,
}

impl<C: MsmCurve> Scratch<C> {
    fn new(plan: &Plan) -> Self {
        let nb = 1usize << (plan.c - 1);
        let affine = plan.batch > 0;
        Scratch {
            buckets: if affine {
                alloc::vec![Pt::default(); nb]
            } else {
                Vec::new()
            },
            overflow: alloc::vec![C::identity(); nb],
            state: alloc::vec![0; nb],
            lhs: Vec::with_capacity(plan.batch),
            rhs: Vec::with_capacity(plan.batch),
            dst: Vec::with_capacity(plan.batch),
            prefix: Vec::with_capacity(plan.batch),
            pending: Vec::with_capacity(plan.batch),
            retry: Vec::with_capacity(plan.batch),
            running: Vec::new(),
            totals: Vec::new(),
        }
    }

    /// Adds `p` to bucket `b`: directly into an empty bucket, else through the batch; if the
    /// bucket already waits in the batch, through the pending queue, or the Jacobian
    /// overflow bucket once the queue holds `batch` points (many equal digits).
    #[inline]
    fn insert(&mut self, b: usize, p: Pt<C::Base>, batch: usize) {
        let st = self.state[b];
        if st & IN_BATCH != 0 {
            if self.pending.len() < batch {
                self.pending.push((b as u32, p));
            } else {
                self.add_overflow(b, &C::affine_from_xy_unchecked(p.x, p.y));
            }
        } else if st & SET != 0 {
            self.lhs.push(self.buckets[b]);
            self.rhs.push(p);
            self.dst.push(b as u32);
            self.state[b] = st | IN_BATCH;
            if self.dst.len() >= batch {
                self.flush(batch);
            }
        } else {
            self.buckets[b] = p;
            self.state[b] = st | SET;
        }
    }

    /// Applies the batch to the affine buckets, then moves the pending points into the
    /// next batch.
    fn flush(&mut self, batch: usize) {
        let Scratch {
            buckets,
            state,
            lhs,
            rhs,
            dst,
            prefix,
            ..
        } = self;
        batch_add(lhs, rhs, prefix, |i, sum| {
            let b = dst[i] as usize;
            match sum {
                Some(p) => {
                    buckets[b] = p;
                    state[b] = (state[b] & OVERFLOW) | SET;
                }
                None => state[b] &= OVERFLOW,
            }
        });
        lhs.clear();
        rhs.clear();
        dst.clear();
        // At most `batch` points come back, so this cannot overflow or flush again.
        core::mem::swap(&mut self.pending, &mut self.retry);
        let mut retry = core::mem::take(&mut self.retry);
        for (b, p) in retry.drain(..) {
            self.insert(b as usize, p, batch + 1);
        }
        self.retry = retry;
    }

    #[inline]
    fn add_overflow(&mut self, b: usize, p: &C::Affine) {
        self.overflow[b] = if self.state[b] & OVERFLOW != 0 {
            self.overflow[b].add_mixed_vartime(p)
        } else {
            C::identity().add_mixed_vartime(p)
        };
        self.state[b] |= OVERFLOW;
    }

    /// `sum_j digit_j(s) * base` over the segments' terms for window `j`.
    fn window_sum(&mut self, bases: &[C::Affine], segs: &[Segment], j: usize, plan: &Plan) -> C {
        let c = plan.c;
        self.state.fill(0);
        for seg in segs {
            for (s, &bi) in seg.scalars.iter().zip(&seg.bases) {
                let d = digit(s, j, c);
                if d == 0 {
                    continue;
                }
                let b = (d.unsigned_abs() - 1) as usize;
                let base = &bases[bi as usize];
                if plan.batch == 0 {
                    let p = if d < 0 {
                        let (x, y) = C::affine_xy(base);
                        C::affine_from_xy_unchecked(x, -y)
                    } else {
                        *base
                    };
                    self.add_overflow(b, &p);
                } else {
                    let (x, y) = C::affine_xy(base);
                    let p = Pt { x, y };
                    self.insert(b, if d < 0 { p.neg() } else { p }, plan.batch);
                }
            }
        }
        while !self.dst.is_empty() || !self.pending.is_empty() {
            self.flush(plan.batch);
        }
        match reduction_chains(self.state.len(), plan.inversion) {
            Some((chains, _)) if plan.batch > 0 => self
                .affine_reduction(chains)
                .add_vartime(&self.jacobian_reduction(OVERFLOW)),
            _ => self.jacobian_reduction(SET | OVERFLOW),
        }
    }

    /// `sum_b (b + 1) * bucket_b` over the buckets whose state intersects `mask`, by a
    /// running sum from the top bucket down; a run of `k` buckets without contribution adds
    /// `k * running` by double-and-add, so sparse buckets cost per bucket used.
    fn jacobian_reduction(&self, mask: u8) -> C {
        let mut running = C::identity();
        let mut total = C::identity();
        let mut repeat = 0usize;
        for b in (0..self.state.len()).rev() {
            let st = self.state[b] & mask;
            if st != 0 {
                total = total.add_vartime(&mul_small(&running, repeat));
                repeat = 0;
            }
            if st & SET != 0 {
                let p = self.buckets[b];
                running = running.add_mixed_vartime(&C::affine_from_xy_unchecked(p.x, p.y));
            }
            if st & OVERFLOW != 0 {
                running = running.add_vartime(&self.overflow[b]);
            }
            repeat += 1;
        }
        total.add_vartime(&mul_small(&running, repeat))
    }

    /// `sum_b (b + 1) * A_b` over the affine buckets, by `chains` running sums over
    /// contiguous bucket ranges advanced in lockstep, each step two batched additions:
    /// chain `s` over buckets `s*l .. (s+1)*l` ends with `running_s = sum A_b` and
    /// `total_s = sum (b - s*l + 1) A_b`, and the result is
    /// `sum_s total_s + l * sum_s s * running_s`.
    fn affine_reduction(&mut self, chains: usize) -> C {
        let l = self.state.len() / chains;
        self.running.clear();
        self.running.resize(chains, None);
        self.totals.clear();
        self.totals.resize(chains, None);
        let Scratch {
            buckets,
            state,
            lhs,
            rhs,
            dst,
            prefix,
            running,
            totals,
            ..
        } = self;
        // acc[s] += add[s] for every chain, sharing one inversion.
        let mut step = |acc: &mut [Option<Pt<C::Base>>],
                        add: &dyn Fn(usize) -> Option<Pt<C::Base>>| {
            lhs.clear();
            rhs.clear();
            dst.clear();
            for (s, a) in acc.iter_mut().enumerate() {
                if let Some(p) = add(s) {
                    match a {
                        None => *a = Some(p),
                        Some(q) => {
                            lhs.push(*q);
                            rhs.push(p);
                            dst.push(s as u32);
                        }
                    }
                }
            }
            batch_add(lhs, rhs, prefix, |i, sum| acc[dst[i] as usize] = sum);
            // The window loop reuses these as its (then empty) batch.
            lhs.clear();
            rhs.clear();
            dst.clear();
        };
        for i in (0..l).rev() {
            step(running, &|s| {
                let b = s * l + i;
                (state[b] & SET != 0).then(|| buckets[b])
            });
            let snapshot: &[Option<Pt<C::Base>>] = running;
            step(totals, &|s| snapshot[s]);
        }
        let to_c = |p: &Option<Pt<C::Base>>| match p {
            Some(p) => C::identity().add_mixed_vartime(&C::affine_from_xy_unchecked(p.x, p.y)),
            None => C::identity(),
        };
        let mut sum = C::identity();
        let mut acc = C::identity();
        let mut weighted = C::identity();
        for s in (0..chains).rev() {
            sum = sum.add_vartime(&to_c(&totals[s]));
            weighted = weighted.add_vartime(&acc);
            acc = acc.add_vartime(&to_c(&running[s]));
        }
        // weighted = sum_s s * running_s; l is a power of two.
        for _ in 0..l.trailing_zeros() {
            weighted = weighted.double();
        }
        sum.add_vartime(&weighted)
    }
}

/// `k * p` by double-and-add (variable time in `k`, which is a public bucket count).
fn mul_small<C: MsmCurve>(p: &C, k: usize) -> C {
    if k <= 1 {
        return if k == 1 { *p } else { C::identity() };
    }
    let mut acc = *p;
    for i in (0..usize::BITS - 1 - k.leading_zeros()).rev() {
        acc = acc.double();
        if k >> i & 1 == 1 {
            acc = acc.add_vartime(p);
        }
    }
    acc
}

/// Sum of the bases whose scalar is one, by batch affine addition trees (one per segment,
/// in parallel).
fn sum_ones<C: MsmCurve>(bases: &[C::Affine], segs: &[Segment]) -> C {
    par_map(segs, |seg| {
        let pts: Vec<_> = seg
            .ones
            .iter()
            .map(|&bi| {
                let (x, y) = C::affine_xy(&bases[bi as usize]);
                Pt { x, y }
            })
            .collect();
        match tree_sum(pts) {
            Some(p) => C::identity().add_mixed_vartime(&C::affine_from_xy_unchecked(p.x, p.y)),
            None => C::identity(),
        }
    })
    .iter()
    .fold(C::identity(), |acc, p| acc.add_vartime(p))
}

/// The MSM proper; lengths and configuration already checked.
pub(crate) fn msm<C: MsmCurve>(
    bases: &[C::Affine],
    scalars: &[Fr],
    density: Option<&Density>,
    cfg: &MsmConfig,
) -> C {
    let mut segs = prepare::<C>(bases, scalars, density, cfg.small_scalar_fast_path);
    let ones = sum_ones::<C>(bases, &segs);
    let terms: usize = segs.iter().map(|s| s.scalars.len()).sum();
    if terms == 0 {
        return ones;
    }
    let threads = threads();
    let plan = plan(
        terms,
        threads,
        core::mem::size_of::<Pt<C::Base>>(),
        core::mem::size_of::<C>(),
        cost::inversion(<C::Affine as sluice_field::CurveAffine>::KIND),
        cfg,
    );
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        segs.par_iter_mut()
            .for_each(|s| recode(&mut s.scalars, plan.c, plan.windows));
    }
    #[cfg(not(feature = "parallel"))]
    segs.iter_mut()
        .for_each(|s| recode(&mut s.scalars, plan.c, plan.windows));

    // Tasks (window, segment range); lanes take every `lanes`-th task with one scratch each.
    let nsegs = segs.len();
    let per_chunk = nsegs.div_ceil(plan.chunks).max(1);
    let tasks: Vec<(usize, usize, usize)> = (0..plan.windows)
        .flat_map(|j| {
            (0..nsegs)
                .step_by(per_chunk)
                .map(move |s| (j, s, (s + per_chunk).min(nsegs)))
        })
        .collect();
    let lanes: Vec<usize> = (0..threads.min(tasks.len())).collect();
    let partial = par_map(&lanes, |&lane| {
        let mut scratch = Scratch::<C>::new(&plan);
        tasks
            .iter()
            .skip(lane)
            .step_by(lanes.len())
            .map(|&(j, s, e)| (j, scratch.window_sum(bases, &segs[s..e], j, &plan)))
            .collect::<Vec<_>>()
    });
    let mut sums = alloc::vec![C::identity(); plan.windows];
    for (j, p) in partial.iter().flatten() {
        sums[*j] = sums[*j].add_vartime(p);
    }
    // Horner from the top window: acc = acc * 2^c + sum_j.
    let mut acc = C::identity();
    for s in sums.iter().rev() {
        for _ in 0..plan.c {
            acc = acc.double();
        }
        acc = acc.add_vartime(s);
    }
    acc.add_vartime(&ones)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{RngCore, SeedableRng};
    use sluice_field::G1Projective;

    #[test]
    fn affine_reduction_matches_jacobian() {
        let seed = 21;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let plan = Plan {
            c: 12,
            windows: 22,
            batch: 512,
            chunks: 1,
            inversion: cost::inversion(sluice_field::GroupKind::G1),
        };
        let mut s = Scratch::<G1Projective>::new(&plan);
        let pts = crate::random_points::<G1Projective>(s.state.len(), &mut rng);
        for (b, p) in pts.iter().enumerate() {
            s.buckets[b] = Pt { x: p.x(), y: p.y() };
            s.state[b] = if rng.next_u32() % 4 == 0 { 0 } else { SET };
        }
        let (chains, _) = reduction_chains(s.state.len(), plan.inversion).unwrap();
        let expected = s.jacobian_reduction(SET);
        assert_eq!(
            s.affine_reduction(chains),
            expected,
            "seed {seed}, chains {chains}"
        );
    }

    #[test]
    fn digits_reconstruct_scalar() {
        // sum_j d_j 2^(cj) == s, checked in i128 pieces on small scalars and on the top bits.
        for c in MIN_WINDOW..=MAX_WINDOW {
            let windows = 256usize.div_ceil(c);
            for s0 in [0u64, 1, 2, 7, 8, 9, 255, 1 << 40, u64::MAX] {
                let mut s = [[s0, 0, 0, 0, 0]];
                recode(&mut s, c, windows);
                let mut acc: i128 = 0;
                for j in (0..windows).rev() {
                    let d = digit(&s[0], j, c);
                    assert!(d >= -(1 << (c - 1)) && d < (1 << (c - 1)), "c={c}");
                    if c * j < 100 {
                        acc += (d as i128) << (c * j);
                    } else {
                        assert_eq!(d, 0, "c={c} s={s0} j={j}");
                    }
                }
                assert_eq!(acc, s0 as i128, "c={c}");
            }
        }
    }
}
