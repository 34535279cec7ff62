//! The ZCash point encodings shared by G1 and G2 (big-endian coordinates; the three top bits of
//! the first byte carry the flags), generic over the coordinate field.
//!
//! Decoding is variable time: encodings are public data, and the slice forms report which
//! check failed.

use crate::curve::{Affine, CurveField};
use subtle::{Choice, ConditionallySelectable, CtOption};

/// Set in compressed encodings.
const COMPRESSION: u8 = 0x80;
/// Set for the point at infinity (the rest must then be zero).
const INFINITY: u8 = 0x40;
/// Set in a compressed encoding when y is the lexicographically larger root.
const SIGN: u8 = 0x20;
/// The bits of the first byte that belong to x.
const VALUE_MASK: u8 = 0x1f;

/// Why a point encoding was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The slice does not have the length of the encoding.
    WrongLength {
        /// The length of the encoding.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// The flag bits do not form a valid encoding: compression bit wrong for the form,
    /// infinity with the sign bit or with non-zero bits after it, or the sign bit in an
    /// uncompressed encoding.
    InvalidFlags,
    /// A coordinate is not below the field modulus.
    NonCanonicalCoordinate,
    /// The point does not satisfy the curve equation (for compressed input: x^3 + b has no
    /// square root).
    NotOnCurve,
    /// The point is on the curve but not in the prime-order subgroup. Unchecked decoding
    /// returns it too for a point with x = 0 (on G1 the points (0, ±2), of order 3), which
    /// blst refuses even when it skips the subgroup check.
    NotInSubgroup,
}

