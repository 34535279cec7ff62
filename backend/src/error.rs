//! The one error type every backend operation returns.

use sluice_field::DecodeError;

use crate::memory_kind::MemoryKind;

/// Why a backend operation failed.
///
/// Every `ComputeBackend` method returns `Result<_, BackendError>`; no backend panics on bad
/// input and none falls back to another backend on its own.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// An allocation did not fit: the device (or the budget the caller set) has too little
    /// memory left.
    #[error("out of {kind} memory allocating `{what}`: requested {requested} bytes, {available} available")]
    OutOfMemory {
        /// Host or device memory.
        kind: MemoryKind,
        /// The name of the allocation that failed.
        what: String,
        /// Bytes asked for.
        requested: u64,
        /// Bytes that were still available under the limit.
        available: u64,
    },
    /// Two operands (or an operand and a domain) have different lengths.
    #[error("length mismatch in {what}: expected {expected}, got {got}")]
    LengthMismatch {
        /// The operation and operand concerned.
        what: &'static str,
        /// The length required.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// An NTT domain larger than the field (2-adicity 32) or the backend supports.
    #[error("NTT domain of 2^{log_size} elements is too large (maximum 2^{max})")]
    DomainTooLarge {
        /// log2 of the requested domain size.
        log_size: u32,
        /// log2 of the largest supported domain.
        max: u32,
    },
    /// An argument is invalid for a reason other than its length (e.g. an index out of range).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The operation or argument is valid but this backend does not support it.
    #[error("unsupported by this backend: {0}")]
    Unsupported(String),
    /// A base given in its file encoding ([`ComputeBackend::upload_bases_encoded`]) is not a
    /// point the bases may hold; `index` is the first such, counted from the slice's start.
    ///
    /// [`ComputeBackend::upload_bases_encoded`]: crate::ComputeBackend::upload_bases_encoded
    #[error("base {index} of `{what}` is invalid: {defect}")]
    InvalidBase {
        /// The name of the upload.
        what: String,
        /// The index of the first invalid base.
        index: usize,
        /// What is wrong with it.
        defect: BaseDefect,
    },
    /// A device selection in a backend's configuration (e.g. `gpu0`, or an index past the
    /// last device) matches no device of this machine. A configuration error: no driver
    /// call failed, the devices were listed.
    #[error("no device matches the selection `{selector}`; available: {available}")]
    NoMatchingDevice {
        /// The selection asked for, as the backend spells it.
        selector: String,
        /// The devices there are, as the backend lists them (e.g. `0: pthread-cpu (CPU)`).
        available: String,
    },
    /// The driver (OpenCL) reported an error.
    #[error("driver error {code}: {message}{}", build_log.as_deref().map(|l| format!("\nbuild log:\n{l}")).unwrap_or_default())]
    Driver {
        /// The driver's status code (an OpenCL `cl_int`), 0 where none applies.
        code: i32,
        /// What failed.
        message: String,
        /// The compiler's log when a kernel program failed to build.
        build_log: Option<String>,
    },
}

impl From<sluice_field::DensityError> for BackendError {
    fn from(e: sluice_field::DensityError) -> Self {
        match e {
            sluice_field::DensityError::LengthMismatch { expected, got } => {
                BackendError::LengthMismatch {
                    what: "values (density length)",
                    expected,
                    got,
                }
            }
            other => BackendError::InvalidInput(other.to_string()),
        }
    }
}

/// Why an encoded base was refused ([`BackendError::InvalidBase`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BaseDefect {
    /// The encoding does not decode to a point on the curve (flags, a coordinate out of
    /// range, or the curve equation).
    #[error("{0}")]
    Decode(DecodeError),
    /// The encoding is the point at infinity, which no base may be.
    #[error("the point at infinity")]
    Identity,
}
