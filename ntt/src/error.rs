//! The crate's error type.

use core::fmt;

/// Why an NTT operation was refused. Every kernel checks its inputs and returns one of these
/// instead of panicking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NttError {
    /// The requested domain has more than `2^max` points; `max` is the field's 2-adicity
    /// (capped so that the size fits in `usize`).
    DomainTooLarge {
        /// log2 of the requested size (rounded up for [`Domain::for_size`](crate::Domain::for_size)).
        log_size: u32,
        /// The largest supported log2 size.
        max: u32,
    },
    /// A domain of zero points was requested ([`Domain::for_size`](crate::Domain::for_size)`(0)`).
    EmptyDomain,
    /// A buffer's length differs from the size the operation needs.
    LengthMismatch {
        /// The length the operation needs.
        expected: usize,
        /// The length it was given.
        got: usize,
    },
    /// [`bit_reverse_permute`](crate::bit_reverse_permute) was given a length that is not a
    /// power of two.
    NotPowerOfTwo {
        /// The length it was given.
        len: usize,
    },
    /// A four-step split with `log_n1 > log_n`.
    InvalidSplit {
        /// log2 of the transform size.
        log_n: u32,
        /// log2 of the requested column length.
        log_n1: u32,
    },
    /// A four-step column index at or past the number of columns `n2`.
    ColumnOutOfRange {
        /// The column index given.
        column: usize,
        /// The number of columns (`n2`).
        columns: usize,
    },
}

impl fmt::Display for NttError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DomainTooLarge { log_size, max } => write!(
                f,
                "NTT domain of size 2^{log_size} is too large (the field supports at most 2^{max})"
            ),
            Self::EmptyDomain => f.write_str("an NTT domain needs at least one point"),
            Self::LengthMismatch { expected, got } => {
                write!(
                    f,
                    "buffer length {got} does not match the expected {expected}"
                )
            }
            Self::NotPowerOfTwo { len } => write!(f, "length {len} is not a power of two"),
            Self::InvalidSplit { log_n, log_n1 } => write!(
                f,
                "four-step split 2^{log_n} = 2^{log_n1} x 2^(rest) is invalid: log_n1 > log_n"
            ),
            Self::ColumnOutOfRange { column, columns } => {
                write!(
                    f,
                    "column {column} is out of range (there are {columns} columns)"
                )
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for NttError {}
