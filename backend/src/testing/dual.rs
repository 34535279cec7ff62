//! A backend that runs two backends side by side and compares them after every operation,
//! so a whole proof can run under it and the first divergence is caught where it happens.
//!
//! Its panics are its purpose: a divergence between two backends is a failed assertion of
//! the test running it, not an error a caller could handle.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ff::Field;

use crate::{
    decode_base, encoded_len, BackendError, BackendInfo, Buffer, ComputeBackend, CurveAffine,
    Density, Fr, HostAllocator, MemoryInfo, MemoryTracker, NttOrder, Scalars, Transform,
};

/// Runs every operation on `primary` and `secondary` and compares the results.
///
/// Results come from the primary, and so do the hints ([`BackendInfo`], memory, the host
/// allocator): a prover plans and orders its work as it would on the primary alone. Every
/// buffer an operation writes is read back from both sides and compared in full, so it is
/// slow: an assertion tool for tests, not a production backend.
///
/// # Panics
/// On a divergence: a buffer's contents (naming the operation, the buffer, both backends,
/// the first differing index and both values), a buffer's length, an MSM's result, or an
/// upload of encoded bases that one side accepts and the other refuses (or both refuse with
/// different errors). An operation that fails on either side returns that error instead.
///
/// A test pairs the backend under test with a reference (`Dual::new(device, CpuBackend::new())`)
/// and proves with the pair as its backend: every step is checked against the reference.
pub struct Dual<P, S> {
    info: BackendInfo,
    primary: P,
    secondary: S,
    /// Uploads a backend's own decoder took part in (see [`Dual::decoded_uploads`]).
    decoded_uploads: AtomicUsize,
}

/// A scalar buffer held by both backends ([`Dual`]'s `FrBuffer`).
pub struct DualFr<P: ComputeBackend, S: ComputeBackend> {
    name: String,
    primary: P::FrBuffer,
    secondary: S::FrBuffer,
}

impl<P: ComputeBackend, S: ComputeBackend> Buffer for DualFr<P, S> {
    /// The primary's length, which must be the secondary's.
    fn len(&self) -> usize {
        agree_len(&self.name, self.primary.len(), self.secondary.len())
    }
}

/// Bases resident in both backends ([`Dual`]'s `Bases`).
pub struct DualBases<PB, SB> {
    name: String,
    primary: PB,
    secondary: SB,
}

impl<PB: Buffer, SB: Buffer> Buffer for DualBases<PB, SB> {
    /// The primary's length, which must be the secondary's.
    fn len(&self) -> usize {
        agree_len(&self.name, self.primary.len(), self.secondary.len())
    }
}

/// `p`, after asserting that the secondary's length `s` of buffer `name` is the same.
fn agree_len(name: &str, p: usize, s: usize) -> usize {
    assert_eq!(
        p, s,
        "dual backend divergence in the length of `{name}`: {p} on the primary, {s} on the secondary"
    );
    p
}

impl<P: ComputeBackend, S: ComputeBackend> Dual<P, S> {
    /// Pairs two backends; `primary` supplies results, `secondary` is the reference.
    pub fn new(primary: P, secondary: S) -> Self {
        let info = BackendInfo {
            name: format!("dual({}, {})", primary.info().name, secondary.info().name),
            ..primary.info().clone()
        };
        Dual {
            info,
            primary,
            secondary,
            decoded_uploads: AtomicUsize::new(0),
        }
    }

    /// How many uploads of encoded bases either backend decoded itself: what shows that a
    /// caller's uploads reached the backends' decoders at all.
    pub fn decoded_uploads(&self) -> usize {
        self.decoded_uploads.load(Ordering::Relaxed)
    }

    /// Both buffers' full contents must agree.
    fn compare(&self, op: &str, buf: &DualFr<P, S>) -> Result<(), BackendError> {
        let len = buf.len();
        let (mut p, mut s) = (vec![Fr::ZERO; len], vec![Fr::ZERO; len]);
        self.primary.read_fr(&buf.primary, 0, &mut p)?;
        self.secondary.read_fr(&buf.secondary, 0, &mut s)?;
        self.agree_elements(op, &buf.name, 0, &p, &s);
        Ok(())
    }

    /// Panics at the first index where `p` and `s`, the elements of buffer `name` from
    /// `offset` on as each side has them after `op`, differ.
    fn agree_elements(&self, op: &str, name: &str, offset: usize, p: &[Fr], s: &[Fr]) {
        if let Some(i) = p.iter().zip(s).position(|(a, b)| a != b) {
            panic!(
                "dual backend divergence after {op} on `{name}` ({} vs {}): first at index {} \
                 (of {} compared from {offset}): {:?} vs {:?}",
                self.primary.info().name,
                self.secondary.info().name,
                offset + i,
                p.len(),
                p[i],
                s[i]
            );
        }
    }

    /// `p`, after asserting that the secondary's `s` is the same result of `op`.
    fn agree<T: PartialEq + std::fmt::Debug>(&self, op: &str, p: T, s: T) -> T {
        if p != s {
            panic!(
                "dual backend divergence in {op}: {p:?} from {} vs {s:?} from {}",
                self.primary.info().name,
                self.secondary.info().name
            );
        }
        p
    }
}

