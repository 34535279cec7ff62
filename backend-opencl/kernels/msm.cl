// Pippenger MSM, first (straightforward) version. A template over `POINT` (G1, G2), after
// ec.cl.
//
// Scalars are canonical integers (not Montgomery), SCALAR_LIMBS little-endian 32-bit limbs,
// one per base; the Fr program's fr_from_mont / fr_gather_from_mont prepare them. Each work
// item owns one (window, group) pair: it adds the bases of its group's slice into its own
// 2^c - 1 buckets (in global memory), then reduces them to the slice's window sum with the
// running-sum trick. The host adds the groups' window sums and combines the windows.

// Bits [bit, bit + width) of a scalar; width <= 31.
inline uint POINT_scalar_window(__global const uint *s, uint bit, uint width) {
  uint limb = bit >> 5;
  ulong v = s[limb];
  if (limb + 1 < SCALAR_LIMBS) v |= (ulong)s[limb + 1] << 32;
  return (uint)(v >> (bit & 31)) & ((1u << width) - 1);
}

__kernel void POINT_msm_partial(__global const POINT_affine *bases,
                                __global const uint *scalars,
                                __global POINT_jacobian *buckets,
                                __global POINT_jacobian *results,
                                uint base_offset, uint n, uint num_groups, uint num_windows, uint window_bits) {
  const uint gid = get_global_id(0);
  if (gid >= num_groups * num_windows) return;
  const uint window = gid % num_windows;
  const uint group = gid / num_windows;
  const uint bucket_count = (1u << window_bits) - 1;
  bases += base_offset;
  buckets += (ulong)gid * bucket_count;
  for (uint b = 0; b < bucket_count; b++) buckets[b] = POINT_zero();

  const uint per_group = (n + num_groups - 1) / num_groups;
  const uint start = min(group * per_group, n);
  const uint end = min(start + per_group, n);
  const uint bit = window * window_bits;
  const uint width = min(window_bits, (uint)SCALAR_BITS - bit);
  for (uint i = start; i < end; i++) {
    uint d = POINT_scalar_window(scalars + (ulong)i * SCALAR_LIMBS, bit, width);
    if (d != 0) buckets[d - 1] = POINT_add_mixed(buckets[d - 1], bases[i]);
  }

  // sum_b (b + 1) bucket[b] as a running sum from the top bucket down.
  POINT_jacobian run = POINT_zero();
  POINT_jacobian sum = POINT_zero();
  for (int b = (int)bucket_count - 1; b >= 0; b--) {
    run = POINT_add(run, buckets[b]);
    sum = POINT_add(sum, run);
  }
  results[gid] = sum;
}
