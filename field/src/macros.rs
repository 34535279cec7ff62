//! Code generators shared by the field types: operator boilerplate for every field, and the
//! complete prime-field implementation (Montgomery form over [`crate::arith`]) for `Fr`/`Fq`.

/// Operator traits, `Sum`/`Product`, `Default`, and `Eq` for a field type that has inherent
/// `add_impl`, `sub_impl`, `mul_impl`, `neg_impl` methods and implements `ff::Field`.
macro_rules! impl_field_ops {
    ($t:ident) => {
        impl_field_ops!(@bin $t, Add, add, AddAssign, add_assign, add_impl);
        impl_field_ops!(@bin $t, Sub, sub, SubAssign, sub_assign, sub_impl);
        impl_field_ops!(@bin $t, Mul, mul, MulAssign, mul_assign, mul_impl);

        impl core::ops::Neg for $t {
            type Output = $t;
            #[inline]
            fn neg(self) -> $t {
                self.neg_impl()
            }
        }
        impl core::ops::Neg for &$t {
            type Output = $t;
            #[inline]
            fn neg(self) -> $t {
                self.neg_impl()
            }
        }
        impl<T: core::borrow::Borrow<$t>> core::iter::Sum<T> for $t {
            fn sum<I: Iterator<Item = T>>(iter: I) -> Self {
                iter.fold(<$t as ff::Field>::ZERO, |acc, x| acc.add_impl(x.borrow()))
            }
        }
        impl<T: core::borrow::Borrow<$t>> core::iter::Product<T> for $t {
            fn product<I: Iterator<Item = T>>(iter: I) -> Self {
                iter.fold(<$t as ff::Field>::ONE, |acc, x| acc.mul_impl(x.borrow()))
            }
        }
        impl Default for $t {
            #[inline]
            fn default() -> Self {
                <$t as ff::Field>::ZERO
            }
        }
        impl PartialEq for $t {
            #[inline]
            fn eq(&self, other: &Self) -> bool {
                bool::from(subtle::ConstantTimeEq::ct_eq(self, other))
            }
        }
        impl Eq for $t {}
        impl From<u64> for $t {
            #[inline]
            fn from(v: u64) -> Self {
                Self::from_u64(v)
            }
        }
        impl core::fmt::Debug for $t {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "{}({})", stringify!($t), self)
            }
        }
    };
    (@bin $t:ident, $tr:ident, $m:ident, $tra:ident, $ma:ident, $imp:ident) => {
        impl core::ops::$tr<&$t> for &$t {
            type Output = $t;
            #[inline]
            fn $m(self, rhs: &$t) -> $t {
                self.$imp(rhs)
            }
        }
        impl core::ops::$tr<$t> for &$t {
            type Output = $t;
            #[inline]
            fn $m(self, rhs: $t) -> $t {
                self.$imp(&rhs)
            }
        }
        impl core::ops::$tr<&$t> for $t {
            type Output = $t;
            #[inline]
            fn $m(self, rhs: &$t) -> $t {
                self.$imp(rhs)
            }
        }
        impl core::ops::$tr<$t> for $t {
            type Output = $t;
            #[inline]
            fn $m(self, rhs: $t) -> $t {
                self.$imp(&rhs)
            }
        }
        impl core::ops::$tra<&$t> for $t {
            #[inline]
            fn $ma(&mut self, rhs: &$t) {
                *self = self.$imp(rhs);
            }
        }
        impl core::ops::$tra<$t> for $t {
            #[inline]
            fn $ma(&mut self, rhs: $t) {
                *self = self.$imp(&rhs);
            }
        }
    };
}

