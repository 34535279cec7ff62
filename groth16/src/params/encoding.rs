//! Byte-level reading and writing with offsets, shared by the file formats.
//!
//! Every read error names the byte offset where the offending item starts and what was
//! expected there; nothing here panics on bad input.

use std::io::{ErrorKind, Read, Write};

use rayon::prelude::*;
use sluice_backend::LowestIndexed;
use sluice_field::{DecodeError, G1Affine, G2Affine};

use crate::error::Groth16Error;
use crate::progress::{self, ProgressEvent, Task};

/// Points are decoded in batches of this many, in parallel, so a corrupted length field
/// cannot make the reader allocate more than one batch ahead of the data it has.
pub(crate) const BATCH: usize = 1 << 14;

/// Reports `done` of `total` points of `section` decoded ([`Task::ReadParameters`]).
pub(crate) fn report_decoded(section: &str, done: usize, total: usize) {
    progress::report(&ProgressEvent {
        task: Task::ReadParameters,
        what: section,
        done: done as u64,
        total: total as u64,
    });
}

/// A curve point as the bellperson formats store it.
pub(crate) trait FilePoint: Sized + Copy + Send + Sync {
    /// Uncompressed size in bytes.
    const UNCOMPRESSED: usize;
    /// "G1" or "G2", for messages.
    const GROUP: &'static str;
    /// Decodes an uncompressed point: valid flags, canonical coordinates and the curve
    /// equation always; the subgroup too if `checked` (bellperson's unchecked reads skip
    /// that check alone, the costly one).
    fn decode_uncompressed(bytes: &[u8], checked: bool) -> Result<Self, DecodeError>;
    /// Appends the uncompressed encoding.
    fn write_uncompressed(&self, out: &mut Vec<u8>);
    /// Whether this is the point at infinity.
    fn is_identity_point(&self) -> bool;
    /// A value to fill the place of a point that failed to decode.
    fn placeholder() -> Self;
}

macro_rules! impl_file_point {
    ($t:ty, $size:expr, $group:expr) => {
        impl FilePoint for $t {
            const UNCOMPRESSED: usize = $size;
            const GROUP: &'static str = $group;
            fn decode_uncompressed(bytes: &[u8], checked: bool) -> Result<Self, DecodeError> {
                if checked {
                    <$t>::decode_uncompressed(bytes, true)
                } else {
                    <$t>::decode_uncompressed_on_curve(bytes)
                }
            }
            fn write_uncompressed(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_uncompressed());
            }
            fn is_identity_point(&self) -> bool {
                bool::from(group::prime::PrimeCurveAffine::is_identity(self))
            }
            fn placeholder() -> Self {
                group::prime::PrimeCurveAffine::identity()
            }
        }
    };
}
impl_file_point!(G1Affine, 96, "G1");
impl_file_point!(G2Affine, 192, "G2");

/// The name of item `index` of a section, e.g. `h[17]`.
pub(crate) fn item_name(section: &str, index: Option<usize>) -> String {
    match index {
        Some(i) => format!("{section}[{i}]"),
        None => section.to_owned(),
    }
}

/// Decodes one point at `offset`, rejecting the identity unless `allow_identity`.
pub(crate) fn decode_point<P: FilePoint>(
    bytes: &[u8],
    offset: u64,
    checked: bool,
    allow_identity: bool,
    section: &str,
    index: Option<usize>,
) -> Result<P, Groth16Error> {
    let p =
        P::decode_uncompressed(bytes, checked).map_err(|source| Groth16Error::InvalidPoint {
            offset,
            what: item_name(section, index),
            source,
        })?;
    if !allow_identity && p.is_identity_point() {
        return Err(Groth16Error::PointAtInfinity {
            offset,
            what: item_name(section, index),
        });
    }
    Ok(p)
}

/// Decodes `bytes.len() / P::UNCOMPRESSED` consecutive points in parallel onto the end of
/// `out`, the first being item `first_index` of `section` at byte `offset`; identities are
/// rejected. The error reported is the one at the lowest offset; on an error `out` holds
/// placeholders and is to be dropped.
///
/// The threads write the points straight into `out`'s free space: a vector of `Result`s
/// unwrapped afterwards would add a pass on one thread as long as the decoding itself
/// on a 16-core host.
pub(crate) fn decode_points_into<P: FilePoint>(
    out: &mut Vec<P>,
    bytes: &[u8],
    offset: u64,
    checked: bool,
    section: &str,
    first_index: usize,
) -> Result<(), Groth16Error> {
    let first_error = LowestIndexed::new();
    out.par_extend(bytes.par_chunks(P::UNCOMPRESSED).enumerate().map(|(i, b)| {
        let at = offset + (i * P::UNCOMPRESSED) as u64;
        decode_point(b, at, checked, false, section, Some(first_index + i)).unwrap_or_else(
            |error| {
                first_error.offer(i, error);
                P::placeholder()
            },
        )
    }));
    match first_error.into_inner() {
        Some((_, error)) => Err(error),
        None => Ok(()),
    }
}

