//! CompactVec against a plain vector kept beside it.

use std::ops::Range;
use std::sync::Arc;

use ff::Field;
use sluice_field::Fr;

use super::code::SMALL;
use super::*;
use crate::{HeapLender, HostAllocator};
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use std::sync::atomic::{AtomicU64, Ordering};

/// A value drawn from a mix: `full_percent` full elements, some 64-bit words and small
/// integers, the rest bits.
fn mixed(rng: &mut ChaCha20Rng, full_percent: u32) -> Fr {
    let r = rng.next_u32() % 100;
    match r {
        _ if r < full_percent => Fr::random(&mut *rng),
        _ if r < full_percent + 3 => Fr::from(rng.next_u64()),
        _ if r < full_percent + 10 => {
            let k = Fr::from(u64::from(rng.next_u32() % 128));
            match rng.next_u32() & 1 {
                0 => k,
                _ => -k,
            }
        }
        _ => Fr::from(u64::from(rng.next_u32() & 1)),
    }
}

fn vector(config: CompactConfig, values: &[Fr]) -> CompactVec {
    let mut v = CompactVec::new(config);
    v.extend_from_slice(values);
    v
}

fn compact(values: &[Fr]) -> CompactVec {
    let config = CompactConfig {
        storage: Storage::Compact,
        ..CompactConfig::default()
    };
    vector(config, values)
}

/// Rebuilds values `range` from the pieces alone, as a backend would.
fn rebuilt_from_pieces(v: &CompactVec, range: Range<usize>, what: &str) -> Vec<Fr> {
    let mut out = vec![Fr::ZERO; range.len()];
    let mut next = range.start;
    for (at, piece) in v.pieces(range.clone()) {
        assert_eq!(at, next, "{what}: pieces are contiguous and in order");
        assert!(!piece.is_empty(), "{what}");
        let dst = &mut out[at - range.start..at - range.start + piece.len()];
        next += piece.len();
        match piece {
            Piece::Raw(values) => dst.copy_from_slice(values),
            Piece::Codes { page, range: r } => {
                for (o, &c) in dst.iter_mut().zip(&page.codes()[r.clone()]) {
                    *o = SMALL[c as usize];
                }
                let (positions, values) = page.exceptions_in(r.clone());
                for (&p, x) in positions.iter().zip(values) {
                    assert_eq!(page.codes()[p as usize], ESCAPE, "{what}");
                    dst[p as usize - r.start] = *x;
                }
            }
        }
    }
    assert_eq!(next, range.end, "{what}");
    out
}

fn check_same(v: &CompactVec, model: &[Fr], what: &str) {
    assert_eq!(v.len(), model.len(), "{what}");
    assert_eq!(v.to_vec(), model, "{what}");
    for i in [0, 1, PAGE_LEN - 1, PAGE_LEN, model.len().saturating_sub(1)] {
        assert_eq!(v.get(i), model.get(i).copied(), "{what}: get({i})");
    }
    assert_eq!(v.get(model.len()), None, "{what}");
    // Entries give every value, as its own code only where the value is small.
    for (i, x) in model.iter().enumerate() {
        let entry = v.entry_vartime(i).expect("in range");
        assert_eq!(entry.to_fr(), *x, "{what}: entry({i})");
        if let Entry::Small(k) = entry {
            assert_eq!(small_code_vartime(x), Some(k as u8), "{what}: entry({i})");
        }
    }
    assert_eq!(v.entry_vartime(model.len()), None, "{what}");
    assert_eq!(
        rebuilt_from_pieces(v, 0..model.len(), what),
        model,
        "{what}"
    );
}

/// Every kind of value, across pages, read back exactly by `get`, `decode_into` of
/// arbitrary ranges and the pieces of arbitrary ranges; dense pages became raw pages.
#[test]
fn values_round_trip_through_every_reader() {
    let seed = 4401;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    for (len, full) in [
        (0, 0),
        (5, 50),
        (PAGE_LEN + 17, 2),
        (3 * PAGE_LEN / 2, 40),
        (300, 80),
        (2 * PAGE_LEN + 3, 70),
    ] {
        let model: Vec<Fr> = (0..len).map(|_| mixed(&mut rng, full)).collect();
        let v = compact(&model);
        let what = format!("seed {seed}, len {len}, {full}% full");
        assert!(!v.is_raw(), "{what}");
        check_same(&v, &model, &what);
        for _ in 0..20 {
            let a = rng.next_u32() as usize % (len + 1);
            let b = rng.next_u32() as usize % (len + 1);
            let range = a.min(b)..a.max(b);
            let mut out = vec![Fr::ONE; range.len()];
            v.decode_into(range.start, &mut out);
            assert_eq!(out, &model[range.clone()], "{what}: {range:?}");
            let rebuilt = rebuilt_from_pieces(&v, range.clone(), &what);
            assert_eq!(rebuilt, &model[range.clone()], "{what}: {range:?}");
        }
        let raw_pages = v
            .pieces(0..len)
            .filter(|(_, p)| matches!(p, Piece::Raw(_)))
            .count();
        let dense_page = full >= 70;
        assert_eq!(raw_pages > 0, dense_page, "{what}: {raw_pages} raw pages");
    }
}

