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

    /// The "complex method" for p = 3 mod 4: with s = sqrt(a0^2 + a1^2) in Fq (the norm of
    /// a square is a square) and y = d^((p+1)/4) for d = (a0 + s)/2, the root is
    /// y + a1/(2y) u where y^2 = d, and a1/(2y) + y u where d is a non-square (then
    /// y^2 = -d). Two Fq exponentiations and one inversion, every case selected in constant
    /// time, the result checked by squaring (which rejects non-squares).
    fn sqrt(&self) -> CtOption<Self> {
        use ff::PrimeField;
        let (a0, a1) = (self.c0, self.c1);
        let s = crate::arith::pow_public(&(a0.square() + a1.square()), &Fq::SQRT_EXP);
        let plus = (a0 + s) * Fq::TWO_INV;
        // d = 0 only where a1 = 0 and s = -a0; (a0 - s)/2 = a0 is the right d there.
        let d = Fq::conditional_select(&plus, &((a0 - s) * Fq::TWO_INV), plus.is_zero());
        let y = crate::arith::pow_public(&d, &Fq::SQRT_EXP);
        let other = a1 * y.double().invert().unwrap_or(Fq::ZERO);
        let y_is_root = y.square().ct_eq(&d);
        let x = Self {
            c0: Fq::conditional_select(&other, &y, y_is_root),
            c1: Fq::conditional_select(&y, &other, y_is_root),
        };
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

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// The square root's cases: a1 = 0 with a0 a square or not (the root then in Fq or in
    /// Fq u, and (a0 + s)/2 possibly zero), a0 = 0, zero, and random squares and
    /// non-squares.
    #[test]
    fn square_roots_of_every_case() {
        let seed = 0xf2_5127;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let fq = |v: u64| Fq::from_u64(v);
        let mut cases = std::vec![Fq2::ZERO, Fq2::ONE, -Fq2::ONE];
        for v in [2u64, 3, 4, 5, 7, 9, 11] {
            for (c0, c1) in [
                (fq(v), Fq::ZERO),
                (-fq(v), Fq::ZERO),
                (Fq::ZERO, fq(v)),
                (Fq::ZERO, -fq(v)),
            ] {
                cases.push(Fq2 { c0, c1 });
            }
        }
        for _ in 0..200 {
            let x = Fq2::random(&mut rng);
            cases.extend([
                x,
                x.square(),
                Fq2 {
                    c0: x.c0,
                    c1: Fq::ZERO,
                }
                .square(),
            ]);
        }
        let (mut roots, mut none) = (0, 0);
        for (i, a) in cases.iter().enumerate() {
            match Option::<Fq2>::from(a.sqrt()) {
                Some(r) => {
                    assert_eq!(r.square(), *a, "case {i}: {a:?}, seed {seed:#x}");
                    roots += 1;
                }
                None => {
                    // Not a square: its norm's Legendre symbol is -1.
                    let norm = a.c0.square() + a.c1.square();
                    let legendre = crate::arith::pow_public(&norm, &Fq::HALF);
                    assert_eq!(
                        legendre,
                        -Fq::ONE,
                        "case {i}: {a:?} has a root, seed {seed:#x}"
                    );
                    none += 1;
                }
            }
        }
        assert!(
            roots > 400 && none > 50,
            "{roots} roots, {none} non-squares"
        );
    }
}
