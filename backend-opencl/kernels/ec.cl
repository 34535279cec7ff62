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
SLUICE_CURVE_ATTR POINT_jacobian POINT_double(POINT_jacobian p) {
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

// madd-2007-bl: p + q for an affine q.
SLUICE_CURVE_ATTR POINT_jacobian POINT_add_mixed(POINT_jacobian p, POINT_affine q) {
  if (PFIELD_is_zero(q.x) && PFIELD_is_zero(q.y)) return p;
  if (PFIELD_is_zero(p.z)) {
    POINT_jacobian r;
    r.x = q.x;
    r.y = q.y;
    r.z = PFIELD_one();
    return r;
  }
  PFIELD z1z1 = PFIELD_sqr(p.z);
  PFIELD u2 = PFIELD_mul(q.x, z1z1);
  PFIELD s2 = PFIELD_mul(PFIELD_mul(q.y, p.z), z1z1);
  if (PFIELD_eq(u2, p.x)) {
    if (PFIELD_eq(s2, p.y)) return POINT_double(p);
    return POINT_zero();
  }
  PFIELD h = PFIELD_sub(u2, p.x);
  PFIELD hh = PFIELD_sqr(h);
  PFIELD i = PFIELD_double(PFIELD_double(hh));
  PFIELD j = PFIELD_mul(h, i);
  PFIELD rr = PFIELD_double(PFIELD_sub(s2, p.y));
  PFIELD v = PFIELD_mul(p.x, i);
  POINT_jacobian r;
  r.x = PFIELD_sub(PFIELD_sub(PFIELD_sqr(rr), j), PFIELD_double(v));
  r.y = PFIELD_sub(PFIELD_mul(rr, PFIELD_sub(v, r.x)), PFIELD_double(PFIELD_mul(p.y, j)));
  r.z = PFIELD_sub(PFIELD_sub(PFIELD_sqr(PFIELD_add(p.z, h)), z1z1), hh);
  return r;
}

// add-2007-bl.
SLUICE_CURVE_ATTR POINT_jacobian POINT_add(POINT_jacobian p, POINT_jacobian q) {
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
