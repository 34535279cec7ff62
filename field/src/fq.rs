//! The BLS12-381 base field `Fq` (p = 0x1a01…aaab, 381 bits, p ≡ 3 mod 4).

use subtle::{Choice, ConstantTimeEq, CtOption};

/// An element of the base field of BLS12-381, in Montgomery form (R = 2^384) with
/// little-endian limbs, always fully reduced: the layout of blst's `blst_fp`.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Fq(pub(crate) [u64; 6]);

/// Canonical little-endian encoding of an [`Fq`] (`ff::PrimeField::Repr`); a newtype because
/// 48-byte arrays have no `Default`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqRepr(pub [u8; 48]);

impl Default for FqRepr {
    fn default() -> Self {
        Self([0; 48])
    }
}

impl AsRef<[u8]> for FqRepr {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl AsMut<[u8]> for FqRepr {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

impl From<[u8; 48]> for FqRepr {
    fn from(bytes: [u8; 48]) -> Self {
        Self(bytes)
    }
}

impl_prime_field! {
    name: Fq,
    limbs: 6,
    bytes: 48,
    repr: FqRepr,
    modulus: crate::fq_modulus::MODULUS,
    modulus_str: "0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab",
    num_bits: 381,
    safegcd_limbs: 7,
    r: [
        0x760900000002fffd, 0xebf4000bc40c0002, 0x5f48985753c758ba,
        0x77ce585370525745, 0x5c071a97a256ec6d, 0x15f65ec3fa80e493,
    ],
    r2: [
        0xf4df1f341c341746, 0x0a76e6a609d104f1, 0x8de5476c4c95b6d5,
        0x67eb88a9939d83c0, 0x9a793e85b519952d, 0x11988fe592cae3aa,
    ],
    wide: [
        0x76a45635eca650f0, 0x98afc18f01d3d6fc, 0xcd299a9530af14ee,
        0x1a60272f490f0bb0, 0x92896a1ab2b92394, 0x05531a3048baaea6,
    ],
    inv: crate::fq_modulus::INV,
    s: 1,
    // 2 (a quadratic non-residue: p ≡ 3 mod 8), in Montgomery form.
    generator: [
        0x321300000006554f, 0xb93c0018d6c40005, 0x57605e0db0ddbb51,
        0x8b256521ed1f9bcb, 0x6cf28d7901622c03, 0x11ebab9dbb81e28c,
    ],
    // 2^((p - 1) / 2) = -1, its own inverse.
    root_of_unity: [
        0x43f5fffffffcaaae, 0x32b7fff2ed47fffd, 0x07e83a49a2e99d69,
        0xeca8f3318332bb7a, 0xef148d1ea0f4c069, 0x040ab3263eff0206,
    ],
    root_of_unity_inv: [
        0x43f5fffffffcaaae, 0x32b7fff2ed47fffd, 0x07e83a49a2e99d69,
        0xeca8f3318332bb7a, 0xef148d1ea0f4c069, 0x040ab3263eff0206,
    ],
    two_inv: [
        0x1804000000015554, 0x855000053ab00001, 0x633cb57c253c276f,
        0x6e22d1ec31ebb502, 0xd3916126f2d14ca2, 0x17fbb8571a006596,
    ],
    // 2^2 = 4
    delta: [
        0xaa270000000cfff3, 0x53cc0032fc34000a, 0x478fe97a6b0a807f,
        0xb1d37ebee6ba24d7, 0x8ec9733bbf78ab2f, 0x09d645513d83de7e,
    ],
    blst: blst_fp,
}

impl Fq {
    /// `(p + 1) / 4`: since p ≡ 3 mod 4, `a^((p+1)/4)` is a square root of any square `a`.
    pub(crate) const SQRT_EXP: [u64; 6] =
        crate::arith::add_small(crate::arith::shr(Self::MODULUS_LIMBS, 2), 1);
    /// `(p - 1) / 2` (canonical limbs): the largest "non-negative" value of the ZCash rule.
    pub(crate) const HALF: [u64; 6] = crate::arith::shr(Self::MODULUS_LIMBS, 1);

    /// `a^((p+1)/4)`, accepted only if it squares back to `a`.
    fn sqrt_impl(&self) -> CtOption<Self> {
        let s = crate::arith::pow_public(self, &Self::SQRT_EXP);
        CtOption::new(s, ff::Field::square(&s).ct_eq(self))
    }

    /// Whether the canonical value exceeds `(p - 1) / 2` (the ZCash/IETF sign of `y`).
    pub fn lexicographically_largest(&self) -> Choice {
        crate::arith::lt(&Self::HALF, &self.to_canonical_limbs())
    }
}
