//! The error type of every fallible Groth16 operation.

use bellpepper_core::SynthesisError;
use sluice_backend::BackendError;
use sluice_field::DecodeError;

/// Why a setup, proof, verification or file operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Groth16Error {
    /// The verifier was given a different number of public inputs than the verifying key has.
    #[error("wrong number of public inputs: the verifying key expects {expected}, got {got}")]
    PublicInputCount {
        /// Public inputs the key expects (not counting the constant one).
        expected: usize,
        /// Public inputs given.
        got: usize,
    },
    /// The witness does not satisfy the circuit; names the first failing constraint.
    #[error("the circuit is not satisfied: constraint #{index} `{name}` fails (a*b != c)")]
    Unsatisfied {
        /// Index of the constraint in synthesis order.
        index: usize,
        /// Its name, with the namespace path (`outer/inner/name`).
        name: String,
    },
    /// A part of a forked synthesis ([`Fork`](crate::Fork)) could not be synthesized or
    /// does not fit the others: it failed, it does not repeat the prefix, or its prefix
    /// holds other values than part 0's.
    #[error("fork part {part}: {reason}")]
    Fork {
        /// The part's index.
        part: usize,
        /// What went wrong.
        reason: String,
    },
    /// A pass proving several partitions together ([`prove_pass`](crate::phases::prove_pass))
    /// failed in its shared work (a device fault, a damaged parameter point): every
    /// partition of the pass fails; the first carries the cause itself, the others this.
    #[error("the pass of {partitions} partitions this one was proved in failed: {cause}")]
    PassFailed {
        /// Partitions in the pass.
        partitions: usize,
        /// The cause, as the first partition's error says it.
        cause: String,
    },
    /// The parameters were made for a different circuit shape.
    #[error("parameters do not match the circuit: {what} is {params} in the parameters, but the circuit needs {circuit}")]
    ParameterMismatch {
        /// Which quantity differs.
        what: &'static str,
        /// The parameters' figure.
        params: usize,
        /// The circuit's figure.
        circuit: usize,
    },
    /// A witness synthesis with recorded [`ConstraintMatrices`](crate::ConstraintMatrices)
    /// found another circuit shape than the matrices'.
    #[error("constraint matrices do not match the circuit: {what} is {matrices} in the matrices, but the circuit has {circuit}")]
    MatricesMismatch {
        /// Which quantity differs.
        what: &'static str,
        /// The matrices' figure.
        matrices: usize,
        /// The circuit's figure.
        circuit: usize,
    },
    /// More variables of a kind than recorded constraint matrices index (2^31).
    #[error("the circuit has more than 2^31 {what}, more than constraint matrices can index")]
    TooManyVariables {
        /// Which variables: inputs or auxiliary variables.
        what: &'static str,
    },
    /// The circuit's synthesis failed (a missing assignment, a division by zero, ...).
    #[error("synthesis failed: {0}")]
    Synthesis(#[from] SynthesisError),
    /// The compute backend failed.
    #[error("backend error: {0}")]
    Backend(#[from] BackendError),
    /// A host MSM (the verifier's) refused its inputs.
    #[error("MSM error: {0}")]
    Msm(sluice_msm::MsmError),
    /// The circuit has more constraints than a BLS12-381 NTT domain can hold (2^32).
    #[error("the circuit has {constraints} constraints; the largest NTT domain holds 2^32")]
    CircuitTooLarge {
        /// Constraints, counting one per public input.
        constraints: usize,
    },
    /// The toxic waste was degenerate (a zero, or tau on the domain); draw it again.
    #[error("degenerate setup randomness: {0}")]
    DegenerateSetup(&'static str),
    /// Data ended before the expected item.
    #[error("truncated data at byte offset {offset}: expected {expected}")]
    Truncated {
        /// Where the missing item starts.
        offset: u64,
        /// What was expected there.
        expected: String,
    },
    /// A point failed to decode.
    #[error("invalid {what} at byte offset {offset}: {source}")]
    InvalidPoint {
        /// Where the point starts.
        offset: u64,
        /// Which point.
        what: String,
        /// Why it was rejected.
        source: DecodeError,
    },
    /// A point is the identity where the format forbids it.
    #[error("{what} at byte offset {offset} is the point at infinity, which is not allowed there")]
    PointAtInfinity {
        /// Where the point starts.
        offset: u64,
        /// Which point.
        what: String,
    },
    /// Constraint matrices' bytes that [`ConstraintMatrices::read`](crate::ConstraintMatrices::read)
    /// refuses: a wrong magic, version or checksum, or an item no recording writes.
    #[error("invalid constraint matrices at byte offset {offset}: {what}")]
    InvalidMatrices {
        /// Where the item at fault starts.
        offset: u64,
        /// What is wrong with it.
        what: String,
    },
    /// Bytes remain after a complete item where none are allowed.
    #[error("{extra} unexpected trailing bytes after {what} at byte offset {offset}")]
    TrailingBytes {
        /// Where the trailing bytes start.
        offset: u64,
        /// What was read before them.
        what: &'static str,
        /// How many there are.
        extra: u64,
    },
    /// An I/O error other than a premature end.
    #[error("I/O error at byte offset {offset}: {source}")]
    Io {
        /// Bytes read or written before the error.
        offset: u64,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl From<sluice_msm::MsmError> for Groth16Error {
    fn from(e: sluice_msm::MsmError) -> Self {
        Groth16Error::Msm(e)
    }
}

/// For code typed for bellperson's `io::Result` (`params.write(w)?` in a function returning
/// `io::Result`): the error keeps its kind where it was an I/O error, and is `InvalidData`
/// otherwise, with the whole error (offsets, items) as its message and source.
impl From<Groth16Error> for std::io::Error {
    fn from(e: Groth16Error) -> Self {
        let kind = match &e {
            Groth16Error::Io { source, .. } => source.kind(),
            Groth16Error::Truncated { .. } => std::io::ErrorKind::UnexpectedEof,
            _ => std::io::ErrorKind::InvalidData,
        };
        std::io::Error::new(kind, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A helper typed for bellperson's `io::Result` takes sluice's errors through `?`.
    #[test]
    fn errors_convert_to_io_errors_with_their_kind() {
        fn save(fail: Groth16Error) -> std::io::Result<()> {
            Err(fail)?;
            Ok(())
        }
        let truncated = Groth16Error::Truncated {
            offset: 7,
            expected: "the h query".into(),
        };
        let err = save(truncated).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
        assert!(err.to_string().contains("7"), "{err}");
        let io = Groth16Error::Io {
            offset: 3,
            source: std::io::Error::new(std::io::ErrorKind::PermissionDenied, "no"),
        };
        assert_eq!(
            save(io).unwrap_err().kind(),
            std::io::ErrorKind::PermissionDenied
        );
        let other = Groth16Error::DegenerateSetup("tau on the domain");
        assert_eq!(
            save(other).unwrap_err().kind(),
            std::io::ErrorKind::InvalidData
        );
    }
}
