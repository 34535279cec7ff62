//! The two groups G1 and G2 seen through one pair of traits, so MSMs and backends are
//! written once for both: [`CurveGroup`] for the projective points an MSM sums into,
//! [`CurveAffine`] for the affine bases it reads.
//!
//! Both traits are sealed: a GPU backend dispatches on [`CurveAffine::KIND`] to the kernels
//! of its group and relies on the [`PlainLimbs`] layout, which only these two groups are
//! known to have.

use crate::{DecodeError, Fq, Fq2, Fr, G1Affine, G1Projective, G2Affine, G2Projective, PlainLimbs};

mod sealed {
    /// Implemented for G1 and G2 only.
    pub trait Sealed {}
}

/// Which of the two groups a point type belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupKind {
    /// G1, over `Fq` (the H, L, A and B1 queries of a Groth16 proof).
    G1,
    /// G2, over `Fq2` (the B2 query).
    G2,
}

/// A group (G1 or G2) in Jacobian coordinates, with the few operations Pippenger needs
/// beyond [`group::Curve`].
///
/// Bucket additions use affine coordinates directly (chord-and-tangent with a shared
/// inversion), which is why the coordinate field and `x`/`y` accessors are part of it.
///
/// # Security
/// The methods here run in variable time: MSMs treat their inputs as public.
pub trait CurveGroup:
    sealed::Sealed
    + PlainLimbs
    + group::Curve<Scalar = Fr, AffineRepr = <Self as CurveGroup>::Affine>
    + From<<Self as CurveGroup>::Affine>
{
    /// The affine points (the bases); the identity is `(0, 0)`.
    type Affine: CurveAffine<Group = Self>;
    /// The coordinate field (`Fq` for G1, `Fq2` for G2).
    type Base: ff::Field + PlainLimbs;

    /// `self + p`, variable time.
    fn add_mixed_vartime(&self, p: &Self::Affine) -> Self;
    /// `self + q`, variable time.
    fn add_vartime(&self, q: &Self) -> Self;
    /// Whether an affine point is the identity, variable time.
    fn affine_is_identity(p: &Self::Affine) -> bool;
    /// The affine coordinates of a point that is not the identity.
    fn affine_xy(p: &Self::Affine) -> (Self::Base, Self::Base);
    /// The affine point `(x, y)`, without any check (the caller computed it on the curve).
    fn affine_from_xy_unchecked(x: Self::Base, y: Self::Base) -> Self::Affine;
}

/// The affine points of a group (G1 or G2): what backends keep resident as MSM bases.
pub trait CurveAffine:
    sealed::Sealed + PlainLimbs + Default + PartialEq + core::fmt::Debug + Send + Sync
{
    /// The group in Jacobian coordinates, what an MSM over these bases returns.
    type Group: CurveGroup<Affine = Self>;
    /// Which group this is.
    const KIND: GroupKind;
    /// Bytes of the uncompressed encoding (96 for G1, 192 for G2).
    const UNCOMPRESSED_BYTES: usize;

    /// Decodes an uncompressed encoding as parameter files hold their bases: flags,
    /// canonical coordinates, the curve equation and x != 0, not the subgroup (see
    /// [`G1Affine::decode_uncompressed_on_curve`]).
    ///
    /// # Errors
    /// [`DecodeError`] naming the first check that failed.
    fn decode_uncompressed_on_curve(bytes: &[u8]) -> Result<Self, DecodeError>;
}

/// Implements both traits for one group by delegating to its own methods.
macro_rules! impl_curve_group {
    ($proj:ty, $affine:ty, $base:ty, $kind:expr, $ulen:expr) => {
        impl sealed::Sealed for $proj {}
        impl sealed::Sealed for $affine {}

        impl CurveGroup for $proj {
            type Affine = $affine;
            type Base = $base;

            #[inline]
            fn add_mixed_vartime(&self, p: &$affine) -> Self {
                <$proj>::add_mixed_vartime(self, p)
            }
            #[inline]
            fn add_vartime(&self, q: &Self) -> Self {
                <$proj>::add_vartime(self, q)
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

        impl CurveAffine for $affine {
            type Group = $proj;
            const KIND: GroupKind = $kind;
            const UNCOMPRESSED_BYTES: usize = $ulen;

            fn decode_uncompressed_on_curve(bytes: &[u8]) -> Result<Self, DecodeError> {
                <$affine>::decode_uncompressed_on_curve(bytes)
            }
        }
    };
}

impl_curve_group!(G1Projective, G1Affine, Fq, GroupKind::G1, 96);
impl_curve_group!(G2Projective, G2Affine, Fq2, GroupKind::G2, 192);