impl core::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::WrongLength { expected, got } => {
                write!(f, "point encoding has {got} bytes, expected {expected}")
            }
            Self::InvalidFlags => f.write_str("invalid flag bits in point encoding"),
            Self::NonCanonicalCoordinate => {
                f.write_str("point coordinate is not below the field modulus")
            }
            Self::NotOnCurve => f.write_str("point is not on the curve"),
            Self::NotInSubgroup => f.write_str("point is not in the prime-order subgroup"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for DecodeError {}

/// Writes the compressed (x only) or uncompressed (x, y) encoding of `p` into `out`, whose
/// length is exactly that of the form. Constant time in the point.
pub(crate) fn encode<F: CurveField>(p: &Affine<F>, compressed: bool, out: &mut [u8]) {
    let inf = p.is_identity();
    let n = F::BYTES;
    F::conditional_select(&p.x, &F::ZERO, inf).write_be(&mut out[..n]);
    let inf_flag = u8::conditional_select(&0, &INFINITY, inf);
    if compressed {
        let sign = p.y.sign() & !inf;
        out[0] |= COMPRESSION | inf_flag | u8::conditional_select(&0, &SIGN, sign);
    } else {
        F::conditional_select(&p.y, &F::ZERO, inf).write_be(&mut out[n..2 * n]);
        out[0] |= inf_flag;
    }
}

/// Checks the length and the flags. `Ok(None)` is a valid identity encoding; `Ok(Some(sign))`
/// means a coordinate follows.
fn read_flags(bytes: &[u8], len: usize, compressed: bool) -> Result<Option<bool>, DecodeError> {
    if bytes.len() != len {
        return Err(DecodeError::WrongLength {
            expected: len,
            got: bytes.len(),
        });
    }
    let flags = bytes[0];
    if (flags & COMPRESSION != 0) != compressed {
        return Err(DecodeError::InvalidFlags);
    }
    let sign = flags & SIGN != 0;
    if flags & INFINITY != 0 {
        let rest_zero = flags & VALUE_MASK == 0 && bytes[1..].iter().all(|&b| b == 0);
        return if !sign && rest_zero {
            Ok(None)
        } else {
            Err(DecodeError::InvalidFlags)
        };
    }
    if sign && !compressed {
        return Err(DecodeError::InvalidFlags);
    }
    Ok(Some(sign))
}

/// Reads one coordinate; `first` says whether its top byte carries the flags, which are masked.
fn read_coordinate<F: CurveField>(bytes: &[u8], first: bool) -> Result<F, DecodeError> {
    let mut buf = [0u8; 96];
    let buf = &mut buf[..F::BYTES];
    buf.copy_from_slice(bytes);
    if first {
        buf[0] &= VALUE_MASK;
    }
    Option::from(F::read_be(buf)).ok_or(DecodeError::NonCanonicalCoordinate)
}

fn check_subgroup<F: CurveField>(p: Affine<F>, check: bool) -> Result<Affine<F>, DecodeError> {
    if check && !bool::from(F::is_torsion_free(&p)) {
        return Err(DecodeError::NotInSubgroup);
    }
    Ok(p)
}

/// Refuses a point with x = 0, as blst does even without the subgroup check: on G1 these
/// are (0, ±2), of order 3, never in the subgroup; on G2 no point has x = 0 (4(1 + i) is not
/// a square in Fq2: its norm 32 is not one in Fq), so the curve equation refuses it first.
fn refuse_zero_x<F: CurveField>(p: Affine<F>) -> Result<Affine<F>, DecodeError> {
    if bool::from(p.x.is_zero()) {
        return Err(DecodeError::NotInSubgroup);
    }
    Ok(p)
}

/// Decodes a compressed point (always on the curve, x never 0); `subgroup` adds the
/// subgroup check.
pub(crate) fn decode_compressed<F: CurveField>(
    bytes: &[u8],
    subgroup: bool,
) -> Result<Affine<F>, DecodeError> {
    let Some(sign) = read_flags(bytes, F::BYTES, true)? else {
        return Ok(Affine::IDENTITY);
    };
    let x: F = read_coordinate(bytes, true)?;
    let y = Option::<F>::from((x.square() * x + F::B).sqrt()).ok_or(DecodeError::NotOnCurve)?;
    let flip = y.sign() ^ Choice::from(u8::from(sign));
    let y = F::conditional_select(&y, &-y, flip);
    check_subgroup(refuse_zero_x(Affine { x, y })?, subgroup)
}

/// Decodes an uncompressed point: the flags, canonical coordinates, the curve equation and
/// x != 0 always (what blst refuses unchecked); `checked` adds the subgroup check.
pub(crate) fn decode_uncompressed<F: CurveField>(
    bytes: &[u8],
    checked: bool,
) -> Result<Affine<F>, DecodeError> {
    check_subgroup(decode_uncompressed_on_curve(bytes)?, checked)
}

/// Decodes an uncompressed point with every check but the subgroup's: blst's unchecked
/// deserialization (and so bellperson's unchecked reads), which also refuses x = 0.
pub(crate) fn decode_uncompressed_on_curve<F: CurveField>(
    bytes: &[u8],
) -> Result<Affine<F>, DecodeError> {
    let Some(p) = read_uncompressed::<F>(bytes)? else {
        return Ok(Affine::IDENTITY);
    };
    // (0, 0) without the infinity flag is not an encoding of anything.
    if !bool::from(p.is_on_curve() & !p.is_identity()) {
        return Err(DecodeError::NotOnCurve);
    }
    refuse_zero_x(p)
}

/// The flags and the two canonical coordinates of an uncompressed encoding; `None` for the
/// flagged identity.
fn read_uncompressed<F: CurveField>(bytes: &[u8]) -> Result<Option<Affine<F>>, DecodeError> {
    if read_flags(bytes, 2 * F::BYTES, false)?.is_none() {
        return Ok(None);
    }
    let x = read_coordinate(&bytes[..F::BYTES], true)?;
    let y = read_coordinate(&bytes[F::BYTES..], false)?;
    Ok(Some(Affine { x, y }))
}

/// The `CtOption` face of a decoding result (`dummy` fills the none case).
pub(crate) fn to_ct_option<T>(r: Result<T, DecodeError>, dummy: T) -> CtOption<T> {
    match r {
        Ok(p) => CtOption::new(p, Choice::from(1)),
        Err(_) => CtOption::new(dummy, Choice::from(0)),
    }
}