impl<P: ComputeBackend, S: ComputeBackend> ComputeBackend for Dual<P, S> {
    type FrBuffer = DualFr<P, S>;
    type Bases<A: CurveAffine> = DualBases<P::Bases<A>, S::Bases<A>>;

    fn info(&self) -> &BackendInfo {
        &self.info
    }

    fn tracker(&self) -> &MemoryTracker {
        self.primary.tracker()
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.primary.synchronize()?;
        self.secondary.synchronize()
    }

    fn memory_info(&self) -> Result<MemoryInfo, BackendError> {
        self.primary.memory_info()
    }

    fn msm_scratch_bytes<A: CurveAffine>(&self, scalars: usize) -> u64 {
        self.primary.msm_scratch_bytes::<A>(scalars)
    }

    fn host_allocator(&self) -> Option<Arc<dyn HostAllocator>> {
        self.primary.host_allocator()
    }

    fn alloc_fr(&self, name: &str, len: usize) -> Result<Self::FrBuffer, BackendError> {
        let buf = DualFr {
            name: name.to_owned(),
            primary: self.primary.alloc_fr(name, len)?,
            secondary: self.secondary.alloc_fr(name, len)?,
        };
        self.compare("alloc_fr", &buf)?;
        Ok(buf)
    }

    fn upload_fr(
        &self,
        name: &str,
        data: &[Fr],
        len: usize,
    ) -> Result<Self::FrBuffer, BackendError> {
        let buf = DualFr {
            name: name.to_owned(),
            primary: self.primary.upload_fr(name, data, len)?,
            secondary: self.secondary.upload_fr(name, data, len)?,
        };
        self.compare("upload_fr", &buf)?;
        Ok(buf)
    }

    fn copy_fr(&self, name: &str, src: &Self::FrBuffer) -> Result<Self::FrBuffer, BackendError> {
        let buf = DualFr {
            name: name.to_owned(),
            primary: self.primary.copy_fr(name, &src.primary)?,
            secondary: self.secondary.copy_fr(name, &src.secondary)?,
        };
        self.compare("copy_fr", &buf)?;
        Ok(buf)
    }

    fn write_fr(
        &self,
        buf: &mut Self::FrBuffer,
        offset: usize,
        data: &[Fr],
    ) -> Result<(), BackendError> {
        self.primary.write_fr(&mut buf.primary, offset, data)?;
        self.secondary.write_fr(&mut buf.secondary, offset, data)?;
        self.compare("write_fr", buf)
    }

    fn read_fr(
        &self,
        buf: &Self::FrBuffer,
        offset: usize,
        out: &mut [Fr],
    ) -> Result<(), BackendError> {
        let mut other = vec![Fr::ZERO; out.len()];
        self.primary.read_fr(&buf.primary, offset, out)?;
        self.secondary.read_fr(&buf.secondary, offset, &mut other)?;
        self.agree_elements("read_fr", &buf.name, offset, out, &other);
        Ok(())
    }

    fn transform(
        &self,
        buf: &mut Self::FrBuffer,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        self.primary.transform(&mut buf.primary, transform, order)?;
        self.secondary
            .transform(&mut buf.secondary, transform, order)?;
        self.compare(&format!("{transform:?} ({order:?})"), buf)
    }

    fn domain_to_coset(&self, buf: &mut Self::FrBuffer) -> Result<(), BackendError> {
        self.primary.domain_to_coset(&mut buf.primary)?;
        self.secondary.domain_to_coset(&mut buf.secondary)?;
        self.compare("domain_to_coset", buf)
    }

    fn coset_intt_scaled(&self, buf: &mut Self::FrBuffer, factor: Fr) -> Result<(), BackendError> {
        self.primary.coset_intt_scaled(&mut buf.primary, factor)?;
        self.secondary
            .coset_intt_scaled(&mut buf.secondary, factor)?;
        self.compare("coset_intt_scaled", buf)
    }

    fn mul_assign(&self, a: &mut Self::FrBuffer, b: &Self::FrBuffer) -> Result<(), BackendError> {
        self.primary.mul_assign(&mut a.primary, &b.primary)?;
        self.secondary.mul_assign(&mut a.secondary, &b.secondary)?;
        self.compare("mul_assign", a)
    }

    fn sub_assign(&self, a: &mut Self::FrBuffer, b: &Self::FrBuffer) -> Result<(), BackendError> {
        self.primary.sub_assign(&mut a.primary, &b.primary)?;
        self.secondary.sub_assign(&mut a.secondary, &b.secondary)?;
        self.compare("sub_assign", a)
    }

    fn scale(&self, a: &mut Self::FrBuffer, s: Fr) -> Result<(), BackendError> {
        self.primary.scale(&mut a.primary, s)?;
        self.secondary.scale(&mut a.secondary, s)?;
        self.compare("scale", a)
    }

