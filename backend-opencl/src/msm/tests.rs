//! The device MSMs against sluice-msm, and the plans and tables they are shaped by.

use ff::Field;
use group::{Curve, Group};
use sluice_backend::{BackendError, ComputeBackend, Density, Scalars};
use sluice_field::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

use super::plan::{table_window, window_groups, Plan, DIGIT_BITS};
use crate::testing::{backend, backend_with, rng, shifted_backend, split_backend, test_device};
use crate::tuning::{MsmTuning, OpenClTuning};
use crate::{DeviceSelector, OpenClBackend, OpenClConfig};

/// `n` distinct bases (a seeded random start plus multiples of a random step), with the
/// identity at a few positions.
fn bases<G: Group + Curve>(n: usize, seed: u64) -> Vec<G::AffineRepr>
where
    G::AffineRepr: Default + Copy,
{
    let mut r = rng(seed);
    let step = G::random(&mut r);
    let mut p = G::random(&mut r);
    let mut v: Vec<G> = (0..n)
        .map(|i| {
            p += step;
            if i % 97 == 5 {
                G::identity()
            } else {
                p
            }
        })
        .collect();
    if let Some(last) = v.last_mut() {
        *last = G::identity();
    }
    let mut out = vec![G::AffineRepr::default(); n];
    G::batch_normalize(&v, &mut out);
    v.clear();
    out
}

/// Random scalars with 0, 1 and -1 sprinkled in.
fn scalars(n: usize, seed: u64) -> Vec<Fr> {
    let mut r = rng(seed);
    (0..n)
        .map(|i| match i % 11 {
            3 => Fr::ZERO,
            4 => Fr::ONE,
            5 => -Fr::ONE,
            _ => Fr::random(&mut r),
        })
        .collect()
}

fn density(n: usize, seed: u64) -> Density {
    let mut r = rng(seed);
    (0..n).map(|_| r.next_u32() % 3 != 0).collect()
}

use rand_core::RngCore;

/// Every way of calling `msm_vartime` against sluice-msm on the same inputs.
macro_rules! check_msm {
    ($b:expr, $n:expr, $seed:expr, $proj:ty, $upload:ident, $msm:ident, $cpu:path) => {{
        let (b, n, seed): (&OpenClBackend, usize, u64) = ($b, $n, $seed);
        let skip = 3;
        let all = bases::<$proj>(n + skip, seed);
        let resident = b.$upload("bases", &all).unwrap();
        let s = scalars(n, seed + 1);
        let want = $cpu(&all[skip..], &s, None).unwrap();
        let got = b.$msm(&resident, skip, Scalars::Host(&s), None).unwrap();
        assert!(got == want, "host scalars, n {n}, seed {seed}");
        let sbuf = b.upload_fr("scalars", &s, s.len()).unwrap();
        let got = b
            .$msm(&resident, skip, Scalars::Buffer(&sbuf), None)
            .unwrap();
        assert!(got == want, "buffer scalars, n {n}, seed {seed}");
        let owned = b.upload_fr("owned scalars", &s, s.len()).unwrap();
        let got = b
            .$msm(&resident, skip, Scalars::Owned(owned), None)
            .unwrap();
        assert!(got == want, "owned scalars, n {n}, seed {seed}");

        // Density: the bases are dense over the used variables. A density of the first
        // n - 1 scalars (h's shape) reads a scalar buffer in place.
        let mut prefix = Density::full(n - 1);
        prefix.push(false);
        for (d, what) in [
            (density(n, seed + 2), "density"),
            (prefix, "prefix density"),
        ] {
            let used = d.count_ones();
            let want = $cpu(&all[skip..skip + used], &s, Some(&d)).unwrap();
            let got = b
                .$msm(&resident, skip, Scalars::Host(&s), Some(&d))
                .unwrap();
            assert!(got == want, "host scalars with {what}, n {n}, seed {seed}");
            let got = b
                .$msm(&resident, skip, Scalars::Buffer(&sbuf), Some(&d))
                .unwrap();
            assert!(
                got == want,
                "buffer scalars with {what}, n {n}, seed {seed}"
            );
            let owned = b.upload_fr("owned scalars", &s, s.len()).unwrap();
            let got = b
                .$msm(&resident, skip, Scalars::Owned(owned), Some(&d))
                .unwrap();
            assert!(got == want, "owned scalars with {what}, n {n}, seed {seed}");
        }

        // Fewer scalars than bases uses a prefix; more is an error.
        let got = b
            .$msm(&resident, 0, Scalars::Host(&s[..n / 2]), None)
            .unwrap();
        let want = $cpu(&all[..n / 2], &s[..n / 2], None).unwrap();
        assert!(got == want, "prefix, n {n}, seed {seed}");
        let too_many = vec![Fr::ONE; n + skip + 1];
        assert!(matches!(
            b.$msm(&resident, 0, Scalars::Host(&too_many), None),
            Err(BackendError::LengthMismatch { .. })
        ));
        let empty = b.$msm(&resident, 0, Scalars::Host(&[]), None).unwrap();
        assert!(bool::from(empty.is_identity()), "empty msm, seed {seed}");
    }};
}

