//! The device profile of a backend that keeps one (the OpenCL backend with profiling on),
//! which the partition rows print to separate the set-up from the timed runs.

use sluice_backend::ComputeBackend;
use sluice_backend_cpu::CpuBackend;

/// A backend the bench runs, with its profile where it keeps one.
pub trait Profiled: ComputeBackend {
    /// The profile since the last report, as text, starting a new one; `None` where the
    /// backend keeps no profile.
    fn profile_report(&self) -> Option<String>;
}

impl Profiled for CpuBackend {
    fn profile_report(&self) -> Option<String> {
        None
    }
}

#[cfg(feature = "opencl")]
impl Profiled for sluice_backend_opencl::OpenClBackend {
    fn profile_report(&self) -> Option<String> {
        sluice_backend_opencl::OpenClBackend::profile_report(self)
    }
}
