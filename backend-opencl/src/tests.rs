//! The backend's own operations on the device: pointwise work, powers, transfers and
//! lent host memory.

use ff::Field;
use sluice_backend::{BackendError, ComputeBackend, MemoryKind};
use sluice_field::Fr;

use crate::testing::{backend, rng, split_backend};
use crate::OpenClBackend;

fn random(n: usize, seed: u64) -> Vec<Fr> {
    let mut r = rng(seed);
    (0..n).map(|_| Fr::random(&mut r)).collect()
}

fn pointwise_ops_match_host(b: &OpenClBackend, n: usize, seed: u64) {
    let (x, y) = (random(n, seed), random(n, seed + 1));
    let s = Fr::random(rng(seed + 2));
    let mut a = b.upload_fr("a", &x, x.len()).unwrap();
    let c = b.upload_fr("c", &y, y.len()).unwrap();
    let read = |a: &crate::OpenClFrBuffer| {
        let mut out = vec![Fr::ZERO; n];
        b.read_fr(a, 0, &mut out).unwrap();
        out
    };
    b.mul_assign(&mut a, &c).unwrap();
    let mut want: Vec<Fr> = x.iter().zip(&y).map(|(p, q)| p * q).collect();
    assert_eq!(read(&a), want, "mul_assign, n {n}, seed {seed}");
    b.sub_assign(&mut a, &c).unwrap();
    want.iter_mut().zip(&y).for_each(|(w, q)| *w -= q);
    assert_eq!(read(&a), want, "sub_assign, n {n}, seed {seed}");
    b.scale(&mut a, s).unwrap();
    want.iter_mut().for_each(|w| *w *= s);
    assert_eq!(read(&a), want, "scale, n {n}, seed {seed}");
    b.distribute_powers(&mut a, s).unwrap();
    let mut p = Fr::ONE;
    for w in want.iter_mut() {
        *w *= p;
        p *= s;
    }
    assert_eq!(read(&a), want, "distribute_powers, n {n}, seed {seed}");
    // Partial writes and reads across chunk boundaries.
    let patch = random(n / 3 + 1, seed + 3);
    let at = n / 2;
    let end = (at + patch.len()).min(n);
    b.write_fr(&mut a, at, &patch[..end - at]).unwrap();
    want[at..end].copy_from_slice(&patch[..end - at]);
    let mut part = vec![Fr::ZERO; end - at / 2];
    b.read_fr(&a, at / 2, &mut part).unwrap();
    assert_eq!(
        part,
        want[at / 2..end],
        "write_fr/read_fr, n {n}, seed {seed}"
    );
}

/// A group size over the kernel's limit is lowered to it (`Launch::run_any_group`, the
/// MSM point kernels' launch), and the bounds-checked kernel still covers every item.
#[test]
fn oversized_groups_are_lowered_to_the_kernel_limit() {
    use crate::repr::{as_words, as_words_mut};
    use crate::source::ProgramKind;
    let Some(b) = backend() else { return };
    let ctx = &b.devices[0];
    let seed = 4200;
    let mut r = rng(seed);
    let n = 1000;
    let x: Vec<Fr> = (0..n).map(|_| Fr::random(&mut r)).collect();
    let y: Vec<Fr> = (0..n).map(|_| Fr::random(&mut r)).collect();
    let (xm, ym) = (
        ctx.raw_buffer("x", n * 8).unwrap(),
        ctx.raw_buffer("y", n * 8).unwrap(),
    );
    ctx.write(&xm, 0, as_words(&x)).unwrap();
    ctx.write(&ym, 0, as_words(&y)).unwrap();
    let launch = ctx
        .kernel(ProgramKind::Fr, "fr_sub_assign")
        .unwrap()
        .mem(&xm)
        .unwrap()
        .mem(&ym)
        .unwrap()
        .u32(n as u32)
        .unwrap();
    let limit = launch.work_group_limit();
    assert!(limit > 0, "the driver reports no work-group limit");
    launch.run_any_group(n, Some(4 * limit)).unwrap();
    let mut got = vec![Fr::ZERO; n];
    ctx.read(&xm, 0, as_words_mut(&mut got)).unwrap();
    let want: Vec<Fr> = x.iter().zip(&y).map(|(a, b)| a - b).collect();
    assert!(
        got == want,
        "seed {seed}: x - y differs with a lowered group"
    );
}

#[test]
fn pointwise_ops_match_the_host() {
    let Some(b) = backend() else { return };
    for (i, n) in [1usize, 2, 3, 255, 1000, 4096].into_iter().enumerate() {
        pointwise_ops_match_host(b, n, 100 + i as u64);
    }
}

