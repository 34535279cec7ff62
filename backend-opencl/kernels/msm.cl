// Pippenger MSM with signed windows and a counting sort by bucket. A template over `POINT`
// (G1, G2), after ec.cl.
//
// Scalars are canonical integers (not Montgomery), SCALAR_LIMBS little-endian 32-bit limbs,
// one per base; the Fr program's fr_from_mont / fr_gather_used_from_mont prepare them. Window w
// holds a signed digit d in (-2^(c-1), 2^(c-1)] (a borrow moves to window w + 1), so a
// window has B = 2^(c-1) buckets and a negative digit adds the negated base. One launch:
//
//   count_large how many scalars are 2^16 or more (the host then plans the windows)
//   count       histogram of (window, bucket) over all scalars (atomics; see below for the
//               window-0 bucket each work item aggregates)
//   scan        per window: where each bucket's entries start, and each bucket's rank
//               among the window's non-empty buckets (three kernels, over blocks)
//   scatter     entries[window][slot] = base index | sign << 31, grouped by bucket
//   accumulate  one work item per segment of L consecutive entries of a window, whatever
//               the buckets: every item of a warp runs the same number of mixed additions
//               (in XYZZ coordinates). A segment writes one partial sum per bucket it
//               touches ("pieces"), sorted by bucket, so a skewed bucket (say every scalar
//               1) is summed by many work items and empty buckets cost nothing
//   reduce      T work items per window: sum_b b S_b by a running sum over a slice of the
//               window's pieces (top bucket first)
//   sum_groups  adds groups of the reduce outputs, round by round, until few are left
//
// The host adds what is left of each window and combines the windows. Variable time, as an
// MSM over public bases may be.
//
// Shifted bases (`fold`): with a table of 2^(c k) P for every window k (msm_shift), a
// digit d of window k adds d 2^(c k) P, so every window's entries go to one bucket set and
// one reduce serves them all: fewer windows pay for a larger c. The count and the scatter
// take windows [w0, w0 + wn) of the digits (a table too large for one buffer is split by
// windows); entry (k - w0) stride + i names base i of window k in the table's buffer.

// The signed digits of one scalar, window by window: `POINT_DIGITS(s, c, windows, body)`
// runs `body` with `w`, `mag` (|d|, 0 for a zero digit) and `neg` (d < 0) in scope.
#define POINT_DIGITS(s, c, windows, body)                                       \
  {                                                                            \
    uint carry_ = 0;                                                           \
    for (uint w = 0; w < (windows); w++) {                                     \
      uint bit_ = w * (c);                                                     \
      uint limb_ = bit_ >> 5;                                                  \
      ulong v_ = limb_ < SCALAR_LIMBS ? (ulong)(s)[limb_] : 0;                 \
      if (limb_ + 1 < SCALAR_LIMBS) v_ |= (ulong)(s)[limb_ + 1] << 32;         \
      uint d_ = ((uint)(v_ >> (bit_ & 31)) & ((1u << (c)) - 1)) + carry_;      \
      carry_ = d_ > (1u << ((c) - 1));                                         \
      uint mag = carry_ ? (1u << (c)) - d_ : d_;                               \
      uint neg = carry_;                                                       \
      body                                                                     \
    }                                                                          \
  }

inline void POINT_load_scalar(__global const uint *scalars, uint i, uint *s) {
  for (uint k = 0; k < SCALAR_LIMBS; k++) s[k] = scalars[(ulong)i * SCALAR_LIMBS + k];
}

// How many scalars are 2^16 or more (`large`, zeroed by the host): the others have one
// nonzero digit, in window 0, for any window of 17 bits or more, so the host sizes the
// windows for the large ones (msm.rs, Plan::new). One atomic per work group.
__kernel void POINT_msm_count_large(__global const uint *scalars, __global uint *large,
                                    uint n) {
  __local uint group_large;
  const uint i = get_global_id(0);
  if (get_local_id(0) == 0) group_large = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (i < n) {
    uint high = 0;
    for (uint k = 1; k < SCALAR_LIMBS; k++) high |= scalars[(ulong)i * SCALAR_LIMBS + k];
    if (high != 0 || scalars[(ulong)i * SCALAR_LIMBS] >= 0x10000u) atomic_inc(&group_large);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0 && group_large != 0) atomic_add(large, group_large);
}

