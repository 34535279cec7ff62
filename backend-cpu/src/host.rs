//! The host kernels behind the CPU backend, public where other backends' tests use them as
//! the reference, and the mapping of their errors to [`BackendError`].

use sluice_backend::{BackendError, Fr, NttOrder, Transform};
use sluice_msm::MsmError;
use sluice_ntt::{Domain, NttError};

/// Applies `transform` to `data` in host memory with sluice-ntt: the CPU backend's kernel
/// and the reference every other backend is tested against.
pub fn transform_on_host(
    domain: &Domain<Fr>,
    data: &mut [Fr],
    transform: Transform,
    order: NttOrder,
) -> Result<(), NttError> {
    match transform {
        Transform::Ntt => sluice_ntt::ntt(domain, data, order),
        Transform::Intt => sluice_ntt::intt(domain, data, order),
        Transform::CosetNtt => sluice_ntt::coset_ntt(domain, data, order),
        Transform::CosetIntt => sluice_ntt::coset_intt(domain, data, order),
    }
}

/// An NTT error as the backend reports it, keeping the lengths and sizes.
pub(crate) fn ntt_error(e: NttError) -> BackendError {
    match e {
        NttError::DomainTooLarge { log_size, max } => {
            BackendError::DomainTooLarge { log_size, max }
        }
        NttError::LengthMismatch { expected, got } => BackendError::LengthMismatch {
            what: "ntt",
            expected,
            got,
        },
        other => BackendError::InvalidInput(other.to_string()),
    }
}

/// An MSM error as the backend reports it, keeping the lengths.
pub(crate) fn msm_error(e: MsmError) -> BackendError {
    match e {
        MsmError::LengthMismatch {
            what,
            expected,
            got,
        } => BackendError::LengthMismatch {
            what,
            expected,
            got,
        },
        other => BackendError::InvalidInput(other.to_string()),
    }
}
