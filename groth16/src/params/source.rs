//! Where the prover takes its bases from: parameters in memory, a memory-mapped
//! bellperson-format file, or bases already resident in a backend.

use std::borrow::Cow;
use std::fs::File;
use std::ops::{Deref, Range};
use std::path::Path;

use memmap2::Mmap;
use sluice_backend::{BackendError, BaseDefect, ComputeBackend, CurveAffine};
use sluice_field::{G1Affine, G2Affine};

use crate::error::Groth16Error;
use crate::params::encoding::{
    decode_points_into, item_name, report_decoded, section_length, section_point, truncated,
    FilePoint, OffsetReader, BATCH,
};
use crate::params::keys::{Parameters, VerifyingKey};
use crate::params::residency::Residency;
use crate::r1cs::shape::QueryLengths;

/// One of the four G1 queries of the parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum G1Query {
    /// `h`: the H polynomial's bases (n - 1 of them).
    H,
    /// `l`: one base per auxiliary variable.
    L,
    /// `a`: one base per variable used in A.
    A,
    /// `b_g1`: one base per variable used in B.
    BG1,
}

impl G1Query {
    /// Whether `residency` keeps this query resident.
    pub(crate) fn resident_in(self, residency: &Residency) -> bool {
        match self {
            G1Query::H => residency.h,
            G1Query::L => residency.l,
            G1Query::A => residency.a,
            G1Query::BG1 => residency.b_g1,
        }
    }

    fn name(self) -> &'static str {
        match self {
            G1Query::H => "h",
            G1Query::L => "l",
            G1Query::A => "a",
            G1Query::BG1 => "b_g1",
        }
    }
}

/// Bases for one MSM: resident already (borrowed) or uploaded for this proof (owned, freed
/// when dropped).
pub enum Bases<'a, T> {
    /// Resident in the backend beyond this proof.
    Resident(&'a T),
    /// Uploaded for this use only.
    Uploaded(T),
}

impl<T> Deref for Bases<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        match self {
            Bases::Resident(t) => t,
            Bases::Uploaded(t) => t,
        }
    }
}

/// What every kind of parameters says about itself, whatever holds its points: one trait
/// under both [`ParameterSource`] and [`HostParameters`], so that `params.vk()` means one
/// method wherever both traits are in scope.
pub trait ParameterInfo {
    /// The verifying key.
    fn vk(&self) -> &VerifyingKey;
    /// The length of every query.
    fn query_lengths(&self) -> QueryLengths;
}

/// What the prover takes parameters from.
pub trait ParameterSource<B: ComputeBackend>: ParameterInfo {
    /// The bases of a G1 query, resident in `backend`.
    fn g1_bases(
        &self,
        backend: &B,
        query: G1Query,
    ) -> Result<Bases<'_, B::Bases<G1Affine>>, Groth16Error>;
    /// The `b_g2` bases, resident in `backend`.
    fn b_g2_bases(&self, backend: &B) -> Result<Bases<'_, B::Bases<G2Affine>>, Groth16Error>;

    /// Bases holding points `range` of a G1 query, and the index of `range.start` in them:
    /// by default the whole query ([`g1_bases`](Self::g1_bases)) and `range.start`; host
    /// parameters upload the range alone (index 0), which is how a batched MSM keeps one
    /// batch of bases on the device.
    fn g1_bases_range(
        &self,
        backend: &B,
        query: G1Query,
        range: Range<usize>,
    ) -> Result<(Bases<'_, B::Bases<G1Affine>>, usize), Groth16Error> {
        Ok((self.g1_bases(backend, query)?, range.start))
    }

    /// [`g1_bases_range`](Self::g1_bases_range) for `b_g2`.
    fn b_g2_bases_range(
        &self,
        backend: &B,
        range: Range<usize>,
    ) -> Result<(Bases<'_, B::Bases<G2Affine>>, usize), Groth16Error> {
        Ok((self.b_g2_bases(backend)?, range.start))
    }

    /// Which queries stay in the backend across proofs; the others are uploaded for each
    /// use (by default none stays: parameters on the host).
    fn residency(&self) -> Residency {
        Residency::NONE
    }
}

/// `points[range]`, or an error naming the query when the range runs past its end.
fn slice_range<'a, T: Clone>(
    points: Cow<'a, [T]>,
    range: Range<usize>,
    what: &'static str,
) -> Result<Cow<'a, [T]>, Groth16Error> {
    if range.start > range.end || range.end > points.len() {
        return Err(BackendError::LengthMismatch {
            what,
            expected: points.len(),
            got: range.end,
        }
        .into());
    }
    Ok(match points {
        Cow::Borrowed(p) => Cow::Borrowed(&p[range]),
        // Cut in place: a whole query's range (every upload of it) then copies nothing.
        Cow::Owned(mut p) => {
            p.truncate(range.end);
            p.drain(..range.start);
            Cow::Owned(p)
        }
    })
}

