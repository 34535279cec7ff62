//! Parameters some of whose queries are resident in a backend while the others stream up
//! from the host in batches ([`PartlyResident`]): how a device smaller than the parameters
//! proves without re-reading what does fit.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use sluice_backend::ComputeBackend;
use sluice_field::{G1Affine, G2Affine};

use crate::error::Groth16Error;
use crate::params::keys::VerifyingKey;
use crate::params::residency::{Residency, G1_FILE_BYTES, G2_FILE_BYTES};
use crate::params::source::{
    g1_len, upload_b_g2, upload_g1, Bases, G1Query, HostParameters, ParameterInfo, ParameterSource,
};
use crate::r1cs::shape::QueryLengths;

/// Parameters with the queries [`Residency`] names resident in one backend and the rest
/// read from `host` (a memory-mapped file, or parameters in memory) a range at a time as
/// MSMs ask: each streamed range is uploaded for that use and freed after it.
///
/// The bytes streamed so far are counted ([`streamed_bytes`](Self::streamed_bytes)), as the
/// points' file encodings (G1 96 bytes, G2 192): what crosses to the device, give or take
/// the device's own representation.
pub struct PartlyResident<B: ComputeBackend, H: ?Sized> {
    host: Arc<H>,
    residency: Residency,
    lengths: QueryLengths,
    g1: [Option<B::Bases<G1Affine>>; 4],
    b_g2: Option<B::Bases<G2Affine>>,
    streamed: AtomicU64,
}

impl<B: ComputeBackend, H: HostParameters + ?Sized> PartlyResident<B, H> {
    /// Uploads the queries `residency` keeps resident from `host` to `backend`; the others
    /// stay on the host.
    pub fn upload(host: Arc<H>, backend: &B, residency: Residency) -> Result<Self, Groth16Error> {
        let lengths = host.query_lengths();
        let g1 = |q: G1Query| -> Result<Option<B::Bases<G1Affine>>, Groth16Error> {
            match q.resident_in(&residency) {
                true => Ok(Some(upload_g1(&*host, backend, q, 0..g1_len(&lengths, q))?)),
                false => Ok(None),
            }
        };
        let g1 = [
            g1(G1Query::H)?,
            g1(G1Query::L)?,
            g1(G1Query::A)?,
            g1(G1Query::BG1)?,
        ];
        let b_g2 = match residency.b_g2 {
            true => Some(upload_b_g2(&*host, backend, 0..lengths.b_g2)?),
            false => None,
        };
        Ok(PartlyResident {
            host,
            residency,
            lengths,
            g1,
            b_g2,
            streamed: AtomicU64::new(0),
        })
    }

    /// Bytes of streamed points uploaded so far (file encodings).
    pub fn streamed_bytes(&self) -> u64 {
        self.streamed.load(Ordering::Relaxed)
    }

    fn count(&self, points: usize, point_bytes: u64) {
        self.streamed
            .fetch_add(points as u64 * point_bytes, Ordering::Relaxed);
    }
}

impl<B: ComputeBackend, H: HostParameters + ?Sized> ParameterInfo for PartlyResident<B, H> {
    fn vk(&self) -> &VerifyingKey {
        self.host.vk()
    }
    fn query_lengths(&self) -> QueryLengths {
        self.lengths
    }
}

impl<B: ComputeBackend, H: HostParameters + ?Sized> ParameterSource<B> for PartlyResident<B, H> {
    fn g1_bases(
        &self,
        backend: &B,
        query: G1Query,
    ) -> Result<Bases<'_, B::Bases<G1Affine>>, Groth16Error> {
        let len = g1_len(&self.lengths, query);
        Ok(self.g1_bases_range(backend, query, 0..len)?.0)
    }
    fn b_g2_bases(&self, backend: &B) -> Result<Bases<'_, B::Bases<G2Affine>>, Groth16Error> {
        Ok(self.b_g2_bases_range(backend, 0..self.lengths.b_g2)?.0)
    }
    fn g1_bases_range(
        &self,
        backend: &B,
        query: G1Query,
        range: Range<usize>,
    ) -> Result<(Bases<'_, B::Bases<G1Affine>>, usize), Groth16Error> {
        if let Some(bases) = &self.g1[query as usize] {
            return Ok((Bases::Resident(bases), range.start));
        }
        self.count(range.len(), G1_FILE_BYTES);
        let bases = upload_g1(&*self.host, backend, query, range)?;
        Ok((Bases::Uploaded(bases), 0))
    }
    fn b_g2_bases_range(
        &self,
        backend: &B,
        range: Range<usize>,
    ) -> Result<(Bases<'_, B::Bases<G2Affine>>, usize), Groth16Error> {
        if let Some(bases) = &self.b_g2 {
            return Ok((Bases::Resident(bases), range.start));
        }
        self.count(range.len(), G2_FILE_BYTES);
        let bases = upload_b_g2(&*self.host, backend, range)?;
        Ok((Bases::Uploaded(bases), 0))
    }
    fn residency(&self) -> Residency {
        self.residency
    }
}
