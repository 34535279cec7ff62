//! Short Weierstrass curves `y^2 = x^3 + b` (a = 0) in affine and Jacobian coordinates,
//! generic over the coordinate field: the group law, scalar multiplication and the checks
//! both groups share.

use ff::Field;
use subtle::{Choice, ConditionallySelectable, ConstantTimeEq, CtOption};

/// |x| for the BLS parameter x = -0xd201000000010000.
pub(crate) const BLS_X_ABS: u64 = 0xd201_0000_0001_0000;

/// What a coordinate field knows about the curve over it (one curve per field here: E1 over
/// Fq, E2 over Fq2), and how its elements are written in the ZCash encoding.
pub(crate) trait CurveField: Field {
    /// The coefficient b of `y^2 = x^3 + b`.
    const B: Self;
    /// The standard generator of the prime-order subgroup.
    const GENERATOR: Affine<Self>;
    /// Bytes of one encoded coordinate.
    const BYTES: usize;
    /// Writes the canonical big-endian encoding into `out` (`out.len() == Self::BYTES`).
    fn write_be(&self, out: &mut [u8]);
    /// Reads a canonical big-endian encoding; none if the value is not below the modulus.
    fn read_be(bytes: &[u8]) -> CtOption<Self>;
    /// The ZCash sign of y: whether y is lexicographically the largest of {y, -y}.
    fn sign(&self) -> Choice;
    /// Whether an on-curve point lies in the prime-order subgroup (fast endomorphism check).
    fn is_torsion_free(p: &Affine<Self>) -> Choice;
}

/// An affine point; (0, 0) is the identity.
#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct Affine<F> {
    pub(crate) x: F,
    pub(crate) y: F,
}

/// A point in Jacobian coordinates; Z = 0 is the identity.
#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct Jacobian<F> {
    pub(crate) x: F,
    pub(crate) y: F,
    pub(crate) z: F,
}

impl<F: CurveField> Affine<F> {
    pub(crate) const IDENTITY: Self = Self {
        x: F::ZERO,
        y: F::ZERO,
    };

    #[inline]
    pub(crate) fn is_identity(&self) -> Choice {
        self.x.is_zero() & self.y.is_zero()
    }

    /// Whether y^2 = x^3 + b, or the point is the identity.
    pub(crate) fn is_on_curve(&self) -> Choice {
        let rhs = self.x.square() * self.x + F::B;
        self.y.square().ct_eq(&rhs) | self.is_identity()
    }

    #[inline]
    pub(crate) fn neg(&self) -> Self {
        Self {
            x: self.x,
            y: -self.y,
        }
    }

    #[inline]
    pub(crate) fn to_jacobian(self) -> Jacobian<F> {
        Jacobian {
            x: self.x,
            y: self.y,
            z: F::conditional_select(&F::ONE, &F::ZERO, self.is_identity()),
        }
    }
}

impl<F: ConditionallySelectable> ConditionallySelectable for Affine<F> {
    fn conditional_select(a: &Self, b: &Self, choice: Choice) -> Self {
        Self {
            x: F::conditional_select(&a.x, &b.x, choice),
            y: F::conditional_select(&a.y, &b.y, choice),
        }
    }
}

impl<F: ConstantTimeEq> ConstantTimeEq for Affine<F> {
    fn ct_eq(&self, other: &Self) -> Choice {
        self.x.ct_eq(&other.x) & self.y.ct_eq(&other.y)
    }
}

impl<F: ConditionallySelectable> ConditionallySelectable for Jacobian<F> {
    fn conditional_select(a: &Self, b: &Self, choice: Choice) -> Self {
        Self {
            x: F::conditional_select(&a.x, &b.x, choice),
            y: F::conditional_select(&a.y, &b.y, choice),
            z: F::conditional_select(&a.z, &b.z, choice),
        }
    }
}

impl<F: Field> ConstantTimeEq for Jacobian<F> {
    /// Equality of the represented points: cross-multiplied coordinates, identities apart.
    fn ct_eq(&self, other: &Self) -> Choice {
        let z1z1 = self.z.square();
        let z2z2 = other.z.square();
        let x_eq = (self.x * z2z2).ct_eq(&(other.x * z1z1));
        let y_eq = (self.y * z2z2 * other.z).ct_eq(&(other.y * z1z1 * self.z));
        let inf1 = self.z.is_zero();
        let inf2 = other.z.is_zero();
        (inf1 & inf2) | (!inf1 & !inf2 & x_eq & y_eq)
    }
}