#[test]
fn pointwise_ops_match_the_host_on_split_buffers() {
    let Some(b) = split_backend() else { return };
    for (i, n) in [127usize, 128, 129, 1000].into_iter().enumerate() {
        pointwise_ops_match_host(b, n, 200 + i as u64);
    }
}

/// `segment_powers` of `len` random elements against the definition, element `j` of
/// segment `k` times `(base ratio^k)^j` by independent exponentiations.
fn segment_powers_match_host(b: &OpenClBackend, len: usize, segment: usize, seed: u64) {
    let x = random(len, seed);
    let (base, ratio) = (Fr::random(rng(seed + 1)), Fr::random(rng(seed + 2)));
    let want: Vec<Fr> = x
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let (k, j) = ((i / segment) as u64, (i % segment) as u64);
            v * (base * ratio.pow_vartime([k])).pow_vartime([j])
        })
        .collect();
    let mut a = b.upload_fr("a", &x, x.len()).unwrap();
    b.segment_powers(&mut a, segment, base, ratio).unwrap();
    let mut got = vec![Fr::ZERO; len];
    b.read_fr(&a, 0, &mut got).unwrap();
    assert!(
        got == want,
        "segment_powers of {len} in segments of {segment} (seed {seed})"
    );
}

#[test]
fn segment_powers_match_the_definition() {
    let Some(b) = backend() else { return };
    // Work items' runs (64 elements, 32 apart, in blocks of 2048) that cross segments
    // (1, 2, 40, 100, 1000), that stay within one (1024), and the whole buffer; a
    // partial last block (5000, 6000).
    for (i, (len, segment)) in [
        (1024, 1),
        (1024, 2),
        (1000, 40),
        (1000, 100),
        (4096, 1024),
        (300, 300),
        (5000, 1000),
        (6000, 6000),
    ]
    .into_iter()
    .enumerate()
    {
        segment_powers_match_host(b, len, segment, 500 + 10 * i as u64);
    }
    let mut a = b.alloc_fr("a", 1000).unwrap();
    for segment in [0, 3, 2000] {
        assert!(
            matches!(
                b.segment_powers(&mut a, segment, Fr::ONE, Fr::ONE),
                Err(BackendError::InvalidInput(_))
            ),
            "segment {segment} of 1000"
        );
    }
}

#[test]
fn segment_powers_match_the_definition_on_split_buffers() {
    let Some(b) = split_backend() else { return };
    // Chunks of 128: segments straddling chunks (48, 250), within them (32), and a last
    // partial chunk.
    for (i, (len, segment)) in [(384, 48), (1000, 250), (1000, 40), (320, 32)]
        .into_iter()
        .enumerate()
    {
        segment_powers_match_host(b, len, segment, 600 + 10 * i as u64);
    }
}

/// Transfers through the pinned staging buffers (forced on, as PoCL would not use them)
/// round-trip exactly: several staging pieces, a partial last piece, offsets.
#[test]
fn staged_transfers_round_trip() {
    let Some(b) = crate::testing::staged_backend() else {
        return;
    };
    let seed = 4100;
    let mut r = rng(seed);
    // 2^20 + 12345 scalars: two full 16 MiB pieces and a partial one (with
    // SLUICE_STAGING_KIB=4096, more pieces than slots: each slot reused both ways).
    let n = (1 << 20) + 12345;
    let x: Vec<Fr> = (0..n).map(|_| Fr::random(&mut r)).collect();
    let mut buf = b.alloc_fr("staged", n).unwrap();
    b.write_fr(&mut buf, 0, &x).unwrap();
    let mut y = vec![Fr::ZERO; n];
    b.read_fr(&buf, 0, &mut y).unwrap();
    assert!(x == y, "seed {seed}: staged round trip differs");
    // At an offset, longer than the staging threshold.
    let at = 777;
    let tail: Vec<Fr> = (0..n - at).map(|_| Fr::random(&mut r)).collect();
    b.write_fr(&mut buf, at, &tail).unwrap();
    let mut z = vec![Fr::ZERO; n - at - 5];
    b.read_fr(&buf, at + 5, &mut z).unwrap();
    assert!(
        z[..] == tail[5..],
        "seed {seed}: staged transfer at an offset differs"
    );
    b.read_fr(&buf, 0, &mut y[..at]).unwrap();
    assert!(y[..at] == x[..at], "seed {seed}: the head was overwritten");
    // Staged through the transfer queue while a transform of `buf` is queued, padded.
    b.scale(&mut buf, Fr::from(3)).unwrap();
    let padded = b.upload_fr("padded", &x[..n - 99], n).unwrap();
    b.read_fr(&padded, 0, &mut y).unwrap();
    assert!(
        y[..n - 99] == x[..n - 99] && y[n - 99..].iter().all(|v| v.is_zero_vartime()),
        "seed {seed}: staged padded upload differs"
    );
}