/// A page with three exceptions in five entries lists more than half a page of them (its
/// exceptions grow past `PAGE_LEN / 2`) and stays codes; one with four in five becomes raw.
#[test]
fn pages_just_below_the_raw_threshold_keep_growing() {
    let seed = 4404;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    for (dense_in_five, raw) in [(3, false), (4, true)] {
        let model: Vec<Fr> = (0..2 * PAGE_LEN + 9)
            .map(|i| match i % 5 < dense_in_five {
                true => Fr::random(&mut rng),
                false => Fr::ONE,
            })
            .collect();
        let v = compact(&model);
        let what = format!("seed {seed}, {dense_in_five} in 5");
        check_same(&v, &model, &what);
        let raw_pieces = v
            .pieces(0..model.len())
            .filter(|(_, p)| matches!(p, Piece::Raw(_)));
        assert_eq!(raw_pieces.count() > 0, raw, "{what}");
        assert!(v.host_bytes() <= max_host_bytes(model.len()), "{what}");
    }
}

#[test]
fn boolean_vectors_take_a_byte_per_value() {
    let model: Vec<Fr> = (0..4 * PAGE_LEN as u64)
        .map(|i| Fr::from(i % 3 % 2))
        .collect();
    let v = CompactVec::from(&model[..]);
    assert_eq!(v.exceptions(), 0);
    let bytes = v.host_bytes();
    assert!(bytes >= model.len() as u64, "{bytes}");
    assert!(bytes <= model.len() as u64 + 4096, "{bytes}");
    check_same(&v, &model, "booleans");
    assert_eq!(v.entry_vartime(1), Some(Entry::Small(1)));
    assert_eq!(v.entry_vartime(2), Some(Entry::Small(0)));
}

/// Dense values switch an automatic vector to one raw vector after the probe, lent where
/// the lender lends, with the same values; forced modes do not switch; half or fewer
/// exceptions stay compact.
#[test]
fn dense_vectors_switch_to_raw_storage() {
    let seed = 4402;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let model: Vec<Fr> = (0..3 * PROBE_LEN).map(|_| Fr::random(&mut rng)).collect();
    let lender: Arc<dyn HostAllocator> = Arc::new(HeapLender::new(u64::MAX));
    for (storage, capacity, lent, raw) in [
        (Storage::Auto, 0, false, false),
        (Storage::Auto, model.len(), true, true),
        (Storage::Raw, model.len(), true, true),
        (Storage::Raw, 0, false, true),
        (Storage::Compact, model.len(), false, false),
    ] {
        let config = CompactConfig {
            storage,
            capacity,
            lender: Some(lender.clone()),
            budget: None,
        };
        let v = vector(config, &model);
        let what = format!("seed {seed}, {storage:?}, capacity {capacity}");
        assert_eq!(v.is_raw(), raw, "{what}");
        assert_eq!(v.as_raw().is_some_and(|r| r.is_lent()), lent, "{what}");
        check_same(&v, &model, &what);
        if raw {
            let pieces: Vec<_> = v.pieces(3..model.len()).collect();
            assert!(
                matches!(pieces[..], [(3, Piece::Raw(r))] if r == &model[3..]),
                "{what}"
            );
        }
        let copy = v.clone_into(Some(&*lender));
        assert_eq!(copy.as_raw().is_some_and(|r| r.is_lent()), raw, "{what}");
        check_same(&copy, &model, &what);
    }
    let half: Vec<Fr> = (0..2 * PROBE_LEN)
        .map(|i| match i % 2 {
            0 => Fr::random(&mut rng),
            _ => Fr::ONE,
        })
        .collect();
    assert!(!CompactVec::from(&half[..]).is_raw());
}

/// A budget that records what is held.
#[derive(Default)]
struct Recorder {
    held: AtomicU64,
    peak: AtomicU64,
}

impl HostBudget for Recorder {
    fn acquire(&self, bytes: u64) {
        let now = self.held.fetch_add(bytes, Ordering::SeqCst) + bytes;
        self.peak.fetch_max(now, Ordering::SeqCst);
    }
    fn release(&self, bytes: u64) {
        self.held.fetch_sub(bytes, Ordering::SeqCst);
    }
}

