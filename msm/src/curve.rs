//! The few group operations Pippenger needs, so one implementation serves G1 and G2.

use sluice_field::{Fq, Fq2, G1Affine, G1Projective, G2Affine, G2Projective};

/// A short-Weierstrass group (`y^2 = x^3 + b`) in Jacobian coordinates, seen by the MSM.
///
/// Implemented on the projective type, so `msm_vartime::<G1Projective>` takes `&[G1Affine]` bases.
/// Bucket additions use affine coordinates directly (chord-and-tangent with a shared
/// inversion), which is why the coordinate field and `x`/`y` accessors are part of it.
///
/// # Security
/// Every method may run in variable time: the MSM treats its inputs as public (see
/// [`crate::msm_vartime`]).
pub trait MsmCurve: Copy + Send + Sync + 'static {
    /// Affine points (the bases); the identity is a distinguished value.
    type Affine: Copy + Send + Sync + Default;
    /// The coordinate field (`Fq` for G1, `Fq2` for G2).
    type Base: ff::Field;

    /// The identity (point at infinity).
    fn identity() -> Self;
    /// `self + p`, variable time.
    fn add_mixed_vartime(&self, p: &Self::Affine) -> Self;
    /// `self + q`, variable time.
    fn add_vartime(&self, q: &Self) -> Self;
    /// `2 * self`.
    fn double(&self) -> Self;
    /// Whether an affine point is the identity.
    fn affine_is_identity(p: &Self::Affine) -> bool;
    /// The affine coordinates of a point that is not the identity.
    fn affine_xy(p: &Self::Affine) -> (Self::Base, Self::Base);
    /// The affine point `(x, y)`, without any check (the caller computed it on the curve).
    fn affine_from_xy_unchecked(x: Self::Base, y: Self::Base) -> Self::Affine;
}

/// Implements [`MsmCurve`] for one group by delegating to sluice-field's own methods.
macro_rules! impl_msm_curve {
    ($proj:ty, $affine:ty, $base:ty) => {
        impl MsmCurve for $proj {
            type Affine = $affine;
            type Base = $base;

            #[inline]
            fn identity() -> Self {
                <$proj as group::Group>::identity()
            }
            #[inline]
            fn add_mixed_vartime(&self, p: &$affine) -> Self {
                <$proj>::add_mixed_vartime(self, p)
            }
            #[inline]
            fn add_vartime(&self, q: &Self) -> Self {
                <$proj>::add_vartime(self, q)
            }
            #[inline]
            fn double(&self) -> Self {
                <$proj as group::Group>::double(self)
            }
            #[inline]
            fn affine_is_identity(p: &$affine) -> bool {
                bool::from(<$affine>::is_identity(p))
            }
            #[inline]
            fn affine_xy(p: &$affine) -> ($base, $base) {
                (p.x(), p.y())
            }
            #[inline]
            fn affine_from_xy_unchecked(x: $base, y: $base) -> $affine {
                <$affine>::from_xy_unchecked(x, y)
            }
        }
    };
}

impl_msm_curve!(G1Projective, G1Affine, Fq);
impl_msm_curve!(G2Projective, G2Affine, Fq2);