/// The description of point `index` of a section of `len` points, e.g.
/// `h[17] of 1023 (G1, 96 bytes)`.
pub(crate) fn section_point<P: FilePoint>(section: &str, index: usize, len: usize) -> String {
    format!(
        "{section}[{index}] of {len} ({}, {} bytes)",
        P::GROUP,
        P::UNCOMPRESSED
    )
}

/// The description of a section's length field.
pub(crate) fn section_length(section: &str) -> String {
    format!("the u32 length of {section}")
}

/// The data ended `present` bytes into the item `expected` describes, which starts at
/// `offset`: every reader names the first incomplete item, where it starts.
pub(crate) fn truncated(offset: u64, expected: String, present: usize) -> Groth16Error {
    let end = match present {
        0 => "the data ends there".to_owned(),
        n => format!("the data ends {n} bytes into it"),
    };
    Groth16Error::Truncated {
        offset,
        expected: format!("{expected}; {end}"),
    }
}

/// A reader that counts the bytes it has consumed, so errors can name offsets.
pub(crate) struct OffsetReader<R> {
    inner: R,
    offset: u64,
}

impl<R: Read> OffsetReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        OffsetReader { inner, offset: 0 }
    }

    /// Bytes consumed so far.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// Fills `buf`. At a premature end, returns `truncated(start, got)`: the error for a
    /// read that started at `start` and got `got` bytes, so it can name the item that is
    /// incomplete rather than the start of the read.
    pub(crate) fn read_exact(
        &mut self,
        buf: &mut [u8],
        truncated: impl FnOnce(u64, usize) -> Groth16Error,
    ) -> Result<(), Groth16Error> {
        let mut got = 0;
        while got < buf.len() {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) => return Err(truncated(self.offset, got)),
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(Groth16Error::Io {
                        offset: self.offset + got as u64,
                        source,
                    })
                }
            }
        }
        self.offset += buf.len() as u64;
        Ok(())
    }

    /// A big-endian u32 length field.
    pub(crate) fn read_len(&mut self, section: &str) -> Result<usize, Groth16Error> {
        let mut b = [0u8; 4];
        self.read_exact(&mut b, |at, got| {
            truncated(at, section_length(section), got)
        })?;
        Ok(u32::from_be_bytes(b) as usize)
    }

    /// One point (`checked` decoding), the identity allowed only if `allow_identity`.
    pub(crate) fn read_point<P: FilePoint>(
        &mut self,
        checked: bool,
        allow_identity: bool,
        name: &str,
    ) -> Result<P, Groth16Error> {
        let mut buf = vec![0u8; P::UNCOMPRESSED];
        let offset = self.offset;
        self.read_exact(&mut buf, |at, got| {
            let what = format!("{name} ({}, {} bytes)", P::GROUP, P::UNCOMPRESSED);
            truncated(at, what, got)
        })?;
        decode_point(&buf, offset, checked, allow_identity, name, None)
    }

    /// A section: u32-BE length, then that many points, none the identity.
    pub(crate) fn read_section<P: FilePoint>(
        &mut self,
        section: &str,
        checked: bool,
    ) -> Result<Vec<P>, Groth16Error> {
        let len = self.read_len(section)?;
        let mut out = Vec::with_capacity(len.min(BATCH));
        let mut buf = Vec::new();
        report_decoded(section, 0, len);
        while out.len() < len {
            let count = (len - out.len()).min(BATCH);
            buf.resize(count * P::UNCOMPRESSED, 0);
            let offset = self.offset;
            let first = out.len();
            self.read_exact(&mut buf, |at, got| {
                let whole = got / P::UNCOMPRESSED;
                truncated(
                    at + (whole * P::UNCOMPRESSED) as u64,
                    section_point::<P>(section, first + whole, len),
                    got % P::UNCOMPRESSED,
                )
            })?;
            decode_points_into(&mut out, &buf, offset, checked, section, first)?;
            report_decoded(section, out.len(), len);
        }
        Ok(out)
    }

    /// Succeeds only at the end of the data; otherwise [`Groth16Error::TrailingBytes`]
    /// naming where `what` ended and how many bytes follow (read, not stored).
    pub(crate) fn read_end(&mut self, what: &'static str) -> Result<(), Groth16Error> {
        let extra = std::io::copy(&mut self.inner, &mut std::io::sink()).map_err(|source| {
            Groth16Error::Io {
                offset: self.offset,
                source,
            }
        })?;
        match extra {
            0 => Ok(()),
            extra => Err(Groth16Error::TrailingBytes {
                offset: self.offset,
                what,
                extra,
            }),
        }
    }
}

