//! What test suites (this crate's and the differential suite in `tests/`) need to pick an
//! OpenCL device or skip cleanly.

use crate::{DeviceSelector, OpenClBackend, OpenClConfig};

/// Whether a missing OpenCL platform must fail the tests (CI sets
/// `SLUICE_REQUIRE_OPENCL=1`) rather than skip them.
pub fn opencl_required() -> bool {
    std::env::var("SLUICE_REQUIRE_OPENCL").is_ok_and(|v| v == "1")
}

/// A backend with `config` and the environment's overrides
/// ([`OpenClConfig::with_env_overrides`]: a GPU run's kernel cache, profile or tuning), or
/// `None` after printing why when no OpenCL platform exists and `SLUICE_REQUIRE_OPENCL` is
/// not `1`.
///
/// # Panics
/// When an override is bad, and when the backend cannot be created and
/// `SLUICE_REQUIRE_OPENCL=1`: in CI a missing platform is a failure, never a silent skip.
pub fn backend_or_skip(config: OpenClConfig) -> Option<OpenClBackend> {
    let config = config
        .with_env_overrides()
        .unwrap_or_else(|e| panic!("bad environment for the OpenCL tests: {e}"));
    match OpenClBackend::new(config) {
        Ok(b) => Some(b),
        Err(e) if opencl_required() => {
            panic!("SLUICE_REQUIRE_OPENCL=1 but no OpenCL backend: {e}")
        }
        Err(e) => {
            eprintln!(
                "skipping: no OpenCL backend ({e}); set SLUICE_REQUIRE_OPENCL=1 to fail instead"
            );
            None
        }
    }
}

/// The device tests run on: the first of [`test_devices`].
pub fn test_device() -> usize {
    test_devices()[0]
}

/// The devices multi-device tests run on: every device `$SLUICE_TEST_OPENCL_DEVICE`
/// picks (a selector as [`DeviceSelector::parse`] reads it, e.g. `NVIDIA` on a machine
/// that also lists PoCL), else device 0; the only device twice (two contexts and queues
/// on it) where the selector picks one, so the multi-device paths always run.
pub fn test_devices() -> Vec<usize> {
    let sel = std::env::var("SLUICE_TEST_OPENCL_DEVICE")
        .map_or(DeviceSelector::Index(0), |s| DeviceSelector::parse(&s));
    let mut picked: Vec<usize> = sel
        .select()
        .map(|d| d.iter().map(|d| d.index).collect())
        .unwrap_or_default();
    match picked.len() {
        0 => vec![0, 0],
        1 => {
            picked.push(picked[0]);
            picked
        }
        _ => picked,
    }
}