/// Lent page-locked host vectors (staging forced on, as for PoCL it is not): their
/// uploads are recognised as lent and sent directly, whole, in part and padded, and
/// round-trip exactly; ordinary vectors are not recognised.
#[test]
fn lent_host_vectors_upload_directly_and_exactly() {
    let Some(b) = crate::testing::staged_backend() else {
        return;
    };
    let seed = 4200;
    let lender = b
        .host_allocator()
        .expect("staged transfers lend host vectors");
    let pool = b.primary().pinned.clone().expect("a pool");
    // Longer than the staging threshold (2^20 words), so an ordinary vector is staged.
    let n = (1 << 18) + 4321;
    let x = random(n, seed);
    let mut lent = lender.fr_vec(n).expect("the pool lends");
    lent.extend_from_slice(&x);
    assert!(lent.is_lent() && lent.capacity() == n);
    assert!(pool.holds(crate::repr::as_words(&lent)));
    assert!(pool.holds(crate::repr::as_words(&lent[1000..2000])));
    assert!(
        !pool.holds(crate::repr::as_words(&x)),
        "an ordinary vector is staged"
    );
    let mut y = vec![Fr::ZERO; n + 77];
    let whole = b.upload_fr("lent", &lent, n + 77).unwrap();
    b.read_fr(&whole, 0, &mut y).unwrap();
    assert!(
        y[..n] == x[..] && y[n..].iter().all(|v| v.is_zero_vartime()),
        "seed {seed}: lent padded upload differs"
    );
    let mut part = b.alloc_fr("part", n).unwrap();
    b.write_fr(&mut part, 5, &lent[10..n - 3]).unwrap();
    b.read_fr(&part, 5, &mut y[..n - 13]).unwrap();
    assert!(
        y[..n - 13] == x[10..n - 3],
        "seed {seed}: lent partial write differs"
    );
    let bytes = pool.bytes();
    // A vector given back is kept: the next of its size reuses the block, no new one.
    let at = lent.as_ptr();
    drop(lent);
    let again = lender.fr_vec(n).unwrap();
    assert!(again.as_ptr() == at && again.is_empty() && pool.bytes() == bytes);
}

/// A pool lends up to its limit, then refuses (callers use ordinary memory); kept blocks
/// are reused, freed to make room for others, and at most `IDLE_BLOCKS` are kept.
#[test]
fn pinned_pool_keeps_its_limit() {
    use crate::pinned::{PinnedLender, PinnedPool};
    use sluice_backend::HostAllocator;
    let Some(b) = backend() else { return };
    let ctx = b.primary();
    let pool =
        std::sync::Arc::new(PinnedPool::new(&ctx.context, ctx.info.device_id, 1 << 20).unwrap());
    let lender = PinnedLender(pool.clone());
    let kib = |k: usize| k * 1024 / 32;
    let (v1, v2) = (
        lender.fr_vec(kib(400)).unwrap(),
        lender.fr_vec(kib(400)).unwrap(),
    );
    assert_eq!(pool.bytes(), 800 << 10);
    assert!(lender.fr_vec(kib(400)).is_none(), "past the limit");
    assert!(lender.fr_vec(0).is_none(), "an empty vector needs no block");
    // A block given back is kept and lent again, for its size or down to half of it.
    let at = v1.as_ptr();
    drop(v1);
    let again = lender.fr_vec(kib(400)).unwrap();
    assert!(again.as_ptr() == at && pool.bytes() == 800 << 10);
    assert!(
        lender.fr_vec(kib(300)).is_none(),
        "past the limit, nothing kept"
    );
    drop(again);
    let smaller = lender.fr_vec(kib(300)).unwrap();
    assert!(smaller.as_ptr() == at && pool.bytes() == 800 << 10);
    drop(smaller);
    // Under half: a block of its own.
    let quarter = lender.fr_vec(kib(100)).unwrap();
    assert!(quarter.as_ptr() != at && pool.bytes() == 900 << 10);
    drop(quarter);
    // No kept block fits 500 KiB and the limit is reached: kept blocks are freed.
    let big = lender
        .fr_vec(kib(500))
        .expect("room made by freeing kept blocks");
    assert_eq!((pool.bytes(), pool.kept()), (900 << 10, 0));
    drop((big, v2));
    let many: Vec<_> = (0..5).map(|_| lender.fr_vec(kib(50)).unwrap()).collect();
    drop(many);
    assert_eq!(pool.kept(), 3, "at most three blocks kept");
    assert!(pool.bytes() <= 1 << 20);
}

