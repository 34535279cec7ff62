//! The macro that builds a group's public types (affine, projective, encodings) and the
//! traits the API promises on top of [`Affine`](super::Affine) and
//! [`Jacobian`](super::Jacobian).

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

            /// Decodes a compressed point without the subgroup check: it is still on the curve,
            /// and x = 0 is refused, as blst (blstrs) refuses it unchecked.
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

            /// Decodes an uncompressed point without the subgroup check, the one check
            /// [`group::UncompressedEncoding::from_uncompressed_unchecked`] may skip: the flags,
            /// canonical coordinates, the curve equation and x != 0 are still checked, which is
            /// what blst (blstrs) refuses unchecked.
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

            #[doc = concat!("Decodes an uncompressed point from a slice (", stringify!($ulen), " bytes) as parameter files hold their bases: valid flags, canonical coordinates, the curve equation and x != 0, not the subgroup (bellperson's unchecked reads skip that check alone, the costly one; blst refuses x = 0 even then, as [`DecodeError::NotInSubgroup`](crate::DecodeError::NotInSubgroup)). The flagged identity decodes; `(0, 0)` without the flag does not.")]
            ///
            /// # Errors
            /// [`DecodeError`](crate::DecodeError) naming the first check that failed.
            pub fn decode_uncompressed_on_curve(bytes: &[u8]) -> Result<Self, $crate::DecodeError> {
                $crate::encoding::decode_uncompressed_on_curve(bytes).map(Self)
            }

            #[doc = concat!("Decodes an uncompressed point from a slice (", stringify!($ulen), " bytes); `checked` adds the subgroup check to those of [`decode_uncompressed_on_curve`](Self::decode_uncompressed_on_curve), which run either way.")]
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
