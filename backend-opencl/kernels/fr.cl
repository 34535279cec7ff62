// The Fr program: pointwise operations, the NTT and the MSM scalar preparation.
// Follows the generated Fr header and field.cl instantiated for Fr. Buffers hold Fr in
// Montgomery form (the host's bytes) unless stated otherwise; `n` is the element count of the
// chunk a launch works on.

__kernel void fr_mul_assign(__global Fr *a, __global const Fr *b, uint n) {
  uint i = get_global_id(0);
  if (i < n) a[i] = Fr_mul(a[i], b[i]);
}

__kernel void fr_sub_assign(__global Fr *a, __global const Fr *b, uint n) {
  uint i = get_global_id(0);
  if (i < n) a[i] = Fr_sub(a[i], b[i]);
}

// a[i] *= s[0].
__kernel void fr_scale(__global Fr *a, __global const Fr *s, uint n) {
  uint i = get_global_id(0);
  if (i < n) a[i] = Fr_mul(a[i], s[0]);
}

// a[i] *= g_k^j where first + i = k segment + j: element j of segment k times the k-th
// generator's j-th power. g_k is gens[k - k0] (the chunk's first segment being k0), or gens[0]
// for every segment when `shared` (a coset shift). distribute_powers is one segment longer than
// any buffer. Items go in blocks of `lanes` (a warp): item `lane` of block b takes elements
// b lanes per_item + lane + m lanes (m < per_item), so at every step the block reads and
// writes consecutive elements (each item walking its own run of consecutive elements made
// the launch memory-bound on an H200, BENCHMARKS.md#ntt). Along an item the power advances by
// g^lanes; one exponentiation starts it and another follows each segment boundary.
__kernel void fr_segment_powers(__global Fr *a, __global const Fr *gens, uint n, uint per_item,
                                uint lanes, ulong first, ulong segment, ulong k0,
                                uint shared) {
  const uint t = get_global_id(0);
  const ulong base = (ulong)(t / lanes) * lanes * per_item + t % lanes;
  if (base >= n) return;
  ulong k = (first + base) / segment;
  ulong j = first + base - k * segment;
  Fr g = gens[shared ? 0 : k - k0];
  Fr step = Fr_pow(g, lanes);
  Fr p = Fr_pow(g, j);
  for (uint m = 0; m < per_item; m++) {
    const ulong i = base + (ulong)m * lanes;
    if (i >= n) break;
    if (m > 0) {
      j += lanes;
      if (j >= segment) {
        k = (first + i) / segment;
        j = first + i - k * segment;
        if (!shared) {
          g = gens[k - k0];
          step = Fr_pow(g, lanes);
        }
        p = Fr_pow(g, j);
      } else {
        p = Fr_mul(p, step);
      }
    }
    a[i] = Fr_mul(a[i], p);
  }
}

inline uint reverse_bits(uint x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
  return (x >> 16) | (x << 16);
}

// The low `bits` bits of x reversed (0 for no bits).
inline uint reverse_low_bits(uint x, uint bits) {
  return bits == 0 ? 0 : reverse_bits(x) >> (32 - bits);
}

// a[q] *= c[0] c[1]^rev(j) for element j of each run of 2^log_n (log_n >= 11) in bit-reversed
// order (rev over log_n bits): the coset shift by g = c[1] of bit-reversed evaluations, scaled
// by c[0], without reversing them first. c[2] = g^(2^(log_n - 11)). Item `lane` of block b
// (a warp of 32) takes the 64 elements b 2^11 + m 32 + lane: rev of that position is
// rev5(lane) 2^(log_n - 5) + rev6(m) 2^(log_n - 11) + rev(b), so walking m in the order
// rev6(m) = 0, 1, 2, ... the power advances by c[2], and every step of the warp touches 32
// consecutive elements.
__kernel void fr_coset_powers_br(__global Fr *a, __global const Fr *c, uint n, uint log_n) {
  const uint t = get_global_id(0);
  const ulong base = (ulong)(t / 32) * 2048 + t % 32;
  if (base >= n) return;
  const uint block = (uint)((base & ((1ul << log_n) - 1)) >> 11);
  const ulong e = ((ulong)reverse_low_bits(t % 32, 5) << (log_n - 5)) |
                  reverse_low_bits(block, log_n - 11);
  Fr p = Fr_mul(c[0], Fr_pow(c[1], e));
  const Fr step = c[2];
  for (uint k = 0; k < 64; k++) {
    const ulong i = base + (ulong)reverse_low_bits(k, 6) * 32;
    a[i] = Fr_mul(a[i], p);
    p = Fr_mul(p, step);
  }
}

