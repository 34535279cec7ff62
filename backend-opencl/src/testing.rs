//! What every test needs: one backend per process (programs build once), seeded RNGs.

use std::sync::OnceLock;

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

pub(crate) use crate::test_support::{backend_or_skip as backend_with, test_device};
use crate::{DeviceSelector, MsmTuning, OpenClBackend, OpenClConfig, OpenClTuning};

/// The process-wide backend on the test device (its programs build once for all tests).
/// This and the shared backends below decode bases on the device, forced on: PoCL would not.
pub(crate) fn backend() -> Option<&'static OpenClBackend> {
    static B: OnceLock<Option<OpenClBackend>> = OnceLock::new();
    B.get_or_init(|| {
        backend_with(OpenClConfig {
            devices: DeviceSelector::Index(test_device()),
            device_decode: Some(true),
            ..OpenClConfig::default()
        })
    })
    .as_ref()
}

/// A backend on the test device with transfers staged and host vectors lent (forced
/// on: PoCL would not use them). Not shared: each test sees its own pool and staging.
pub(crate) fn staged_backend() -> Option<OpenClBackend> {
    backend_with(OpenClConfig {
        devices: DeviceSelector::Index(test_device()),
        pinned_staging: Some(true),
        ..OpenClConfig::default()
    })
}

/// Two contexts on the test device with small chunks: the multi-device and split-buffer
/// paths at test sizes (process-wide too).
pub(crate) fn split_backend() -> Option<&'static OpenClBackend> {
    static B: OnceLock<Option<OpenClBackend>> = OnceLock::new();
    B.get_or_init(|| {
        backend_with(OpenClConfig {
            devices: DeviceSelector::Indices(vec![test_device(); 2]),
            max_chunk_bytes: Some(SPLIT_CHUNK_BYTES),
            device_decode: Some(true),
            ..OpenClConfig::default()
        })
    })
    .as_ref()
}

/// [`backend`] and [`split_backend`] with shifted bases ([`OpenClConfig::shifted_bases`]);
/// `split` picks which. The unsplit one's windows are [`SHIFTED_WINDOW_BITS`].
pub(crate) fn shifted_backend(split: bool) -> Option<&'static OpenClBackend> {
    static B: [OnceLock<Option<OpenClBackend>>; 2] = [OnceLock::new(), OnceLock::new()];
    B[split as usize]
        .get_or_init(|| {
            backend_with(OpenClConfig {
                devices: match split {
                    true => DeviceSelector::Indices(vec![test_device(); 2]),
                    false => DeviceSelector::Index(test_device()),
                },
                max_chunk_bytes: split.then_some(SPLIT_CHUNK_BYTES),
                shifted_bases: true,
                device_decode: Some(true),
                tuning: OpenClTuning {
                    msm: MsmTuning {
                        window_bits: (!split).then_some(SHIFTED_WINDOW_BITS),
                        ..MsmTuning::default()
                    },
                    ..OpenClTuning::default()
                },
                ..OpenClConfig::default()
            })
        })
        .as_ref()
}

/// The window of [`shifted_backend`]'s unsplit tables and plans: a folded set of 2^13
/// buckets, two blocks of the bucket scan, over a few thousand bases (the planner picks it
/// itself only from about 2^15, which on PoCL took a minute of the suite).
pub(crate) const SHIFTED_WINDOW_BITS: usize = 14;

/// The chunk cap of [`split_backend`]: 2^12 bytes, 128 Fr or 42 G1 bases per chunk.
pub(crate) const SPLIT_CHUNK_BYTES: u64 = 1 << 12;

pub(crate) fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}
