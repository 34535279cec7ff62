// Fq2 = Fq[u] / (u^2 + 1), on top of the Fq functions of field.cl.

typedef struct {
  Fq c0;
  Fq c1;
} Fq2;

inline Fq2 Fq2_zero(void) {
  Fq2 r;
  r.c0 = Fq_zero();
  r.c1 = Fq_zero();
  return r;
}

inline Fq2 Fq2_one(void) {
  Fq2 r;
  r.c0 = Fq_one();
  r.c1 = Fq_zero();
  return r;
}

inline bool Fq2_eq(Fq2 a, Fq2 b) { return Fq_eq(a.c0, b.c0) && Fq_eq(a.c1, b.c1); }

inline bool Fq2_is_zero(Fq2 a) { return Fq_is_zero(a.c0) && Fq_is_zero(a.c1); }

inline Fq2 Fq2_add(Fq2 a, Fq2 b) {
  a.c0 = Fq_add(a.c0, b.c0);
  a.c1 = Fq_add(a.c1, b.c1);
  return a;
}

inline Fq2 Fq2_sub(Fq2 a, Fq2 b) {
  a.c0 = Fq_sub(a.c0, b.c0);
  a.c1 = Fq_sub(a.c1, b.c1);
  return a;
}

inline Fq2 Fq2_double(Fq2 a) { return Fq2_add(a, a); }

inline Fq2 Fq2_neg(Fq2 a) {
  a.c0 = Fq_neg(a.c0);
  a.c1 = Fq_neg(a.c1);
  return a;
}

// a b as 24 limbs, unreduced (schoolbook; a, b < 2^383, each product fits its 64 bits).
SLUICE_MUL_ATTR Fq_wide Fq_mul_wide(Fq a, Fq b) {
  Fq_wide t;
#pragma unroll
  for (uint j = 0; j < Fq_wide_LIMBS; j++) t.v[j] = 0;
#pragma unroll
  for (uint i = 0; i < Fq_LIMBS; i++) {
    uint carry = 0;
#pragma unroll
    for (uint j = 0; j < Fq_LIMBS; j++) {
      ulong w = (ulong)a.v[j] * b.v[i] + t.v[i + j] + carry;
      t.v[i + j] = (uint)w;
      carry = (uint)(w >> 32);
    }
    t.v[i + Fq_LIMBS] = carry;
  }
  return t;
}

// Montgomery reduction t R^-1 mod p of t < p R (R = 2^384): row i clears limb i, its carry
// rippling through `top` into the next row's top limb. The result is below 2p (t < p R),
// so one conditional subtraction finishes it.
SLUICE_MUL_ATTR Fq Fq_redc(Fq_wide t) {
  uint top = 0;
#pragma unroll
  for (uint i = 0; i < Fq_LIMBS; i++) {
    uint m = t.v[i] * Fq_INV;
    ulong w = (ulong)m * Fq_P.v[0] + t.v[i];  // the low word is zero by the choice of m
    uint c = (uint)(w >> 32);
#pragma unroll
    for (uint j = 1; j < Fq_LIMBS; j++) {
      w = (ulong)m * Fq_P.v[j] + t.v[i + j] + c;
      t.v[i + j] = (uint)w;
      c = (uint)(w >> 32);
    }
    ulong s = (ulong)t.v[i + Fq_LIMBS] + c + top;
    t.v[i + Fq_LIMBS] = (uint)s;
    top = (uint)(s >> 32);
  }
  Fq r;
#pragma unroll
  for (uint j = 0; j < Fq_LIMBS; j++) r.v[j] = t.v[j + Fq_LIMBS];
  return Fq_reduce_once(r);
}

// (a0 + a1 u)(b0 + b1 u) = a0 b0 - a1 b1 + ((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) u (Karatsuba),
// reducing each coefficient once instead of each of the three products (lazy reduction:
// two Montgomery reductions instead of three). c0 = a0 b0 + p^2 - a1 b1 < 2 p^2 and
// c1 = a0 b1 + a1 b0 < 2 p^2 (the unreduced sums a0 + a1 < 2p make (2p)^2 < p R) stay
// non-negative and below p R, as the reduction needs.
SLUICE_CURVE_ATTR Fq2 Fq2_mul_lazy(Fq2 a, Fq2 b) {
  Fq_wide aa = Fq_mul_wide(a.c0, b.c0);
  Fq_wide bb = Fq_mul_wide(a.c1, b.c1);
  Fq_wide s = Fq_mul_wide(Fq_add_nc(a.c0, a.c1), Fq_add_nc(b.c0, b.c1));
  uint borrow;  // never set: every difference above is non-negative
  Fq2 r;
  r.c0 = Fq_redc(Fq_wide_sub_nc(Fq_wide_add_nc(aa, Fq_P2), bb, &borrow));
  r.c1 = Fq_redc(Fq_wide_sub_nc(Fq_wide_sub_nc(s, aa, &borrow), bb, &borrow));
  return r;
}

// The same product with each of the three Fq products reduced.
SLUICE_CURVE_ATTR Fq2 Fq2_mul_reduced(Fq2 a, Fq2 b) {
  Fq aa = Fq_mul(a.c0, b.c0);
  Fq bb = Fq_mul(a.c1, b.c1);
  Fq s = Fq_mul(Fq_add(a.c0, a.c1), Fq_add(b.c0, b.c1));
  Fq2 r;
  r.c0 = Fq_sub(aa, bb);
  r.c1 = Fq_sub(Fq_sub(s, aa), bb);
  return r;
}

// -DSLUICE_FQ2_LAZY selects the lazily reduced product for the curve code (an experiment
// until measured on the H200); the field tests check both.
#ifdef SLUICE_FQ2_LAZY
#define Fq2_mul Fq2_mul_lazy
#else
#define Fq2_mul Fq2_mul_reduced
#endif

// (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u.
SLUICE_CURVE_ATTR Fq2 Fq2_sqr(Fq2 a) {
  Fq2 r;
  r.c0 = Fq_mul(Fq_add(a.c0, a.c1), Fq_sub(a.c0, a.c1));
  r.c1 = Fq_double(Fq_mul(a.c0, a.c1));
  return r;
}

// (a0 + a1 u)^-1 = (a0 - a1 u) / (a0^2 + a1^2) (0 for 0).
Fq2 Fq2_inv(Fq2 a) {
  Fq t = Fq_inv(Fq_add(Fq_sqr(a.c0), Fq_sqr(a.c1)));
  Fq2 r;
  r.c0 = Fq_mul(a.c0, t);
  r.c1 = Fq_neg(Fq_mul(a.c1, t));
  return r;
}
