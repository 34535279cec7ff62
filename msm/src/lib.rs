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
mod pippenger;
mod sample;
#[cfg(test)]
mod tests;

use core::fmt;

pub use sample::random_points;
/// The group operations Pippenger needs: sluice-field's [`CurveGroup`](sluice_field::CurveGroup)
/// (kept under this name, where it was first defined).
pub use sluice_field::CurveGroup as MsmCurve;
pub use sluice_field::{Density, DensityError};
use sluice_field::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

/// Errors of the MSM entry points.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MsmError {
    /// Input lengths disagree (`what` names the slice and the rule it breaks).
    LengthMismatch {
        /// The slice whose length is wrong, and what it must equal.
        what: &'static str,
        /// The length the other inputs imply.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// An index past the end of a [`Density`].
    IndexOutOfRange {
        /// The index given.
        index: usize,
        /// The density's length.
        len: usize,
    },
    /// More than `u32::MAX` bases (base indices are stored as `u32`).
    TooManyBases {
        /// The number of bases given.
        bases: usize,
    },
    /// [`MsmConfig::window_bits`] outside the supported range.
    InvalidWindow {
        /// The window width asked for.
        bits: usize,
        /// Smallest supported width.
        min: usize,
        /// Largest supported width.
        max: usize,
    },
}

impl fmt::Display for MsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MsmError::LengthMismatch {
                what,
                expected,
                got,
            } => write!(
                f,
                "MSM length mismatch: {what}: expected {expected}, got {got}"
            ),
            MsmError::IndexOutOfRange { index, len } => {
                write!(f, "density index {index} out of range (length {len})")
            }
            MsmError::TooManyBases { bases } => {
                write!(f, "{bases} bases exceed the supported maximum of 2^32 - 1")
            }
            MsmError::InvalidWindow { bits, min, max } => {
                write!(
                    f,
                    "window of {bits} bits outside the supported {min}..={max}"
                )
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for MsmError {}

impl From<DensityError> for MsmError {
    fn from(e: DensityError) -> Self {
        match e {
            DensityError::IndexOutOfRange { index, len } => {
                MsmError::IndexOutOfRange { index, len }
            }
            DensityError::LengthMismatch { expected, got } => MsmError::LengthMismatch {
                what: "values (density length)",
                expected,
                got,
            },
        }
    }
}

/// How buckets accumulate points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buckets {
    /// Jacobian buckets, one mixed addition (7M + 4S) per point.
    Jacobian,
    /// Affine buckets filled by batches of affine additions sharing one inversion
    /// (about 5M + 1S per point), with Jacobian overflow buckets for collisions.
    BatchAffine,
}

/// Tuning knobs for [`msm_with_config_vartime`]. The [`Default`] chooses everything from the input
/// size and the thread count; the knobs exist for benchmarks and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsmConfig {
    /// Window width in bits (4..=20); `None` picks the cheapest by a cost model.
    pub window_bits: Option<usize>,
    /// Bucket strategy; `None` picks the cheapest by the same cost model.
    pub buckets: Option<Buckets>,
    /// Drop zero scalars and add the bases of scalars equal to one directly (a batch affine
    /// addition tree) instead of through Pippenger, whose window then fits the remaining
    /// terms. On by default.
    pub small_scalar_fast_path: bool,
}

impl Default for MsmConfig {
    fn default() -> Self {
        MsmConfig {
            window_bits: None,
            buckets: None,
            small_scalar_fast_path: true,
        }
    }
}

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