/// The parts of add-2007-bl computed before the special cases are known.
struct AddPre<F> {
    z1z1: F,
    z2z2: F,
    u1: F,
    s1: F,
    /// U2 - U1: zero iff the x coordinates agree.
    h: F,
    /// 2 (S2 - S1): zero iff the y coordinates also agree.
    r: F,
}

/// The parts of madd-2007-bl computed before the special cases are known.
struct MixedPre<F> {
    z1z1: F,
    h: F,
    r: F,
}

impl<F: CurveField> Jacobian<F> {
    pub(crate) const IDENTITY: Self = Self {
        x: F::ZERO,
        y: F::ZERO,
        z: F::ZERO,
    };

    #[inline]
    pub(crate) fn is_identity(&self) -> Choice {
        self.z.is_zero()
    }

    #[inline]
    pub(crate) fn neg(&self) -> Self {
        Self {
            x: self.x,
            y: -self.y,
            z: self.z,
        }
    }

    /// dbl-2009-l for a = 0 (2M + 5S). Z3 = 2 Y1 Z1, so the identity doubles to the identity
    /// without a special case.
    #[inline]
    pub(crate) fn double(&self) -> Self {
        let a = self.x.square();
        let b = self.y.square();
        let c = b.square();
        let d = ((self.x + b).square() - a - c).double();
        let e = a.double() + a;
        let f = e.square();
        let x = f - d.double();
        let y = e * (d - x) - c.double().double().double();
        let z = (self.y * self.z).double();
        Self { x, y, z }
    }

    #[inline(always)]
    fn add_pre(&self, rhs: &Self) -> AddPre<F> {
        let z1z1 = self.z.square();
        let z2z2 = rhs.z.square();
        let u1 = self.x * z2z2;
        let u2 = rhs.x * z1z1;
        let s1 = self.y * rhs.z * z2z2;
        let s2 = rhs.y * self.z * z1z1;
        AddPre {
            z1z1,
            z2z2,
            u1,
            s1,
            h: u2 - u1,
            r: (s2 - s1).double(),
        }
    }

    /// The rest of add-2007-bl (11M + 5S in all). With H = 0 it yields Z3 = 0: right for
    /// P + (-P), wrong for P + P, which the callers route to `double`.
    #[inline(always)]
    fn add_post(&self, rhs: &Self, pre: AddPre<F>) -> Self {
        let AddPre {
            z1z1,
            z2z2,
            u1,
            s1,
            h,
            r,
        } = pre;
        let i = h.double().square();
        let j = h * i;
        let v = u1 * i;
        let x = r.square() - j - v.double();
        let y = r * (v - x) - (s1 * j).double();
        let z = ((self.z + rhs.z).square() - z1z1 - z2z2) * h;
        Self { x, y, z }
    }

    /// Complete addition in constant time: every case is computed and selected.
    pub(crate) fn add(&self, rhs: &Self) -> Self {
        let pre = self.add_pre(rhs);
        let equal = pre.h.is_zero() & pre.r.is_zero();
        let sum = self.add_post(rhs, pre);
        let mut out = Self::conditional_select(&sum, &self.double(), equal);
        out.conditional_assign(rhs, self.is_identity());
        out.conditional_assign(self, rhs.is_identity());
        out
    }

    /// Addition that branches on the special cases.
    #[inline]
    pub(crate) fn add_vartime(&self, rhs: &Self) -> Self {
        if bool::from(self.is_identity()) {
            return *rhs;
        }
        if bool::from(rhs.is_identity()) {
            return *self;
        }
        let pre = self.add_pre(rhs);
        if bool::from(pre.h.is_zero()) {
            return if bool::from(pre.r.is_zero()) {
                self.double()
            } else {
                Self::IDENTITY
            };
        }
        self.add_post(rhs, pre)
    }

    #[inline(always)]
    fn mixed_pre(&self, rhs: &Affine<F>) -> MixedPre<F> {
        let z1z1 = self.z.square();
        let u2 = rhs.x * z1z1;
        let s2 = rhs.y * self.z * z1z1;
        MixedPre {
            z1z1,
            h: u2 - self.x,
            r: (s2 - self.y).double(),
        }
    }

    /// The rest of madd-2007-bl (7M + 4S in all); H = 0 gives Z3 = 0 as in `add_post`.
    #[inline(always)]
    fn mixed_post(&self, pre: MixedPre<F>) -> Self {
        let MixedPre { z1z1, h, r } = pre;
        let hh = h.square();
        let i = hh.double().double();
        let j = h * i;
        let v = self.x * i;
        let x = r.square() - j - v.double();
        let y = r * (v - x) - (self.y * j).double();
        let z = (self.z + h).square() - z1z1 - hh;
        Self { x, y, z }
    }

