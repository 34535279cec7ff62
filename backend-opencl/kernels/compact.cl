// Compact host vectors expanded on the device (sluice_backend::compact): one code byte per
// element, its value from a table of the 256 codes' elements (the escape's entry unused), and
// the exceptions' full elements written afterwards at their positions. Appended to the Fr
// program. `out` is the chunk of the destination buffer the launch writes.

// out[first + i] = small[codes[i]] for i < n, as 16-byte halves: work item t writes half
// t % 2 of element t / 2 (2n items), so a warp's stores are one contiguous run. A whole
// Fr per item stored 32 bytes apart per word and ran at about 0.8 TB/s on an H200
// (BENCHMARKS.md#partition). Fr buffers and the table start 16-byte aligned.
__kernel void fr_expand_codes(__global uint4 *out, __global const uchar *codes,
                              __global const uint4 *small, uint first, uint n) {
  size_t t = get_global_id(0);
  if (t < 2 * (size_t)n) {
    size_t part = t & 1;
    out[2 * (size_t)first + t] = small[2 * (size_t)codes[t >> 1] + part];
  }
}

// out[at[k]] = values[k] for k < m.
__kernel void fr_scatter_exceptions(__global Fr *out, __global const uint *at,
                                    __global const Fr *values, uint m) {
  uint k = get_global_id(0);
  if (k < m) out[at[k]] = values[k];
}