#[test]
fn g1_msm_matches_sluice_msm() {
    let Some(b) = backend() else { return };
    for (i, n) in [1usize, 2, 100, 1 << 12].into_iter().enumerate() {
        check_msm!(
            b,
            n,
            1000 + i as u64,
            G1Projective,
            upload_bases,
            msm_vartime,
            sluice_msm::msm_g1_vartime
        );
    }
}

/// The tracked device peak of an MSM (host scalars, and a density-masked buffer) stays
/// within what `msm_scratch_bytes` reserves, on one device and on two.
#[test]
fn msm_scratch_covers_the_tracked_peak() {
    use crate::testing::{backend_with, test_device};
    use crate::{DeviceSelector, OpenClConfig};
    use sluice_backend::{MemoryKind, MemoryTracker};
    let seed = 3100;
    // The last case makes the devices unequal: the second's allocations are capped at
    // 64 KiB (its chunks of bases split, and the shared table takes its limit).
    for (devices, shifted_bases, second_cap) in [
        (vec![test_device()], false, None),
        (vec![test_device(); 2], false, None),
        (vec![test_device()], true, None),
        (vec![test_device(); 2], true, Some(64 << 10)),
    ] {
        let tracker = MemoryTracker::default();
        let Some(mut b) = backend_with(OpenClConfig {
            devices: DeviceSelector::Indices(devices.clone()),
            tracker: Some(tracker.clone()),
            shifted_bases,
            ..OpenClConfig::default()
        }) else {
            return;
        };
        if let Some(cap) = second_cap {
            b.devices[1].max_chunk_bytes = cap;
        }
        let n = 3000;
        let g1 = b
            .upload_bases("g1", &bases::<G1Projective>(n, seed))
            .unwrap();
        let g2 = b
            .upload_bases("g2", &bases::<G2Projective>(n, seed))
            .unwrap();
        let mut r = rng(seed);
        let scalars: Vec<Fr> = (0..n).map(|_| Fr::random(&mut r)).collect();
        let mut buf = b.alloc_fr("scalars", n).unwrap();
        b.write_fr(&mut buf, 0, &scalars).unwrap();
        let density: Density = (0..n).map(|i| i % 3 != 0).collect();
        // Each MSM's peak over what was held just before it: an earlier MSM's spare
        // scratch among that, which this one may reuse.
        let resident = std::cell::Cell::new(0);
        let reset = || {
            tracker.reset_peaks();
            resident.set(tracker.current(MemoryKind::Device));
        };
        let within = |peak: u64, reserved: u64, what: &str| {
            let own = peak - resident.get();
            assert!(
                own <= reserved,
                "{what} on {devices:?} (second capped at {second_cap:?}): {own} bytes > \
                 {reserved} reserved (seed {seed})"
            );
        };
        reset();
        b.msm_vartime(&g1, 0, Scalars::Host(&scalars), None)
            .unwrap();
        within(
            tracker.peak(MemoryKind::Device),
            b.msm_scratch_bytes::<G1Affine>(n),
            "G1 host scalars",
        );
        reset();
        b.msm_vartime(&g1, 0, Scalars::Buffer(&buf), Some(&density))
            .unwrap();
        within(
            tracker.peak(MemoryKind::Device),
            b.msm_scratch_bytes::<G1Affine>(n),
            "G1 buffer",
        );
        reset();
        b.msm_vartime(&g2, 0, Scalars::Host(&scalars), None)
            .unwrap();
        within(
            tracker.peak(MemoryKind::Device),
            b.msm_scratch_bytes::<G2Affine>(n),
            "G2 host scalars",
        );
    }
}

