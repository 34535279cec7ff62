//! The differential suite on the OpenCL backend (PoCL in CI, a GPU on the device machine),
//! against the host references, plus whole proofs under the `Dual` backend (OpenCL and CPU
//! compared after every operation).
//!
//! Without an OpenCL platform every test prints why and passes — unless
//! `SLUICE_REQUIRE_OPENCL=1` (CI), where it fails. `SLUICE_TEST_OPENCL_DEVICE` picks the
//! device (index or name substring); where it picks several (two GPUs), the multi-device
//! tests spread their work over all of them. `SLUICE_DIFF_LARGE=1` selects GPU-sized inputs.

use std::sync::OnceLock;

use sluice_backend::testing::Dual;
use sluice_backend_cpu::CpuBackend;
use sluice_backend_opencl::test_support::{backend_or_skip, test_device, test_devices};
use sluice_backend_opencl::{DeviceSelector, OpenClBackend, OpenClConfig};
use sluice_tests::suite::{self, SuiteSizes};

/// One backend per process, so programs build once for all tests.
fn backend() -> Option<&'static OpenClBackend> {
    static B: OnceLock<Option<OpenClBackend>> = OnceLock::new();
    B.get_or_init(|| {
        backend_or_skip(OpenClConfig {
            devices: DeviceSelector::Index(test_device()),
            ..OpenClConfig::default()
        })
    })
    .as_ref()
}

/// Every test device (two contexts on the one test device where there is one) with 4 KiB
/// chunks: the multi-device and split-buffer paths at test sizes.
fn split_backend() -> Option<OpenClBackend> {
    backend_or_skip(OpenClConfig {
        devices: DeviceSelector::Indices(test_devices()),
        max_chunk_bytes: Some(1 << 12),
        ..OpenClConfig::default()
    })
}

/// Every test device with whole buffers: MSMs split across devices at full sizes.
fn multi_device_backend() -> Option<OpenClBackend> {
    let devices = test_devices();
    eprintln!("multi-device backend on devices {devices:?}");
    backend_or_skip(OpenClConfig {
        devices: DeviceSelector::Indices(devices),
        ..OpenClConfig::default()
    })
}

#[test]
fn ntt_family() {
    let Some(b) = backend() else { return };
    suite::ntt_family(b, &SuiteSizes::from_env(), 0x4e54_5402);
}

#[test]
fn segments() {
    let Some(b) = backend() else { return };
    suite::segments(b, &SuiteSizes::from_env(), 0x5345_4703);
}

#[test]
fn pointwise() {
    let Some(b) = backend() else { return };
    suite::pointwise(b, &SuiteSizes::from_env(), 0x504f_4902);
}

#[test]
fn pointwise_split_buffers_two_contexts() {
    let Some(b) = split_backend() else { return };
    // 4 KiB chunks: GPU sizes would mean millions of chunks, so always the small sizes.
    suite::pointwise(&b, &SuiteSizes::small(), 0x504f_4903);
}

#[test]
fn msm_g1_vartime() {
    let Some(b) = backend() else { return };
    suite::msm_g1_vartime(b, &SuiteSizes::from_env(), 0x4731_0002);
}

#[test]
fn msm_g1_split_buffers_two_contexts() {
    let Some(b) = split_backend() else { return };
    suite::msm_g1_vartime(&b, &SuiteSizes::small(), 0x4731_0003);
}

#[test]
fn msm_and_proof_across_devices() {
    let Some(b) = multi_device_backend() else {
        return;
    };
    let sizes = SuiteSizes::from_env();
    suite::msm_g1_vartime(&b, &sizes, 0x4731_0004);
    suite::msm_g2_vartime(&b, &sizes, 0x4732_0004);
    suite::proof(&b, sizes.proof_log, 0x5052_4f03);
}

#[test]
fn msm_g2_vartime() {
    let Some(b) = backend() else { return };
    suite::msm_g2_vartime(b, &SuiteSizes::from_env(), 0x4732_0002);
}

#[test]
fn whole_proof_matches_cpu_and_verifies() {
    let Some(b) = backend() else { return };
    suite::proof(b, SuiteSizes::from_env().proof_log, 0x5052_4f01);
}

/// Compact partitions, expanded on the device, prove byte for byte what raw ones do.
#[test]
fn compact_proofs_match_raw_ones() {
    let Some(b) = backend() else { return };
    suite::compact_proof(b, SuiteSizes::from_env().proof_log, 0x5052_4f05);
}

/// The proof from page-locked host vectors the backend lends (on by default on GPUs;
/// forced on here so PoCL covers it): synthesis writes into them and uploads send them
/// directly.
#[test]
fn whole_proof_from_lent_host_vectors() {
    let Some(b) = backend_or_skip(OpenClConfig {
        devices: DeviceSelector::Index(test_device()),
        pinned_staging: Some(true),
        ..OpenClConfig::default()
    }) else {
        return;
    };
    suite::proof(&b, SuiteSizes::from_env().proof_log, 0x5052_4f04);
}

/// Mapped parameters with the points decoded on the device (forced on: PoCL would leave
/// them to the host), on one device, on every test device, and under the dual backend; and
/// with the default, which on PoCL decodes on the host.
#[test]
fn mapped_parameters_decoded_on_the_device() {
    let decoding = |devices| {
        backend_or_skip(OpenClConfig {
            devices,
            device_decode: Some(true),
            ..OpenClConfig::default()
        })
    };
    let Some(b) = decoding(DeviceSelector::Index(test_device())) else {
        return;
    };
    suite::mapped_parameters(&b, 8, 0x4d41_5001);
    let Some(b) = decoding(DeviceSelector::Indices(test_devices())) else {
        return;
    };
    suite::mapped_parameters(&b, 8, 0x4d41_5002);
    let Some(b) = decoding(DeviceSelector::Indices(test_devices())) else {
        return;
    };
    let dual = Dual::new(b, CpuBackend::new());
    suite::mapped_parameters(&dual, 7, 0x4d41_5003);
    assert!(
        dual.decoded_uploads() > 0,
        "no upload reached the device's decoder"
    );
    let Some(b) = backend() else { return };
    suite::mapped_parameters(b, 7, 0x4d41_5004);
}

#[test]
fn whole_proof_under_dual_backend() {
    let Some(b) = backend_or_skip(OpenClConfig {
        devices: DeviceSelector::Index(test_device()),
        ..OpenClConfig::default()
    }) else {
        return;
    };
    suite::proof(&Dual::new(b, CpuBackend::new()), 9, 0x5052_4f02);
}