// Local-memory tiles of the NTT and the bit reversal are planes of 32-bit words: word j of
// slot s at u[j * slots + s]. A warp's access (lane i: word j of slot s_i) then meets 32
// distinct banks whenever the s_i differ mod 32, where an array of Fr (32-byte stride)
// would put 8 lanes on every bank whatever the slots.
inline Fr tile_get(__local const uint *u, uint slots, uint s) {
  Fr r;
  for (uint j = 0; j < Fr_LIMBS; j++) r.v[j] = u[j * slots + s];
  return r;
}

inline void tile_put(__local uint *u, uint slots, uint s, Fr x) {
  for (uint j = 0; j < Fr_LIMBS; j++) u[j * slots + s] = x.v[j];
}

// A global Fr in two 16-byte accesses (buffers and 32-byte elements are 16-byte aligned;
// a copy of the struct of 8 uints may compile to 8 4-byte accesses).
#if Fr_LIMBS != 8
#error "fr_load and fr_store assume 8 limbs"
#endif
inline Fr fr_load(__global const Fr *p) {
  const __global uint4 *q = (const __global uint4 *)p;
  const uint4 l = q[0], h = q[1];
  Fr r;
  r.v[0] = l.x;
  r.v[1] = l.y;
  r.v[2] = l.z;
  r.v[3] = l.w;
  r.v[4] = h.x;
  r.v[5] = h.y;
  r.v[6] = h.z;
  r.v[7] = h.w;
  return r;
}

inline void fr_store(__global Fr *p, Fr x) {
  __global uint4 *q = (__global uint4 *)p;
  q[0] = (uint4)(x.v[0], x.v[1], x.v[2], x.v[3]);
  q[1] = (uint4)(x.v[4], x.v[5], x.v[6], x.v[7]);
}

// Slot of (row, col) in a 16 x 16 tile: rows XOR-swizzled so that a warp's 32 lanes hit 32
// banks both when they store two rows and when they load two bit-reversed columns.
inline uint bit_reverse_slot(uint row, uint col) { return (row << 4) | (col ^ (row >> 1)); }

// In-place bit-reversal permutation of each run of 2^log_n elements (log_n >= 1) of the n
// elements (a multiple of 2^log_n), in work groups of 256 items over 256 elements each, so
// that every global access is a row of consecutive elements (one item per element touched
// lone 32-byte elements 2^(log_n-1) apart, and half the items idled). `u` holds 512
// elements.
// log_n >= 8: index i = (hi, m, lo), 4-bit hi and lo around a middle m of log_n - 8 bits,
// goes to rev(i) = (rev lo, rev m, rev hi): the 16 x 16 tile of middle m (rows hi of 16
// consecutive elements lo) lands transposed, each coordinate reversed, on the tile of
// middle rev m. The group of m <= rev m loads both tiles, then stores each where the other
// was (no other group touches them); the group of m > rev m has nothing to do.
// log_n < 8: a group reverses the whole runs in its 256 consecutive elements.
__kernel void fr_bit_reverse(__global Fr *a, __local uint *u, uint log_n, uint n) {
  const uint lid = get_local_id(0);
  const uint group = get_group_id(0);
  if (log_n < 8) {
    const uint i = group * 256 + lid;
    if (i < n) tile_put(u, 256, lid, fr_load(a + i));
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint lo = lid & ((1u << log_n) - 1);
    if (i < n) fr_store(a + i, tile_get(u, 256, lid - lo + (reverse_bits(lo) >> (32 - log_n))));
    return;
  }
  const uint mid_bits = log_n - 8;
  const uint m = group & ((1u << mid_bits) - 1);
  const uint mr = mid_bits ? reverse_bits(m) >> (32 - mid_bits) : 0;
  if (m > mr) return;
  a += (size_t)(group >> mid_bits) << log_n;
  const uint row = lid >> 4, col = lid & 15;
  __global Fr *ta = a + ((size_t)row << (log_n - 4)) + (m << 4) + col;
  __global Fr *tb = a + ((size_t)row << (log_n - 4)) + (mr << 4) + col;
  tile_put(u, 512, bit_reverse_slot(row, col), fr_load(ta));
  if (m != mr) tile_put(u, 512, 256 + bit_reverse_slot(row, col), fr_load(tb));
  barrier(CLK_LOCAL_MEM_FENCE);
  // Element (row, col) of the tile of rev m is element (rev col, rev row) of the tile of m.
  const uint src = bit_reverse_slot(reverse_bits(col) >> 28, reverse_bits(row) >> 28);
  fr_store(tb, tile_get(u, 512, src));
  if (m != mr) fr_store(ta, tile_get(u, 512, 256 + src));
}