/// An MSM that owns its scalar buffer (h's prefix density) converts the scalars where
/// they are: its tracked peak is a borrowed buffer's less the copy (32 bytes a used
/// scalar), and the buffer is freed when it returns.
#[test]
fn owned_scalars_convert_in_place() {
    use crate::testing::{backend_with, test_device};
    use crate::{DeviceSelector, OpenClConfig};
    use sluice_backend::{MemoryKind, MemoryTracker};
    let seed = 3200;
    let tracker = MemoryTracker::default();
    let Some(b) = backend_with(OpenClConfig {
        devices: DeviceSelector::Index(test_device()),
        tracker: Some(tracker.clone()),
        ..OpenClConfig::default()
    }) else {
        return;
    };
    let n = 3000;
    let all = bases::<G1Projective>(n, seed);
    let g1 = b.upload_bases("g1", &all).unwrap();
    let s = scalars(n, seed + 1);
    let mut prefix = Density::full(n - 1);
    prefix.push(false);
    let want = sluice_msm::msm_g1_vartime(&all[..n - 1], &s, Some(&prefix)).unwrap();
    let own_peak = |scalars: Scalars<'_, OpenClBackend>, what: &str| {
        let held = tracker.current(MemoryKind::Device);
        tracker.reset_peaks();
        let got = b.msm_vartime(&g1, 0, scalars, Some(&prefix)).unwrap();
        assert!(got == want, "{what} scalars (seed {seed})");
        tracker.peak(MemoryKind::Device) - held
    };
    let buf = b.upload_fr("borrowed scalars", &s, s.len()).unwrap();
    let borrowed = own_peak(Scalars::Buffer(&buf), "borrowed");
    drop(buf);
    // Freed at the queue's drain, not at the drop: out of the next MSM's peak.
    b.synchronize().unwrap();
    let buf = b.upload_fr("owned scalars", &s, s.len()).unwrap();
    let held = tracker.current(MemoryKind::Device);
    let owned = own_peak(Scalars::Owned(buf), "owned");
    assert_eq!(
        borrowed - owned,
        (n as u64 - 1) * 32,
        "peaks {borrowed} borrowed, {owned} owned (seed {seed})"
    );
    // The MSM's scratch stays spare (counted) until a finish frees it.
    b.synchronize().unwrap();
    assert_eq!(
        tracker.current(MemoryKind::Device),
        held - n as u64 * 32,
        "the owned buffer is freed (seed {seed})"
    );
}

#[test]
fn g2_msm_matches_sluice_msm() {
    let Some(b) = backend() else { return };
    for (i, n) in [1usize, 37, 1 << 10].into_iter().enumerate() {
        check_msm!(
            b,
            n,
            2000 + i as u64,
            G2Projective,
            upload_bases,
            msm_vartime,
            sluice_msm::msm_g2_vartime
        );
    }
}

/// A G2 MSM of 2^15 scalars: on a CPU driver the point kernels once ran in PoCL's
/// 4096-item groups, whose private memory crashed the reduce from this size on.
#[test]
fn g2_msm_of_2_15_matches_sluice_msm() {
    let Some(b) = backend() else { return };
    let (n, seed) = (1 << 15, 2100);
    let all = bases::<G2Projective>(n, seed);
    let resident = b.upload_bases("bases", &all).unwrap();
    let s = scalars(n, seed + 1);
    let want = sluice_msm::msm_g2_vartime(&all, &s, None).unwrap();
    let got = b
        .msm_vartime(&resident, 0, Scalars::Host(&s), None)
        .unwrap();
    assert!(got == want, "G2 MSM of 2^15, seed {seed}");
}