/// Points as a parameter file stores them (uncompressed encodings, back to back), and the
/// file offset of the first: what a backend with a decoder of its own takes
/// ([`ComputeBackend::upload_bases_encoded`]).
#[derive(Clone, Copy, Debug)]
pub struct EncodedPoints<'a> {
    /// The encodings.
    pub bytes: &'a [u8],
    /// The byte offset of the first in the file, for errors.
    pub offset: u64,
}

/// Parameters whose points live on the host (in memory or in a mapped file): a
/// [`ParameterSource`] for every backend, uploading each query when the prover needs it.
pub trait HostParameters: ParameterInfo {
    /// The points of a G1 query (borrowed, or decoded from a file).
    fn g1_points(&self, query: G1Query) -> Result<Cow<'_, [G1Affine]>, Groth16Error>;
    /// The `b_g2` points.
    fn b_g2_points(&self) -> Result<Cow<'_, [G2Affine]>, Groth16Error>;

    /// Points `range` of a G1 query; the default slices [`g1_points`](Self::g1_points) (a
    /// file-backed source decodes the range alone).
    fn g1_points_range(
        &self,
        query: G1Query,
        range: Range<usize>,
    ) -> Result<Cow<'_, [G1Affine]>, Groth16Error> {
        slice_range(self.g1_points(query)?, range, "parameter query range")
    }

    /// Points `range` of `b_g2`; the default slices [`b_g2_points`](Self::b_g2_points).
    fn b_g2_points_range(&self, range: Range<usize>) -> Result<Cow<'_, [G2Affine]>, Groth16Error> {
        slice_range(self.b_g2_points()?, range, "parameter query range")
    }

    /// The file encodings of points `range` of a G1 query, where this source holds the
    /// file's bytes and reads them unchecked (the subgroup is the one check a backend's
    /// decoder leaves out): a backend that decodes on its device then takes the bytes, and
    /// the host decodes nothing. `None` (the default) means the points are decoded here.
    fn g1_encoded(&self, query: G1Query, range: Range<usize>) -> Option<EncodedPoints<'_>> {
        let _ = (query, range);
        None
    }

    /// [`g1_encoded`](Self::g1_encoded) for `b_g2`.
    fn b_g2_encoded(&self, range: Range<usize>) -> Option<EncodedPoints<'_>> {
        let _ = range;
        None
    }
}