// ---- The NTT pass ----
//
// One pass of an in-place radix-2 NTT: `deg` consecutive radix-2 rounds, those with
// half-sizes m = m0, 2 m0, ..., m0 2^(deg-1) (m0 = 2^log_m0). Their butterflies stay within
// sets of 2^deg elements {base + t m0} (a "column", t its row); one tile of 2^log_c adjacent
// columns (log_c <= log_m0) per work group, so that each tile row is 2^log_c consecutive
// elements in memory (with a large stride m0 a lone column would read one 32-byte element
// per row, far apart). Decimation in time (dif = 0, bit-reversed input to natural output)
// runs the rounds upwards, decimation in frequency (dif = 1, natural input to bit-reversed
// output) downwards. The twiddle w^e (w a primitive 2^log_n-th root, e < 2^(log_n-1)) is
// tw_lo[e mod 2^lo_bits] * tw_hi[e >> lo_bits]: two small tables instead of one of n/2.
//
// Register radix 2^R (R = 1, 2: the kernels fr_ntt_pass_r1/2, deg >= R): each work
// item owns 2^R elements of one column and runs R rounds on them in registers (2^(R-1)
// independent butterflies per round), so a pass is ceil(deg / R) stages with one
// local-memory exchange and one barrier between stages. R = 1 (one butterfly per item per
// round) is the host's default: measured fastest on an H200, where R = 2 was slower and
// R = 3 far slower (occupancy, code size; see the NTT tuning in lib.rs). Stage g covers the
// rounds of row bits [g R, min(g R + R, deg)); its items own the rows whose bits
// [ws, ws + R) vary, ws = min(g R, deg - R): the top group of rounds, short when deg is not
// a multiple of R, shares its window with lower bits that just index independent
// butterflies. The first stage loads straight from global memory and the last stores
// straight to it: for any window, a warp's access is rows of the tile's 2^log_c adjacent
// columns (or, in a one-column pass with its window at the low bits, each item reading 2^R
// consecutive elements). Work items: 2^(deg + log_c - R) per group, the column index
// fastest.
//
// A column needs 2^deg - 1 distinct twiddles (2^q in round q) against deg 2^(deg-1)
// butterflies: they are computed once per group into local memory, and the group runs
// 2^log_tiles tiles of the same columns (consecutive blocks of 2^(log_m0 + deg) elements,
// which need the same twiddles) one after the other, sharing them. `u` holds 2^(deg+log_c+1)
// elements: the tile (slot (t ^ (t >> R)) 2^log_c + column for row t: the XOR spreads every
// exchange of a warp over 32 banks), then the twiddles (round q's j-th of a column at slot
// (2^q - 1 + j) 2^log_c + column).
// Batched: a launch may cover several consecutive transforms of 2^log_n elements each (the
// segments of transform_segments), the group id's high bits selecting the transform.

// Row of element k (< 2^R) of work item `rest` when the stage's register rounds are the row
// bits [ws, ws + R): k's bits go there, rest's bits below and above them.
inline uint ntt_row(uint rest, uint k, uint ws, const uint R) {
  return ((rest >> ws) << (ws + R)) | (k << ws) | (rest & ((1u << ws) - 1));
}

inline uint ntt_slot(uint t, uint col, uint log_c, const uint R) {
  return ((t ^ (t >> R)) << log_c) | col;
}

// w^e as tw_lo[e mod 2^lo_bits] * tw_hi[e >> lo_bits]; both tables start with one, so the
// product is skipped when a factor is one (every twiddle of a large transform's first pass).
inline Fr ntt_twiddle(__global const Fr *tw_lo, __global const Fr *tw_hi, uint e, uint lo_bits) {
  const uint lo = e & ((1u << lo_bits) - 1), hi = e >> lo_bits;
  if (hi == 0) return fr_load(tw_lo + lo);
  if (lo == 0) return fr_load(tw_hi + hi);
  return Fr_mul(fr_load(tw_lo + lo), fr_load(tw_hi + hi));
}