/// Shifted bases, on one context and on two with small chunks (a table buffer per
/// window there): every way of calling the MSMs, folded where the plans say so. On one
/// context the windows are 14 bits: the folded set has 2^13 buckets, two scan blocks.
#[test]
fn msms_over_shifted_bases_match_sluice_msm() {
    for split in [false, true] {
        let Some(b) = shifted_backend(split) else {
            return;
        };
        let largest = 1 << 12;
        for (i, n) in [1usize, 100, largest].into_iter().enumerate() {
            check_msm!(
                b,
                n,
                5000 + i as u64,
                G1Projective,
                upload_bases,
                msm_vartime,
                sluice_msm::msm_g1_vartime
            );
        }
        check_msm!(
            b,
            300,
            5100,
            G2Projective,
            upload_bases,
            msm_vartime,
            sluice_msm::msm_g2_vartime
        );
    }
}

/// The table's windows at the sizes the tests above use take the folded plans for dense
/// scalars (so those tests cover them); a 2^26 partition's stay plain. At 2^20 and 2^26
/// on an H200 they fold c = 16 (one buffer) and c = 20 (three buffers of up to five
/// windows), against a plain c = 16 and 20; G2 at 2^24 folds c = 20 in two.
#[test]
fn shifted_table_plans_at_test_and_h200_sizes() {
    let folds = |n: usize, chunk: usize, bytes: usize, max_alloc: u64, large: usize| {
        let (c, per) = table_window(chunk, bytes, max_alloc, &MsmTuning::default());
        let groups = window_groups(DIGIT_BITS.div_ceil(c), per);
        let plans = Plan::launches(
            n,
            large,
            Some((c, &groups)),
            max_alloc,
            2 * bytes,
            &MsmTuning::default(),
        );
        assert!(plans.iter().all(|p| p.fold == plans[0].fold), "{plans:?}");
        (plans[0].fold, c, groups.len())
    };
    // (n, chunk, bytes, max alloc): the tests' sizes on one context (PoCL's 1 GiB cap)
    // and on two with 4 KiB chunks (G1: 32 bases, G2: 16).
    for (n, chunk, bytes, max_alloc) in [
        (100, 103, 96, 1 << 30),
        (1 << 12, (1 << 12) + 3, 96, 1 << 30),
        (1 << 15, (1 << 15) + 3, 96, 1 << 30),
        (300, 303, 192, 1 << 30),
        (32, 32, 96, 1 << 12),
        (16, 16, 192, 1 << 12),
    ] {
        assert!(folds(n, chunk, bytes, max_alloc, n).0, "dense {n}");
    }
    // The unsplit shifted backend's forced window: 14-bit tables at the tests' 2^12, whose
    // dense MSMs fold (2^13 buckets, two scan blocks); the planner's own choice reaches 14
    // only from about 2^15.
    let forced = MsmTuning {
        window_bits: Some(crate::testing::SHIFTED_WINDOW_BITS),
        ..MsmTuning::default()
    };
    let chunk = (1 << 12) + 3;
    let (c, per) = table_window(chunk, 96, 1 << 30, &forced);
    assert_eq!(c, 14);
    let groups = window_groups(DIGIT_BITS.div_ceil(c), per);
    let plans = Plan::launches(1 << 12, 1 << 12, Some((c, &groups)), 1 << 30, 192, &forced);
    assert!(
        plans.iter().all(|p| p.fold && p.buckets == 1 << 13),
        "{plans:?}"
    );
    assert_eq!(
        table_window((1 << 15) + 3, 96, 1 << 30, &MsmTuning::default()).0,
        14
    );
    // A partition's MSM (1 scalar in 65 large) over a 2^26 table: three sets of 2^19
    // buckets cost more than the plain c = 16's sixteen of 2^15.
    assert!(!folds(1 << 26, 1 << 26, 96, 35 << 30, (1 << 26) / 65).0);
    assert_eq!(
        folds(1 << 20, 1 << 20, 96, 35 << 30, 1 << 20),
        (true, 16, 1)
    );
    assert_eq!(
        folds(1 << 26, 1 << 26, 96, 35 << 30, 1 << 26),
        (true, 20, 3)
    );
    assert_eq!(
        folds(1 << 24, 1 << 24, 192, 35 << 30, 1 << 24),
        (true, 20, 2)
    );
    assert_eq!(
        Plan::new(1 << 20, 1 << 20, 35 << 30, 192, &MsmTuning::default()).c,
        16
    );
}