/// Points `range` of section `name` uploaded to `backend`: from their file encodings by the
/// backend's own decoder where the source offers them and the backend has one, else
/// decoded on the host by `decode`. The errors are the host decoder's, offset and name alike.
fn upload_points<'s, B: ComputeBackend, A: FilePoint + CurveAffine>(
    backend: &B,
    name: &str,
    range: Range<usize>,
    encoded: Option<EncodedPoints<'s>>,
    decode: impl FnOnce() -> Result<Cow<'s, [A]>, Groth16Error>,
) -> Result<B::Bases<A>, Groth16Error> {
    if let Some(enc) = encoded {
        report_decoded(name, 0, range.len());
        match backend.upload_bases_encoded::<A>(name, enc.bytes) {
            Ok(Some(bases)) => {
                report_decoded(name, range.len(), range.len());
                return Ok(bases);
            }
            Ok(None) => {}
            Err(BackendError::InvalidBase { index, defect, .. }) => {
                let offset = enc.offset + (index * A::UNCOMPRESSED) as u64;
                let what = item_name(name, Some(range.start + index));
                return Err(match defect {
                    BaseDefect::Decode(source) => Groth16Error::InvalidPoint {
                        offset,
                        what,
                        source,
                    },
                    BaseDefect::Identity => Groth16Error::PointAtInfinity { offset, what },
                });
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(backend.upload_bases(name, &decode()?)?)
}

impl<B: ComputeBackend, H: HostParameters> ParameterSource<B> for H {
    fn g1_bases(
        &self,
        backend: &B,
        query: G1Query,
    ) -> Result<Bases<'_, B::Bases<G1Affine>>, Groth16Error> {
        let range = 0..g1_len(&self.query_lengths(), query);
        Ok(Bases::Uploaded(upload_g1(self, backend, query, range)?))
    }
    fn b_g2_bases(&self, backend: &B) -> Result<Bases<'_, B::Bases<G2Affine>>, Groth16Error> {
        let range = 0..self.query_lengths().b_g2;
        Ok(Bases::Uploaded(upload_b_g2(self, backend, range)?))
    }
    fn g1_bases_range(
        &self,
        backend: &B,
        query: G1Query,
        range: Range<usize>,
    ) -> Result<(Bases<'_, B::Bases<G1Affine>>, usize), Groth16Error> {
        Ok((Bases::Uploaded(upload_g1(self, backend, query, range)?), 0))
    }
    fn b_g2_bases_range(
        &self,
        backend: &B,
        range: Range<usize>,
    ) -> Result<(Bases<'_, B::Bases<G2Affine>>, usize), Groth16Error> {
        Ok((Bases::Uploaded(upload_b_g2(self, backend, range)?), 0))
    }
}

/// Points `range` of a G1 query of `source` uploaded to `backend` ([`upload_points`]).
pub(crate) fn upload_g1<B: ComputeBackend, H: HostParameters + ?Sized>(
    source: &H,
    backend: &B,
    query: G1Query,
    range: Range<usize>,
) -> Result<B::Bases<G1Affine>, Groth16Error> {
    let encoded = source.g1_encoded(query, range.clone());
    upload_points(backend, query.name(), range.clone(), encoded, || {
        source.g1_points_range(query, range)
    })
}

/// Points `range` of `b_g2` of `source` uploaded to `backend` ([`upload_points`]).
pub(crate) fn upload_b_g2<B: ComputeBackend, H: HostParameters + ?Sized>(
    source: &H,
    backend: &B,
    range: Range<usize>,
) -> Result<B::Bases<G2Affine>, Groth16Error> {
    let encoded = source.b_g2_encoded(range.clone());
    upload_points(backend, "b_g2", range.clone(), encoded, || {
        source.b_g2_points_range(range)
    })
}

/// The length of a G1 query.
pub(crate) fn g1_len(lengths: &QueryLengths, query: G1Query) -> usize {
    match query {
        G1Query::H => lengths.h,
        G1Query::L => lengths.l,
        G1Query::A => lengths.a,
        G1Query::BG1 => lengths.b_g1,
    }
}

impl ParameterInfo for Parameters {
    fn vk(&self) -> &VerifyingKey {
        &self.vk
    }
    fn query_lengths(&self) -> QueryLengths {
        QueryLengths {
            h: self.h.len(),
            l: self.l.len(),
            a: self.a.len(),
            b_g1: self.b_g1.len(),
            b_g2: self.b_g2.len(),
        }
    }
}

impl HostParameters for Parameters {
    fn g1_points(&self, query: G1Query) -> Result<Cow<'_, [G1Affine]>, Groth16Error> {
        Ok(Cow::Borrowed(match query {
            G1Query::H => &self.h,
            G1Query::L => &self.l,
            G1Query::A => &self.a,
            G1Query::BG1 => &self.b_g1,
        }))
    }
    fn b_g2_points(&self) -> Result<Cow<'_, [G2Affine]>, Groth16Error> {
        Ok(Cow::Borrowed(&self.b_g2))
    }
}

/// Parameters in a memory-mapped bellperson-format file.
///
/// Opening reads the verifying key and the section lengths only (and checks that they
/// account for the file exactly); each query is decoded from the mapping when a proof needs it,
/// uploaded, and its host copy dropped. So the host never holds more than one query.
pub struct MappedParameters {
    mmap: Mmap,
    vk: VerifyingKey,
    /// Byte offset of the first point and the count, per section: h, l, a, b_g1, b_g2.
    sections: [(usize, usize); 5],
    checked: bool,
}

impl MappedParameters {
    /// Maps `path`. With the decoding of its queries, accepts exactly the files
    /// [`Parameters::read`] accepts, with the same errors: here, the verifying key (always
    /// checked) and the section lengths, which must account for the whole file (no
    /// truncation, no trailing bytes); the query points when decoded, `checked` as there.
    ///
    /// The file must not be modified while mapped (as for any memory-mapped file); points
    /// are decoded, with the checks asked for, every time they are used.
    pub fn open(path: impl AsRef<Path>, checked: bool) -> Result<Self, Groth16Error> {
        let io_err = |source| Groth16Error::Io { offset: 0, source };
        let file = File::open(path).map_err(io_err)?;
        // SAFETY: the mapping is read only; the documented contract is that the file is not
        // modified while mapped. Every byte read from it is validated on decode.
        let mmap = unsafe { Mmap::map(&file) }.map_err(io_err)?;
        let mut reader = OffsetReader::new(&mmap[..]);
        let vk = VerifyingKey::read_from(&mut reader)?;
        let mut offset = reader.offset() as usize;
        let sections = [
            section_bounds::<G1Affine>(&mmap, &mut offset, "h")?,
            section_bounds::<G1Affine>(&mmap, &mut offset, "l")?,
            section_bounds::<G1Affine>(&mmap, &mut offset, "a")?,
            section_bounds::<G1Affine>(&mmap, &mut offset, "b_g1")?,
            section_bounds::<G2Affine>(&mmap, &mut offset, "b_g2")?,
        ];
        if offset != mmap.len() {
            return Err(Groth16Error::TrailingBytes {
                offset: offset as u64,
                what: "the parameters",
                extra: (mmap.len() - offset) as u64,
            });
        }
        Ok(MappedParameters {
            mmap,
            vk,
            sections,
            checked,
        })
    }

