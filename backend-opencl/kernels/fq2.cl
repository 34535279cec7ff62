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

// (a0 + a1 u)(b0 + b1 u) = a0 b0 - a1 b1 + ((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) u (Karatsuba).
KERNEL_CURVE_ATTR Fq2 Fq2_mul(Fq2 a, Fq2 b) {
  Fq aa = Fq_mul(a.c0, b.c0);
  Fq bb = Fq_mul(a.c1, b.c1);
  Fq s = Fq_mul(Fq_add(a.c0, a.c1), Fq_add(b.c0, b.c1));
  Fq2 r;
  r.c0 = Fq_sub(aa, bb);
  r.c1 = Fq_sub(Fq_sub(s, aa), bb);
  return r;
}

// (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u.
KERNEL_CURVE_ATTR Fq2 Fq2_sqr(Fq2 a) {
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