/// Everything of a Montgomery-form prime field except the type definition, `sqrt_impl`
/// (field specific), and field-specific extras. Constants are little-endian u64 limbs;
/// those marked "Montgomery" are `x * R mod m`.
macro_rules! impl_prime_field {
    (
        name: $t:ident,
        limbs: $n:literal,
        bytes: $nb:literal,
        repr: $repr:ty,
        modulus: $modulus:expr,
        modulus_str: $modulus_str:literal,
        num_bits: $num_bits:literal,
        safegcd_limbs: $l62:literal,
        r: $r:expr,
        r2: $r2:expr,
        wide: $wide:expr,
        inv: $inv:expr,
        s: $s:literal,
        generator: $gen:expr,
        root_of_unity: $rou:expr,
        root_of_unity_inv: $rou_inv:expr,
        two_inv: $two_inv:expr,
        delta: $delta:expr,
        blst: $blst:ident,
    ) => {
        impl $t {
            /// The modulus, canonical little-endian limbs.
            pub const MODULUS_LIMBS: [u64; $n] = $modulus;
            /// `R mod m` with `R = 2^(64 * limbs)`: the Montgomery form of one.
            pub const R_LIMBS: [u64; $n] = $r;
            /// `R^2 mod m`, used to convert into Montgomery form.
            pub const R2_LIMBS: [u64; $n] = $r2;
            /// `-m^-1 mod 2^64`, the Montgomery reduction factor.
            pub const INV: u64 = $inv;
            /// `2^(192 * limbs - 1) mod m`, i.e. the Montgomery form of `R/2` times `R`:
            /// weights the high half in [`crate::arith::from_wide`].
            const WIDE: [u64; $n] = $wide;
            /// The modulus prepared for [`crate::safegcd::invert`], in `$l62` limbs of 62 bits.
            pub(crate) const SAFEGCD: crate::safegcd::SafegcdModulus<$l62> =
                crate::safegcd::SafegcdModulus::new(&$modulus, $num_bits);

            /// Builds an element from Montgomery-form limbs without any check.
            ///
            /// The caller promises the limbs are in Montgomery form and below the modulus;
            /// otherwise later arithmetic results are unspecified (never unsafe).
            #[inline]
            pub const fn from_mont_limbs_unchecked(limbs: [u64; $n]) -> Self {
                Self(limbs)
            }

            /// The Montgomery-form limbs (little-endian), as stored.
            #[inline]
            pub const fn mont_limbs(&self) -> [u64; $n] {
                self.0
            }

            /// The canonical (non-Montgomery) value as little-endian limbs.
            #[inline]
            pub fn to_canonical_limbs(&self) -> [u64; $n] {
                let mut one = [0u64; $n];
                one[0] = 1;
                crate::arith::mont_mul(&self.0, &one, &Self::MODULUS_LIMBS, Self::INV)
            }

            /// Converts canonical limbs, returning none unless they are below the modulus.
            #[inline]
            pub fn from_canonical_limbs(limbs: &[u64; $n]) -> subtle::CtOption<Self> {
                let ok = crate::arith::lt(limbs, &Self::MODULUS_LIMBS);
                // Zero out rejected input first: mont_mul's bounds only hold for reduced limbs.
                let mut reduced = [0u64; $n];
                for (r, l) in reduced.iter_mut().zip(limbs.iter()) {
                    *r = <u64 as subtle::ConditionallySelectable>::conditional_select(&0, l, ok);
                }
                let v = crate::arith::mont_mul(
                    &reduced,
                    &Self::R2_LIMBS,
                    &Self::MODULUS_LIMBS,
                    Self::INV,
                );
                subtle::CtOption::new(Self(v), ok)
            }

            /// The element `v`.
            #[inline]
            pub fn from_u64(v: u64) -> Self {
                let mut limbs = [0u64; $n];
                limbs[0] = v;
                Self(crate::arith::mont_mul(
                    &limbs,
                    &Self::R2_LIMBS,
                    &Self::MODULUS_LIMBS,
                    Self::INV,
                ))
            }

            /// Canonical little-endian bytes.
            pub fn to_bytes_le(&self) -> [u8; $nb] {
                let limbs = self.to_canonical_limbs();
                let mut out = [0u8; $nb];
                for (chunk, limb) in out.chunks_exact_mut(8).zip(limbs.iter()) {
                    chunk.copy_from_slice(&limb.to_le_bytes());
                }
                out
            }

            /// Canonical big-endian bytes.
            pub fn to_bytes_be(&self) -> [u8; $nb] {
                let mut out = self.to_bytes_le();
                out.reverse();
                out
            }

            /// Parses canonical little-endian bytes; none if the value is not below the modulus.
            pub fn from_bytes_le(bytes: &[u8; $nb]) -> subtle::CtOption<Self> {
                let mut limbs = [0u64; $n];
                for (limb, chunk) in limbs.iter_mut().zip(bytes.chunks_exact(8)) {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(chunk);
                    *limb = u64::from_le_bytes(b);
                }
                Self::from_canonical_limbs(&limbs)
            }

            /// Parses canonical big-endian bytes; none if the value is not below the modulus.
            pub fn from_bytes_be(bytes: &[u8; $nb]) -> subtle::CtOption<Self> {
                let mut le = *bytes;
                le.reverse();
                Self::from_bytes_le(&le)
            }

            /// Inverts every nonzero element in place with a single field inversion
            /// (Montgomery's trick); zeros stay zero. Returns whether all were nonzero.
            /// Constant time in the values.
            #[cfg(feature = "alloc")]
            pub fn batch_invert(v: &mut [Self]) -> subtle::Choice {
                crate::arith::batch_invert(v)
            }

            #[inline]
            fn add_impl(&self, rhs: &Self) -> Self {
                Self(crate::arith::add_mod(&self.0, &rhs.0, &Self::MODULUS_LIMBS))
            }

            #[inline]
            fn sub_impl(&self, rhs: &Self) -> Self {
                Self(crate::arith::sub_mod(&self.0, &rhs.0, &Self::MODULUS_LIMBS))
            }

            #[inline]
            fn neg_impl(&self) -> Self {
                Self(crate::arith::neg_mod(&self.0, &Self::MODULUS_LIMBS))
            }

            #[inline]
            fn mul_impl(&self, rhs: &Self) -> Self {
                Self(crate::arith::mont_mul(
                    &self.0,
                    &rhs.0,
                    &Self::MODULUS_LIMBS,
                    Self::INV,
                ))
            }
        }

        impl_field_ops!($t);

        impl subtle::ConstantTimeEq for $t {
            #[inline]
            fn ct_eq(&self, other: &Self) -> subtle::Choice {
                subtle::ConstantTimeEq::ct_eq(&self.0[..], &other.0[..])
            }
        }

        impl subtle::ConditionallySelectable for $t {
            #[inline]
            fn conditional_select(a: &Self, b: &Self, choice: subtle::Choice) -> Self {
                let mut out = [0u64; $n];
                for i in 0..$n {
                    out[i] = u64::conditional_select(&a.0[i], &b.0[i], choice);
                }
                Self(out)
            }
        }

        impl core::fmt::Display for $t {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("0x")?;
                for b in self.to_bytes_be() {
                    write!(f, "{:02x}", b)?;
                }
                Ok(())
            }
        }

        impl ff::Field for $t {
            const ZERO: Self = Self([0; $n]);
            const ONE: Self = Self($r);

            fn random(mut rng: impl rand_core::RngCore) -> Self {
                // 128N - 2 uniform bits reduced mod m: bias below 2^-(64N - 2) / m.
                let mut lo = [0u64; $n];
                let mut hi = [0u64; $n];
                for limb in lo.iter_mut().chain(hi.iter_mut()) {
                    *limb = rng.next_u64();
                }
                lo[$n - 1] >>= 1;
                hi[$n - 1] >>= 1;
                Self(crate::arith::from_wide(
                    &lo,
                    &hi,
                    &Self::R2_LIMBS,
                    &Self::WIDE,
                    &Self::MODULUS_LIMBS,
                    Self::INV,
                ))
            }

            #[inline]
            fn square(&self) -> Self {
                Self(crate::arith::mont_sqr(
                    &self.0,
                    &Self::MODULUS_LIMBS,
                    Self::INV,
                ))
            }

            #[inline]
            fn double(&self) -> Self {
                self.add_impl(self)
            }

            /// Constant time (Bernstein and Yang's safegcd, in the crate's `safegcd` module).
            fn invert(&self) -> subtle::CtOption<Self> {
                // The stored limbs a R invert as an integer to a^-1 R^-1; two products by
                // R^2, each dividing by R, make it a^-1 R: the Montgomery form of a^-1.
                let inv = crate::safegcd::invert(&self.0, &Self::SAFEGCD);
                let (m, k) = (&Self::MODULUS_LIMBS, Self::INV);
                let inv = crate::arith::mont_mul(&inv, &Self::R2_LIMBS, m, k);
                let inv = crate::arith::mont_mul(&inv, &Self::R2_LIMBS, m, k);
                subtle::CtOption::new(Self(inv), !ff::Field::is_zero(self))
            }

            fn sqrt(&self) -> subtle::CtOption<Self> {
                self.sqrt_impl()
            }

            fn sqrt_ratio(num: &Self, div: &Self) -> (subtle::Choice, Self) {
                ff::helpers::sqrt_ratio_generic(num, div)
            }
        }

        impl ff::PrimeField for $t {
            type Repr = $repr;

            fn from_repr(repr: Self::Repr) -> subtle::CtOption<Self> {
                let mut bytes = [0u8; $nb];
                bytes.copy_from_slice(repr.as_ref());
                Self::from_bytes_le(&bytes)
            }

            fn to_repr(&self) -> Self::Repr {
                self.to_bytes_le().into()
            }

            fn is_odd(&self) -> subtle::Choice {
                subtle::Choice::from((self.to_canonical_limbs()[0] & 1) as u8)
            }

            const MODULUS: &'static str = $modulus_str;
            const NUM_BITS: u32 = $num_bits;
            const CAPACITY: u32 = $num_bits - 1;
            const TWO_INV: Self = Self($two_inv);
            const MULTIPLICATIVE_GENERATOR: Self = Self($gen);
            const S: u32 = $s;
            const ROOT_OF_UNITY: Self = Self($rou);
            const ROOT_OF_UNITY_INV: Self = Self($rou_inv);
            const DELTA: Self = Self($delta);
        }

        impl ff::PrimeFieldBits for $t {
            type ReprBits = [u64; $n];

            fn to_le_bits(&self) -> ff::FieldBits<Self::ReprBits> {
                ff::FieldBits::new(self.to_canonical_limbs())
            }

            fn char_le_bits() -> ff::FieldBits<Self::ReprBits> {
                ff::FieldBits::new(Self::MODULUS_LIMBS)
            }
        }

        #[cfg(feature = "serde")]
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                crate::serde_bytes::serialize(&self.to_bytes_le(), s)
            }
        }

        #[cfg(feature = "serde")]
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let bytes: [u8; $nb] = crate::serde_bytes::deserialize(d)?;
                Option::from(Self::from_bytes_le(&bytes)).ok_or_else(|| {
                    <D::Error as serde::de::Error>::custom("non-canonical field element")
                })
            }
        }

        #[cfg(feature = "blst")]
        impl From<$t> for blst::$blst {
            #[inline]
            fn from(v: $t) -> Self {
                blst::$blst { l: v.0 }
            }
        }

        #[cfg(feature = "blst")]
        impl From<blst::$blst> for $t {
            /// blst keeps elements reduced in the same Montgomery form, so this is a copy.
            #[inline]
            fn from(v: blst::$blst) -> Self {
                Self(v.l)
            }
        }
    };
}
