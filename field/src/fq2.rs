//! The quadratic extension `Fq2 = Fq[u] / (u^2 + 1)`.

use crate::fq::Fq;
use ff::Field;
use subtle::{Choice, ConditionallySelectable, ConstantTimeEq, CtOption};

/// An element `c0 + c1 * u` of `Fq2 = Fq[u] / (u^2 + 1)`; the layout of blst's `blst_fp2`.
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Fq2 {
    /// The constant coefficient.
    pub c0: Fq,
    /// The coefficient of `u`.
    pub c1: Fq,
}

impl Fq2 {
    /// Builds an element from the Montgomery-form limbs of `c0` and `c1`, unchecked (see
    /// [`Fq::from_mont_limbs_unchecked`]).
    #[inline]
    pub const fn from_mont_limbs_unchecked(limbs: [[u64; 6]; 2]) -> Self {
        Self {
            c0: Fq::from_mont_limbs_unchecked(limbs[0]),
            c1: Fq::from_mont_limbs_unchecked(limbs[1]),
        }
    }

    /// The Montgomery-form limbs of `c0` and `c1`.
    #[inline]
    pub const fn mont_limbs(&self) -> [[u64; 6]; 2] {
        [self.c0.mont_limbs(), self.c1.mont_limbs()]
    }

    /// The element `v` (in the base field).
    #[inline]
    pub fn from_u64(v: u64) -> Self {
        Self {
            c0: Fq::from_u64(v),
            c1: Fq::ZERO,
        }
    }

    /// `c0 - c1 * u`, the image under the p-power Frobenius.
    #[inline]
    pub fn conjugate(&self) -> Self {
        Self {
            c0: self.c0,
            c1: -self.c1,
        }
    }

    /// Multiplication by the non-residue `u + 1` used to build Fq6.
    #[inline]
    pub fn mul_by_nonresidue(&self) -> Self {
        Self {
            c0: self.c0 - self.c1,
            c1: self.c0 + self.c1,
        }
    }

    /// The `p^power`-Frobenius: the identity for even `power`, conjugation for odd.
    #[inline]
    pub fn frobenius_map(&self, power: usize) -> Self {
        if power % 2 == 1 {
            self.conjugate()
        } else {
            *self
        }
    }

    /// The norm `c0^2 + c1^2` to Fq.
    #[inline]
    pub fn norm(&self) -> Fq {
        self.c0.square() + self.c1.square()
    }

    /// ZCash sign rule: `c1` lexicographically largest if `c1 != 0`, else the rule on `c0`.
    pub fn lexicographically_largest(&self) -> Choice {
        self.c1.lexicographically_largest()
            | (self.c1.is_zero() & self.c0.lexicographically_largest())
    }

    /// Inverts every nonzero element in place with a single field inversion; zeros stay zero.
    /// Returns whether all were nonzero. Constant time in the values.
    #[cfg(feature = "alloc")]
    pub fn batch_invert(v: &mut [Self]) -> Choice {
        crate::arith::batch_invert(v)
    }

    #[inline]
    fn add_impl(&self, rhs: &Self) -> Self {
        Self {
            c0: self.c0 + rhs.c0,
            c1: self.c1 + rhs.c1,
        }
    }

    #[inline]
    fn sub_impl(&self, rhs: &Self) -> Self {
        Self {
            c0: self.c0 - rhs.c0,
            c1: self.c1 - rhs.c1,
        }
    }

    #[inline]
    fn neg_impl(&self) -> Self {
        Self {
            c0: -self.c0,
            c1: -self.c1,
        }
    }

    /// Karatsuba with lazy reduction (as blst does): three double-width products and only
    /// two Montgomery reductions, one per output coefficient.
    #[inline]
    fn mul_impl(&self, rhs: &Self) -> Self {
        use crate::arith::{adc, add_raw, sub_raw, Mont};
        let m = &Fq::MODULUS_LIMBS;
        let (a0, a1, b0, b1) = (&self.c0.0, &self.c1.0, &rhs.c0.0, &rhs.c1.0);
        let aa = Mont::mul_wide(a0, b0);
        let bb = Mont::mul_wide(a1, b1);
        // Unreduced sums (< 2p < 2^382: no carry out), product < 4p^2 < p * 2^384.
        let cc = Mont::mul_wide(&add_raw(a0, a1).0, &add_raw(b0, b1).0);
        // c1 = (a0 + a1)(b0 + b1) - a0 b0 - a1 b1 = a0 b1 + a1 b0 >= 0.
        let c1 = sub_raw(&sub_raw(&cc, &aa).0, &bb).0;
        // c0 = a0 b0 - a1 b1, plus p * 2^384 if negative (masked): then 0 <= c0 < p * 2^384.
        let (mut c0, borrow) = sub_raw(&aa, &bb);
        let mut carry = 0;
        for j in 0..6 {
            (c0[6 + j], carry) = adc(c0[6 + j], m[j] & borrow, carry);
        }
        Self {
            c0: Fq(Mont::redc(c0, m, Fq::INV)),
            c1: Fq(Mont::redc(c1, m, Fq::INV)),
        }
    }
}

impl_field_ops!(Fq2);

