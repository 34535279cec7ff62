// Bases decoded on the device from bellperson's parameter files (host side:
// src/msm/decode.rs): each point's uncompressed encoding, its coordinates
// big-endian with ZCash's three flag bits on top, as a little-endian device reads the bytes.
//
// A template like ec.cl (`PFIELD`, `POINT`); the host defines `POINT_FQ_PER_COORD` (1 for
// G1 over Fq, 2 for G2 over Fq2). The checks are sluice-field's `decode_uncompressed_on_curve`
// plus "not the identity" (sluice_backend::decode_base), which stays the reference: a
// point refused here is decoded again on the host, which names what is wrong with it.

#ifndef DECODE_FQ_FROM_BE
#define DECODE_FQ_FROM_BE
inline uint decode_bswap32(uint x) {
  return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
}

// An Fq element from Fq_LIMBS big-endian words, in Montgomery form; `flags` masks the top
// three bits of the first word (checked by the caller). Sets *bad unless it is below p.
inline Fq Fq_from_be_words(__global const uint *w, bool flags, uint *bad) {
  Fq x;
  for (uint i = 0; i < Fq_LIMBS; i++) x.v[i] = decode_bswap32(w[Fq_LIMBS - 1 - i]);
  if (flags) x.v[Fq_LIMBS - 1] &= 0x1fffffffu;
  uint below_p;
  Fq_sub_nc(x, Fq_P, &below_p);  // the borrow: 1 iff x < p
  *bad |= below_p ^ 1u;
  return Fq_mul(x, Fq_R2);
}
#endif

// One coordinate: an Fq element, or an Fq2 one stored c1 first (ZCash's order).
inline PFIELD POINT_coord_from_be(__global const uint *w, bool flags, uint *bad) {
#if POINT_FQ_PER_COORD == 1
  return Fq_from_be_words(w, flags, bad);
#else
  PFIELD r;
  r.c1 = Fq_from_be_words(w, flags, bad);
  r.c0 = Fq_from_be_words(w + Fq_LIMBS, false, bad);
  return r;
#endif
}

// The curve's b: 4 for G1, 4 (1 + i) for G2.
inline PFIELD POINT_b(void) {
  Fq four = Fq_double(Fq_double(Fq_one()));
#if POINT_FQ_PER_COORD == 1
  return four;
#else
  PFIELD b;
  b.c0 = four;
  b.c1 = four;
  return b;
#endif
}

// Decodes the n encodings in `points` in place, base i of the upload being `first + i`: a
// valid one becomes the device's affine point (Montgomery form, x then y); an invalid one
// (any flag set, a coordinate not below p, off the curve; (0, 0) is off it; x = 0, which
// blst refuses unchecked: G1's (0, ±2), of order 3; no G2 point has x = 0) is left as it
// was and lowers *first_bad to its index.
__kernel void POINT_decode_bases(__global uint *points, uint n, uint first,
                                 __global uint *first_bad) {
  uint i = get_global_id(0);
  if (i >= n) return;
  __global uint *w = points + (ulong)i * (2 * POINT_FQ_PER_COORD * Fq_LIMBS);
  uint bad = decode_bswap32(w[0]) >> 29;
  POINT_affine p;
  p.x = POINT_coord_from_be(w, true, &bad);
  p.y = POINT_coord_from_be(w + POINT_FQ_PER_COORD * Fq_LIMBS, false, &bad);
  PFIELD rhs = PFIELD_add(PFIELD_mul(PFIELD_sqr(p.x), p.x), POINT_b());
  if (bad != 0 || PFIELD_is_zero(p.x) || !PFIELD_eq(PFIELD_sqr(p.y), rhs)) {
    atomic_min(first_bad, first + i);
    return;
  }
  *(__global POINT_affine *)w = p;
}
