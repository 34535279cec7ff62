// Montgomery arithmetic in a prime field of FIELD_LIMBS 32-bit little-endian limbs.
//
// A template: the host replaces `FIELD` with the field's name (Fr, Fq) and prepends the
// generated header that defines the type and FIELD_P (modulus), FIELD_ONE (R mod p),
// FIELD_R2 (R^2 mod p) and FIELD_INV (-p^-1 mod 2^32). Values are always fully reduced.
// Both moduli leave the top bit of the top limb free (p < 2^(32 FIELD_LIMBS - 1)), so the
// sum of two reduced values never carries out of the last limb.

inline FIELD FIELD_zero(void) {
  FIELD r;
  for (uint i = 0; i < FIELD_LIMBS; i++) r.v[i] = 0;
  return r;
}

inline FIELD FIELD_one(void) { return FIELD_ONE; }

inline bool FIELD_eq(FIELD a, FIELD b) {
  for (uint i = 0; i < FIELD_LIMBS; i++)
    if (a.v[i] != b.v[i]) return false;
  return true;
}

inline bool FIELD_is_zero(FIELD a) {
  uint acc = 0;
  for (uint i = 0; i < FIELD_LIMBS; i++) acc |= a.v[i];
  return acc == 0;
}

#ifndef KERNEL_NVIDIA
// a + b mod 2^(32 FIELD_LIMBS) (the NVIDIA build uses a generated PTX chain instead).
inline FIELD FIELD_add_nc(FIELD a, FIELD b) {
  FIELD r;
  uint carry = 0;
  for (uint i = 0; i < FIELD_LIMBS; i++) {
    ulong s = (ulong)a.v[i] + (ulong)b.v[i] + (ulong)carry;
    r.v[i] = (uint)s;
    carry = (uint)(s >> 32);
  }
  return r;
}

// a - b mod 2^(32 FIELD_LIMBS); *borrow = 1 when b > a.
inline FIELD FIELD_sub_nc(FIELD a, FIELD b, uint *borrow) {
  FIELD r;
  uint br = 0;
  for (uint i = 0; i < FIELD_LIMBS; i++) {
    ulong d = (ulong)a.v[i] - (ulong)b.v[i] - (ulong)br;
    r.v[i] = (uint)d;
    br = (uint)(d >> 63);
  }
  *borrow = br;
  return r;
}
#endif

// The final reductions below are branch-free (masks made from a borrow instead of `if`),
// so the lanes of a GPU warp never diverge inside a field operation.

// r mod p for r < 2p (the sums and products below): s = r - p, then r where that borrows
// (r < p) and s otherwise. The select s ^ ((s ^ r) & keep) is (r & keep) | (s & ~keep);
// written so, the NVIDIA compiler makes it one SEL per limb (the and/or form cost two
// LOP3s, as it did not see ~keep as the complement of keep).
inline FIELD FIELD_reduce_once(FIELD r) {
  uint br;
  FIELD s = FIELD_sub_nc(r, FIELD_P, &br);
  uint keep = 0u - br;  // all ones where r < p
  for (uint i = 0; i < FIELD_LIMBS; i++) r.v[i] = s.v[i] ^ ((s.v[i] ^ r.v[i]) & keep);
  return r;
}

// a + b < 2p never carries out of the last limb (the spare top bit).
inline FIELD FIELD_add(FIELD a, FIELD b) { return FIELD_reduce_once(FIELD_add_nc(a, b)); }

// a - b, plus p where that borrows (b > a).
inline FIELD FIELD_sub(FIELD a, FIELD b) {
  uint br;
  FIELD r = FIELD_sub_nc(a, b, &br);
  uint mask = 0u - br;
  FIELD p;
  for (uint i = 0; i < FIELD_LIMBS; i++) p.v[i] = FIELD_P.v[i] & mask;
  return FIELD_add_nc(r, p);
}

inline FIELD FIELD_neg(FIELD a) { return FIELD_sub(FIELD_zero(), a); }

inline FIELD FIELD_double(FIELD a) { return FIELD_add(a, a); }

#ifdef KERNEL_NVIDIA
// Montgomery product a b R^-1: generated PTX rows (src/ptx.rs).
@MUL_PTX@
#else
// Montgomery product a b R^-1: the no-carry CIOS rows of src/ptx.rs (valid because both
// moduli leave the top limb below 2^31 - 2), one 64-bit multiply-add per limb product. The
// product's carry A and the reduction's carry C are separate, so t needs no extra words.
KERNEL_MUL_ATTR FIELD FIELD_mul(FIELD a, FIELD b) {
  uint t[FIELD_LIMBS];
  for (uint j = 0; j < FIELD_LIMBS; j++) t[j] = 0;
  for (uint i = 0; i < FIELD_LIMBS; i++) {
    ulong w = (ulong)a.v[0] * b.v[i] + t[0];
    t[0] = (uint)w;
    uint A = (uint)(w >> 32);
    uint m = t[0] * FIELD_INV;
    w = (ulong)m * FIELD_P.v[0] + t[0];  // the low word is zero by the choice of m
    uint C = (uint)(w >> 32);
    for (uint j = 1; j < FIELD_LIMBS; j++) {
      w = (ulong)a.v[j] * b.v[i] + t[j] + A;
      t[j] = (uint)w;
      A = (uint)(w >> 32);
      w = (ulong)m * FIELD_P.v[j] + t[j] + C;
      t[j - 1] = (uint)w;
      C = (uint)(w >> 32);
    }
    t[FIELD_LIMBS - 1] = C + A;
  }
  FIELD r;
  for (uint i = 0; i < FIELD_LIMBS; i++) r.v[i] = t[i];
  return FIELD_reduce_once(r);  // t < 2p
}
#endif

inline FIELD FIELD_sqr(FIELD a) { return FIELD_mul(a, a); }

// Montgomery form to canonical integer: a R^-1.
inline FIELD FIELD_from_mont(FIELD a) {
  FIELD one = FIELD_zero();
  one.v[0] = 1;
  return FIELD_mul(a, one);
}

// a^e for a 64-bit exponent (square and multiply, most significant bit first). Starts at e's
// highest set bit: time depends on e, which is always a public index here.
FIELD FIELD_pow(FIELD a, ulong e) {
  FIELD r = FIELD_one();
  for (int i = 63 - (int)clz(e); i >= 0; i--) {
    r = FIELD_sqr(r);
    if ((e >> i) & 1) r = FIELD_mul(r, a);
  }
  return r;
}

// a^-1 = a^(p - 2) (Fermat; 0 for 0), square and multiply over the bits of the public
// modulus. For the shifted-bases table's affine conversion, once per batch of points.
FIELD FIELD_inv(FIELD a) {
  uint e[FIELD_LIMBS];  // p - 2 (Fr's low limb is 1: the 2 borrows)
  uint borrow = 2;
  for (uint i = 0; i < FIELD_LIMBS; i++) {
    const uint p = FIELD_P.v[i];
    e[i] = p - borrow;
    borrow = p < borrow;
  }
  FIELD r = FIELD_one();
  for (int i = FIELD_LIMBS - 1; i >= 0; i--) {
    for (int b = 31; b >= 0; b--) {
      r = FIELD_sqr(r);
      if ((e[i] >> b) & 1) r = FIELD_mul(r, a);
    }
  }
  return r;
}
