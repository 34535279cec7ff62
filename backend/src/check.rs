//! Argument checks every backend shares, written once: lengths, ranges and segments.

use crate::BackendError;

/// `Ok` when two lengths agree, else [`BackendError::LengthMismatch`] naming `what`.
pub fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), BackendError> {
    if expected == got {
        Ok(())
    } else {
        Err(BackendError::LengthMismatch {
            what,
            expected,
            got,
        })
    }
}

/// `Ok` when `offset..offset + count` lies within a buffer of `len` elements (without
/// overflowing), else [`BackendError::LengthMismatch`]: the check of every partial read and
/// write, and of an upload's data against its padded length.
pub fn check_range(
    what: &'static str,
    len: usize,
    offset: usize,
    count: usize,
) -> Result<(), BackendError> {
    match offset.checked_add(count) {
        Some(end) if end <= len => Ok(()),
        _ => Err(BackendError::LengthMismatch {
            what,
            expected: len.saturating_sub(offset),
            got: count,
        }),
    }
}

/// `Ok` when `segment` is non-zero and divides `len`, as every segmented operation needs,
/// else [`BackendError::InvalidInput`] naming `what`.
pub fn check_segment(what: &str, len: usize, segment: usize) -> Result<(), BackendError> {
    if segment != 0 && len % segment == 0 {
        Ok(())
    } else {
        Err(BackendError::InvalidInput(format!(
            "{what}: segment {segment} does not divide the buffer length {len}"
        )))
    }
}

/// [`check_segment`], and `segment` a power of two, as the segmented transforms need.
pub fn check_pow2_segment(what: &str, len: usize, segment: usize) -> Result<(), BackendError> {
    if segment.is_power_of_two() && len % segment == 0 {
        Ok(())
    } else {
        Err(BackendError::InvalidInput(format!(
            "{what}: segment {segment} must be a power of two dividing the buffer length {len}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_within_the_buffer_pass_and_others_name_the_operation() {
        assert!(check_range("r", 10, 0, 10).is_ok());
        assert!(check_range("r", 10, 10, 0).is_ok());
        for (offset, count) in [(0, 11), (9, 2), (11, 0), (usize::MAX, 1)] {
            assert!(
                matches!(
                    check_range("r", 10, offset, count),
                    Err(BackendError::LengthMismatch { what: "r", .. })
                ),
                "{offset} + {count} in 10"
            );
        }
    }

    #[test]
    fn segments_must_divide_and_transform_segments_be_powers_of_two() {
        for (len, segment, divides, power) in [
            (12, 3, true, false),
            (12, 4, true, true),
            (12, 5, false, false),
            (12, 0, false, false),
            (0, 1, true, true),
            (16, 32, false, false),
        ] {
            assert_eq!(
                check_segment("s", len, segment).is_ok(),
                divides,
                "{segment} of {len}"
            );
            assert_eq!(
                check_pow2_segment("s", len, segment).is_ok(),
                power,
                "{segment} of {len}"
            );
        }
        assert!(check_len("l", 3, 3).is_ok());
        assert!(matches!(
            check_len("l", 3, 4),
            Err(BackendError::LengthMismatch {
                what: "l",
                expected: 3,
                got: 4
            })
        ));
    }
}
