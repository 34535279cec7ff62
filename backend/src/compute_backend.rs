//! The [`ComputeBackend`] trait and the small types its methods take ([`Transform`],
//! [`Scalars`], [`Buffer`], [`BackendInfo`]), with the host-side defaults its provided
//! methods run (segment by segment; a compact vector decoded a page at a time).

use std::sync::Arc;

use ff::Field;

use crate::check::{check_pow2_segment, check_range};
use crate::compact::{CompactVec, Piece};
use crate::{
    BackendError, CurveAffine, Density, Fr, HostAllocator, MemoryInfo, MemoryTracker, NttOrder,
};

/// Which of the four NTT-family transforms to apply.
///
/// The coset variants evaluate on (or interpolate from) the coset `g·H`, `g` being the
/// multiplicative generator 7 of Fr, which is what the H computation of Groth16 needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transform {
    /// Coefficients to evaluations on the domain H.
    Ntt,
    /// Evaluations on H to coefficients (scaled by 1/n).
    Intt,
    /// Coefficients to evaluations on the coset g·H.
    CosetNtt,
    /// Evaluations on g·H to coefficients.
    CosetIntt,
}

impl Transform {
    /// All four transforms, for callers (and tests) that iterate over them.
    pub const ALL: [Transform; 4] = [
        Transform::Ntt,
        Transform::Intt,
        Transform::CosetNtt,
        Transform::CosetIntt,
    ];
}

