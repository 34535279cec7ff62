//! Conversions between the group types and blst's. The layouts agree (affine (0, 0) identity,
//! Jacobian with Z = 0 identity, Montgomery limbs), so these are coordinate copies. Values from
//! blst are trusted to be reduced, as blst keeps them.
//!
//! Also compiled for this crate's tests, which compare against blst.

use crate::curve::{Affine, Jacobian};
use crate::{Fq, Fq2, G1Affine, G1Projective, G2Affine, G2Projective};
use blst::{blst_fp, blst_fp2, blst_p1, blst_p1_affine, blst_p2, blst_p2_affine};

/// Limb copies between a coordinate field and blst's type for it.
trait BlstCoordinate: Sized {
    type Blst;
    fn from_blst(b: &Self::Blst) -> Self;
    fn to_blst(&self) -> Self::Blst;
}

impl BlstCoordinate for Fq {
    type Blst = blst_fp;
    fn from_blst(b: &blst_fp) -> Self {
        Fq::from_mont_limbs_unchecked(b.l)
    }
    fn to_blst(&self) -> blst_fp {
        blst_fp {
            l: self.mont_limbs(),
        }
    }
}

impl BlstCoordinate for Fq2 {
    type Blst = blst_fp2;
    fn from_blst(b: &blst_fp2) -> Self {
        Fq2::from_mont_limbs_unchecked([b.fp[0].l, b.fp[1].l])
    }
    fn to_blst(&self) -> blst_fp2 {
        blst_fp2 {
            fp: [self.c0.to_blst(), self.c1.to_blst()],
        }
    }
}

/// `From` both ways for one group's affine and Jacobian types.
macro_rules! blst_point_conversions {
    ($affine:ident, $blst_affine:ident, $proj:ident, $blst_proj:ident) => {
        impl From<$blst_affine> for $affine {
            fn from(p: $blst_affine) -> Self {
                Self(Affine {
                    x: BlstCoordinate::from_blst(&p.x),
                    y: BlstCoordinate::from_blst(&p.y),
                })
            }
        }

        impl From<$affine> for $blst_affine {
            fn from(p: $affine) -> Self {
                Self {
                    x: p.0.x.to_blst(),
                    y: p.0.y.to_blst(),
                }
            }
        }

        impl From<$blst_proj> for $proj {
            fn from(p: $blst_proj) -> Self {
                Self(Jacobian {
                    x: BlstCoordinate::from_blst(&p.x),
                    y: BlstCoordinate::from_blst(&p.y),
                    z: BlstCoordinate::from_blst(&p.z),
                })
            }
        }

        impl From<$proj> for $blst_proj {
            fn from(p: $proj) -> Self {
                Self {
                    x: p.0.x.to_blst(),
                    y: p.0.y.to_blst(),
                    z: p.0.z.to_blst(),
                }
            }
        }
    };
}

blst_point_conversions!(G1Affine, blst_p1_affine, G1Projective, blst_p1);
blst_point_conversions!(G2Affine, blst_p2_affine, G2Projective, blst_p2);