// The count and the scatter give each work item `per` scalars, i = t + k items (k < per),
// and the item reserves the entries of one window-0 bucket with one atomic for all of
// them: that of its first scalar with a nonzero window-0 digit. Boolean-heavy scalars (a
// Filecoin circuit's) put half of all entries in window 0's bucket 1; an atomic per entry
// there serialised on one address and took most of those MSMs' time.

// The magnitude of scalar i's window-0 digit (its low c bits, c <= 24, with no carry in).
inline uint POINT_window0_mag(__global const uint *scalars, uint i, uint c) {
  const uint d = scalars[(ulong)i * SCALAR_LIMBS] & ((1u << c) - 1);
  return d > (1u << (c - 1)) ? (1u << c) - d : d;
}

// The window-0 bucket (magnitude) work item t aggregates, 0 for none, and how many of its
// scalars fall in it.
inline uint POINT_window0_run(__global const uint *scalars, uint t, uint items, uint per,
                              uint n, uint c, uint *run) {
  uint mag0 = 0;
  *run = 0;
  for (uint k = 0; k < per; k++) {
    const uint i = t + k * items;
    if (i >= n) break;
    const uint mag = POINT_window0_mag(scalars, i, c);
    if (mag != 0 && mag0 == 0) mag0 = mag;
    if (mag != 0 && mag == mag0) *run += 1;
  }
  return mag0;
}

// Runs `body` (as POINT_DIGITS) for every digit of work item t's scalars, with `i` (the
// scalar's index) in scope too.
#define POINT_ITEM_DIGITS(scalars, t, items, per, n, c, windows, body)          \
  for (uint k = 0; k < (per); k++) {                                           \
    const uint i = (t) + k * (items);                                          \
    if (i >= (n)) break;                                                       \
    uint s[SCALAR_LIMBS];                                                      \
    POINT_load_scalar(scalars, i, s);                                          \
    POINT_DIGITS(s, c, windows, body)                                          \
  }

// The bucket set of window w (>= w0): its own, or the shared one when folded.
#define POINT_SET(w, w0, fold) ((fold) ? 0 : (w) - (w0))

__kernel void POINT_msm_count(__global const uint *scalars, __global uint *counts, uint n,
                              uint c, uint items, uint per, uint w0, uint wn, uint fold) {
  const uint t = get_global_id(0);
  if (t >= items) return;
  uint run = 0;
  const uint mag0 = w0 == 0 ? POINT_window0_run(scalars, t, items, per, n, c, &run) : 0;
  if (run != 0) atomic_add(&counts[mag0 - 1], run);
  const uint buckets = 1u << (c - 1);
  POINT_ITEM_DIGITS(scalars, t, items, per, n, c, w0 + wn, {
    if (w >= w0 && mag != 0 && (w != 0 || mag != mag0))
      atomic_inc(&counts[POINT_SET(w, w0, fold) * buckets + mag - 1]);
  })
}

// The scan runs over blocks of buckets, a work group each, so that a large bucket set (a
// folded one has up to 2^23) is scanned by many SMs: msm_scan_blocks sums each block,
// msm_scan_sets turns a set's block sums into exclusive prefixes (one group per set), and
// msm_scan writes each bucket's first entry (off, and cursor for the scatter) and its rank
// among the set's non-empty buckets. Item t of a group takes `per` consecutive buckets (or
// blocks); `sums` is local memory of 2 words per item.

// The group's exclusive prefix of the items' (entries, non-empty) pairs, in place, and its
// totals; every item of the group must call it.
inline void POINT_group_scan(__local uint *sums, uint *se, uint *sr, uint *te, uint *tr) {
  const uint lid = get_local_id(0);
  sums[2 * lid] = *se;
  sums[2 * lid + 1] = *sr;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    uint re = 0, rr = 0;
    for (uint t = 0; t < get_local_size(0); t++) {
      uint e = sums[2 * t], k = sums[2 * t + 1];
      sums[2 * t] = re;
      sums[2 * t + 1] = rr;
      re += e;
      rr += k;
    }
    sums[2 * get_local_size(0)] = re;
    sums[2 * get_local_size(0) + 1] = rr;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  *se = sums[2 * lid];
  *sr = sums[2 * lid + 1];
  *te = sums[2 * get_local_size(0)];
  *tr = sums[2 * get_local_size(0) + 1];
}

