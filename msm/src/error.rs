//! [`MsmError`], what the MSM entry points return when their inputs are wrong.

use core::fmt;

use sluice_field::DensityError;

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
    /// An index past the end of a [`Density`](crate::Density).
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
    /// [`MsmConfig::window_bits`](crate::MsmConfig::window_bits) outside the supported range.
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