// The 2^R elements of an item whose stage window starts at ws, from/to global memory
// (`p` at the item's column of the tile's row 0).
inline void ntt_load(__private Fr *x, __global const Fr *p, uint rest, uint ws, uint log_m0,
                     const uint R) {
#pragma unroll
  for (uint k = 0; k < (1u << R); k++)
    x[k] = fr_load(p + ((size_t)ntt_row(rest, k, ws, R) << log_m0));
}

inline void ntt_store(__private const Fr *x, __global Fr *p, uint rest, uint ws, uint log_m0,
                      const uint R) {
#pragma unroll
  for (uint k = 0; k < (1u << R); k++)
    fr_store(p + ((size_t)ntt_row(rest, k, ws, R) << log_m0), x[k]);
}

// Round q = ws + p on the item's registers: butterflies (k, k + 2^p) for the k with bit p
// clear. Element k's row has low q bits rest_lo + (k mod 2^p) 2^ws, its twiddle's index in
// round q, so the butterflies with equal k mod 2^p share one. The transform's round of
// half-size one (log_m0 = q = 0, uniform over the group) has every twiddle one: it skips
// the products (1/log_n of the transform's).
inline void ntt_round(__private Fr *x, __local const uint *tw, uint slots, uint col,
                      uint log_c, uint rest_lo, uint ws, const uint p, uint dif, const uint R,
                      uint log_m0) {
  const uint q = ws + p;
  if (log_m0 == 0 && q == 0) {
#pragma unroll
    for (uint h = 0; h < (1u << (R - 1)); h++) {
      const uint k0 = h << 1, k1 = k0 | 1u;
      const Fr y = x[k1];
      x[k1] = Fr_sub(x[k0], y);
      x[k0] = Fr_add(x[k0], y);
    }
    return;
  }
#pragma unroll
  for (uint j = 0; j < (1u << p); j++) {
    const Fr w = tile_get(tw, slots, (((1u << q) - 1 + rest_lo + (j << ws)) << log_c) | col);
#pragma unroll
    for (uint h = 0; h < (1u << (R - 1 - p)); h++) {
      const uint k0 = (h << (p + 1)) | j, k1 = k0 | (1u << p);
      if (dif) {
        const Fr y = x[k1];
        x[k1] = Fr_mul(Fr_sub(x[k0], y), w);
        x[k0] = Fr_add(x[k0], y);
      } else {
        const Fr t = Fr_mul(x[k1], w);
        x[k1] = Fr_sub(x[k0], t);
        x[k0] = Fr_add(x[k0], t);
      }
    }
  }
}