// Group (w, k) of sets x blocks: block k of set w is buckets [k block, (k + 1) block).
// Item t's buckets are [lo, hi) within the set.
#define POINT_SCAN_RANGE(block, buckets)                                        \
  const uint blocks_ = get_num_groups(0) / sets;                               \
  const uint w = get_group_id(0) / blocks_;                                    \
  const uint k = get_group_id(0) % blocks_;                                    \
  const uint per = (block) / (uint)get_local_size(0);                          \
  const uint lo = min(k * (block) + (uint)get_local_id(0) * per, (buckets));   \
  const uint hi = min(lo + per, (buckets));                                    \
  const ulong base = (ulong)w * (buckets);

// Item t's buckets [lo, hi) of the set at `base`: their (entries, non-empty) exclusive
// prefix within the group's block, and the block's totals (POINT_group_scan).
inline void POINT_scan_block(__global const uint *counts, ulong base, uint lo, uint hi,
                             __local uint *sums, uint *se, uint *sr, uint *te, uint *tr) {
  *se = 0;
  *sr = 0;
  for (uint b = lo; b < hi; b++) {
    const uint c = counts[base + b];
    *se += c;
    *sr += c != 0;
  }
  POINT_group_scan(sums, se, sr, te, tr);
}

// block_sums[2 (w blocks + k) ..] = the entries and non-empty buckets of block k of set w.
__kernel void POINT_msm_scan_blocks(__global const uint *counts, __global uint *block_sums,
                                    __local uint *sums, uint buckets, uint block, uint sets) {
  POINT_SCAN_RANGE(block, buckets)
  uint se, sr, te, tr;
  POINT_scan_block(counts, base, lo, hi, sums, &se, &sr, &te, &tr);
  if (get_local_id(0) == 0) {
    block_sums[2 * get_group_id(0)] = te;
    block_sums[2 * get_group_id(0) + 1] = tr;
  }
}

// One group per set: its `blocks` block sums become exclusive prefixes, in place;
// totals[w] = the set's pieces (see accumulate: one per non-empty bucket plus one per
// segment after the first, zero for an empty set) and totals[sets + w] its entries.
__kernel void POINT_msm_scan_sets(__global uint *block_sums, __global uint *totals,
                                  __local uint *sums, uint blocks, uint seg_len) {
  const uint w = get_group_id(0);
  const uint sets = get_num_groups(0);
  const uint ls = get_local_size(0);
  const uint per = (blocks + ls - 1) / ls;
  const uint lo = min((uint)get_local_id(0) * per, blocks);
  const uint hi = min(lo + per, blocks);
  block_sums += 2 * (ulong)w * blocks;
  uint se = 0, sr = 0, te, tr;
  for (uint k = lo; k < hi; k++) {
    se += block_sums[2 * k];
    sr += block_sums[2 * k + 1];
  }
  POINT_group_scan(sums, &se, &sr, &te, &tr);
  for (uint k = lo; k < hi; k++) {
    const uint e = block_sums[2 * k], r = block_sums[2 * k + 1];
    block_sums[2 * k] = se;
    block_sums[2 * k + 1] = sr;
    se += e;
    sr += r;
  }
  if (get_local_id(0) == 0) {
    totals[w] = te == 0 ? 0 : tr + (te - 1) / seg_len;
    totals[sets + w] = te;
  }
}

__kernel void POINT_msm_scan(__global const uint *counts, __global const uint *block_sums,
                             __global uint *off, __global uint *cursor, __global uint *rank,
                             __local uint *sums, uint buckets, uint block, uint sets) {
  POINT_SCAN_RANGE(block, buckets)
  uint se, sr, te, tr;
  POINT_scan_block(counts, base, lo, hi, sums, &se, &sr, &te, &tr);
  se += block_sums[2 * get_group_id(0)];
  sr += block_sums[2 * get_group_id(0) + 1];
  for (uint b = lo; b < hi; b++) {
    uint c = counts[base + b];
    off[base + b] = se;
    cursor[base + b] = se;
    rank[base + b] = sr;
    se += c;
    sr += c != 0;
  }
}

// Where bucket set k's entries start: `full` sets of `span` slots, then sets of `large_span`
// (only scalars of 2^16 or more have digits there; Plan::set_start).
inline ulong POINT_set_start(uint k, uint span, uint full, uint large_span) {
  const uint f = min(k, full);
  return (ulong)f * span + (ulong)(k - f) * large_span;
}