/// A G1 MSM of `scalars` over resident `bases` equals sluice-msm's.
fn assert_g1_msm_matches(
    b: &OpenClBackend,
    bases: &[G1Affine],
    scalars: &[Fr],
    what: &str,
    seed: u64,
) {
    let resident = b.upload_bases("bases", bases).unwrap();
    let want = sluice_msm::msm_g1_vartime(bases, scalars, None).unwrap();
    let got = b
        .msm_vartime(&resident, 0, Scalars::Host(scalars), None)
        .unwrap();
    let n = scalars.len();
    assert!(got == want, "{what}, n {n}, seed {seed}");
}

/// A partition's scalars (0 or 1, one dense in 65, a few 2 and -1) at a size where the
/// count and the scatter give each item two scalars (one past a multiple of two, so
/// the last item has one): every item reserves its window-0 bucket in one atomic, some
/// in bucket 1 and some in bucket 2, and items whose scalars differ take both paths.
#[test]
fn boolean_scalars_in_multi_scalar_items_match_sluice_msm() {
    let Some(b) = backend() else { return };
    let seed = 4300;
    let n = (1 << 19) + 1;
    assert_eq!(
        Plan::new(n, n / 65, 1 << 30, 192, &MsmTuning::default()).per_item,
        2,
        "the test's premise"
    );
    let all = bases::<G1Projective>(n, seed);
    let mut r = rng(seed);
    let s: Vec<Fr> = (0..n)
        .map(|i| match (i % 65, r.next_u32() % 16) {
            (0, _) => Fr::random(&mut r),
            (_, 0) => Fr::from(2),
            (_, 1) => -Fr::ONE,
            (_, k) => Fr::from(u64::from(k % 2)),
        })
        .collect();
    assert_g1_msm_matches(b, &all, &s, "boolean scalars, two per item", seed);
}

/// Buckets of half a segment each, every other bucket empty, zero scalars after them:
/// each segment but the first starts exactly at a bucket (the skipped piece slot it fills
/// with the identity), and each bucket change inside a segment skips an empty bucket
/// (the binary search).
#[test]
fn segments_aligned_with_buckets_match_sluice_msm() {
    let Some(b) = backend() else { return };
    let seed = 4100;
    let n = 512;
    let plan = Plan::new(n, n, 1 << 30, 192, &MsmTuning::default());
    // Even digits 2, 4, ..., 2^(c-1) in window 0, half a segment of each.
    let per = plan.seg_len / 2;
    let used = per << (plan.c - 2);
    assert!(
        used < n && used >= 4 * plan.seg_len,
        "the test's premise: {plan:?}"
    );
    let all = bases::<G1Projective>(n, seed);
    let s: Vec<Fr> = (0..n)
        .map(|i| match i < used {
            true => Fr::from(2 * (i / per) as u64 + 2),
            false => Fr::ZERO,
        })
        .collect();
    assert_g1_msm_matches(b, &all, &s, "aligned segments", seed);
}

/// One base repeated, every scalar 1: the mixed additions double, and so do the XYZZ
/// additions of the reduce (equal pieces of one bucket, split across segments).
#[test]
fn repeated_bases_take_the_doubling_paths() {
    let Some(b) = backend() else { return };
    let seed = 4200;
    let n = 512;
    let p = bases::<G1Projective>(2, seed)[0]; // the last one is the identity
    let all = vec![p; n];
    let s = vec![Fr::ONE; n];
    assert_g1_msm_matches(b, &all, &s, "repeated bases", seed);
}