/// A writer that counts bytes, so errors can name offsets.
pub(crate) struct OffsetWriter<W> {
    inner: W,
    offset: u64,
    buf: Vec<u8>,
}

impl<W: Write> OffsetWriter<W> {
    pub(crate) fn new(inner: W) -> Self {
        OffsetWriter {
            inner,
            offset: 0,
            buf: Vec::new(),
        }
    }

    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> Result<(), Groth16Error> {
        self.inner
            .write_all(bytes)
            .map_err(|source| Groth16Error::Io {
                offset: self.offset,
                source,
            })?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    pub(crate) fn write_point<P: FilePoint>(&mut self, p: &P) -> Result<(), Groth16Error> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        p.write_uncompressed(&mut buf);
        let r = self.write_all(&buf);
        self.buf = buf;
        r
    }

    /// A section: u32-BE length, then the points uncompressed.
    pub(crate) fn write_section<P: FilePoint>(&mut self, points: &[P]) -> Result<(), Groth16Error> {
        let len = u32::try_from(points.len()).map_err(|_| Groth16Error::Io {
            offset: self.offset,
            source: std::io::Error::new(
                ErrorKind::InvalidInput,
                "more than 2^32 - 1 points in a section",
            ),
        })?;
        self.write_all(&len.to_be_bytes())?;
        let mut buf = std::mem::take(&mut self.buf);
        for chunk in points.chunks(BATCH) {
            buf.clear();
            chunk.iter().for_each(|p| p.write_uncompressed(&mut buf));
            self.write_all(&buf)?;
        }
        self.buf = buf;
        Ok(())
    }

    pub(crate) fn flush(&mut self) -> Result<(), Groth16Error> {
        self.inner.flush().map_err(|source| Groth16Error::Io {
            offset: self.offset,
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::prime::PrimeCurveAffine;

    /// `count` encodings of distinct multiples of G1's generator.
    fn encoded_points(count: usize) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut p = G1Affine::generator().to_curve();
        for _ in 0..count {
            G1Affine::from(p).write_uncompressed(&mut bytes);
            p += G1Affine::generator();
        }
        bytes
    }

    #[test]
    fn decoded_points_are_appended_in_order() {
        let bytes = encoded_points(3000);
        let mut out = vec![G1Affine::identity()];
        decode_points_into::<G1Affine>(&mut out, &bytes, 0, false, "h", 0).unwrap();
        assert_eq!(out.len(), 3001);
        let mut again = Vec::new();
        for (i, point) in out[1..].iter().enumerate() {
            point.write_uncompressed(&mut again);
            assert!(!point.is_identity_point(), "point {i}");
        }
        assert_eq!(again, bytes);
    }

    #[test]
    fn the_error_at_the_lowest_offset_is_reported() {
        let mut bytes = encoded_points(3000);
        let (offset, first) = (1000u64, 7usize);
        // y's lowest bit flipped puts a point off the curve; the identity is refused too.
        bytes[2900 * 96 + 95] ^= 1;
        bytes[1500 * 96 + 95] ^= 1;
        bytes[2000 * 96..2001 * 96].copy_from_slice(&G1Affine::identity().to_uncompressed());
        let mut out = Vec::new();
        match decode_points_into::<G1Affine>(&mut out, &bytes, offset, false, "h", first) {
            Err(Groth16Error::InvalidPoint {
                offset: at, what, ..
            }) => {
                assert_eq!(at, offset + 1500 * 96);
                assert_eq!(what, "h[1507]");
            }
            other => panic!("expected h[1507] off the curve, got {other:?}"),
        }
        bytes[1500 * 96 + 95] ^= 1;
        bytes[2900 * 96 + 95] ^= 1;
        match decode_points_into::<G1Affine>(&mut Vec::new(), &bytes, offset, false, "h", first) {
            Err(Groth16Error::PointAtInfinity { offset: at, what }) => {
                assert_eq!(at, offset + 2000 * 96);
                assert_eq!(what, "h[2007]");
            }
            other => panic!("expected h[2007] at infinity, got {other:?}"),
        }
    }
}