// Bucket set k's entries live at entries[POINT_set_start(k) ..] (one set of wn n entries
// when folded); afterwards cursor[b] is the end of bucket b.
__kernel void POINT_msm_scatter(__global const uint *scalars, __global uint *cursor,
                                __global uint *entries, uint n, uint c, uint items, uint per,
                                uint w0, uint wn, uint fold, uint stride, uint full,
                                uint large_span) {
  const uint t = get_global_id(0);
  if (t >= items) return;
  uint run = 0;
  const uint mag0 = w0 == 0 ? POINT_window0_run(scalars, t, items, per, n, c, &run) : 0;
  uint next0 = run != 0 ? atomic_add(&cursor[mag0 - 1], run) : 0;
  const uint buckets = 1u << (c - 1);
  POINT_ITEM_DIGITS(scalars, t, items, per, n, c, w0 + wn, {
    if (w >= w0 && mag != 0) {
      const uint set = POINT_SET(w, w0, fold);
      uint pos = w == 0 && mag == mag0 ? next0++ : atomic_inc(&cursor[set * buckets + mag - 1]);
      const uint base = fold ? (w - w0) * stride + i : i;
      entries[POINT_set_start(set, n, full, large_span) + pos] = base | (neg << 31);
    }
  })
}

// The largest bucket in [lo, hi) whose first entry is at or before entry e: the non-empty
// bucket holding e (an empty bucket starts where the next one does).
inline uint POINT_bucket_of(__global const uint *off, uint lo, uint hi, uint e) {
  hi -= 1;
  while (lo < hi) {
    uint mid = (lo + hi + 1) >> 1;
    if (off[mid] <= e) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// Work item w segs + s sums entries [s L, (s + 1) L) of window w (segs: segment slots per
// window). The piece of segment s in bucket b goes to slot rank(b) + s of the window's
// pieces (cap slots): consecutive pieces are consecutive slots, except where a segment
// starts exactly at a bucket, which skips one slot; that segment fills it with the identity.
// Pieces stay in XYZZ coordinates, so a bucket change costs a store, not a conversion.
__kernel void POINT_msm_accumulate(__global const POINT_affine *bases,
                                   __global const uint *entries, __global const uint *off,
                                   __global const uint *end, __global const uint *rank,
                                   __global const uint *totals, __global POINT_xyzz *partials,
                                   __global uint *keys, uint base_offset, uint n, uint buckets,
                                   uint seg_len, uint segs, uint cap, uint windows, uint full,
                                   uint large_span) {
  const uint gid = get_global_id(0);
  const uint w = gid / segs;
  const uint s = gid % segs;
  if (w >= windows) return;
  const uint total = totals[windows + w];
  const uint start = s * seg_len;
  if (start >= total) return;
  const uint stop = min(start + seg_len, total);
  const ulong wb = (ulong)w * buckets;
  off += wb;
  end += wb;
  uint b = POINT_bucket_of(off, 0, buckets, start);
  uint slot = rank[wb + b] + s;
  partials += (ulong)w * cap;
  keys += (ulong)w * cap;
  if (s > 0 && off[b] == start) {
    partials[slot - 1] = POINT_xyzz_zero();
    keys[slot - 1] = b + 1;
  }
  bases += base_offset;
  entries += POINT_set_start(w, n, full, large_span);
  uint bend = end[b];
  POINT_xyzz acc = POINT_xyzz_zero();
  for (uint e = start; e < stop; e++) {
    if (e == bend) {
      partials[slot] = acc;
      keys[slot] = b + 1;
      slot++;
      acc = POINT_xyzz_zero();
      // A later non-empty bucket exists (e < total): usually the next one.
      b = end[b + 1] > e ? b + 1 : POINT_bucket_of(off, b + 1, buckets, e);
      bend = end[b];
    }
    uint v = entries[e];
    POINT_affine p = bases[v & 0x7fffffffu];
    if (v >> 31) p.y = PFIELD_neg(p.y);
    acc = POINT_xyzz_add_mixed(acc, p);
  }
  partials[slot] = acc;
  keys[slot] = b + 1;
}

// k p for a small k (double and add).
POINT_xyzz POINT_mul_small(POINT_xyzz p, uint k) {
  POINT_xyzz r = POINT_xyzz_zero();
  if (k == 0) return r;
  for (int i = 31 - (int)clz(k); i >= 0; i--) {
    r = POINT_xyzz_double(r);
    if ((k >> i) & 1) r = POINT_xyzz_add(r, p);
  }
  return r;
}

// Work item w T + t: slice t of window w's pieces (keys = bucket + 1, non-decreasing).
// sum_b b S_b = sum_k (sum of the pieces with key >= k): walking down from the top, run =
// the slice's pieces so far, and each step from key k to a lower key k' adds (k - k') run
// (k run at the slice's bottom). Slices add up to the window's sum. XYZZ throughout (an
// addition of two pieces costs 14 products there against 22 through Jacobian coordinates).
__kernel void POINT_msm_reduce(__global const POINT_xyzz *partials,
                               __global const uint *keys, __global const uint *totals,
                               __global POINT_jacobian *out, uint cap, uint slices,
                               uint windows) {
  const uint gid = get_global_id(0);
  const uint w = gid / slices;
  const uint t = gid % slices;
  if (w >= windows) return;
  const uint total = totals[w];
  const uint lo = (uint)(((ulong)total * t) / slices);
  const uint hi = (uint)(((ulong)total * (t + 1)) / slices);
  partials += (ulong)w * cap;
  keys += (ulong)w * cap;
  POINT_xyzz run = POINT_xyzz_zero();
  POINT_xyzz sum = POINT_xyzz_zero();
  for (uint j = hi; j-- > lo;) {
    run = POINT_xyzz_add(run, partials[j]);
    uint k = keys[j];
    uint step = j > lo ? k - keys[j - 1] : k;
    if (step == 1) sum = POINT_xyzz_add(sum, run);
    else if (step > 1) sum = POINT_xyzz_add(sum, POINT_mul_small(run, step));
  }
  out[gid] = POINT_xyzz_to_jacobian(sum);
}

// out[i] = in[i group] + ... + in[i group + group - 1], for i < count.
__kernel void POINT_sum_groups(__global const POINT_jacobian *in, __global POINT_jacobian *out,
                               uint count, uint group) {
  const uint i = get_global_id(0);
  if (i >= count) return;
  POINT_jacobian acc = POINT_zero();
  for (uint k = 0; k < group; k++) acc = POINT_add(acc, in[(ulong)i * group + k]);
  out[i] = acc;
}

// The shifted-bases table: dst[dst_off + i] = 2^c src[src_off + i] for i < n, affine (the
// identity stays (0, 0)). Each work item doubles SHIFT_BATCH points in Jacobian coordinates
// and brings them back to affine with one inversion (Montgomery's trick).
#define POINT_SHIFT_BATCH 16
__kernel void POINT_msm_shift(__global const POINT_affine *src, __global POINT_affine *dst,
                              uint src_off, uint dst_off, uint n, uint c) {
  const uint lo = get_global_id(0) * POINT_SHIFT_BATCH;
  if (lo >= n) return;
  const uint count = min((uint)POINT_SHIFT_BATCH, n - lo);
  POINT_jacobian p[POINT_SHIFT_BATCH];
  PFIELD before[POINT_SHIFT_BATCH];  // product of the nonzero Z of points 0..k-1
  PFIELD acc = PFIELD_one();
  for (uint k = 0; k < count; k++) {
    const POINT_affine a = src[src_off + lo + k];
    POINT_jacobian j = POINT_zero();
    if (!(PFIELD_is_zero(a.x) && PFIELD_is_zero(a.y))) {
      j.x = a.x;
      j.y = a.y;
      j.z = PFIELD_one();
    }
    for (uint s = 0; s < c; s++) j = POINT_double(j);
    p[k] = j;
    before[k] = acc;
    if (!PFIELD_is_zero(j.z)) acc = PFIELD_mul(acc, j.z);
  }
  PFIELD inv = PFIELD_inv(acc);  // 1 / (product of every nonzero Z)
  for (uint k = count; k-- > 0;) {
    POINT_affine r;
    r.x = PFIELD_zero();
    r.y = PFIELD_zero();
    if (!PFIELD_is_zero(p[k].z)) {
      const PFIELD zi = PFIELD_mul(inv, before[k]);
      inv = PFIELD_mul(inv, p[k].z);
      const PFIELD zi2 = PFIELD_sqr(zi);
      r.x = PFIELD_mul(p[k].x, zi2);
      r.y = PFIELD_mul(p[k].y, PFIELD_mul(zi2, zi));
    }
    dst[dst_off + lo + k] = r;
  }
}
