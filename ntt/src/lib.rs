//! Evaluation domains and CPU NTT kernels over a prime field with a large 2-adic subgroup
//! (BLS12-381's scalar field `Fr` has 2-adicity 32).
//!
//! Everything is generic over [`ff::PrimeField`]; sluice instantiates it with
//! `sluice_field::Fr`. The transforms work in place on a slice whose length must equal the
//! [`Domain`]'s size, with the input and output order stated explicitly by [`NttOrder`]:
//!
//! - [`ntt`] / [`intt`]: evaluate on / interpolate from `H = <omega>` (`intt` includes `1/n`);
//! - [`coset_ntt`] / [`coset_intt`]: the same on the coset `g H`, `g` = [`Domain::coset_shift`];
//! - [`transform`]: [`ntt`] or [`intt`] picked by an [`NttDirection`];
//! - [`bit_reverse_permute`], [`distribute_powers`]: the building blocks, public for callers
//!   that stage transforms themselves;
//! - [`FourStepPlan`] and [`four_step_ntt`]: an `n = n1 * n2` decomposition into column and row
//!   passes over buffers the caller holds (the basis for streaming through a small device).
//!
//! The kernels' running time depends only on the sizes, never on the values (given constant-time
//! field arithmetic). The `parallel` feature (default) spreads the work over rayon's pool.
//!
//! The crate is `no_std` but needs `alloc` (twiddle tables and scratch buffers live on the heap);
//! building with `--no-default-features` gives that configuration.
#![no_std]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod domain;
mod error;
mod four_step;
mod ops;
mod par;
mod radix2;
#[cfg(test)]
mod test_util;
mod transforms;

pub use domain::Domain;
// Defined in sluice-field, which the backend trait shares with this crate.
pub use error::NttError;
pub use four_step::{four_step_intt, four_step_ntt, FourStepPlan};
pub use ops::{bit_reverse_permute, distribute_powers};
pub use sluice_field::NttOrder;
pub use transforms::{coset_intt, coset_ntt, intt, ntt, transform, NttDirection};
