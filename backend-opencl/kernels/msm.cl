// Pippenger MSM with signed windows and a counting sort by bucket. A template over `POINT`
// (G1, G2), after ec.cl.
//
// Scalars are canonical integers (not Montgomery), SCALAR_LIMBS little-endian 32-bit limbs,
// one per base; the Fr program's fr_from_mont / fr_gather_from_mont prepare them. Window w
// holds a signed digit d in (-2^(c-1), 2^(c-1)] (a borrow moves to window w + 1), so a
// window has B = 2^(c-1) buckets and a negative digit adds the negated base. One launch:
//
//   count       histogram of (window, bucket) over all scalars (atomics)
//   scan        per window: where each bucket's entries start, and its chunks (a bucket is
//               cut into chunks of at most L entries, at least one chunk even when empty,
//               so a skewed bucket, say every scalar 1, is summed by many work items)
//   scatter     entries[window][slot] = base index | sign << 31, grouped by bucket
//   accumulate  one work item per chunk: the chunk's sum with mixed additions (in XYZZ
//               coordinates, converted to Jacobian for the reduce)
//   reduce      T work items per window: sum_b b S_b by a running sum over a slice of the
//               window's chunks (top bucket first), corrected for the later slices
//   sum_groups  adds groups of the reduce outputs until one point per window is left
//
// The host combines the windows. Variable time, as an MSM over public bases may be.

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

__kernel void POINT_msm_count(__global const uint *scalars, __global uint *counts, uint n,
                              uint c, uint windows) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  uint s[SCALAR_LIMBS];
  POINT_load_scalar(scalars, i, s);
  const uint buckets = 1u << (c - 1);
  POINT_DIGITS(s, c, windows, {
    if (mag != 0) atomic_inc(&counts[w * buckets + mag - 1]);
  })
}

inline uint POINT_chunks(uint count, uint chunk) {
  return count == 0 ? 1 : (count + chunk - 1) / chunk;
}

// One work group per window; `sums` is local memory of 2 words per work item.
__kernel void POINT_msm_scan(__global const uint *counts, __global uint *off,
                             __global uint *cursor, __global uint *chunk_off,
                             __global uint *chunk_total, __local uint *sums, uint buckets,
                             uint chunk) {
  const uint w = get_group_id(0);
  const uint lid = get_local_id(0);
  const uint ls = get_local_size(0);
  const uint per = (buckets + ls - 1) / ls;
  const uint lo = min(lid * per, buckets);
  const uint hi = min(lo + per, buckets);
  const ulong base = (ulong)w * buckets;
  uint se = 0, sc = 0;
  for (uint b = lo; b < hi; b++) {
    uint k = counts[base + b];
    se += k;
    sc += POINT_chunks(k, chunk);
  }
  sums[2 * lid] = se;
  sums[2 * lid + 1] = sc;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    uint re = 0, rc = 0;
    for (uint t = 0; t < ls; t++) {
      uint e = sums[2 * t], k = sums[2 * t + 1];
      sums[2 * t] = re;
      sums[2 * t + 1] = rc;
      re += e;
      rc += k;
    }
    chunk_total[w] = rc;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  se = sums[2 * lid];
  sc = sums[2 * lid + 1];
  for (uint b = lo; b < hi; b++) {
    uint k = counts[base + b];
    off[base + b] = se;
    cursor[base + b] = se;
    chunk_off[base + b] = sc;
    se += k;
    sc += POINT_chunks(k, chunk);
  }
}

// Window w's entries live at entries[w n ..]; afterwards cursor[b] is the end of bucket b.
__kernel void POINT_msm_scatter(__global const uint *scalars, __global uint *cursor,
                                __global uint *entries, uint n, uint c, uint windows) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  uint s[SCALAR_LIMBS];
  POINT_load_scalar(scalars, i, s);
  const uint buckets = 1u << (c - 1);
  POINT_DIGITS(s, c, windows, {
    if (mag != 0) {
      uint pos = atomic_inc(&cursor[w * buckets + mag - 1]);
      entries[(ulong)w * n + pos] = i | (neg << 31);
    }
  })
}

// Work item w cap + j sums chunk j of window w (cap: chunk slots per window).
__kernel void POINT_msm_accumulate(__global const POINT_affine *bases,
                                   __global const uint *entries, __global const uint *off,
                                   __global const uint *end, __global const uint *chunk_off,
                                   __global const uint *chunk_total,
                                   __global POINT_jacobian *partials, __global uint *keys,
                                   uint base_offset, uint n, uint buckets, uint chunk,
                                   uint cap, uint windows) {
  const uint gid = get_global_id(0);
  const uint w = gid / cap;
  const uint j = gid % cap;
  if (w >= windows || j >= chunk_total[w]) return;
  const ulong wb = (ulong)w * buckets;
  // The bucket: the last one whose first chunk is at or before j (every bucket has one).
  uint lo = 0, hi = buckets - 1;
  while (lo < hi) {
    uint mid = (lo + hi + 1) >> 1;
    if (chunk_off[wb + mid] <= j) lo = mid;
    else hi = mid - 1;
  }
  const uint start = off[wb + lo] + (j - chunk_off[wb + lo]) * chunk;
  const uint stop = min(start + chunk, end[wb + lo]);
  bases += base_offset;
  entries += (ulong)w * n;
  POINT_xyzz acc = POINT_xyzz_zero();
  for (uint e = start; e < stop; e++) {
    uint v = entries[e];
    POINT_affine p = bases[v & 0x7fffffffu];
    if (v >> 31) p.y = PFIELD_neg(p.y);
    acc = POINT_xyzz_add_mixed(acc, p);
  }
  partials[gid] = POINT_xyzz_to_jacobian(acc);
  keys[gid] = lo + 1;
}

// k p for a small k (double and add).
POINT_jacobian POINT_mul_small(POINT_jacobian p, uint k) {
  POINT_jacobian r = POINT_zero();
  if (k == 0) return r;
  for (int i = 31 - (int)clz(k); i >= 0; i--) {
    r = POINT_double(r);
    if ((k >> i) & 1) r = POINT_add(r, p);
  }
  return r;
}

// Work item w T + t: slice t of window w's chunks (keys run 1..B, each bucket's chunks
// adjacent). Walking down from the top, run = sum of the chunks so far; each bucket adds
// run once when its last chunk is passed, which gives sum_b b S_b. The buckets that close
// below the slice would add this slice's run once each: k of them, added as k run.
__kernel void POINT_msm_reduce(__global const POINT_jacobian *partials,
                               __global const uint *keys, __global const uint *chunk_total,
                               __global POINT_jacobian *out, uint cap, uint slices,
                               uint windows) {
  const uint gid = get_global_id(0);
  const uint w = gid / slices;
  const uint t = gid % slices;
  if (w >= windows) return;
  const uint total_chunks = chunk_total[w];
  const uint lo = (uint)(((ulong)total_chunks * t) / slices);
  const uint hi = (uint)(((ulong)total_chunks * (t + 1)) / slices);
  partials += (ulong)w * cap;
  keys += (ulong)w * cap;
  POINT_jacobian run = POINT_zero();
  POINT_jacobian sum = POINT_zero();
  if (lo < hi) {
    for (uint j = hi; j-- > lo;) {
      run = POINT_add(run, partials[j]);
      if (j == 0 || keys[j - 1] != keys[j]) sum = POINT_add(sum, run);
    }
    uint later = keys[lo] - 1 + (lo > 0 && keys[lo - 1] == keys[lo] ? 1 : 0);
    sum = POINT_add(sum, POINT_mul_small(run, later));
  }
  out[gid] = sum;
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
