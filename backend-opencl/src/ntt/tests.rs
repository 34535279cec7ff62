//! The device NTTs against sluice-ntt, and the pass schedules.

use ff::Field;
use sluice_backend::{BackendError, ComputeBackend, NttOrder, Transform};
use sluice_field::Fr;
use sluice_ntt::Domain;

use crate::testing::{backend, rng, split_backend};
use crate::OpenClBackend;

/// The CPU reference (sluice-ntt) for one transform.
fn reference(data: &mut [Fr], t: Transform, order: NttOrder) {
    let d = Domain::<Fr>::for_size(data.len()).unwrap();
    sluice_backend_cpu::transform_on_host(&d, data, t, order).unwrap();
}

/// Every round of every size is run once, in order, each tile within the work-group
/// limit and never wider than the stride; a group's tiles are blocks of one transform.
#[test]
fn schedules_cover_every_round_once() {
    for max_log in [2, 5, 9] {
        for max_cols in 0..=3 {
            for log_n in 1..=27 {
                let plan = super::passes::schedule(log_n, max_log, max_cols);
                let mut next = 0;
                for &(log_m0, deg, log_c) in &plan {
                    assert_eq!(log_m0, next, "2^{log_n}: {plan:?}");
                    assert!(deg >= 1 && deg + log_c <= max_log, "{plan:?}");
                    assert!(log_c <= log_m0 && log_c <= max_cols, "{plan:?}");
                    next += deg;
                    for min_groups in [0, 1 << 12] {
                        let c = config(3, max_log, max_cols, 3, min_groups);
                        let t =
                            super::passes::tiles_log(3 << log_n, log_n, (log_m0, deg, log_c), &c);
                        assert!(t <= 3 && t + log_m0 + deg <= log_n, "{plan:?}: {t}");
                        let groups = (3usize << log_n) >> (deg + log_c + t);
                        assert!(t == 0 || groups >= min_groups, "{plan:?}: {t}");
                    }
                }
                assert_eq!(next, log_n, "2^{log_n}: {plan:?}");
            }
        }
    }
}

fn config(
    radix_log: u32,
    max_rounds: u32,
    max_cols_log: u32,
    max_tiles_log: u32,
    min_groups: usize,
) -> super::passes::PassConfig {
    super::passes::PassConfig {
        radix_log,
        max_rounds,
        max_cols_log,
        max_tiles_log,
        min_groups,
    }
}

/// The passes alone (DIT: bit-reversed to natural, DIF: natural to bit-reversed) on 3
/// transforms of 2^log_n against sluice-ntt, for every register radix, with tiles small
/// enough for passes of every length (rounds not a multiple of the radix, short last
/// passes, passes shorter than the radix), one or several columns, and one or up to 8
/// tiles per group.
#[test]
fn passes_match_sluice_ntt_for_every_radix_and_layout() {
    let Some(b) = backend() else { return };
    let ctx = &b.devices[0];
    for log_n in 1..=12u32 {
        let mut r = rng(500 + u64::from(log_n));
        let input: Vec<Fr> = (0..3usize << log_n).map(|_| Fr::random(&mut r)).collect();
        let tw = b.ntt.twiddles.get(b.fr_ops(), 0, log_n, false).unwrap();
        for dif in [false, true] {
            let order = if dif {
                NttOrder::NaturalToBitReversed
            } else {
                NttOrder::BitReversedToNatural
            };
            let mut want = input.clone();
            want.chunks_mut(1 << log_n)
                .for_each(|s| reference(s, Transform::Ntt, order));
            for radix in 1..=2 {
                for max_rounds in [3, 4, 5, 7, 9] {
                    for (cols, tiles) in [(0, 0), (3, 0), (2, 3), (3, 3)] {
                        let c = config(radix, max_rounds, cols, tiles, 0);
                        let buf = b.upload_fr("passes", &input, input.len()).unwrap();
                        let mem = &buf.data.chunks[0];
                        super::passes::passes_with(ctx, mem, &tw, log_n, input.len(), dif, &c)
                            .unwrap();
                        let mut got = vec![Fr::ZERO; input.len()];
                        b.read_fr(&buf, 0, &mut got).unwrap();
                        let seed = 500 + log_n;
                        assert!(got == want, "2^{log_n} dif {dif}: {c:?} (seed {seed})");
                    }
                }
            }
        }
    }
}

/// The bit reversal of every size from 2^1 to 2^16 (both of its paths) in one and in
/// three runs against the host's permutation.
#[test]
fn bit_reversal_matches_the_host() {
    let Some(b) = backend() else { return };
    let ctx = &b.devices[0];
    for log_n in 1..=16u32 {
        for runs in [1usize, 3] {
            let n = 1usize << log_n;
            let mut r = rng(600 + u64::from(log_n));
            let input: Vec<Fr> = (0..runs * n).map(|_| Fr::random(&mut r)).collect();
            let want: Vec<Fr> = (0..runs * n)
                .map(|i| {
                    let j = (i % n).reverse_bits() >> (usize::BITS - log_n);
                    input[i - i % n + j]
                })
                .collect();
            let buf = b.upload_fr("bit reversal", &input, input.len()).unwrap();
            super::passes::bit_reverse(ctx, &buf.data.chunks[0], log_n, input.len()).unwrap();
            let mut got = vec![Fr::ZERO; input.len()];
            b.read_fr(&buf, 0, &mut got).unwrap();
            assert!(got == want, "2^{log_n} x {runs} (seed {})", 600 + log_n);
        }
    }
}

