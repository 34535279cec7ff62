// Short Weierstrass curve y^2 = x^3 + b (a = 0) over the field PFIELD, Jacobian coordinates
// (x = X/Z^2, y = Y/Z^3, identity iff Z = 0); affine points store the identity as (0, 0).
//
// A template: the host replaces `PFIELD` with the coordinate field (Fq for G1, Fq2 for G2)
// and then `POINT` with the group's name (G1, G2). Variable time (branches on the identity
// and on equal inputs), as an MSM over public bases may be.

typedef struct {
  PFIELD x;
  PFIELD y;
} POINT_affine;

typedef struct {
  PFIELD x;
  PFIELD y;
  PFIELD z;
} POINT_jacobian;

inline POINT_jacobian POINT_zero(void) {
  POINT_jacobian r;
  r.x = PFIELD_one();
  r.y = PFIELD_one();
  r.z = PFIELD_zero();
  return r;
}

// dbl-2009-l.
KERNEL_CURVE_ATTR POINT_jacobian POINT_double(POINT_jacobian p) {
  if (PFIELD_is_zero(p.z)) return p;
  PFIELD a = PFIELD_sqr(p.x);
  PFIELD b = PFIELD_sqr(p.y);
  PFIELD c = PFIELD_sqr(b);
  PFIELD d = PFIELD_sub(PFIELD_sub(PFIELD_sqr(PFIELD_add(p.x, b)), a), c);
  d = PFIELD_double(d);
  PFIELD e = PFIELD_add(PFIELD_double(a), a);
  PFIELD f = PFIELD_sqr(e);
  POINT_jacobian r;
  r.z = PFIELD_double(PFIELD_mul(p.y, p.z));
  r.x = PFIELD_sub(f, PFIELD_double(d));
  PFIELD c8 = PFIELD_double(PFIELD_double(PFIELD_double(c)));
  r.y = PFIELD_sub(PFIELD_mul(e, PFIELD_sub(d, r.x)), c8);
  return r;
}

// add-2007-bl.
KERNEL_CURVE_ATTR POINT_jacobian POINT_add(POINT_jacobian p, POINT_jacobian q) {
  if (PFIELD_is_zero(p.z)) return q;
  if (PFIELD_is_zero(q.z)) return p;
  PFIELD z1z1 = PFIELD_sqr(p.z);
  PFIELD z2z2 = PFIELD_sqr(q.z);
  PFIELD u1 = PFIELD_mul(p.x, z2z2);
  PFIELD u2 = PFIELD_mul(q.x, z1z1);
  PFIELD s1 = PFIELD_mul(PFIELD_mul(p.y, q.z), z2z2);
  PFIELD s2 = PFIELD_mul(PFIELD_mul(q.y, p.z), z1z1);
  if (PFIELD_eq(u1, u2)) {
    if (PFIELD_eq(s1, s2)) return POINT_double(p);
    return POINT_zero();
  }
  PFIELD h = PFIELD_sub(u2, u1);
  PFIELD i = PFIELD_sqr(PFIELD_double(h));
  PFIELD j = PFIELD_mul(h, i);
  PFIELD rr = PFIELD_double(PFIELD_sub(s2, s1));
  PFIELD v = PFIELD_mul(u1, i);
  POINT_jacobian r;
  r.x = PFIELD_sub(PFIELD_sub(PFIELD_sqr(rr), j), PFIELD_double(v));
  r.y = PFIELD_sub(PFIELD_mul(rr, PFIELD_sub(v, r.x)), PFIELD_double(PFIELD_mul(s1, j)));
  r.z = PFIELD_mul(PFIELD_sub(PFIELD_sub(PFIELD_sqr(PFIELD_add(p.z, q.z)), z1z1), z2z2), h);
  return r;
}

// Extended Jacobian (XYZZ) coordinates for the bucket sums: x = X/ZZ, y = Y/ZZZ with
// ZZ^3 = ZZZ^2, identity iff ZZ = 0. A mixed addition costs 8M + 2S here against 7M + 4S
// in Jacobian coordinates (madd-2007-bl); the accumulate kernels ran faster with it on an
// H200 (BENCHMARKS.md#msm-gpu).
typedef struct {
  PFIELD x;
  PFIELD y;
  PFIELD zz;
  PFIELD zzz;
} POINT_xyzz;

inline POINT_xyzz POINT_xyzz_zero(void) {
  POINT_xyzz r;
  r.x = PFIELD_zero();
  r.y = PFIELD_zero();
  r.zz = PFIELD_zero();
  r.zzz = PFIELD_zero();
  return r;
}

// 2 p (dbl-2008-s-1, a = 0): 6M + 3S.
KERNEL_CURVE_ATTR POINT_xyzz POINT_xyzz_double(POINT_xyzz p) {
  PFIELD u = PFIELD_double(p.y);
  PFIELD v = PFIELD_sqr(u);
  PFIELD w = PFIELD_mul(u, v);
  PFIELD s = PFIELD_mul(p.x, v);
  PFIELD x2 = PFIELD_sqr(p.x);
  PFIELD m = PFIELD_add(PFIELD_double(x2), x2);
  POINT_xyzz r;
  r.x = PFIELD_sub(PFIELD_sqr(m), PFIELD_double(s));
  r.y = PFIELD_sub(PFIELD_mul(m, PFIELD_sub(s, r.x)), PFIELD_mul(w, p.y));
  r.zz = PFIELD_mul(v, p.zz);
  r.zzz = PFIELD_mul(w, p.zzz);
  return r;
}

