//! The H phase: a and b to h's coefficients in the backend, and h's MSM.

use sluice_backend::{
    Allocation, BackendError, CompactVec, ComputeBackend, Density, HostVector, MemoryKind,
    MemoryTracker, Scalars,
};
use sluice_field::G1Projective;

use crate::error::Groth16Error;
use crate::params::source::{G1Query, ParameterSource};
use crate::prover::streaming::quotient_to_h;

/// The coefficients of h = (a·b - c) / Z, computed in the backend from the a and b
/// evaluations; `c = a ∘ b` is formed on the domain in the backend, never on the host, and
/// each host vector is freed as soon as it is uploaded. `a` and `b` hold at most `n`
/// evaluations (zero-padded to `n`); the backend holds three vectors at the peak.
///
/// A backend that queues work
/// ([`BackendInfo::queues_work`](sluice_backend::BackendInfo::queues_work)) gets c's copy
/// and a's coset transform queued before `a` is freed and `b` goes up, so the device
/// transforms a while the host frees a and sends b (a GPU's copy engine runs beside its
/// kernels). Otherwise each host vector is freed before the next buffer is made: a CPU
/// backend's buffers are host memory too, and that order holds one vector less.
pub fn compute_h<B: ComputeBackend>(
    backend: &B,
    a: HostVector,
    b: HostVector,
    n: usize,
) -> Result<B::FrBuffer, Groth16Error> {
    let (a, b) = (HostInput::Full(a), HostInput::Full(b));
    compute_h_then(backend, a, b, n, || Ok(())).map(|(h, ())| h)
}

/// An evaluation vector H reads from the host: whole, or compact (its host bytes counted
/// in a tracker while it lives).
pub(crate) enum HostInput {
    Full(HostVector),
    Compact {
        values: CompactVec,
        _counted: Allocation,
    },
}

impl HostInput {
    /// `values` compact, counted in `tracker` as `what`.
    pub(crate) fn compact(
        tracker: &MemoryTracker,
        what: &str,
        values: CompactVec,
    ) -> Result<Self, BackendError> {
        let _counted = tracker.allocate(MemoryKind::Host, what, values.host_bytes())?;
        Ok(HostInput::Compact { values, _counted })
    }

    /// A buffer of `n` scalars holding the values, then zeros.
    fn upload<B: ComputeBackend>(
        &self,
        backend: &B,
        name: &str,
        n: usize,
    ) -> Result<B::FrBuffer, BackendError> {
        match self {
            HostInput::Full(v) => backend.upload_fr(name, v, n),
            HostInput::Compact { values, .. } => backend.upload_compact(name, values, n),
        }
    }
}

/// [`compute_h`], running `queued` once all of H's device work is queued, before the
/// buffers that work reads are released. On a GPU a release waits for the queued work, so
/// work put there (an upload) runs beside H's last kernels rather than after them. The
/// device holds b and c a little longer (not above H's peak of three vectors, plus what
/// `queued` adds).
pub(crate) fn compute_h_then<B: ComputeBackend, T>(
    backend: &B,
    a: HostInput,
    b: HostInput,
    n: usize,
    queued: impl FnOnce() -> Result<T, Groth16Error>,
) -> Result<(B::FrBuffer, T), Groth16Error> {
    let mut a_buf = a.upload(backend, "a", n)?;
    let (b_buf, c_buf) = if backend.info().queues_work {
        // c = a b pointwise, from a copy of a made on the device (not a third upload).
        let mut c_buf = backend.copy_fr("c", &a_buf)?;
        backend.domain_to_coset(&mut a_buf)?;
        drop(a);
        let mut b_buf = b.upload(backend, "b", n)?;
        backend.mul_assign(&mut c_buf, &b_buf)?;
        for buf in [&mut b_buf, &mut c_buf] {
            backend.domain_to_coset(buf)?;
        }
        // Freed once the device has work queued behind the upload (tens of ms at 2^27).
        drop(b);
        (b_buf, c_buf)
    } else {
        drop(a);
        let mut b_buf = b.upload(backend, "b", n)?;
        drop(b);
        let mut c_buf = backend.copy_fr("c", &a_buf)?;
        backend.mul_assign(&mut c_buf, &b_buf)?;
        for buf in [&mut a_buf, &mut b_buf, &mut c_buf] {
            backend.domain_to_coset(buf)?;
        }
        (b_buf, c_buf)
    };
    // With queued work, b and c are released after `queued` has run (a release waits for
    // the kernels using the buffer); otherwise each goes once used, as a CPU backend's
    // buffers are host memory.
    let keep = backend.info().queues_work;
    backend.mul_assign(&mut a_buf, &b_buf)?;
    let b_buf = keep.then_some(b_buf);
    backend.sub_assign(&mut a_buf, &c_buf)?;
    let c_buf = keep.then_some(c_buf);
    quotient_to_h(backend, &mut a_buf, n)?;
    let then = queued()?;
    drop((b_buf, c_buf));
    Ok((a_buf, then))
}

/// The h MSM over h's n coefficients left on the device; it takes h (nothing reads it
/// after), so a backend may convert the scalars in place rather than copy them.
pub(crate) fn h_msm_on_device<B, P>(
    backend: &B,
    params: &P,
    h: B::FrBuffer,
    n: usize,
) -> Result<G1Projective, Groth16Error>
where
    B: ComputeBackend,
    P: ParameterSource<B> + ?Sized,
{
    // The h query has n - 1 points; the top coefficient of h is zero. A density with the
    // first n - 1 bits set pairs them without downloading h.
    let mut h_density = Density::full(n - 1);
    h_density.push(false);
    let bases = params.g1_bases(backend, G1Query::H)?;
    Ok(backend.msm_vartime(&bases, 0, Scalars::Owned(h), Some(&h_density))?)
}