#[test]
fn every_transform_and_order_matches_sluice_ntt() {
    let Some(b) = backend() else { return };
    // 2^10 and 2^13 need a partial second pass; 2^9 ends on one full pass.
    for log_n in [0u32, 1, 2, 3, 5, 8, 9, 10, 13] {
        for (ti, t) in Transform::ALL.into_iter().enumerate() {
            for (oi, order) in NttOrder::ALL.into_iter().enumerate() {
                let seed = u64::from(log_n) * 100 + ti as u64 * 10 + oi as u64;
                let mut r = rng(seed);
                let input: Vec<Fr> = (0..1usize << log_n).map(|_| Fr::random(&mut r)).collect();
                let mut want = input.clone();
                reference(&mut want, t, order);
                let mut buf = b.upload_fr("ntt", &input, input.len()).unwrap();
                b.transform(&mut buf, t, order).unwrap();
                let mut got = vec![Fr::ZERO; input.len()];
                b.read_fr(&buf, 0, &mut got).unwrap();
                assert!(
                    got == want,
                    "{t:?} {order:?} of 2^{log_n} differs (seed {seed})"
                );
            }
        }
    }
}

/// `transform_segments` in segments of 2^seg_log of `len` random elements against
/// sluice-ntt on each segment, for every transform and order.
fn segments_match_sluice_ntt(b: &OpenClBackend, len: usize, seg_log: u32, seed: u64) {
    let segment = 1usize << seg_log;
    let mut r = rng(seed);
    let input: Vec<Fr> = (0..len).map(|_| Fr::random(&mut r)).collect();
    for t in Transform::ALL {
        for order in NttOrder::ALL {
            let mut want = input.clone();
            want.chunks_mut(segment)
                .for_each(|s| reference(s, t, order));
            let mut buf = b.upload_fr("segments", &input, input.len()).unwrap();
            b.transform_segments(&mut buf, segment, t, order).unwrap();
            let mut got = vec![Fr::ZERO; len];
            b.read_fr(&buf, 0, &mut got).unwrap();
            assert!(
                got == want,
                "{t:?} {order:?} in segments of 2^{seg_log} of {len} differs (seed {seed})"
            );
        }
    }
}

#[test]
fn transform_segments_matches_sluice_ntt_per_segment() {
    let Some(b) = backend() else { return };
    // Segments of one and two elements; a partial pass; one full pass (2^9); a full and
    // a partial pass (2^10); many segments of a two-pass transform; the whole buffer.
    for (i, (log_n, seg_log)) in [(4, 0), (5, 1), (6, 3), (10, 9), (12, 10), (13, 5), (11, 11)]
        .into_iter()
        .enumerate()
    {
        segments_match_sluice_ntt(b, 1 << log_n, seg_log, 300 + i as u64);
    }
}

#[test]
fn transform_segments_on_split_buffers() {
    let Some(s) = split_backend() else { return };
    // Chunks of 128 elements: segments of a chunk, of less, and 2.5 chunks (the last one
    // partial) in segments of 64.
    for (i, (len, seg_log)) in [(1024, 7), (1024, 4), (320, 6)].into_iter().enumerate() {
        segments_match_sluice_ntt(s, len, seg_log, 400 + i as u64);
    }
    let mut buf = s.alloc_fr("split", 1024).unwrap();
    for segment in [256, 1024] {
        assert!(
            matches!(
                s.transform_segments(
                    &mut buf,
                    segment,
                    Transform::Ntt,
                    NttOrder::NaturalToNatural
                ),
                Err(BackendError::Unsupported(_))
            ),
            "segments of {segment} straddle chunks of 128"
        );
    }
}

#[test]
fn bad_segments_are_invalid_input() {
    let Some(b) = backend() else { return };
    let mut buf = b.alloc_fr("segments", 48).unwrap();
    for segment in [0, 3, 32, 96] {
        assert!(
            matches!(
                b.transform_segments(
                    &mut buf,
                    segment,
                    Transform::Intt,
                    NttOrder::NaturalToNatural
                ),
                Err(BackendError::InvalidInput(_))
            ),
            "segment {segment} of 48"
        );
    }
}

#[test]
fn ntt_then_intt_is_the_identity_at_2_14() {
    let Some(b) = backend() else { return };
    let seed = 7;
    let mut r = rng(seed);
    let input: Vec<Fr> = (0..1 << 14).map(|_| Fr::random(&mut r)).collect();
    let mut buf = b.upload_fr("ntt", &input, input.len()).unwrap();
    b.transform(
        &mut buf,
        Transform::CosetNtt,
        NttOrder::NaturalToBitReversed,
    )
    .unwrap();
    b.transform(
        &mut buf,
        Transform::CosetIntt,
        NttOrder::BitReversedToNatural,
    )
    .unwrap();
    let mut got = vec![Fr::ZERO; input.len()];
    b.read_fr(&buf, 0, &mut got).unwrap();
    assert!(got == input, "coset round trip at 2^14 (seed {seed})");
}

#[test]
fn bad_sizes_and_split_buffers_are_errors() {
    let Some(b) = backend() else { return };
    let mut buf = b.alloc_fr("odd", 6).unwrap();
    assert!(matches!(
        b.transform(&mut buf, Transform::Ntt, NttOrder::NaturalToNatural),
        Err(BackendError::LengthMismatch {
            expected: 8,
            got: 6,
            ..
        })
    ));
    let Some(s) = split_backend() else { return };
    let mut buf = s.alloc_fr("split", 1024).unwrap();
    assert!(matches!(
        s.transform(&mut buf, Transform::Ntt, NttOrder::NaturalToNatural),
        Err(BackendError::Unsupported(_))
    ));
}