    fn decode<P: FilePoint>(&self, index: usize, name: &str) -> Result<Vec<P>, Groth16Error> {
        self.decode_range(index, name, 0..self.sections[index].1)
    }

    /// Points `range` of section `index`.
    fn decode_range<P: FilePoint>(
        &self,
        index: usize,
        name: &str,
        range: Range<usize>,
    ) -> Result<Vec<P>, Groth16Error> {
        let points = self.points_bytes::<P>(index, range.clone())?;
        // In batches, so that a long checked decode reports its progress.
        let mut out = Vec::with_capacity(range.len());
        report_decoded(name, 0, range.len());
        for (k, batch) in points.bytes.chunks(BATCH * P::UNCOMPRESSED).enumerate() {
            let first = range.start + k * BATCH;
            let offset = points.offset + (k * BATCH * P::UNCOMPRESSED) as u64;
            decode_points_into(&mut out, batch, offset, self.checked, name, first)?;
            report_decoded(name, out.len(), range.len());
        }
        Ok(out)
    }

    /// The encodings of points `range` of section `index`, or an error naming the range
    /// that runs past the section's end.
    fn points_bytes<P: FilePoint>(
        &self,
        index: usize,
        range: Range<usize>,
    ) -> Result<EncodedPoints<'_>, Groth16Error> {
        let (start, len) = self.sections[index];
        if range.start > range.end || range.end > len {
            return Err(BackendError::LengthMismatch {
                what: "parameter query range",
                expected: len,
                got: range.end,
            }
            .into());
        }
        let first = start + range.start * P::UNCOMPRESSED;
        Ok(EncodedPoints {
            bytes: &self.mmap[first..start + range.end * P::UNCOMPRESSED],
            offset: first as u64,
        })
    }

    /// The encodings of points `range` of section `index`, unless reads are checked (a
    /// backend's decoder leaves out the subgroup) or the range is not within the section
    /// (the host's decoding then names the error).
    fn encoded<P: FilePoint>(
        &self,
        index: usize,
        range: Range<usize>,
    ) -> Option<EncodedPoints<'_>> {
        match self.checked {
            true => None,
            false => self.points_bytes::<P>(index, range).ok(),
        }
    }

    /// Decodes everything into memory.
    pub fn to_parameters(&self) -> Result<Parameters, Groth16Error> {
        Ok(Parameters {
            vk: self.vk.clone(),
            h: self.g1_points(G1Query::H)?.into_owned(),
            l: self.g1_points(G1Query::L)?.into_owned(),
            a: self.g1_points(G1Query::A)?.into_owned(),
            b_g1: self.g1_points(G1Query::BG1)?.into_owned(),
            b_g2: self.b_g2_points()?.into_owned(),
        })
    }
}

/// The first point's offset and the count of the section whose length field is at
/// `offset`, which moves past the section; the truncation errors are the streamed
/// reader's (`OffsetReader::read_section`), word for word.
fn section_bounds<P: FilePoint>(
    data: &[u8],
    offset: &mut usize,
    name: &str,
) -> Result<(usize, usize), Groth16Error> {
    let at = *offset;
    let Some(len_bytes) = data.get(at..at + 4) else {
        return Err(truncated(at as u64, section_length(name), data.len() - at));
    };
    let len = u32::from_be_bytes([len_bytes[0], len_bytes[1], len_bytes[2], len_bytes[3]]) as usize;
    let start = at + 4;
    let end = start + len * P::UNCOMPRESSED;
    if end > data.len() {
        let present = data.len() - start;
        let whole = present / P::UNCOMPRESSED;
        return Err(truncated(
            (start + whole * P::UNCOMPRESSED) as u64,
            section_point::<P>(name, whole, len),
            present % P::UNCOMPRESSED,
        ));
    }
    *offset = end;
    Ok((start, len))
}