    /// Complete mixed addition in constant time.
    pub(crate) fn add_mixed(&self, rhs: &Affine<F>) -> Self {
        let pre = self.mixed_pre(rhs);
        let equal = pre.h.is_zero() & pre.r.is_zero();
        let sum = self.mixed_post(pre);
        let mut out = Self::conditional_select(&sum, &self.double(), equal);
        out.conditional_assign(&rhs.to_jacobian(), self.is_identity());
        out.conditional_assign(self, rhs.is_identity());
        out
    }

    /// Mixed addition that branches on the special cases.
    #[inline]
    pub(crate) fn add_mixed_vartime(&self, rhs: &Affine<F>) -> Self {
        if bool::from(rhs.is_identity()) {
            return *self;
        }
        if bool::from(self.is_identity()) {
            return rhs.to_jacobian();
        }
        let pre = self.mixed_pre(rhs);
        if bool::from(pre.h.is_zero()) {
            return if bool::from(pre.r.is_zero()) {
                self.double()
            } else {
                Self::IDENTITY
            };
        }
        self.mixed_post(pre)
    }

    /// (X/Z^2, Y/Z^3); the identity maps to (0, 0) because 0 "inverts" to 0.
    pub(crate) fn to_affine(self) -> Affine<F> {
        let zinv = self.z.invert().unwrap_or(F::ZERO);
        let zinv2 = zinv.square();
        Affine {
            x: self.x * zinv2,
            y: self.y * zinv2 * zinv,
        }
    }

    /// Normalises `p` into `q` with one inversion (Montgomery's trick), using the x slots of
    /// `q` as scratch for the running products. Identities (Z = 0) are skipped in the product
    /// and come out as (0, 0). `jac`/`aff` reach the coordinates inside the public wrapper
    /// types. Panics if the lengths differ (the `group::Curve` contract).
    pub(crate) fn batch_normalize<P, A>(
        p: &[P],
        q: &mut [A],
        jac: impl Fn(&P) -> &Self,
        aff: impl Fn(&mut A) -> &mut Affine<F>,
    ) {
        assert_eq!(p.len(), q.len(), "batch_normalize: length mismatch");
        let mut acc = F::ONE;
        for (p, q) in p.iter().zip(q.iter_mut()) {
            let (p, q) = (jac(p), aff(q));
            q.x = acc;
            acc = F::conditional_select(&(acc * p.z), &acc, p.z.is_zero());
        }
        // A product of non-zero elements is non-zero, so the inversion always succeeds.
        acc = acc.invert().unwrap_or(F::ZERO);
        for (p, q) in p.iter().rev().zip(q.iter_mut().rev()) {
            let (p, q) = (jac(p), aff(q));
            let skip = p.z.is_zero();
            let zinv = F::conditional_select(&(acc * q.x), &F::ZERO, skip);
            acc = F::conditional_select(&(acc * p.z), &acc, skip);
            let zinv2 = zinv.square();
            q.x = p.x * zinv2;
            q.y = p.y * zinv2 * zinv;
        }
    }

    /// `[k] self` for a little-endian scalar, constant time in `k` (its length is public):
    /// fixed 4-bit windows, a table lookup that touches every entry, complete additions.
    pub(crate) fn mul_le_bytes(&self, k: &[u8]) -> Self {
        let mut table = [Self::IDENTITY; 16];
        for i in 1..16 {
            table[i] = table[i - 1].add(self);
        }
        let mut acc = Self::IDENTITY;
        for byte in k.iter().rev() {
            for nibble in [byte >> 4, byte & 0x0f] {
                acc = acc.double().double().double().double();
                let mut t = Self::IDENTITY;
                for (i, entry) in (0u8..).zip(table.iter()) {
                    t.conditional_assign(entry, i.ct_eq(&nibble));
                }
                acc = acc.add(&t);
            }
        }
        acc
    }

    /// `[|x|] p` for an affine `p`: [`mul_by_abs_x`](Self::mul_by_abs_x) with constant-time
    /// mixed additions, cheaper than complete Jacobian ones.
    pub(crate) fn affine_mul_by_abs_x(p: &Affine<F>) -> Self {
        let mut acc = p.to_jacobian();
        for i in (0..63).rev() {
            acc = acc.double();
            if (BLS_X_ABS >> i) & 1 == 1 {
                acc = acc.add_mixed(p);
            }
        }
        acc
    }

    /// `[|x|] self` for the BLS parameter (a public constant, so its bits may steer branches).
    pub(crate) fn mul_by_abs_x(&self) -> Self {
        let mut acc = *self;
        for i in (0..63).rev() {
            acc = acc.double();
            if (BLS_X_ABS >> i) & 1 == 1 {
                acc = acc.add(self);
            }
        }
        acc
    }
}