/// The budget holds what the storage allocated (never less), its peak stays within
/// `max_host_bytes`, and everything is given back on drop: compact, dense pages, raw with
/// and without a capacity made ahead, and a vector that switched.
#[test]
fn the_budget_counts_every_allocation_before_it_is_made() {
    let seed = 4403;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let len = 2 * PAGE_LEN + 5;
    for (full, storage, capacity) in [
        (2, Storage::Auto, 0),
        (90, Storage::Auto, 0),
        (90, Storage::Auto, len),
        (0, Storage::Raw, len),
        (60, Storage::Compact, 0),
        (100, Storage::Compact, 0),
    ] {
        let budget = Arc::new(Recorder::default());
        let mut v = CompactVec::new(CompactConfig {
            storage,
            capacity,
            lender: None,
            budget: Some(budget.clone()),
        });
        let what = format!("seed {seed}, {full}% full, {storage:?}, capacity {capacity}");
        for i in 0..len {
            v.push(mixed(&mut rng, full));
            if i % 997 == 0 || i + 1 == len {
                let held = budget.held.load(Ordering::SeqCst);
                assert!(held >= v.measured_bytes(), "{what}: at {i}");
                assert_eq!(held, v.host_bytes(), "{what}: at {i}");
            }
        }
        let peak = budget.peak.load(Ordering::SeqCst);
        assert!(peak <= max_host_bytes(len), "{what}: peak {peak}");
        drop(v);
        assert_eq!(budget.held.load(Ordering::SeqCst), 0, "{what}");
    }
}

/// `move_tail_into` appends exactly the tail, frees the source a page at a time (the two
/// vectors' budget never holds much more than the values once) and gives everything back.
#[test]
fn moving_a_tail_appends_it_and_frees_the_source_as_it_goes() {
    let seed = 4604;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    for (full, storage, start) in [
        (3, Storage::Compact, 1000),
        (90, Storage::Auto, 0),
        (0, Storage::Raw, PAGE_LEN + 7),
    ] {
        let what = format!("seed {seed}, {full}% full, {storage:?}, from {start}");
        let values: Vec<Fr> = (0..4 * PAGE_LEN + 9)
            .map(|_| mixed(&mut rng, full))
            .collect();
        let budget = Arc::new(Recorder::default());
        let config = CompactConfig {
            storage,
            capacity: 0,
            lender: None,
            budget: Some(budget.clone()),
        };
        let mut to = CompactVec::new(config.clone());
        to.extend_from_slice(&values[..PAGE_LEN / 2]);
        let mut from = CompactVec::new(config);
        from.extend_from_slice(&values);
        let (to_bytes, from_bytes) = (to.host_bytes(), from.host_bytes());
        budget.peak.store(0, Ordering::SeqCst);
        from.move_tail_into(start, &mut to);
        let mut expected = values[..PAGE_LEN / 2].to_vec();
        expected.extend_from_slice(&values[start..]);
        assert!(to == expected[..], "{what}");
        let peak = budget.peak.load(Ordering::SeqCst);
        // Paged storage frees each page before the other vector grows by it.
        if storage != Storage::Raw {
            assert!(
                peak <= to_bytes + from_bytes + 2 * max_host_bytes(PAGE_LEN),
                "{what}: peak {peak}"
            );
        }
        assert_eq!(
            budget.held.load(Ordering::SeqCst),
            to.host_bytes(),
            "{what}"
        );
        drop(to);
        assert_eq!(budget.held.load(Ordering::SeqCst), 0, "{what}");
    }
}

#[test]
fn sealed_pages_read_what_was_written_while_the_vector_grows() {
    let seed = 0x5ea1;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    // The second page turns raw (dense), the others stay codes.
    let values: Vec<Fr> = (0..2 * PAGE_LEN + 5)
        .map(|i| mixed(&mut rng, if i / PAGE_LEN == 1 { 90 } else { 5 }))
        .collect();
    let mut v = compact(&[]);
    let mut sealed = SealedPages::default();
    for (i, &x) in values.iter().enumerate() {
        assert!(
            v.sealed_page(sealed.pages()).is_none(),
            "seed {seed}: page not full at {i}"
        );
        v.push(x);
        if let Some(page) = v.sealed_page(sealed.pages()) {
            sealed.push(page);
        }
    }
    assert_eq!(sealed.len(), 2 * PAGE_LEN, "seed {seed}");
    // Values pushed after a page was shared leave it as it was, and the vector unchanged.
    for (i, &x) in values.iter().enumerate().take(sealed.len()) {
        assert_eq!(
            sealed.entry_vartime(i).map(Entry::to_fr),
            Some(x),
            "seed {seed}: value {i}"
        );
        assert_eq!(
            sealed.entry_vartime(i),
            v.entry_vartime(i),
            "seed {seed}: value {i}"
        );
    }
    assert_eq!(sealed.entry_vartime(sealed.len()), None);
    assert_eq!(v, values[..], "seed {seed}");
    // A vector stored raw shares no page.
    let raw = vector(
        CompactConfig {
            storage: Storage::Raw,
            ..CompactConfig::default()
        },
        &values,
    );
    assert!(raw.sealed_page(0).is_none());
}
