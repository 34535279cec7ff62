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
// any buffer. Each work item takes `per_item` consecutive elements: one exponentiation starts
// its run, which restarts at one where a segment starts.
__kernel void fr_segment_powers(__global Fr *a, __global const Fr *gens, uint n, uint per_item,
                                ulong first, ulong segment, ulong k0, uint shared) {
  uint start = get_global_id(0) * per_item;
  if (start >= n) return;
  uint end = min(start + per_item, n);
  ulong k = (first + start) / segment;
  ulong j = first + start - k * segment;
  Fr g = gens[shared ? 0 : k - k0];
  Fr p = Fr_pow(g, j);
  for (uint i = start; i < end; i++, j++) {
    if (j == segment) {
      j = 0;
      k++;
      g = gens[shared ? 0 : k - k0];
      p = Fr_one();
    }
    a[i] = Fr_mul(a[i], p);
    p = Fr_mul(p, g);
  }
}

inline uint reverse_bits(uint x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
  return (x >> 16) | (x << 16);
}

// In-place bit-reversal permutation of each run of 2^log_n elements (log_n >= 1) of the n
// elements (a multiple of 2^log_n): the high bits of the global id select the run.
__kernel void fr_bit_reverse(__global Fr *a, uint log_n, uint n) {
  uint i = get_global_id(0);
  if (i >= n) return;
  uint l = i & ((1u << log_n) - 1);
  uint r = reverse_bits(l) >> (32 - log_n);
  if (l < r) {
    __global Fr *s = a + (i - l);
    Fr t = s[l];
    s[l] = s[r];
    s[r] = t;
  }
}

// One pass of an in-place radix-2 NTT: `deg` consecutive radix-2 rounds in local memory.
//
// The rounds are those with half-sizes m = m0, 2 m0, ..., m0 2^(deg-1) (m0 = 2^log_m0). Their
// butterflies stay within sets of 2^deg elements {base + t m0} (a "column"); one work group
// owns 2^log_c adjacent columns (log_c <= log_m0), so that each row of the group's tile is
// 2^log_c consecutive elements in memory: with a large stride m0 a lone column would read
// one 32-byte element per row, far apart, where a tile row reads 2^log_c of them at once.
// Decimation in time (dif = 0, bit-reversed input to natural output) runs the rounds
// upwards, decimation in frequency (dif = 1, natural input to bit-reversed output)
// downwards. The twiddle w^e (w a primitive 2^log_n-th root, e < 2^(log_n-1)) is
// tw_lo[e mod 2^lo_bits] * tw_hi[e >> lo_bits]: two small tables instead of one of n/2.
// A column needs 2^deg - 1 distinct twiddles (2^q in round q), against deg 2^(deg-1)
// butterflies: they are computed once into local memory. `u` holds 2^(deg+log_c+1)
// elements: the tile (column-major, each row index XOR-swizzled by its column so the tile's
// loads and stores spread over the banks), then each column's twiddles (round q's at
// 2^q - 1 + j).
// Batched: a launch may cover several consecutive transforms of 2^log_n elements each (the
// segments of transform_segments), the group id's high bits selecting the segment.
__kernel void fr_ntt_pass(__global Fr *a, __global const Fr *tw_lo, __global const Fr *tw_hi,
                          __local Fr *u, uint log_n, uint log_m0, uint deg, uint lo_bits,
                          uint dif, uint log_c) {
  const uint lid = get_local_id(0);
  const uint group = get_group_id(0);
  const uint groups_log = log_n - deg - log_c;  // groups per transform, log2
  a += (size_t)(group >> groups_log) << log_n;
  const uint set = group & ((1u << groups_log) - 1);
  const uint m0 = 1u << log_m0;
  const uint col_groups_log = log_m0 - log_c;
  const uint r0 = (set & ((1u << col_groups_log) - 1)) << log_c;
  const uint base = ((set >> col_groups_log) << (log_m0 + deg)) + r0;
  const uint size = 1u << deg;
  const uint total = size << log_c;
  const uint items = total >> 1;  // the work-group size
  const uint cols_mask = (1u << log_c) - 1;
  __local Fr *tw = u + total;
  for (uint e = lid; e < total; e += items) {
    const uint row = e >> log_c, col = e & cols_mask;
    u[(col << deg) + (row ^ (col & (size - 1)))] = a[base + (size_t)row * m0 + col];
  }
  for (uint t = lid; t < total; t += items) {
    const uint idx = t & (size - 1);
    if (idx + 1 < size) {
      // Round q's butterfly j = jl m0 + r in its block of 2m uses w_2m^j.
      const uint q = 31 - clz(idx + 1);
      const uint jl = idx + 1 - (1u << q);
      const uint e = (jl * m0 + r0 + (t >> deg)) << (log_n - 1 - log_m0 - q);
      tw[t] = Fr_mul(tw_lo[e & ((1u << lo_bits) - 1)], tw_hi[e >> lo_bits]);
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint col = lid >> (deg - 1);
  const uint b = lid & ((size >> 1) - 1);
  const uint sw = col & (size - 1);
  __local Fr *uc = u + (col << deg);
  __local const Fr *twc = tw + (col << deg);
  for (uint s = 0; s < deg; s++) {
    const uint q = dif ? deg - 1 - s : s;
    const uint jl = b & ((1u << q) - 1);
    const uint i0 = ((b >> q) << (q + 1)) + jl;
    const uint i1 = i0 + (1u << q);
    const Fr w = twc[(1u << q) - 1 + jl];
    const Fr x = uc[i0 ^ sw];
    const Fr y = uc[i1 ^ sw];
    if (dif) {
      uc[i0 ^ sw] = Fr_add(x, y);
      uc[i1 ^ sw] = Fr_mul(Fr_sub(x, y), w);
    } else {
      const Fr t = Fr_mul(y, w);
      uc[i0 ^ sw] = Fr_add(x, t);
      uc[i1 ^ sw] = Fr_sub(x, t);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (uint e = lid; e < total; e += items) {
    const uint row = e >> log_c, c = e & cols_mask;
    a[base + (size_t)row * m0 + c] = u[(c << deg) + (row ^ (c & (size - 1)))];
  }
}

// out[i] = in[i] out of Montgomery form (canonical integers for the MSM's windows).
__kernel void fr_from_mont(__global Fr *out, __global const Fr *in, uint n) {
  uint i = get_global_id(0);
  if (i < n) out[i] = Fr_from_mont(in[i]);
}

// out[i] = canonical in[idx[i] - chunk_start] for the indices that fall into this chunk of the
// source: how an MSM reads the used scalars of a density-masked buffer.
__kernel void fr_gather_from_mont(__global Fr *out, __global const Fr *in,
                                  __global const uint *idx, uint n, uint chunk_start,
                                  uint chunk_len) {
  uint i = get_global_id(0);
  if (i >= n) return;
  uint j = idx[i] - chunk_start;  // wraps above chunk_len when idx[i] < chunk_start
  if (j < chunk_len) out[i] = Fr_from_mont(in[j]);
}
