//! Argument checks every backend shares, written once: lengths, ranges, segments and encodings.

use std::sync::{Mutex, PoisonError};

use crate::{BackendError, BaseDefect, CurveAffine, Density};

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

/// The MSM argument rule of
/// [`ComputeBackend::msm_vartime`](crate::ComputeBackend::msm_vartime), which every backend
/// calls: a `density` covers every scalar (`density.len() == scalars`), and the `bases`
/// resident bases after `skip` cover the used scalars (every scalar without a density, the
/// density's set bits with one). Returns that number of used scalars, the bases the MSM
/// reads from `skip` on.
///
/// `count_used` counts a density's set bits: [`Density::count_ones`](crate::Density::count_ones),
/// or a backend's parallel count where a large density's popcount would hold up a device.
///
/// # Errors
/// [`BackendError::LengthMismatch`]: `"msm scalars (density length)"` when the density's
/// length is not the scalars'; `"msm bases after skip (expected: one per used scalar; got:
/// resident bases minus skip)"` with those two counts when the bases are too few.
pub fn check_msm_bases(
    bases: usize,
    skip: usize,
    scalars: usize,
    density: Option<&Density>,
    count_used: impl FnOnce(&Density) -> usize,
) -> Result<usize, BackendError> {
    if let Some(d) = density {
        check_len("msm scalars (density length)", d.len(), scalars)?;
    }
    let used = density.map_or(scalars, count_used);
    let available = bases.saturating_sub(skip);
    if used > available {
        return Err(BackendError::LengthMismatch {
            what: MSM_BASES_AFTER_SKIP,
            expected: used,
            got: available,
        });
    }
    Ok(used)
}

/// What [`check_msm_bases`]' error names when the bases after `skip` are too few.
const MSM_BASES_AFTER_SKIP: &str =
    "msm bases after skip (expected: one per used scalar; got: resident bases minus skip)";

/// The number of uncompressed encodings of group `A` in `encoded`
/// ([`ComputeBackend::upload_bases_encoded`](crate::ComputeBackend::upload_bases_encoded)), or an error naming `what` unless it is whole
/// encodings.
pub fn encoded_len<A: CurveAffine>(what: &str, encoded: &[u8]) -> Result<usize, BackendError> {
    let size = A::UNCOMPRESSED_BYTES;
    if encoded.len() % size != 0 {
        return Err(BackendError::InvalidInput(format!(
            "`{what}`: {} bytes are not whole {size}-byte encodings",
            encoded.len()
        )));
    }
    Ok(encoded.len() / size)
}

/// Decodes one uncompressed encoding as a base of group `A`
/// ([`ComputeBackend::upload_bases_encoded`](crate::ComputeBackend::upload_bases_encoded)),
/// or says what is wrong with it: the reference every backend's decoder must agree with.
pub fn decode_base<A: CurveAffine>(encoding: &[u8]) -> Result<A, BaseDefect> {
    let p = A::decode_uncompressed_on_curve(encoding).map_err(BaseDefect::Decode)?;
    if <A::Group as sluice_field::CurveGroup>::affine_is_identity(&p) {
        return Err(BaseDefect::Identity);
    }
    Ok(p)
}

/// The item with the lowest index of those offered, from any number of threads: how a
/// parallel decode names the first bad input whichever thread meets it first. Each offer
/// takes a lock, so it is for the rare items (errors), not for every one.
#[derive(Debug)]
pub struct LowestIndexed<T>(Mutex<Option<(usize, T)>>);

impl<T> LowestIndexed<T> {
    /// Nothing offered yet.
    pub fn new() -> Self {
        Self(Mutex::new(None))
    }

    /// Keeps `item` if no item with a lower index was offered.
    pub fn offer(&self, index: usize, item: T) {
        let mut lowest = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if lowest.as_ref().map_or(true, |&(at, _)| index < at) {
            *lowest = Some((index, item));
        }
    }

    /// The lowest-indexed item offered, with its index.
    pub fn into_inner(self) -> Option<(usize, T)> {
        self.0.into_inner().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T> Default for LowestIndexed<T> {
    fn default() -> Self {
        Self::new()
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

    #[test]
    fn msm_bases_after_skip_must_cover_the_used_scalars() {
        let mut density = Density::new(6);
        for i in [0, 2, 5] {
            density.set(i, true).unwrap();
        }
        let count = Density::count_ones;
        // (bases, skip, scalars, density) -> used, or the too-few error's (expected, got).
        for (bases, skip, scalars, density, outcome) in [
            (4, 0, 4, None, Ok(4)),
            (4, 1, 3, None, Ok(3)),
            (4, 2, 3, None, Err((3, 2))),
            (4, 5, 0, None, Ok(0)),
            (4, 5, 1, None, Err((1, 0))),
            (3, 0, 6, Some(&density), Ok(3)),
            (5, 2, 6, Some(&density), Ok(3)),
            (4, 2, 6, Some(&density), Err((3, 2))),
        ] {
            let got = check_msm_bases(bases, skip, scalars, density, count);
            match outcome {
                Ok(used) => assert_eq!(got.unwrap(), used, "{bases} {skip} {scalars}"),
                Err((expected_used, available)) => assert!(
                    matches!(
                        got,
                        Err(BackendError::LengthMismatch { what, expected, got })
                            if what == MSM_BASES_AFTER_SKIP
                                && expected == expected_used
                                && got == available
                    ),
                    "{bases} {skip} {scalars}: {got:?}"
                ),
            }
        }
        // The density must cover every scalar, whatever the bases.
        assert!(matches!(
            check_msm_bases(10, 0, 5, Some(&density), count),
            Err(BackendError::LengthMismatch {
                what: "msm scalars (density length)",
                expected: 6,
                got: 5
            })
        ));
        // The count the caller gives is the one used.
        assert_eq!(check_msm_bases(10, 0, 6, Some(&density), |_| 7).unwrap(), 7);
    }

    #[test]
    fn encoded_bases_decode_or_name_their_defect() {
        use sluice_field::{DecodeError, G1Affine, G1Projective, G2Affine};
        let g1 = (G1Projective::generator() * sluice_field::Fr::from(5u64)).to_affine();
        let mut e = g1.to_uncompressed().as_ref().to_vec();
        assert_eq!(decode_base::<G1Affine>(&e), Ok(g1));
        assert_eq!(encoded_len::<G1Affine>("b", &e).unwrap(), 1);
        assert!(encoded_len::<G1Affine>("b", &e[1..]).is_err());
        e[95] ^= 1;
        assert_eq!(
            decode_base::<G1Affine>(&e),
            Err(BaseDefect::Decode(DecodeError::NotOnCurve))
        );
        let identity = G2Affine::identity();
        let e = identity.to_uncompressed().as_ref().to_vec();
        assert_eq!(decode_base::<G2Affine>(&e), Err(BaseDefect::Identity));
        assert_eq!(
            encoded_len::<G2Affine>("b", &[e.clone(), e].concat()).unwrap(),
            2
        );
    }

    #[test]
    fn the_lowest_index_offered_is_kept() {
        let lowest = LowestIndexed::new();
        for (index, item) in [(7, 'a'), (3, 'b'), (9, 'c'), (3, 'd')] {
            lowest.offer(index, item);
        }
        assert_eq!(lowest.into_inner(), Some((3, 'b')));
        assert_eq!(LowestIndexed::<char>::default().into_inner(), None);
    }
}