/// `upload_fr` with padding: the data then zeros, across chunk boundaries of a split buffer,
/// with kernels queued on another buffer while it goes up; longer data is refused.
#[test]
fn padded_uploads_hold_the_data_then_zeros() {
    for b in [backend(), split_backend()].into_iter().flatten() {
        let seed = 4200;
        let x = random(1000, seed);
        let s = Fr::random(rng(seed + 1));
        let mut busy = b.upload_fr("busy", &x[..512], x[..512].len()).unwrap();
        let mut want: Vec<Fr> = x[..512].to_vec();
        let cases = [
            (1000, 0),
            (1000, 1),
            (1000, 128),
            (1000, 300),
            (1000, 1000),
            (128, 127),
        ];
        for (len, filled) in cases {
            // Queued work on another buffer: the upload must neither wait for it nor
            // disturb it.
            b.scale(&mut busy, s).unwrap();
            want.iter_mut().for_each(|w| *w *= s);
            let buf = b.upload_fr("padded", &x[..filled], len).unwrap();
            let mut got = vec![Fr::ONE; len];
            b.read_fr(&buf, 0, &mut got).unwrap();
            assert!(
                got[..filled] == x[..filled] && got[filled..].iter().all(|v| v.is_zero_vartime()),
                "seed {seed}: {filled} values padded to {len}"
            );
        }
        let mut back = vec![Fr::ZERO; 512];
        b.read_fr(&busy, 0, &mut back).unwrap();
        assert!(back == want, "seed {seed}: the queued work was disturbed");
        assert!(matches!(
            b.upload_fr("long", &x[..10], 9),
            Err(BackendError::LengthMismatch { .. })
        ));
    }
}

#[test]
fn alloc_is_zeroed_tracked_and_limited() {
    let Some(b) = backend() else { return };
    let before = b.tracker().current(MemoryKind::Device);
    let buf = b.alloc_fr("zeros", 300).unwrap();
    assert!(b.tracker().current(MemoryKind::Device) >= before + 300 * 32);
    let mut out = vec![Fr::ONE; 300];
    b.read_fr(&buf, 0, &mut out).unwrap();
    assert!(out.iter().all(|v| bool::from(v.is_zero())));
    assert!(matches!(
        b.read_fr(&buf, 299, &mut [Fr::ZERO; 2]),
        Err(BackendError::LengthMismatch { .. })
    ));
    let other = b.alloc_fr("other", 3).unwrap();
    let mut buf = buf;
    assert!(matches!(
        b.mul_assign(&mut buf, &other),
        Err(BackendError::LengthMismatch { .. })
    ));
    drop((buf, other));

    let info = b.memory_info().unwrap();
    assert!(
        info.total_bytes > 0
            && info.max_alloc_bytes > 0
            && info.max_alloc_bytes <= info.total_bytes
    );
    let limited = crate::testing::backend_with(crate::OpenClConfig {
        devices: crate::DeviceSelector::Index(crate::testing::test_device()),
        tracker: Some(sluice_backend::MemoryTracker::new(None, Some(1 << 20))),
        ..Default::default()
    })
    .unwrap();
    match limited.alloc_fr("too big", (1 << 15) + 1) {
        Err(BackendError::OutOfMemory {
            requested, what, ..
        }) => {
            assert_eq!(
                (requested, what.as_str()),
                (((1 << 15) + 1) * 32, "too big")
            );
        }
        Err(e) => panic!("expected OutOfMemory, got {e}"),
        Ok(_) => panic!("expected OutOfMemory, got a buffer"),
    }
    assert_eq!(limited.tracker().current(MemoryKind::Device), 0);
}

/// `first()` takes a GPU whenever the machine has one (the first), and the default
/// configuration every GPU; only without a GPU do they take device 0 (PoCL here).
#[test]
fn first_and_the_default_prefer_gpus() {
    let Some(b) = crate::test_support::backend_or_skip(crate::OpenClConfig::default()) else {
        return;
    };
    let all = crate::devices().unwrap();
    let gpus: Vec<usize> = all.iter().filter(|d| d.is_gpu).map(|d| d.index).collect();
    let taken =
        |b: &OpenClBackend| -> Vec<usize> { b.device_infos().iter().map(|d| d.index).collect() };
    let first = OpenClBackend::first().unwrap();
    match gpus.is_empty() {
        true => assert_eq!((taken(&b), taken(&first)), (vec![0], vec![0])),
        false => assert_eq!((taken(&b), taken(&first)), (gpus.clone(), vec![gpus[0]])),
    }
}

