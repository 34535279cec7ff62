//! What test suites (this crate's, the pipeline's and the differential suite in `tests/`)
//! need to pick an OpenCL device or skip cleanly. Behind the `testing` feature: no part of
//! the library a prover uses.
//!
//! The `try_` functions and [`opencl_required`] return what is wrong with the environment
//! as a [`TestEnvError`]; [`backend_or_skip`], [`test_device`] and [`test_devices`] are
//! their forms for tests, which panic with that error's message.

use sluice_backend::BackendError;

use crate::{DeviceSelector, OpenClBackend, OpenClConfig, OpenClConfigError};

/// The variable that makes a missing OpenCL backend fail the tests (`1`) rather than skip
/// them.
pub const REQUIRE_VAR: &str = "SLUICE_REQUIRE_OPENCL";

/// The variable naming the devices the tests run on (a [`DeviceSelector::parse`] string).
pub const DEVICE_VAR: &str = "SLUICE_TEST_OPENCL_DEVICE";

/// Why the environment does not let the OpenCL tests run as asked.
#[derive(Debug, thiserror::Error)]
pub enum TestEnvError {
    /// A test variable holds a value it does not take.
    #[error(
        "bad environment for the OpenCL tests: `{variable}` is {value:?}, expected {expected}"
    )]
    BadValue {
        /// The variable.
        variable: &'static str,
        /// Its value (lossily as text).
        value: String,
        /// What it takes.
        expected: &'static str,
    },
    /// An override [`OpenClConfig::with_env_overrides`] reads is bad.
    #[error("bad environment for the OpenCL tests: {0}")]
    Override(#[from] OpenClConfigError),
    /// `SLUICE_REQUIRE_OPENCL=1`, and the backend could not be created: in CI a missing
    /// platform is a failure, never a silent skip.
    #[error("SLUICE_REQUIRE_OPENCL=1 but no OpenCL backend: {0}")]
    Required(#[source] BackendError),
    /// `SLUICE_TEST_OPENCL_DEVICE` picks no device of this machine.
    #[error("SLUICE_TEST_OPENCL_DEVICE={selector:?} picks no device: {source}")]
    NoTestDevice {
        /// The variable's value.
        selector: String,
        /// The selection's error.
        #[source]
        source: BackendError,
    },
}

/// Whether a missing OpenCL platform must fail the tests (CI sets
/// `SLUICE_REQUIRE_OPENCL=1`) rather than skip them: `1` yes; unset, empty or `0` no.
///
/// # Errors
/// [`TestEnvError::BadValue`] for any other value (`true` must not silently skip).
pub fn opencl_required() -> Result<bool, TestEnvError> {
    required_from_env(&|name| std::env::var_os(name))
}

/// [`opencl_required`] through `var`.
fn required_from_env(
    var: &dyn Fn(&'static str) -> Option<std::ffi::OsString>,
) -> Result<bool, TestEnvError> {
    match var(REQUIRE_VAR) {
        None => Ok(false),
        Some(v) => match v.to_str() {
            Some("" | "0") => Ok(false),
            Some("1") => Ok(true),
            _ => Err(TestEnvError::BadValue {
                variable: REQUIRE_VAR,
                value: v.to_string_lossy().into_owned(),
                expected: "`1` (fail without OpenCL), `0` or nothing (skip)",
            }),
        },
    }
}

/// A backend with `config` and the environment's overrides
/// ([`OpenClConfig::with_env_overrides`]: a GPU run's kernel cache, profile or tuning), or
/// `None` after printing why when it cannot be created and `SLUICE_REQUIRE_OPENCL` is not
/// `1`.
///
/// # Errors
/// A bad override or `SLUICE_REQUIRE_OPENCL` value, and the backend's error when it cannot
/// be created and `SLUICE_REQUIRE_OPENCL=1`.
pub fn try_backend_or_skip(config: OpenClConfig) -> Result<Option<OpenClBackend>, TestEnvError> {
    let config = config.with_env_overrides()?;
    let required = opencl_required()?;
    match OpenClBackend::new(config) {
        Ok(b) => Ok(Some(b)),
        Err(e) if required => Err(TestEnvError::Required(e)),
        Err(e) => {
            eprintln!(
                "skipping: no OpenCL backend ({e}); set SLUICE_REQUIRE_OPENCL=1 to fail instead"
            );
            Ok(None)
        }
    }
}

/// The devices multi-device tests run on: every device `$SLUICE_TEST_OPENCL_DEVICE`
/// picks (a selector as [`DeviceSelector::parse`] reads it, e.g. `NVIDIA` on a machine
/// that also lists PoCL), else device 0; the only device twice (two contexts and queues
/// on it) where the selector picks one, so the multi-device paths always run. Without any
/// OpenCL device, `[0, 0]`, for [`try_backend_or_skip`] to skip on.
///
/// # Errors
/// [`TestEnvError::NoTestDevice`] when the variable names a selection that matches no
/// device of this machine (a typo must not quietly test device 0).
pub fn try_test_devices() -> Result<Vec<usize>, TestEnvError> {
    let Some(value) = std::env::var_os(DEVICE_VAR) else {
        return Ok(vec![0, 0]);
    };
    let selector = value.to_string_lossy().into_owned();
    let mut picked: Vec<usize> = match DeviceSelector::parse(&selector).select() {
        Ok(devices) => devices.iter().map(|d| d.index).collect(),
        Err(source @ BackendError::NoMatchingDevice { .. }) => {
            return Err(TestEnvError::NoTestDevice { selector, source })
        }
        // No platform at all: the backend's creation fails the same way and skips.
        Err(_) => Vec::new(),
    };
    match picked.len() {
        0 => Ok(vec![0, 0]),
        1 => {
            picked.push(picked[0]);
            Ok(picked)
        }
        _ => Ok(picked),
    }
}

/// [`try_backend_or_skip`] for tests.
///
/// # Panics
/// With the [`TestEnvError`]'s message, where that returns one.
pub fn backend_or_skip(config: OpenClConfig) -> Option<OpenClBackend> {
    try_backend_or_skip(config).unwrap_or_else(|e| panic!("{e}"))
}

/// The device tests run on: the first of [`test_devices`].
///
/// # Panics
/// As [`test_devices`].
pub fn test_device() -> usize {
    test_devices()[0]
}

/// [`try_test_devices`] for tests.
///
/// # Panics
/// With the [`TestEnvError`]'s message, where that returns one.
pub fn test_devices() -> Vec<usize> {
    try_test_devices().unwrap_or_else(|e| panic!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn with(value: Option<&'static str>) -> Result<bool, TestEnvError> {
        required_from_env(&move |name| {
            assert_eq!(name, REQUIRE_VAR);
            value.map(OsString::from)
        })
    }

    /// `SLUICE_REQUIRE_OPENCL`: `1` requires, unset, empty and `0` skip, anything else is
    /// an error naming the variable and the value rather than a silent skip.
    #[test]
    fn the_require_variable_takes_one_zero_or_nothing() {
        assert!(with(Some("1")).unwrap());
        for skip in [None, Some(""), Some("0")] {
            assert!(!with(skip).unwrap(), "{skip:?}");
        }
        for bad in ["true", "yes", " 1"] {
            match with(Some(bad)) {
                Err(e @ TestEnvError::BadValue { variable, .. }) => {
                    assert_eq!(variable, REQUIRE_VAR);
                    assert!(e.to_string().contains(&format!("{bad:?}")), "{e}");
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }
}