/// The scalars of an MSM: on the host, or already in a backend buffer (e.g. h, fed from the
/// H computation straight into its MSM without a round trip).
pub enum Scalars<'a, B: ComputeBackend + ?Sized> {
    /// Scalars in host memory.
    Host(&'a [Fr]),
    /// Scalars in a buffer of this backend.
    Buffer(&'a B::FrBuffer),
    /// Scalars in a buffer of this backend that the MSM takes over and frees: it may
    /// overwrite them (convert them in place rather than copy them, one vector less of
    /// device memory during the MSM), as for h, which nothing reads after its MSM.
    Owned(B::FrBuffer),
}

/// A backend's buffer (scalars or resident bases): how many elements it holds.
pub trait Buffer {
    /// The number of elements.
    fn len(&self) -> usize;

    /// Whether it holds no element.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a backend is and how it runs, for schedulers, provers and logs: fixed for the
/// backend's life, so [`ComputeBackend::info`] hands out a reference.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BackendInfo {
    /// A human-readable name: the backend and its device(s).
    pub name: String,
    /// Whether it computes on an accelerator (a GPU) whose MSMs outrun the host's CPUs:
    /// schedulers then keep work such as the b_g2 MSM on it rather than on the CPU.
    pub accelerator: bool,
    /// Whether the backend's device memory is the host's own RAM (the CPU backend, an
    /// OpenCL CPU device, a GPU reporting `CL_DEVICE_HOST_UNIFIED_MEMORY`): planners then
    /// count its buffers against the host's memory as well.
    pub host_memory_shared: bool,
}

/// A compute backend: owns buffers and runs the prover's heavy operations on them.
///
/// All methods take `&self` so one backend can serve several threads (partitions); a
/// backend orders the work on each of its devices itself. Methods return only when their
/// result is ready (downloads, MSM results), while uploads and transforms may be queued:
/// a GPU backend overlaps them, and errors surface no later than the next result read.
///
/// Bases and MSMs are generic over the group ([`CurveAffine`]: G1 or G2), one method for
/// both. Methods with a default are fused or derived operations a backend may override
/// with a faster form; the defaults are correct on every backend. Arguments are checked
/// by the functions of this crate ([`check_range`], [`check_segment`], [`check_msm_bases`],
/// ...), which every backend calls, so the rules and their errors are the same everywhere.
///
/// Two hints stay methods rather than fields of [`BackendInfo`]: [`memory_info`]
/// (fallible, and its free bytes change as the device fills) and [`msm_scratch_bytes`]
/// (a function of the MSM's size and group).
///
/// [`memory_info`]: Self::memory_info
/// [`msm_scratch_bytes`]: Self::msm_scratch_bytes
/// [`check_segment`]: crate::check_segment
/// [`check_msm_bases`]: crate::check_msm_bases
pub trait ComputeBackend: Send + Sync {
    /// A buffer of Fr scalars owned by the backend. Dropping it frees the memory and its
    /// tracked bytes.
    type FrBuffer: Buffer + Send + Sync;
    /// A set of bases of group `A` resident in the backend, reusable across MSMs and
    /// proofs.
    type Bases<A: CurveAffine>: Buffer + Send + Sync;

    /// What this backend is: its name and the hints schedulers plan with.
    fn info(&self) -> &BackendInfo;

    /// The tracker that counts this backend's allocations.
    fn tracker(&self) -> &MemoryTracker;

    /// The memory of the device(s) this backend computes in.
    fn memory_info(&self) -> Result<MemoryInfo, BackendError>;

    /// The most device bytes an MSM over `scalars` scalars of group `A` allocates beyond
    /// its resident bases (scalar copies, bucket sort, partial sums), for planners to
    /// reserve. The default, 0, suits backends whose MSM temporaries are not device memory
    /// (the CPU backend's live on the heap, untracked, and are small next to its inputs).
    fn msm_scratch_bytes<A: CurveAffine>(&self, scalars: usize) -> u64 {
        let _ = scalars;
        0
    }

    /// Where host vectors that this backend uploads fastest come from: page-locked memory
    /// a GPU's DMA reads with no staging copy. Provers synthesize a, b and the witness into
    /// it ([`FrVec`](crate::FrVec)); an upload from anywhere else is correct, only slower.
    /// `None` (the default) where ordinary memory is as fast, as on a CPU backend.
    fn host_allocator(&self) -> Option<Arc<dyn HostAllocator>> {
        None
    }

    /// Waits until all queued work has finished, and surfaces errors of queued work. Timing
    /// code calls it before reading the clock; results read back (downloads, MSM results)
    /// are always complete without it. The default (for backends that never queue) does
    /// nothing.
    fn synchronize(&self) -> Result<(), BackendError> {
        Ok(())
    }

    /// A buffer of `len` scalars holding `data` followed by zeros, named for the tracker
    /// and error messages; `data.len() > len` is [`BackendError::LengthMismatch`]. A
    /// backend that queues work may send it while earlier work runs.
    fn upload_fr(
        &self,
        name: &str,
        data: &[Fr],
        len: usize,
    ) -> Result<Self::FrBuffer, BackendError>;

    /// A buffer of `len` scalars holding the values of `data` (`data.len() <= len`), then
    /// zeros: how a compactly stored assignment ([`CompactVec`]) reaches the backend, which
    /// expands it where it computes. The default decodes it a page at a time on the host
    /// and writes each ([`compact::upload_on_host`](crate::compact::upload_on_host)); a GPU
    /// backend sends the code bytes and expands them on the device.
    fn upload_compact(
        &self,
        name: &str,
        data: &CompactVec,
        len: usize,
    ) -> Result<Self::FrBuffer, BackendError> {
        upload_on_host(self, name, data, len)
    }

    /// A buffer holding values `range` of `data`: how a prover streams a compact witness
    /// up a chunk at a time. The default decodes the range on the host and uploads it; a
    /// GPU backend sends the code bytes and expands them on the device.
    fn upload_compact_range(
        &self,
        name: &str,
        data: &CompactVec,
        range: std::ops::Range<usize>,
    ) -> Result<Self::FrBuffer, BackendError> {
        check_range("upload_compact_range", data.len(), range.start, range.len())?;
        let mut values = vec![Fr::ZERO; range.len()];
        data.decode_into(range.start, &mut values);
        self.upload_fr(name, &values, values.len())
    }

    /// A zero-filled buffer of `len` scalars: [`upload_fr`](Self::upload_fr) of no data by
    /// default.
    fn alloc_fr(&self, name: &str, len: usize) -> Result<Self::FrBuffer, BackendError> {
        self.upload_fr(name, &[], len)
    }

    /// A new buffer holding a copy of `src`, made where the data lives when the backend can
    /// (the default goes through host memory: a read and an upload).
    fn copy_fr(&self, name: &str, src: &Self::FrBuffer) -> Result<Self::FrBuffer, BackendError> {
        let mut host = vec![Fr::ZERO; src.len()];
        self.read_fr(src, 0, &mut host)?;
        self.upload_fr(name, &host, host.len())
    }

    /// Overwrites `buf[offset..offset + data.len()]` with `data`: how callers stream a
    /// vector into a buffer chunk by chunk.
    fn write_fr(
        &self,
        buf: &mut Self::FrBuffer,
        offset: usize,
        data: &[Fr],
    ) -> Result<(), BackendError>;

    /// Copies `buf[offset..offset + out.len()]` into `out`.
    fn read_fr(
        &self,
        buf: &Self::FrBuffer,
        offset: usize,
        out: &mut [Fr],
    ) -> Result<(), BackendError>;

    /// Applies `transform` in place; the buffer's length is the domain size and must be a
    /// power of two. `order` states the order of input and output.
    fn transform(
        &self,
        buf: &mut Self::FrBuffer,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError>;

    /// Applies `transform` independently to each run of `segment` consecutive scalars
    /// (`segment` a power of two dividing the buffer's length): the batched small NTTs of a
    /// four-step (streaming) transform, whose columns are laid out contiguously.
    ///
    /// The default runs each segment through a temporary buffer of this backend; backends
    /// override it with a batched kernel.
    fn transform_segments(
        &self,
        buf: &mut Self::FrBuffer,
        segment: usize,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        let len = buf.len();
        check_pow2_segment("transform_segments", len, segment)?;
        if segment == len {
            return self.transform(buf, transform, order);
        }
        each_segment(self, buf, segment, |tmp| {
            self.transform(tmp, transform, order)
        })
    }

    /// Evaluations over the domain (natural order) to evaluations over the coset gH of the
    /// multiplicative generator g (natural order), in place: [`Transform::Intt`] to
    /// bit-reversed order, then [`Transform::CosetNtt`] back. A backend may fold the
    /// inverse's 1/n into the coset shift instead of scaling in a pass of its own.
    fn domain_to_coset(&self, buf: &mut Self::FrBuffer) -> Result<(), BackendError> {
        self.transform(buf, Transform::Intt, NttOrder::NaturalToBitReversed)?;
        self.transform(buf, Transform::CosetNtt, NttOrder::BitReversedToNatural)
    }

    /// `factor` times the coset INTT of `buf` ([`Transform::CosetIntt`], natural order in
    /// and out): [`scale`](Self::scale) then the transform by default. A backend may fold
    /// the factor into the transform's own 1/n and coset shift.
    fn coset_intt_scaled(&self, buf: &mut Self::FrBuffer, factor: Fr) -> Result<(), BackendError> {
        self.scale(buf, factor)?;
        self.transform(buf, Transform::CosetIntt, NttOrder::NaturalToNatural)
    }

    /// The device work of a Groth16 H, in the order that suits this backend: uploads a and
    /// b (their evaluations on the domain, each by its closure, which returns the buffer and
    /// the host vector it came from, freed here when the backend chooses), forms
    /// `c = a ∘ b`, moves a, b and c onto the coset ([`domain_to_coset`](Self::domain_to_coset)),
    /// leaves `a·b − c` in a, and hands a to `quotient` (the caller's division by the
    /// vanishing polynomial and inverse transform); returns a.
    ///
    /// `beside` is work the caller would overlap with H's last kernels (an upload): a
    /// backend that can runs it once all of H is queued and returns what it gave; one that
    /// cannot does not call it and returns `None`, and the caller does that work after.
    ///
    /// The default holds the least and overlaps nothing: each host vector is freed before
    /// the next buffer is made, and b and c go as soon as they are used (a CPU backend's
    /// buffers are host memory too). A backend whose calls return before its device has
    /// done them overrides it to queue work before freeing host memory.
    fn h_device_work<E, Ha, Hb, T>(
        &self,
        upload_a: impl FnOnce() -> Result<(Self::FrBuffer, Ha), E>,
        upload_b: impl FnOnce() -> Result<(Self::FrBuffer, Hb), E>,
        quotient: impl FnOnce(&mut Self::FrBuffer) -> Result<(), E>,
        beside: impl FnOnce() -> Result<T, E>,
    ) -> Result<(Self::FrBuffer, Option<T>), E>
    where
        Self: Sized,
        E: From<BackendError>,
    {
        let _ = beside;
        let (mut a, host_a) = upload_a()?;
        drop(host_a);
        let (mut b, host_b) = upload_b()?;
        drop(host_b);
        let mut c = self.copy_fr("c", &a)?;
        self.mul_assign(&mut c, &b)?;
        for buf in [&mut a, &mut b, &mut c] {
            self.domain_to_coset(buf)?;
        }
        self.mul_assign(&mut a, &b)?;
        drop(b);
        self.sub_assign(&mut a, &c)?;
        drop(c);
        quotient(&mut a)?;
        Ok((a, None))
    }

    /// `a[i] *= b[i]`.
    fn mul_assign(&self, a: &mut Self::FrBuffer, b: &Self::FrBuffer) -> Result<(), BackendError>;

    /// `a[i] -= b[i]`.
    fn sub_assign(&self, a: &mut Self::FrBuffer, b: &Self::FrBuffer) -> Result<(), BackendError>;

    /// `a[i] *= s`.
    fn scale(&self, a: &mut Self::FrBuffer, s: Fr) -> Result<(), BackendError>;

    /// Multiplies element `i` of segment `k` (runs of `segment` consecutive scalars,
    /// `segment` dividing the buffer's length: [`check_segment`](crate::check_segment)) by
    /// `(base · ratio^k)^i`: the twiddle step of a four-step transform over a chunk of columns
    /// (`base = ω^first_column`, `ratio = ω`). With one segment it is
    /// [`distribute_powers`](Self::distribute_powers) by `base`.
    fn segment_powers(
        &self,
        buf: &mut Self::FrBuffer,
        segment: usize,
        base: Fr,
        ratio: Fr,
    ) -> Result<(), BackendError>;

    /// `a[i] *= g^i`: [`segment_powers`](Self::segment_powers) with one segment.
    fn distribute_powers(&self, a: &mut Self::FrBuffer, g: Fr) -> Result<(), BackendError> {
        // An empty buffer is zero segments of one.
        self.segment_powers(a, a.len().max(1), g, Fr::ONE)
    }

    /// Makes bases of group `A` resident.
    fn upload_bases<A: CurveAffine>(
        &self,
        name: &str,
        bases: &[A],
    ) -> Result<Self::Bases<A>, BackendError>;

    /// Makes bases of group `A` resident from their uncompressed encodings, as bellperson's
    /// parameter files hold them (`A::UNCOMPRESSED_BYTES` each, big-endian coordinates with
    /// ZCash's flags), decoding them itself: on a GPU the host then only copies bytes, and
    /// never holds the decoded points. Each base is checked as an unchecked parameter read
    /// checks it: flags, canonical coordinates, the curve equation, not
    /// the identity; not the subgroup ([`decode_base`](crate::decode_base) is the reference).
    ///
    /// `Ok(None)` (the default) means the backend has no decoder of its own: the caller
    /// decodes on the host and calls [`upload_bases`](Self::upload_bases).
    ///
    /// # Errors
    /// [`BackendError::InvalidBase`] naming the first invalid base;
    /// [`BackendError::InvalidInput`] if `encoded` is not whole encodings.
    fn upload_bases_encoded<A: CurveAffine>(
        &self,
        name: &str,
        encoded: &[u8],
    ) -> Result<Option<Self::Bases<A>>, BackendError> {
        let _ = (name, encoded);
        Ok(None)
    }

    /// `sum_i scalars[i] * bases[skip + i]` over the bases' group.
    ///
    /// With a `density`, the bases are dense over the *used* variables only: the k-th base
    /// (after `skip`) pairs with the scalar of the k-th set bit, and `scalars.len()` equals
    /// `density.len()` (bellperson's convention). Scalars equal to 0 or 1 may take a fast
    /// path. `skip` lets one resident set serve several MSMs (e.g. inputs and auxiliaries).
    ///
    /// # Errors
    /// Every backend checks its arguments with [`check_msm_bases`](crate::check_msm_bases):
    /// [`BackendError::LengthMismatch`] when a density's length is not the scalars', or when
    /// the bases after `skip` are fewer than the used scalars (fewer scalars than bases use
    /// a prefix).
    ///
    /// # Security
    /// Variable time in scalars and bases, as every prover's MSM is: the witness is blinded
    /// by the random `r`, `s` of the proof, and timing of the prover's own machine is not an
    /// adversary channel in the deployments sluice targets.
    fn msm_vartime<A: CurveAffine>(
        &self,
        bases: &Self::Bases<A>,
        skip: usize,
        scalars: Scalars<'_, Self>,
        density: Option<&Density>,
    ) -> Result<A::Group, BackendError>;
}

/// Runs `op` on each run of `segment` scalars of `buf` in turn, through one temporary
/// buffer and a host round trip: the trait's portable default for segmented operations.
fn each_segment<B: ComputeBackend + ?Sized>(
    backend: &B,
    buf: &mut B::FrBuffer,
    segment: usize,
    mut op: impl FnMut(&mut B::FrBuffer) -> Result<(), BackendError>,
) -> Result<(), BackendError> {
    let mut host = vec![Fr::ZERO; segment];
    let mut tmp = backend.alloc_fr("segment", segment)?;
    for start in (0..buf.len()).step_by(segment) {
        backend.read_fr(buf, start, &mut host)?;
        backend.write_fr(&mut tmp, 0, &host)?;
        op(&mut tmp)?;
        backend.read_fr(&tmp, 0, &mut host)?;
        backend.write_fr(buf, start, &host)?;
    }
    Ok(())
}

/// Values of `data` written at element `offset` of `buf` through `backend`'s
/// [`write_fr`](ComputeBackend::write_fr): raw pieces as they are, codes decoded a
/// page at a time on the host, so no full-size host vector exists.
pub fn write_on_host<B: ComputeBackend + ?Sized>(
    backend: &B,
    buf: &mut B::FrBuffer,
    offset: usize,
    data: &CompactVec,
) -> Result<(), BackendError> {
    check_range("write_compact", Buffer::len(buf), offset, data.len())?;
    let mut decoded = Vec::new();
    for (at, piece) in data.pieces(0..data.len()) {
        match piece {
            Piece::Raw(values) => backend.write_fr(buf, offset + at, values)?,
            Piece::Codes { .. } => {
                decoded.resize(piece.len(), Fr::ZERO);
                data.decode_into(at, &mut decoded);
                backend.write_fr(buf, offset + at, &decoded)?;
            }
        }
    }
    Ok(())
}

/// A new buffer of `len` scalars (`len >= data.len()`) holding `data`'s values, then zeros,
/// decoded on the host ([`write_on_host`]): the default of
/// [`ComputeBackend::upload_compact`].
pub fn upload_on_host<B: ComputeBackend + ?Sized>(
    backend: &B,
    name: &str,
    data: &CompactVec,
    len: usize,
) -> Result<B::FrBuffer, BackendError> {
    check_range("upload_compact", len, 0, data.len())?;
    if let Some(raw) = data.as_raw() {
        return backend.upload_fr(name, raw, len);
    }
    let mut buf = backend.alloc_fr(name, len)?;
    write_on_host(backend, &mut buf, 0, data)?;
    Ok(buf)
}
