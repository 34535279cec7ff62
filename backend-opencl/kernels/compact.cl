// Compact host vectors expanded on the device (sluice_backend::compact): one code byte per
// element, its value from a table of the 256 codes' elements (the escape's entry unused), and
// the exceptions' full elements written afterwards at their positions. Appended to the Fr
// program. `out` is the chunk of the destination buffer the launch writes.

// out[first + i] = small[codes[i]] for i < n.
__kernel void fr_expand_codes(__global Fr *out, __global const uchar *codes,
                              __global const Fr *small, uint first, uint n) {
  uint i = get_global_id(0);
  if (i < n) out[first + i] = small[codes[i]];
}

// out[at[k]] = values[k] for k < m.
__kernel void fr_scatter_exceptions(__global Fr *out, __global const uint *at,
                                    __global const Fr *values, uint m) {
  uint k = get_global_id(0);
  if (k < m) out[at[k]] = values[k];
}
