// Test-only kernels: every field operation the other programs use, element-wise, so the
// tests can compare each against sluice-field on the host. Output k of element i lands at
// out[OPS * i + k].

__kernel void fr_ops(__global const Fr *a, __global const Fr *b, __global Fr *out, uint n) {
  uint i = get_global_id(0);
  if (i >= n) return;
  out[7 * i + 0] = Fr_add(a[i], b[i]);
  out[7 * i + 1] = Fr_sub(a[i], b[i]);
  out[7 * i + 2] = Fr_mul(a[i], b[i]);
  out[7 * i + 3] = Fr_sqr(a[i]);
  out[7 * i + 4] = Fr_neg(a[i]);
  out[7 * i + 5] = Fr_pow(a[i], ((ulong)b[i].v[1] << 32) | b[i].v[0]);
  out[7 * i + 6] = Fr_inv(a[i]);
}

__kernel void fq_ops(__global const Fq *a, __global const Fq *b, __global Fq *out, uint n) {
  uint i = get_global_id(0);
  if (i >= n) return;
  out[6 * i + 0] = Fq_add(a[i], b[i]);
  out[6 * i + 1] = Fq_sub(a[i], b[i]);
  out[6 * i + 2] = Fq_mul(a[i], b[i]);
  out[6 * i + 3] = Fq_double(a[i]);
  out[6 * i + 4] = Fq_neg(a[i]);
  out[6 * i + 5] = Fq_inv(a[i]);
}

__kernel void fq2_ops(__global const Fq2 *a, __global const Fq2 *b, __global Fq2 *out, uint n) {
  uint i = get_global_id(0);
  if (i >= n) return;
  out[6 * i + 0] = Fq2_add(a[i], b[i]);
  out[6 * i + 1] = Fq2_sub(a[i], b[i]);
  out[6 * i + 2] = Fq2_mul(a[i], b[i]);
  out[6 * i + 3] = Fq2_sqr(a[i]);
  out[6 * i + 4] = Fq2_neg(a[i]);
  out[6 * i + 5] = Fq2_inv(a[i]);
}
