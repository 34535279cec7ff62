//! Arithmetic shared by G1 and G2: short Weierstrass curves `y^2 = x^3 + b` (a = 0) in Jacobian
//! coordinates, generic over the coordinate field, plus the macro that builds each group's
//! public types on top of it.
//!
//! Jacobian coordinates (x = X/Z^2, y = Y/Z^3, identity iff Z = 0) are blst's, so points cross to
//! and from `blst_p1`/`blst_p2` as coordinate copies. Affine points store the identity as
//! (0, 0), which is not on either curve because b != 0.

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
    pub(crate) fn to_jacobian(&self) -> Jacobian<F> {
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
    pub(crate) fn to_affine(&self) -> Affine<F> {
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

/// Builds a group's public affine and projective types, their encodings and every trait the
/// API promises, over `Affine<$field>` / `Jacobian<$field>`. Used once for G1 and once for G2.
macro_rules! impl_group {
    (
        name: $name:literal,
        affine: $affine:ident,
        projective: $proj:ident,
        field: $field:ty,
        compressed: $compressed:ident,
        uncompressed: $uncompressed:ident,
        compressed_len: $clen:literal,
        uncompressed_len: $ulen:literal $(,)?
    ) => {
        #[doc = concat!("A point of ", $name, " in affine coordinates (blst's layout); the identity is stored as (0, 0).")]
        #[derive(Clone, Copy)]
        #[repr(transparent)]
        pub struct $affine(pub(crate) $crate::curve::Affine<$field>);

        #[doc = concat!("A point of ", $name, " in Jacobian coordinates (x = X/Z^2, y = Y/Z^3; blst's layout); the identity has Z = 0.")]
        #[derive(Clone, Copy)]
        #[repr(transparent)]
        pub struct $proj(pub(crate) $crate::curve::Jacobian<$field>);

        #[doc = concat!("The compressed ZCash encoding of a ", $name, " point (", stringify!($clen), " bytes, big-endian).")]
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        pub struct $compressed(pub [u8; $clen]);

        #[doc = concat!("The uncompressed ZCash encoding of a ", $name, " point (", stringify!($ulen), " bytes, big-endian).")]
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        pub struct $uncompressed(pub [u8; $ulen]);

        impl_group!(@bytes $compressed, $clen);
        impl_group!(@bytes $uncompressed, $ulen);

        impl $affine {
            /// The identity, stored as (0, 0).
            pub const fn identity() -> Self {
                Self($crate::curve::Affine::IDENTITY)
            }

            /// The standard generator of the prime-order subgroup.
            pub const fn generator() -> Self {
                Self(<$field as $crate::curve::CurveField>::GENERATOR)
            }

            /// Whether this is the identity.
            pub fn is_identity(&self) -> subtle::Choice {
                self.0.is_identity()
            }

            /// Whether the point satisfies the curve equation (the identity counts as on it).
            pub fn is_on_curve(&self) -> subtle::Choice {
                self.0.is_on_curve()
            }

            /// Whether the point lies in the prime-order subgroup, by the endomorphism check
            /// (eprint 2021/1130, 2022/352). Meaningful only for points on the curve.
            pub fn is_torsion_free(&self) -> subtle::Choice {
                <$field as $crate::curve::CurveField>::is_torsion_free(&self.0)
            }

            /// The x coordinate (0 for the identity).
            pub fn x(&self) -> $field {
                self.0.x
            }

            /// The y coordinate (0 for the identity).
            pub fn y(&self) -> $field {
                self.0.y
            }

            /// Wraps coordinates with no checks at all: the caller promises an on-curve,
            /// torsion-free point or (0, 0) for the identity.
            pub const fn from_xy_unchecked(x: $field, y: $field) -> Self {
                Self($crate::curve::Affine { x, y })
            }

            /// The point (x, y) if it is on the curve and in the prime-order subgroup
            /// ((0, 0) is accepted as the identity).
            pub fn from_xy(x: $field, y: $field) -> subtle::CtOption<Self> {
                let p = Self::from_xy_unchecked(x, y);
                let ok = p.is_on_curve();
                // The subgroup check presumes an on-curve point; its verdict is masked otherwise.
                subtle::CtOption::new(p, ok & p.is_torsion_free())
            }

            #[doc = concat!("The compressed encoding (", stringify!($clen), " bytes): x, with flags 0x80 | infinity 0x40 | sign 0x20.")]
            pub fn to_compressed(&self) -> [u8; $clen] {
                let mut out = [0u8; $clen];
                $crate::encoding::encode(&self.0, true, &mut out);
                out
            }

            #[doc = concat!("The uncompressed encoding (", stringify!($ulen), " bytes): x then y, flag 0x40 for the identity.")]
            pub fn to_uncompressed(&self) -> [u8; $ulen] {
                let mut out = [0u8; $ulen];
                $crate::encoding::encode(&self.0, false, &mut out);
                out
            }

            /// Decodes a compressed point and checks it is in the prime-order subgroup.
            pub fn from_compressed(bytes: &[u8; $clen]) -> subtle::CtOption<Self> {
                $crate::encoding::to_ct_option(Self::decode_compressed(bytes), Self::identity())
            }

            /// Decodes a compressed point without the subgroup check (it is still on the curve).
            pub fn from_compressed_unchecked(bytes: &[u8; $clen]) -> subtle::CtOption<Self> {
                $crate::encoding::to_ct_option(
                    $crate::encoding::decode_compressed(bytes, false).map(Self),
                    Self::identity(),
                )
            }

            /// Decodes an uncompressed point, checking the curve equation and the subgroup.
            pub fn from_uncompressed(bytes: &[u8; $ulen]) -> subtle::CtOption<Self> {
                $crate::encoding::to_ct_option(Self::decode_uncompressed(bytes, true), Self::identity())
            }

            /// Decodes an uncompressed point checking only the flags and that the coordinates
            /// are canonical: neither the curve equation nor the subgroup (trusted data).
            pub fn from_uncompressed_unchecked(bytes: &[u8; $ulen]) -> subtle::CtOption<Self> {
                $crate::encoding::to_ct_option(Self::decode_uncompressed(bytes, false), Self::identity())
            }

            #[doc = concat!("Decodes a compressed point from a slice (", stringify!($clen), " bytes), with the subgroup check.")]
            ///
            /// # Errors
            /// [`DecodeError`](crate::DecodeError) naming the first check that failed.
            pub fn decode_compressed(bytes: &[u8]) -> Result<Self, $crate::DecodeError> {
                $crate::encoding::decode_compressed(bytes, true).map(Self)
            }

            #[doc = concat!("Decodes an uncompressed point from a slice (", stringify!($ulen), " bytes); `checked` adds the curve-equation and subgroup checks.")]
            ///
            /// # Errors
            /// [`DecodeError`](crate::DecodeError) naming the first check that failed.
            pub fn decode_uncompressed(bytes: &[u8], checked: bool) -> Result<Self, $crate::DecodeError> {
                $crate::encoding::decode_uncompressed(bytes, checked).map(Self)
            }
        }

        impl $proj {
            /// The identity (Z = 0).
            pub const fn identity() -> Self {
                Self($crate::curve::Jacobian::IDENTITY)
            }

            /// The standard generator of the prime-order subgroup.
            pub fn generator() -> Self {
                $affine::generator().into()
            }

            /// Whether this is the identity.
            pub fn is_identity(&self) -> subtle::Choice {
                self.0.is_identity()
            }

            /// `2 self` (dbl-2009-l); constant time, the identity needs no special case.
            #[must_use]
            pub fn double(&self) -> Self {
                Self(self.0.double())
            }

            /// `self + rhs` by add-2007-bl, branching on the identity / equal / opposite cases.
            ///
            /// # Security
            /// Variable time: the branches reveal whether either input is the identity and
            /// whether the inputs are equal or opposite. Use only on public points (MSM over
            /// public bases); the `+` operator is the constant-time form.
            #[inline]
            pub fn add_vartime(&self, rhs: &Self) -> Self {
                Self(self.0.add_vartime(&rhs.0))
            }

            /// `self + rhs` for an affine `rhs` by madd-2007-bl (7M + 4S), branching on the
            /// identity / equal / opposite cases.
            ///
            /// # Security
            /// Variable time: the branches reveal whether either input is the identity and
            /// whether the inputs are equal or opposite. Use only on public points (MSM over
            /// public bases); the `+` operator is the constant-time form.
            #[inline]
            pub fn add_mixed_vartime(&self, rhs: &$affine) -> Self {
                Self(self.0.add_mixed_vartime(&rhs.0))
            }

            /// The affine form (one inversion); the identity maps to (0, 0).
            pub fn to_affine(&self) -> $affine {
                $affine(self.0.to_affine())
            }

        }

        impl From<$affine> for $proj {
            fn from(p: $affine) -> Self {
                Self(p.0.to_jacobian())
            }
        }

        impl From<&$affine> for $proj {
            fn from(p: &$affine) -> Self {
                Self(p.0.to_jacobian())
            }
        }

        impl From<$proj> for $affine {
            fn from(p: $proj) -> Self {
                p.to_affine()
            }
        }

        impl From<&$proj> for $affine {
            fn from(p: &$proj) -> Self {
                p.to_affine()
            }
        }

        impl Default for $affine {
            fn default() -> Self {
                Self::identity()
            }
        }

        impl Default for $proj {
            fn default() -> Self {
                Self::identity()
            }
        }

        impl core::fmt::Debug for $affine {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                if bool::from(self.is_identity()) {
                    write!(f, "{}(identity)", stringify!($affine))
                } else {
                    f.debug_struct(stringify!($affine))
                        .field("x", &self.0.x)
                        .field("y", &self.0.y)
                        .finish()
                }
            }
        }

        impl core::fmt::Debug for $proj {
            /// Shows the affine point, so equal points print alike.
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "{}({:?})", stringify!($proj), self.to_affine())
            }
        }

        impl subtle::ConstantTimeEq for $affine {
            fn ct_eq(&self, other: &Self) -> subtle::Choice {
                self.0.ct_eq(&other.0)
            }
        }

        impl subtle::ConstantTimeEq for $proj {
            fn ct_eq(&self, other: &Self) -> subtle::Choice {
                self.0.ct_eq(&other.0)
            }
        }

        impl subtle::ConditionallySelectable for $affine {
            fn conditional_select(a: &Self, b: &Self, choice: subtle::Choice) -> Self {
                Self(subtle::ConditionallySelectable::conditional_select(&a.0, &b.0, choice))
            }
        }

        impl subtle::ConditionallySelectable for $proj {
            fn conditional_select(a: &Self, b: &Self, choice: subtle::Choice) -> Self {
                Self(subtle::ConditionallySelectable::conditional_select(&a.0, &b.0, choice))
            }
        }

        impl PartialEq for $affine {
            fn eq(&self, other: &Self) -> bool {
                bool::from(subtle::ConstantTimeEq::ct_eq(self, other))
            }
        }
        impl Eq for $affine {}

        impl PartialEq for $proj {
            fn eq(&self, other: &Self) -> bool {
                bool::from(subtle::ConstantTimeEq::ct_eq(self, other))
            }
        }
        impl Eq for $proj {}

        impl core::ops::Neg for $affine {
            type Output = $affine;
            fn neg(self) -> $affine {
                $affine(self.0.neg())
            }
        }
        impl core::ops::Neg for &$affine {
            type Output = $affine;
            fn neg(self) -> $affine {
                $affine(self.0.neg())
            }
        }
        impl core::ops::Neg for $proj {
            type Output = $proj;
            fn neg(self) -> $proj {
                $proj(self.0.neg())
            }
        }
        impl core::ops::Neg for &$proj {
            type Output = $proj;
            fn neg(self) -> $proj {
                $proj(self.0.neg())
            }
        }

        // Constant-time operator forms; every owned/borrowed combination forwards to these.
        impl_group!(@binop Add, add, AddAssign, add_assign, $proj, $proj,
            |a: &$proj, b: &$proj| $proj(a.0.add(&b.0)));
        impl_group!(@binop Sub, sub, SubAssign, sub_assign, $proj, $proj,
            |a: &$proj, b: &$proj| $proj(a.0.add(&b.0.neg())));
        impl_group!(@binop Add, add, AddAssign, add_assign, $proj, $affine,
            |a: &$proj, b: &$affine| $proj(a.0.add_mixed(&b.0)));
        impl_group!(@binop Sub, sub, SubAssign, sub_assign, $proj, $affine,
            |a: &$proj, b: &$affine| $proj(a.0.add_mixed(&b.0.neg())));
        impl_group!(@binop Mul, mul, MulAssign, mul_assign, $proj, $crate::Fr,
            |a: &$proj, s: &$crate::Fr| $proj(a.0.mul_le_bytes(&ff::PrimeField::to_repr(s))));
        impl_group!(@binop_out Add, add, $affine, $proj, $proj,
            |a: &$affine, b: &$proj| $proj(b.0.add_mixed(&a.0)));
        impl_group!(@binop_out Sub, sub, $affine, $proj, $proj,
            |a: &$affine, b: &$proj| $proj(b.0.neg().add_mixed(&a.0)));
        impl_group!(@binop_out Mul, mul, $affine, $crate::Fr, $proj,
            |a: &$affine, s: &$crate::Fr| $proj(a.0.to_jacobian().mul_le_bytes(&ff::PrimeField::to_repr(s))));

        impl<T: core::borrow::Borrow<$proj>> core::iter::Sum<T> for $proj {
            fn sum<I: Iterator<Item = T>>(iter: I) -> Self {
                iter.fold(Self::identity(), |acc, p| acc + p.borrow())
            }
        }

        impl group::Group for $proj {
            type Scalar = $crate::Fr;

            fn random(mut rng: impl rand_core::RngCore) -> Self {
                loop {
                    let s = <$crate::Fr as ff::Field>::random(&mut rng);
                    if !bool::from(ff::Field::is_zero(&s)) {
                        return Self::generator() * s;
                    }
                }
            }

            fn identity() -> Self {
                Self::identity()
            }

            fn generator() -> Self {
                Self::generator()
            }

            fn is_identity(&self) -> subtle::Choice {
                self.is_identity()
            }

            fn double(&self) -> Self {
                self.double()
            }
        }

        impl group::Curve for $proj {
            type AffineRepr = $affine;

            fn batch_normalize(p: &[Self], q: &mut [$affine]) {
                $crate::curve::Jacobian::batch_normalize(p, q, |p| &p.0, |q| &mut q.0);
            }

            fn to_affine(&self) -> $affine {
                self.to_affine()
            }
        }

        impl group::prime::PrimeGroup for $proj {}

        impl group::prime::PrimeCurve for $proj {
            type Affine = $affine;
        }

        impl group::prime::PrimeCurveAffine for $affine {
            type Scalar = $crate::Fr;
            type Curve = $proj;

            fn identity() -> Self {
                Self::identity()
            }

            fn generator() -> Self {
                Self::generator()
            }

            fn is_identity(&self) -> subtle::Choice {
                self.is_identity()
            }

            fn to_curve(&self) -> $proj {
                self.into()
            }
        }

        impl group::GroupEncoding for $affine {
            type Repr = $compressed;

            fn from_bytes(bytes: &$compressed) -> subtle::CtOption<Self> {
                Self::from_compressed(&bytes.0)
            }

            fn from_bytes_unchecked(bytes: &$compressed) -> subtle::CtOption<Self> {
                Self::from_compressed_unchecked(&bytes.0)
            }

            fn to_bytes(&self) -> $compressed {
                $compressed(self.to_compressed())
            }
        }

        impl group::GroupEncoding for $proj {
            type Repr = $compressed;

            fn from_bytes(bytes: &$compressed) -> subtle::CtOption<Self> {
                $affine::from_compressed(&bytes.0).map(Self::from)
            }

            fn from_bytes_unchecked(bytes: &$compressed) -> subtle::CtOption<Self> {
                $affine::from_compressed_unchecked(&bytes.0).map(Self::from)
            }

            fn to_bytes(&self) -> $compressed {
                $compressed(self.to_affine().to_compressed())
            }
        }

        impl group::UncompressedEncoding for $affine {
            type Uncompressed = $uncompressed;

            fn from_uncompressed(bytes: &$uncompressed) -> subtle::CtOption<Self> {
                Self::from_uncompressed(&bytes.0)
            }

            fn from_uncompressed_unchecked(bytes: &$uncompressed) -> subtle::CtOption<Self> {
                Self::from_uncompressed_unchecked(&bytes.0)
            }

            fn to_uncompressed(&self) -> $uncompressed {
                $uncompressed(self.to_uncompressed())
            }
        }
    };

    // Default (all zeroes), AsRef/AsMut and From<[u8; N]> for an encoding newtype.
    (@bytes $t:ident, $len:literal) => {
        impl Default for $t {
            fn default() -> Self {
                Self([0u8; $len])
            }
        }
        impl AsRef<[u8]> for $t {
            fn as_ref(&self) -> &[u8] {
                &self.0
            }
        }
        impl AsMut<[u8]> for $t {
            fn as_mut(&mut self) -> &mut [u8] {
                &mut self.0
            }
        }
        impl From<[u8; $len]> for $t {
            fn from(bytes: [u8; $len]) -> Self {
                Self(bytes)
            }
        }
    };

    // `op` for all four owned/borrowed combinations plus `op=` (owned and borrowed rhs).
    (@binop $tr:ident, $m:ident, $tra:ident, $ma:ident, $lhs:ty, $rhs:ty, $f:expr) => {
        impl_group!(@binop_out $tr, $m, $lhs, $rhs, $lhs, $f);
        impl core::ops::$tra<$rhs> for $lhs {
            fn $ma(&mut self, rhs: $rhs) {
                *self = core::ops::$tr::$m(&*self, &rhs);
            }
        }
        impl core::ops::$tra<&$rhs> for $lhs {
            fn $ma(&mut self, rhs: &$rhs) {
                *self = core::ops::$tr::$m(&*self, rhs);
            }
        }
    };

    (@binop_out $tr:ident, $m:ident, $lhs:ty, $rhs:ty, $out:ty, $f:expr) => {
        impl core::ops::$tr<&$rhs> for &$lhs {
            type Output = $out;
            fn $m(self, rhs: &$rhs) -> $out {
                let f: fn(&$lhs, &$rhs) -> $out = $f;
                f(self, rhs)
            }
        }
        impl core::ops::$tr<$rhs> for &$lhs {
            type Output = $out;
            fn $m(self, rhs: $rhs) -> $out {
                core::ops::$tr::$m(self, &rhs)
            }
        }
        impl core::ops::$tr<&$rhs> for $lhs {
            type Output = $out;
            fn $m(self, rhs: &$rhs) -> $out {
                core::ops::$tr::$m(&self, rhs)
            }
        }
        impl core::ops::$tr<$rhs> for $lhs {
            type Output = $out;
            fn $m(self, rhs: $rhs) -> $out {
                core::ops::$tr::$m(&self, &rhs)
            }
        }
    };
}