    fn distribute_powers(&self, a: &mut Self::FrBuffer, g: Fr) -> Result<(), BackendError> {
        self.primary.distribute_powers(&mut a.primary, g)?;
        self.secondary.distribute_powers(&mut a.secondary, g)?;
        self.compare("distribute_powers", a)
    }

    fn transform_segments(
        &self,
        buf: &mut Self::FrBuffer,
        segment: usize,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        self.primary
            .transform_segments(&mut buf.primary, segment, transform, order)?;
        self.secondary
            .transform_segments(&mut buf.secondary, segment, transform, order)?;
        self.compare(&format!("segmented {transform:?} ({order:?})"), buf)
    }

    fn segment_powers(
        &self,
        buf: &mut Self::FrBuffer,
        segment: usize,
        base: Fr,
        ratio: Fr,
    ) -> Result<(), BackendError> {
        self.primary
            .segment_powers(&mut buf.primary, segment, base, ratio)?;
        self.secondary
            .segment_powers(&mut buf.secondary, segment, base, ratio)?;
        self.compare("segment_powers", buf)
    }

    fn upload_bases<A: CurveAffine>(
        &self,
        name: &str,
        bases: &[A],
    ) -> Result<Self::Bases<A>, BackendError> {
        Ok(DualBases {
            name: name.to_owned(),
            primary: self.primary.upload_bases(name, bases)?,
            secondary: self.secondary.upload_bases(name, bases)?,
        })
    }

    /// Each side decodes with its own decoder where it has one, else takes the host's
    /// decoding; the two must accept the same bases, or refuse them with the same error.
    fn upload_bases_encoded<A: CurveAffine>(
        &self,
        name: &str,
        encoded: &[u8],
    ) -> Result<Option<Self::Bases<A>>, BackendError> {
        let p = self.primary.upload_bases_encoded::<A>(name, encoded);
        let s = self.secondary.upload_bases_encoded::<A>(name, encoded);
        if matches!((&p, &s), (Ok(None), Ok(None))) {
            return Ok(None);
        }
        self.decoded_uploads.fetch_add(1, Ordering::Relaxed);
        let p = p.and_then(|b| match b {
            Some(b) => Ok(b),
            None => self
                .primary
                .upload_bases(name, &host_decoded::<A>(name, encoded)?),
        });
        let s = s.and_then(|b| match b {
            Some(b) => Ok(b),
            None => self
                .secondary
                .upload_bases(name, &host_decoded::<A>(name, encoded)?),
        });
        match (p, s) {
            (Ok(primary), Ok(secondary)) => Ok(Some(DualBases {
                name: name.to_owned(),
                primary,
                secondary,
            })),
            (Err(p), Err(s)) => {
                let op = format!("upload_bases_encoded of `{name}` (its error)");
                self.agree(&op, p.to_string(), s.to_string());
                Err(p)
            }
            (p, s) => panic!(
                "dual backend divergence in upload_bases_encoded of `{name}`: {} {} vs {} {}",
                self.primary.info().name,
                outcome(&p),
                self.secondary.info().name,
                outcome(&s)
            ),
        }
    }

    fn msm_vartime<A: CurveAffine>(
        &self,
        bases: &Self::Bases<A>,
        skip: usize,
        scalars: Scalars<'_, Self>,
        density: Option<&Density>,
    ) -> Result<A::Group, BackendError> {
        let (p, s) = split(scalars);
        let a = self.primary.msm_vartime(&bases.primary, skip, p, density)?;
        let b = self
            .secondary
            .msm_vartime(&bases.secondary, skip, s, density)?;
        let op = format!("{:?} msm of `{}` after skip {skip}", A::KIND, bases.name);
        Ok(self.agree(&op, a, b))
    }
}

/// The scalars of a dual MSM as seen by each side.
fn split<'a, P: ComputeBackend, S: ComputeBackend>(
    scalars: Scalars<'a, Dual<P, S>>,
) -> (Scalars<'a, P>, Scalars<'a, S>) {
    match scalars {
        Scalars::Host(h) => (Scalars::Host(h), Scalars::Host(h)),
        Scalars::Buffer(b) => (Scalars::Buffer(&b.primary), Scalars::Buffer(&b.secondary)),
        Scalars::Owned(b) => (Scalars::Owned(b.primary), Scalars::Owned(b.secondary)),
    }
}

/// What one side's upload did, for a divergence's message.
fn outcome<T>(r: &Result<T, BackendError>) -> String {
    match r {
        Ok(_) => "accepted the bases".to_owned(),
        Err(e) => format!("refused them ({e})"),
    }
}

/// The host's reference decoding of `encoded` ([`decode_base`]), refusing at the first
/// invalid base as a backend's decoder does.
fn host_decoded<A: CurveAffine>(name: &str, encoded: &[u8]) -> Result<Vec<A>, BackendError> {
    encoded_len::<A>(name, encoded)?;
    encoded
        .chunks_exact(A::UNCOMPRESSED_BYTES)
        .enumerate()
        .map(|(index, e)| {
            decode_base::<A>(e).map_err(|defect| BackendError::InvalidBase {
                what: name.to_owned(),
                index,
                defect,
            })
        })
        .collect()
}