/// Skewed scalars (mostly 1, the rest small or -1): one bucket holds most entries and is
/// cut into many segments, whose reduce slices start and end inside buckets.
#[test]
fn skewed_scalars_match_sluice_msm() {
    let Some(b) = backend() else { return };
    let seed = 4000;
    let n = 1 << 12;
    let all = bases::<G1Projective>(n, seed);
    let mut r = rng(seed);
    let s: Vec<Fr> = (0..n)
        .map(|i| match i % 16 {
            0 => Fr::from(u64::from(r.next_u32() % 8)),
            1 => -Fr::ONE,
            _ => Fr::ONE,
        })
        .collect();
    assert_g1_msm_matches(b, &all, &s, "skewed scalars", seed);
}

/// Two contexts (two "devices") and chunks of 42 G1 / 21 G2 bases: bases split across
/// devices and chunks, scalars read back across devices.
#[test]
fn msm_across_two_contexts_and_split_buffers() {
    let Some(b) = split_backend() else { return };
    assert_eq!(b.device_infos().len(), 2);
    check_msm!(
        b,
        500,
        3000,
        G1Projective,
        upload_bases,
        msm_vartime,
        sluice_msm::msm_g1_vartime
    );
    check_msm!(
        b,
        130,
        3001,
        G2Projective,
        upload_bases,
        msm_vartime,
        sluice_msm::msm_g2_vartime
    );
}

/// A partition's MSM (1 scalar in 65 large) at 2^26 gets the windows of a dense MSM of
/// 2^20 and 16 scalars per count/scatter item; a dense one the windows of its size and
/// one scalar per item.
#[test]
fn plans_size_the_windows_for_the_large_scalars() {
    let n = 1 << 26;
    let dense = Plan::new(n, n, 35 << 30, 288, &MsmTuning::default());
    let partition = Plan::new(n, n / 65, 35 << 30, 288, &MsmTuning::default());
    assert_eq!((dense.c, partition.c), (20, 16), "{dense:?} {partition:?}");
    assert_eq!((dense.per_item, partition.per_item), (1, 16));
    assert_eq!(
        partition.c,
        Plan::new(1 << 20, 1 << 20, 35 << 30, 288, &MsmTuning::default()).c
    );
}

/// `UsedElements` against the density's own positions: every used element's position,
/// and spans of runs of them (with the used positions there); densities with empty
/// words, full words and partial last words.
#[test]
fn used_elements_match_the_density() {
    use rand_core::RngCore;
    let seed = 3300;
    let mut r = rng(seed);
    for (len, one_in) in [
        (1usize, 1u32),
        (64, 1),
        (200, 2),
        (1000, 9),
        (1000, 200),
        (777, 1),
        // Several parallel tasks of counts, the last one partial.
        (3 << 20 | 77, 3),
    ] {
        let density: Density = (0..len).map(|_| r.next_u32() % one_in == 0).collect();
        let used = super::scalars::UsedElements::new(&density);
        assert_eq!(super::scalars::count_used(&density), density.count_ones());
        let want: Vec<usize> = density.positions().collect();
        assert_eq!(used.before.last().map(|&t| t as usize), Some(want.len()));
        for (k, &p) in want.iter().enumerate() {
            assert_eq!(used.position(k), p, "seed {seed}: len {len}, element {k}");
        }
        for (k0, count) in [(0, want.len()), (want.len() / 3, want.len() / 2)] {
            if count == 0 {
                continue;
            }
            let (lo, hi) = used.span(k0, count);
            assert_eq!(
                (lo, hi),
                (want[k0], want[k0 + count - 1] + 1),
                "seed {seed}"
            );
            let got: Vec<usize> = density.positions_in(lo..hi).collect();
            assert_eq!(got, want[k0..k0 + count], "seed {seed}: len {len}");
        }
    }
}

