//! Pippenger multi-scalar multiplication for BLS12-381 G1 and G2 on the CPU.
//!
//! `sum_i scalars[i] * bases[i]` with signed-digit windows (2^(c-1) buckets per window),
//! buckets filled by batch affine additions (one inversion shared by a batch), windows
//! processed in parallel with rayon under the `parallel` feature, and a fast path that
//! drops zero scalars and sums the bases of scalars equal to one directly. Bellperson's
//! density semantics are supported through [`Density`].
//!
//! One implementation serves both groups through [`MsmCurve`]; [`msm_g1_vartime`] and [`msm_g2_vartime`] are
//! the concrete entry points.
//!
//! # Security
//! Everything here is **variable time** in the scalars and in the points: which bucket a
//! digit selects, whether a scalar is 0 or 1, whether two points are equal, all steer
//! branches and memory accesses. For a prover that is the accepted practice (bellperson,
//! arkworks, gnark, blst's `mult` all do the same): the MSM inputs are the witness-dependent
//! scalars of a *single* proof computed on the prover's own machine, so there is no remote
//! observer who can time many runs, and Groth16's zero-knowledge comes from the random
//! `r`, `s` blinding added afterwards, not from the MSM being constant time. Do not use these
//! functions where an attacker can measure timing (or cache behaviour) of an MSM over
//! long-term secrets, e.g. in a signing or key-generation service; use the constant-time
//! scalar multiplication of `sluice-field` there.
#![no_std]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod batch;
mod config;
mod error;
mod pippenger;
mod sample;
#[cfg(test)]
mod tests;

pub use config::{Buckets, MsmConfig};
pub use error::MsmError;
pub use sample::random_points;
/// The group operations Pippenger needs: sluice-field's [`CurveGroup`](sluice_field::CurveGroup)
/// (kept under this name, where it was first defined).
pub use sluice_field::CurveGroup as MsmCurve;
pub use sluice_field::{Density, DensityError};
use sluice_field::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

/// `sum_k scalars[var_k] * bases[k]`: the multi-scalar multiplication over any [`MsmCurve`].
///
/// Without a density, `bases.len() == scalars.len()` and `var_k = k`. With a density, the
/// scalars cover all variables (`scalars.len() == density.len()`), the bases only the used
/// ones (`bases.len() == density.count_ones()`), and `var_k` is the position of the `k`-th set
/// bit. Other lengths give [`MsmError::LengthMismatch`]. Empty inputs give the identity.
/// Identity bases are allowed (they contribute nothing).
///
/// # Memory
/// Besides the inputs: 44 bytes per term whose scalar is neither 0 nor 1 (recoded scalar and
/// base index), 4 bytes per scalar-one term, and per thread the buckets of one window (at most
/// a few MiB at the window widths the cost model picks).
///
/// # Security
/// Variable time in the scalars and the points; see the [crate documentation](crate) for why
/// that is the accepted practice for a prover and where it is not acceptable.
pub fn msm_vartime<C: MsmCurve>(
    bases: &[C::Affine],
    scalars: &[Fr],
    density: Option<&Density>,
) -> Result<C, MsmError> {
    msm_with_config_vartime(bases, scalars, density, &MsmConfig::default())
}

/// [`msm_vartime`] with explicit tuning knobs.
///
/// Returns [`MsmError::InvalidWindow`] for a window outside 4..=20 bits, otherwise as [`msm_vartime`].
///
/// # Security
/// Variable time in the scalars and the points, as [`msm_vartime`].
pub fn msm_with_config_vartime<C: MsmCurve>(
    bases: &[C::Affine],
    scalars: &[Fr],
    density: Option<&Density>,
    config: &MsmConfig,
) -> Result<C, MsmError> {
    pippenger::check_lengths(bases.len(), scalars.len(), density)?;
    if let Some(bits) = config.window_bits {
        if !(pippenger::MIN_WINDOW..=pippenger::MAX_WINDOW).contains(&bits) {
            return Err(MsmError::InvalidWindow {
                bits,
                min: pippenger::MIN_WINDOW,
                max: pippenger::MAX_WINDOW,
            });
        }
    }
    Ok(pippenger::msm::<C>(bases, scalars, density, config))
}

/// Multi-scalar multiplication in G1; see [`msm_vartime`] for lengths and density.
///
/// # Security
/// Variable time in the scalars and the points (prover use: see the
/// [crate documentation](crate)).
pub fn msm_g1_vartime(
    bases: &[G1Affine],
    scalars: &[Fr],
    density: Option<&Density>,
) -> Result<G1Projective, MsmError> {
    msm_vartime::<G1Projective>(bases, scalars, density)
}

/// Multi-scalar multiplication in G2; see [`msm_vartime`] for lengths and density.
///
/// # Security
/// Variable time in the scalars and the points (prover use: see the
/// [crate documentation](crate)).
pub fn msm_g2_vartime(
    bases: &[G2Affine],
    scalars: &[Fr],
    density: Option<&Density>,
) -> Result<G2Projective, MsmError> {
    msm_vartime::<G2Projective>(bases, scalars, density)
}