impl ParameterInfo for MappedParameters {
    fn vk(&self) -> &VerifyingKey {
        &self.vk
    }
    fn query_lengths(&self) -> QueryLengths {
        let s = &self.sections;
        QueryLengths {
            h: s[0].1,
            l: s[1].1,
            a: s[2].1,
            b_g1: s[3].1,
            b_g2: s[4].1,
        }
    }
}

impl HostParameters for MappedParameters {
    fn g1_points(&self, query: G1Query) -> Result<Cow<'_, [G1Affine]>, Groth16Error> {
        let index = query as usize;
        Ok(Cow::Owned(self.decode(index, query.name())?))
    }
    fn b_g2_points(&self) -> Result<Cow<'_, [G2Affine]>, Groth16Error> {
        Ok(Cow::Owned(self.decode(4, "b_g2")?))
    }
    fn g1_points_range(
        &self,
        query: G1Query,
        range: Range<usize>,
    ) -> Result<Cow<'_, [G1Affine]>, Groth16Error> {
        Ok(Cow::Owned(self.decode_range(
            query as usize,
            query.name(),
            range,
        )?))
    }
    fn b_g2_points_range(&self, range: Range<usize>) -> Result<Cow<'_, [G2Affine]>, Groth16Error> {
        Ok(Cow::Owned(self.decode_range(4, "b_g2", range)?))
    }
    fn g1_encoded(&self, query: G1Query, range: Range<usize>) -> Option<EncodedPoints<'_>> {
        self.encoded::<G1Affine>(query as usize, range)
    }
    fn b_g2_encoded(&self, range: Range<usize>) -> Option<EncodedPoints<'_>> {
        self.encoded::<G2Affine>(4, range)
    }
}

/// Parameters whose bases are resident in a backend: uploaded once, reused by every proof
/// (the right source for batches and long-running provers).
pub struct ResidentParameters<B: ComputeBackend> {
    vk: VerifyingKey,
    lengths: QueryLengths,
    g1: [B::Bases<G1Affine>; 4],
    b_g2: B::Bases<G2Affine>,
}

impl<B: ComputeBackend> ResidentParameters<B> {
    /// Uploads every query of `source` to `backend`.
    pub fn upload<H: HostParameters + ?Sized>(
        source: &H,
        backend: &B,
    ) -> Result<Self, Groth16Error> {
        let lengths = source.query_lengths();
        let up = |q: G1Query| upload_g1(source, backend, q, 0..g1_len(&lengths, q));
        Ok(ResidentParameters {
            vk: source.vk().clone(),
            lengths,
            g1: [
                up(G1Query::H)?,
                up(G1Query::L)?,
                up(G1Query::A)?,
                up(G1Query::BG1)?,
            ],
            b_g2: upload_b_g2(source, backend, 0..lengths.b_g2)?,
        })
    }
}

impl<B: ComputeBackend> ParameterInfo for ResidentParameters<B> {
    fn vk(&self) -> &VerifyingKey {
        &self.vk
    }
    fn query_lengths(&self) -> QueryLengths {
        self.lengths
    }
}

impl<B: ComputeBackend> ParameterSource<B> for ResidentParameters<B> {
    fn g1_bases(
        &self,
        _: &B,
        query: G1Query,
    ) -> Result<Bases<'_, B::Bases<G1Affine>>, Groth16Error> {
        Ok(Bases::Resident(&self.g1[query as usize]))
    }
    fn b_g2_bases(&self, _: &B) -> Result<Bases<'_, B::Bases<G2Affine>>, Groth16Error> {
        Ok(Bases::Resident(&self.b_g2))
    }
    fn residency(&self) -> Residency {
        Residency::ALL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_of_borrowed_and_owned_points_agree() {
        let points: Vec<u32> = (0..10).collect();
        for range in [0..10, 2..7, 0..0, 10..10, 9..10] {
            let borrowed = slice_range(Cow::Borrowed(&points[..]), range.clone(), "q").unwrap();
            let owned = slice_range(Cow::Owned(points.clone()), range.clone(), "q").unwrap();
            assert!(matches!(borrowed, Cow::Borrowed(_)), "{range:?}");
            assert_eq!(&*borrowed, &points[range.clone()]);
            assert_eq!(&*owned, &points[range]);
        }
        #[allow(clippy::reversed_empty_ranges)] // a reversed range is one of the errors
        for range in [3..11, 5..4] {
            assert!(slice_range(Cow::Owned(points.clone()), range.clone(), "q").is_err());
            assert!(slice_range(Cow::Borrowed(&points[..]), range, "q").is_err());
        }
    }
}