#[test]
fn plans_cover_the_scalars_and_fit_one_allocation() {
    // (n, largest allocation): PoCL's 1 GiB cap at test sizes, the H200's 35 GiB.
    for (n, max_alloc) in [1usize, 10, 1000, 1 << 20]
        .into_iter()
        .map(|n| (n, 1u64 << 30))
        .chain([(1 << 20, 35 << 30), (1 << 26, 35 << 30)])
    {
        for large in [0, n / 65, n] {
            let p = Plan::new(n, large, max_alloc, 288, &MsmTuning::default());
            assert!(p.windows * p.c >= 256, "{p:?} for {n}");
            assert!(p.buckets == 1 << (p.c - 1) && p.slices.is_power_of_two());
            assert!(p.segs * p.seg_len >= n, "{p:?} for {n}");
            assert!(p.cap >= p.buckets + p.segs, "{p:?} for {n}");
            assert!((16..=512).contains(&p.seg_len), "{p:?} for {n}");
            assert!(
                (p.windows * p.cap * 288) as u64 <= max_alloc
                    && (p.windows * n * 4) as u64 <= max_alloc,
                "{p:?} for {n}"
            );
        }
    }
}

/// The nonzero signed digits of a scalar below 2^32 at window bits `c`, as `POINT_DIGITS`
/// (`kernels/msm.cl`) makes them: (window, magnitude).
fn kernel_digits(s: u32, c: usize) -> Vec<(usize, u64)> {
    let mut carry = 0u64;
    (0..DIGIT_BITS.div_ceil(c))
        .filter_map(|w| {
            let bits = match w * c {
                shift if shift >= 32 => 0,
                shift => (u64::from(s) >> shift) & ((1 << c) - 1),
            };
            let d = bits + carry;
            carry = u64::from(d > 1 << (c - 1));
            let mag = if carry == 1 { (1 << c) - d } else { d };
            (mag != 0).then_some((w, mag))
        })
        .collect()
}

/// Every scalar below 2^16 has its digits in the plan's full sets, at every window size,
/// and the bound is tight where c divides 16 (a borrow reaches the last full set).
#[test]
fn small_scalars_stay_in_the_full_sets() {
    let t = MsmTuning::default();
    for c in 2..=24usize {
        let plan = Plan::shape(c, DIGIT_BITS.div_ceil(c), (1 << 16, 1 << 16, 0), &t);
        let mut last = 0;
        for s in 0..1u32 << 16 {
            for (w, _) in kernel_digits(s, c) {
                assert!(
                    w < plan.full_sets,
                    "scalar {s} has a digit in window {w}: {plan:?}"
                );
                last = last.max(w);
            }
        }
        if 16 % c == 0 {
            assert_eq!(last + 1, plan.full_sets, "c {c}: the bound is not tight");
        }
        assert_eq!(plan.large_span, 0);
        assert_eq!(plan.entry_slots(), plan.full_sets << 16, "c {c}");
    }
}

/// Small scalars whose borrows reach the last full set (0xffff, -2^16 + 1 style digit
/// runs), among a few large ones, at c = 4 and 8 (forced): the later sets hold only the
/// large scalars' entries, and the sum matches sluice-msm's.
#[test]
fn borrows_into_the_last_full_set_match_sluice_msm() {
    for c in [4, 8] {
        let msm = MsmTuning {
            window_bits: Some(c),
            ..MsmTuning::default()
        };
        let Some(b) = backend_with(OpenClConfig {
            devices: DeviceSelector::Index(test_device()),
            tuning: OpenClTuning {
                msm,
                ..OpenClTuning::default()
            },
            ..OpenClConfig::default()
        }) else {
            return;
        };
        let seed = 4300 + c as u64;
        let n = 1 << 11;
        let all = bases::<G1Projective>(n, seed);
        let mut r = rng(seed);
        let s: Vec<Fr> = (0..n)
            .map(|i| match i % 64 {
                0 => Fr::random(&mut r),
                1..=40 => Fr::from(0xffff - u64::from(r.next_u32() % 8)),
                _ => Fr::from(u64::from(r.next_u32() & 0xffff)),
            })
            .collect();
        let plan = Plan::new(n, n / 64, 1 << 30, 192, &msm);
        assert_eq!(plan.c, c);
        assert!(plan.entry_slots() < plan.windows * n, "{plan:?}");
        assert_g1_msm_matches(&b, &all, &s, &format!("borrows at c {c}"), seed);
    }
}