/// With profiling on, a host mark is a command of the profile, under its name; with
/// profiling off it records nothing and fails nothing.
#[test]
fn profile_marks_show_in_the_report() {
    use crate::testing::{backend_with, test_device};
    use crate::{DeviceSelector, OpenClConfig, OpenClTuning};
    let Some(b) = backend_with(OpenClConfig {
        devices: DeviceSelector::Index(test_device()),
        tuning: OpenClTuning {
            profile: true,
            ..OpenClTuning::default()
        },
        ..OpenClConfig::default()
    }) else {
        return;
    };
    let buf = b.alloc_fr("marked", 64).unwrap();
    b.primary().mark("after the fill");
    let mut out = vec![Fr::ONE; 64];
    b.read_fr(&buf, 0, &mut out).unwrap();
    assert_eq!(out, vec![Fr::ZERO; 64]);
    let report = b.profile_report().unwrap();
    assert!(report.contains("(mark: after the fill)"), "{report}");
    let Some(plain) = backend() else { return };
    plain.primary().mark("unprofiled");
    assert!(plain.profile_report().is_none());
}

/// The configuration's own overrides: the device decoder switched either way, a bad value
/// an error naming the variable.
#[test]
fn config_overrides_switch_the_device_decoder() {
    use crate::{OpenClConfig, OpenClConfigError};
    use std::ffi::OsString;
    let with = |value: &'static str| {
        OpenClConfig::default().with_overrides(&move |name| {
            (name == "SLUICE_OPENCL_DEVICE_DECODE").then(|| OsString::from(value))
        })
    };
    assert_eq!(with("1").unwrap().device_decode, Some(true));
    assert_eq!(with("0").unwrap().device_decode, Some(false));
    assert!(matches!(
        with("on"),
        Err(OpenClConfigError::BadOverride {
            name: "SLUICE_OPENCL_DEVICE_DECODE",
            ..
        })
    ));
    assert_eq!(OpenClConfig::default().device_decode, None);
}

/// The kernel cache's directory is resolved with the configuration's other overrides, not
/// at build time: `SLUICE_KERNEL_CACHE`, else the user's cache (`XDG_CACHE_HOME`, else
/// `HOME`, empty values unset) for a default setting, else none; a directory or `Disabled`
/// set in code stays. A configuration that never read the environment names no directory.
#[test]
fn config_overrides_resolve_the_kernel_cache() {
    use crate::{KernelCache, OpenClConfig};
    use std::ffi::OsString;
    use std::path::PathBuf;
    let resolve = |cache: KernelCache, pairs: &[(&'static str, &'static str)]| {
        let pairs = pairs.to_vec();
        OpenClConfig {
            kernel_cache: cache,
            ..OpenClConfig::default()
        }
        .with_overrides(&move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        })
        .unwrap()
        .kernel_cache
    };
    let dir = |d: &str| KernelCache::Dir(PathBuf::from(d));
    let default = KernelCache::Default;
    let cases = [
        (default.clone(), vec![], KernelCache::Disabled),
        (
            default.clone(),
            vec![("HOME", "/h")],
            dir("/h/.cache/sluice/kernels"),
        ),
        (
            default.clone(),
            vec![("HOME", "/h"), ("XDG_CACHE_HOME", "/x")],
            dir("/x/sluice/kernels"),
        ),
        (
            default.clone(),
            vec![("HOME", "/h"), ("XDG_CACHE_HOME", "")],
            dir("/h/.cache/sluice/kernels"),
        ),
        (
            default.clone(),
            vec![("HOME", "/h"), ("SLUICE_KERNEL_CACHE", "/k")],
            dir("/k"),
        ),
        (dir("/mine"), vec![("HOME", "/h")], dir("/mine")),
        (
            KernelCache::Disabled,
            vec![("HOME", "/h")],
            KernelCache::Disabled,
        ),
        (dir("/mine"), vec![("SLUICE_KERNEL_CACHE", "/k")], dir("/k")),
    ];
    for (cache, pairs, want) in cases {
        assert_eq!(resolve(cache.clone(), &pairs), want, "{cache:?}, {pairs:?}");
    }
    assert_eq!(OpenClConfig::default().kernel_cache.dir(), None);
}
