//! BLS12-381 arithmetic for sluice: the scalar field `Fr`, the base field `Fq`, its quadratic
//! extension `Fq2`, and the groups G1 and G2.
//!
//! Elements are stored in Montgomery form with little-endian 64-bit limbs, the same layout the
//! OpenCL kernels use (as 32-bit limbs), so buffers cross the host/device boundary unconverted
//! ([`PlainLimbs`]).
//!
//! It also holds the small vocabulary the crates above share, so that the backend trait
//! depends on this crate alone: [`CurveGroup`] / [`CurveAffine`] (G1 and G2 for generic
//! MSMs), [`NttOrder`], the roots of unity and domain sizes of every NTT ([`root_of_unity`],
//! [`domain_for`]) and, with `alloc`, [`Density`].
#![no_std]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

#[macro_use]
mod macros;
#[cfg(target_arch = "x86_64")]
mod adx;
mod arith;
mod safegcd;
#[cfg(feature = "serde")]
mod serde_bytes;

mod fq;
mod fq2;
mod fq_modulus;
mod fr;
mod fr_compatible;

pub use fq::{Fq, FqRepr};
pub use fq2::Fq2;
pub use fr::Fr;
pub use fr_compatible::FrCompatible;

#[macro_use]
mod curve;
#[cfg(any(feature = "blst", test))]
mod blst_conv;
#[cfg(feature = "blstrs")]
mod blstrs_conv;
mod encoding;
mod g1;
mod g2;

pub use encoding::DecodeError;
pub use g1::{G1Affine, G1Compressed, G1Projective, G1Uncompressed};
pub use g2::{G2Affine, G2Compressed, G2Projective, G2Uncompressed};

mod curve_group;
#[cfg(feature = "alloc")]
mod density;
mod domain;
mod limbs;
mod ntt_order;

pub use curve_group::{CurveAffine, CurveGroup, GroupKind};
#[cfg(feature = "alloc")]
pub use density::{Density, DensityError};
pub use domain::{domain_for, max_domain_log_size, root_of_unity, DomainError, RootOfUnity};
pub use limbs::PlainLimbs;
pub use ntt_order::NttOrder;