// 2 q for an affine q: the XYZZ doubling with ZZ = ZZZ = 1 (the rare equal-point case of
// a mixed addition, where two products by one cost nothing that matters).
KERNEL_CURVE_ATTR POINT_xyzz POINT_xyzz_double_affine(POINT_affine q) {
  POINT_xyzz p;
  p.x = q.x;
  p.y = q.y;
  p.zz = PFIELD_one();
  p.zzz = PFIELD_one();
  return POINT_xyzz_double(p);
}

// p + q for an affine q (madd-2008-s).
KERNEL_CURVE_ATTR POINT_xyzz POINT_xyzz_add_mixed(POINT_xyzz p, POINT_affine q) {
  if (PFIELD_is_zero(q.x) && PFIELD_is_zero(q.y)) return p;
  if (PFIELD_is_zero(p.zz)) {
    POINT_xyzz r;
    r.x = q.x;
    r.y = q.y;
    r.zz = PFIELD_one();
    r.zzz = PFIELD_one();
    return r;
  }
  PFIELD pp = PFIELD_sub(PFIELD_mul(q.x, p.zz), p.x);   // P = U2 - X1
  PFIELD rr = PFIELD_sub(PFIELD_mul(q.y, p.zzz), p.y);  // R = S2 - Y1
  if (PFIELD_is_zero(pp)) {
    if (PFIELD_is_zero(rr)) return POINT_xyzz_double_affine(q);
    return POINT_xyzz_zero();
  }
  PFIELD ppp = PFIELD_sqr(pp);
  PFIELD pppp = PFIELD_mul(pp, ppp);  // PPP
  PFIELD qq = PFIELD_mul(p.x, ppp);   // Q
  POINT_xyzz r;
  r.x = PFIELD_sub(PFIELD_sub(PFIELD_sqr(rr), pppp), PFIELD_double(qq));
  r.y = PFIELD_sub(PFIELD_mul(rr, PFIELD_sub(qq, r.x)), PFIELD_mul(p.y, pppp));
  r.zz = PFIELD_mul(p.zz, ppp);
  r.zzz = PFIELD_mul(p.zzz, pppp);
  return r;
}

// p + q (add-2008-s): 12M + 2S, against 11M + 5S for two Jacobian points (and 4M + 2S
// more to bring an XYZZ piece to Jacobian first).
KERNEL_CURVE_ATTR POINT_xyzz POINT_xyzz_add(POINT_xyzz p, POINT_xyzz q) {
  if (PFIELD_is_zero(q.zz)) return p;
  if (PFIELD_is_zero(p.zz)) return q;
  PFIELD u1 = PFIELD_mul(p.x, q.zz);
  PFIELD s1 = PFIELD_mul(p.y, q.zzz);
  PFIELD pp = PFIELD_sub(PFIELD_mul(q.x, p.zz), u1);   // P = U2 - U1
  PFIELD rr = PFIELD_sub(PFIELD_mul(q.y, p.zzz), s1);  // R = S2 - S1
  if (PFIELD_is_zero(pp)) {
    if (PFIELD_is_zero(rr)) return POINT_xyzz_double(p);
    return POINT_xyzz_zero();
  }
  PFIELD ppp = PFIELD_sqr(pp);
  PFIELD pppp = PFIELD_mul(pp, ppp);  // PPP
  PFIELD qq = PFIELD_mul(u1, ppp);    // Q
  POINT_xyzz r;
  r.x = PFIELD_sub(PFIELD_sub(PFIELD_sqr(rr), pppp), PFIELD_double(qq));
  r.y = PFIELD_sub(PFIELD_mul(rr, PFIELD_sub(qq, r.x)), PFIELD_mul(s1, pppp));
  r.zz = PFIELD_mul(PFIELD_mul(p.zz, q.zz), ppp);
  r.zzz = PFIELD_mul(PFIELD_mul(p.zzz, q.zzz), pppp);
  return r;
}

// The same point in Jacobian coordinates: Z = ZZ ZZZ, X = X ZZ ZZZ^2, Y = Y ZZZ^4 (from
// ZZ^3 = ZZZ^2), without an inversion.
inline POINT_jacobian POINT_xyzz_to_jacobian(POINT_xyzz p) {
  if (PFIELD_is_zero(p.zz)) return POINT_zero();
  PFIELD t = PFIELD_sqr(p.zzz);
  POINT_jacobian r;
  r.x = PFIELD_mul(PFIELD_mul(p.x, p.zz), t);
  r.y = PFIELD_mul(p.y, PFIELD_sqr(t));
  r.z = PFIELD_mul(p.zz, p.zzz);
  return r;
}