impl ConstantTimeEq for Fq2 {
    #[inline]
    fn ct_eq(&self, other: &Self) -> Choice {
        self.c0.ct_eq(&other.c0) & self.c1.ct_eq(&other.c1)
    }
}

impl ConditionallySelectable for Fq2 {
    #[inline]
    fn conditional_select(a: &Self, b: &Self, choice: Choice) -> Self {
        Self {
            c0: Fq::conditional_select(&a.c0, &b.c0, choice),
            c1: Fq::conditional_select(&a.c1, &b.c1, choice),
        }
    }
}

impl core::fmt::Display for Fq2 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} + {}*u", self.c0, self.c1)
    }
}

impl Field for Fq2 {
    const ZERO: Self = Self {
        c0: Fq::ZERO,
        c1: Fq::ZERO,
    };
    const ONE: Self = Self {
        c0: Fq::ONE,
        c1: Fq::ZERO,
    };

    fn random(mut rng: impl rand_core::RngCore) -> Self {
        Self {
            c0: Fq::random(&mut rng),
            c1: Fq::random(&mut rng),
        }
    }

    /// `(c0 + c1)(c0 - c1) + 2 c0 c1 u`: two double-width products, two reductions, with
    /// the operands left unreduced (`c0 - c1` taken as `c0 + p - c1`, in `(0, 2p)`).
    #[inline]
    fn square(&self) -> Self {
        use crate::arith::{add_raw, sub_raw, Mont};
        let m = &Fq::MODULUS_LIMBS;
        let (a0, a1) = (&self.c0.0, &self.c1.0);
        // With Fq's product in assembly: two whole products, each with one unreduced
        // factor below 2p and one reduced.
        #[cfg(target_arch = "x86_64")]
        if crate::adx::available() {
            let product = |x: &[u64; 6], y: &Fq| Fq(crate::arith::mont_mul(x, &y.0, m, Fq::INV));
            return Self {
                c0: product(&add_raw(a0, a1).0, &(self.c0 - self.c1)),
                c1: product(&add_raw(a0, a0).0, &self.c1),
            };
        }
        let sum = add_raw(a0, a1).0;
        let diff = sub_raw(&add_raw(a0, m).0, a1).0;
        // Both products are below 4p^2 < p * 2^384, as redc requires.
        let c0 = Mont::mul_wide(&sum, &diff);
        let prod = Mont::mul_wide(a0, a1);
        let c1 = add_raw(&prod, &prod).0;
        Self {
            c0: Fq(Mont::redc(c0, m, Fq::INV)),
            c1: Fq(Mont::redc(c1, m, Fq::INV)),
        }
    }

    #[inline]
    fn double(&self) -> Self {
        self.add_impl(self)
    }

    /// `conj(a) / norm(a)`.
    fn invert(&self) -> CtOption<Self> {
        self.norm().invert().map(|t| Self {
            c0: self.c0 * t,
            c1: -(self.c1 * t),
        })
    }

    /// Algorithm 9 of Adj & Rodríguez-Henríquez (eprint 2012/685) for p ≡ 3 (mod 4), with
    /// both branches computed and selected, and the result checked by squaring.
    fn sqrt(&self) -> CtOption<Self> {
        let a1 = crate::arith::pow_public(self, &Fq::P_M3_DIV4);
        let alpha = a1.square() * self;
        let x0 = a1 * self;
        let minus_one = -Self::ONE;
        // alpha == -1: the root is u * x0.
        let x_u = Self {
            c0: -x0.c1,
            c1: x0.c0,
        };
        let b = crate::arith::pow_public(&(alpha + Self::ONE), &Fq::HALF);
        let x = Self::conditional_select(&(b * x0), &x_u, alpha.ct_eq(&minus_one));
        CtOption::new(x, x.square().ct_eq(self))
    }

    /// Non-squares are reported with `sqrt((u + 1) * num / div)` (`u + 1` is a non-square in Fq2).
    fn sqrt_ratio(num: &Self, div: &Self) -> (Choice, Self) {
        let a = *num * div.invert().unwrap_or(Self::ZERO);
        let b = a.mul_by_nonresidue();
        let sa = a.sqrt();
        let sb = b.sqrt();
        let is_square = sa.is_some();
        let div_zero_num_nonzero = div.is_zero() & !num.is_zero();
        let root = Self::conditional_select(
            &sb.unwrap_or(Self::ZERO),
            &sa.unwrap_or(Self::ZERO),
            is_square,
        );
        (is_square & !div_zero_num_nonzero, root)
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Fq2 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(&(self.c0, self.c1), s)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Fq2 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (c0, c1) = <(Fq, Fq) as serde::Deserialize<'de>>::deserialize(d)?;
        Ok(Self { c0, c1 })
    }
}

#[cfg(feature = "blst")]
impl From<Fq2> for blst::blst_fp2 {
    #[inline]
    fn from(v: Fq2) -> Self {
        blst::blst_fp2 {
            fp: [v.c0.into(), v.c1.into()],
        }
    }
}

#[cfg(feature = "blst")]
impl From<blst::blst_fp2> for Fq2 {
    #[inline]
    fn from(v: blst::blst_fp2) -> Self {
        Self {
            c0: v.fp[0].into(),
            c1: v.fp[1].into(),
        }
    }
}