inline void ntt_pass(__global Fr *a, __global const Fr *tw_lo, __global const Fr *tw_hi,
                     __local uint *u, uint log_n, uint log_m0, uint deg, uint lo_bits,
                     uint dif, uint log_c, uint log_tiles, const uint R) {
  const uint lid = get_local_id(0);
  const uint group = get_group_id(0);
  const uint groups_log = log_n - deg - log_c - log_tiles;  // groups per transform, log2
  a += (size_t)(group >> groups_log) << log_n;
  const uint set = group & ((1u << groups_log) - 1);
  const uint col_groups_log = log_m0 - log_c;
  const uint r0 = (set & ((1u << col_groups_log) - 1)) << log_c;
  const uint block0 = (set >> col_groups_log) << log_tiles;
  const uint slots = 1u << (deg + log_c);
  const uint items = slots >> R;  // the work-group size
  const uint cols_mask = (1u << log_c) - 1;
  const uint col = lid & cols_mask;
  const uint rest = lid >> log_c;
  const uint stages = (deg + R - 1) / R;
  const uint ws_first = dif ? deg - R : 0;
  const uint ws_last = dif ? 0 : deg - R;
  __local uint *tw = u + Fr_LIMBS * slots;
  __global Fr *tile = a + ((size_t)block0 << (log_m0 + deg)) + r0 + col;
  Fr x[4];  // 2^R elements, R <= 2
  ntt_load(x, tile, rest, ws_first, log_m0, R);  // in flight while the twiddles are computed
  for (uint s = lid; s < slots; s += items) {
    const uint idx = s >> log_c;
    if (idx + 1 < (1u << deg)) {
      // Round q's butterfly j = jl m0 + r in its block of 2m uses w_2m^j.
      const uint q = 31 - clz(idx + 1);
      const uint jl = idx + 1 - (1u << q);
      const uint e = (jl * (1u << log_m0) + r0 + (s & cols_mask)) << (log_n - 1 - log_m0 - q);
      tile_put(tw, slots, s, ntt_twiddle(tw_lo, tw_hi, e, lo_bits));
    }
  }
  for (uint b = 0; b < (1u << log_tiles); b++) {
    if (b > 0) {
      tile += (size_t)1 << (log_m0 + deg);
      ntt_load(x, tile, rest, ws_first, log_m0, R);
    }
    // The twiddles are written (first tile); every item has read the last tile's exchange.
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 0;; s++) {
      const uint g = dif ? stages - 1 - s : s;
      const uint ws = min(g * R, deg - R);
      const uint p_lo = g * R - ws;  // the window's bits below p_lo are no rounds of this pass
      const uint rest_lo = rest & ((1u << ws) - 1);
      if (dif) {
#pragma unroll
        for (uint i = 0; i < R; i++)
          if (R - 1 - i >= p_lo)
            ntt_round(x, tw, slots, col, log_c, rest_lo, ws, R - 1 - i, 1, R, log_m0);
      } else {
#pragma unroll
        for (uint i = 0; i < R; i++)
          if (i >= p_lo) ntt_round(x, tw, slots, col, log_c, rest_lo, ws, i, 0, R, log_m0);
      }
      if (s + 1 == stages) break;
      // Exchange: each slot is read next by one item only, which also writes it back at its
      // next stage's end, so one barrier between the stores and the loads is enough.
#pragma unroll
      for (uint k = 0; k < (1u << R); k++)
        tile_put(u, slots, ntt_slot(ntt_row(rest, k, ws, R), col, log_c, R), x[k]);
      barrier(CLK_LOCAL_MEM_FENCE);
      const uint ws_next = min((dif ? g - 1 : g + 1) * R, deg - R);
#pragma unroll
      for (uint k = 0; k < (1u << R); k++)
        x[k] = tile_get(u, slots, ntt_slot(ntt_row(rest, k, ws_next, R), col, log_c, R));
    }
    ntt_store(x, tile, rest, ws_last, log_m0, R);
  }
}

#define FR_NTT_PASS(R)                                                                         \
  __kernel void fr_ntt_pass_r##R(__global Fr *a, __global const Fr *tw_lo,                     \
                                 __global const Fr *tw_hi, __local uint *u, uint log_n,         \
                                 uint log_m0, uint deg, uint lo_bits, uint dif, uint log_c,     \
                                 uint log_tiles) {                                              \
    ntt_pass(a, tw_lo, tw_hi, u, log_n, log_m0, deg, lo_bits, dif, log_c, log_tiles, R);       \
  }
FR_NTT_PASS(1)
FR_NTT_PASS(2)

// out[i] = in[i] out of Montgomery form (canonical integers for the MSM's windows).
__kernel void fr_from_mont(__global Fr *out, __global const Fr *in, uint n) {
  uint i = get_global_id(0);
  if (i < n) out[i] = Fr_from_mont(in[i]);
}

// How an MSM reads the used scalars of a density-masked buffer, with no index of them: for
// every used element i in [lo, hi) of this chunk of the source (elements chunk_start.. of the
// buffer at `in`), out[k - k0] = canonical in[i - chunk_start], k being i's rank among the
// used elements. The density's 64-bit words w0.. come as pairs of uints (low word first),
// and before[w - w0] counts the used elements before word w. One item per element.
__kernel void fr_gather_used_from_mont(__global Fr *out, __global const Fr *in,
                                       __global const uint *words, __global const uint *before,
                                       uint k0, ulong w0, ulong lo, ulong hi,
                                       ulong chunk_start) {
  const ulong i = lo + get_global_id(0);
  if (i >= hi) return;
  const ulong w = (i >> 6) - w0;
  const uint b = (uint)(i & 63);
  const ulong word = ((ulong)words[2 * w + 1] << 32) | words[2 * w];
  if (((word >> b) & 1) == 0) return;
  const uint k = before[w] + (uint)popcount(word & ((1UL << b) - 1));
  out[k - k0] = Fr_from_mont(in[i - chunk_start]);
}
