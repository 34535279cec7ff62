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
/// The order of the uploads, transforms and frees is the backend's
/// ([`ComputeBackend::h_device_work`]): a GPU queues a's transform before freeing a and
/// sending b; a CPU backend frees each host vector before the next buffer is made.
pub fn compute_h<B: ComputeBackend>(
    backend: &B,
    a: HostVector,
    b: HostVector,
    n: usize,
) -> Result<B::FrBuffer, Groth16Error> {
    let (a, b) = (HostInput::Full(a), HostInput::Full(b));
    compute_h_then(backend, a, b, n, || Ok(())).map(|(h, _)| h)
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

/// [`compute_h`] in the order the backend chooses
/// ([`ComputeBackend::h_device_work`]), offering it `beside`: work to run beside H's last
/// kernels where the backend can (`Some` of what it gave), else left to the caller (`None`).
pub(crate) fn compute_h_then<B: ComputeBackend, T>(
    backend: &B,
    a: HostInput,
    b: HostInput,
    n: usize,
    beside: impl FnOnce() -> Result<T, Groth16Error>,
) -> Result<(B::FrBuffer, Option<T>), Groth16Error> {
    backend.h_device_work(
        || Ok((a.upload(backend, "a", n)?, a)),
        || Ok((b.upload(backend, "b", n)?, b)),
        |h| quotient_to_h(backend, h, n),
        beside,
    )
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
