//! A bounded, seeded mutation test of the parameter, verifying-key and proof decoders:
//! every mutated encoding either decodes to a value that re-encodes to exactly its bytes
//! (with every reader agreeing) or is an error; no decoder panics, hangs, or allocates
//! much more than the input before failing (a huge length field must not make a reader
//! reserve gigabytes). `fuzz/` runs the same checks for as long as one likes.
//!
//! The allocator of this test binary counts bytes, so the two tests take turns.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use common::mutate::{Fixture, Seeded};
use common::readers::{check_params, check_proof, check_vk, layout, ScratchFile, Verdict};

/// Counts live heap bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; the counters only
// observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The tests take turns: the counters are the process's.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// What one decoding may allocate beyond what was live before it: one batch of points
/// (16384 G2 points, 3 MiB) read ahead of the data, and the decoded copy of an input that
/// is a few kilobytes here. Gigabytes would be a length field believed.
const ALLOCATION_BOUND: usize = 16 << 20;

/// Bytes allocated by `f` at its peak, beyond what was live when it started.
fn peak_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

/// Cases per run: a few thousand, well under a minute on two cores in release.
const CASES: u64 = 3000;
const SEED: u64 = 0x5eed_2500;
/// A case that takes this long is hung (a case takes milliseconds).
const HANG: Duration = Duration::from_secs(60);

#[test]
fn huge_length_fields_do_not_make_the_readers_allocate() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new(SEED);
    let file = ScratchFile::new("huge-lengths");
    let bytes = &fixture.params_file.bytes;
    let params = sluice_groth16::Parameters::read(&bytes[..], false).unwrap();
    for section in layout(&params) {
        for len in [u32::MAX, 1 << 31, 1 << 24] {
            let mut bad = bytes.clone();
            bad[section.len_at..section.len_at + 4].copy_from_slice(&len.to_be_bytes());
            let (verdict, peak) = peak_allocation(|| check_params(&bad, &file));
            assert_eq!(verdict, Ok(Verdict::Rejected), "{} = {len}", section.name);
            assert!(
                peak <= ALLOCATION_BOUND,
                "{} = {len}: {peak} bytes allocated for a {}-byte file",
                section.name,
                bad.len()
            );
            if section.name == "vk.ic" {
                let (_, peak) = peak_allocation(|| check_vk(&bad));
                assert!(peak <= ALLOCATION_BOUND, "vk.ic = {len}: {peak} bytes");
            }
        }
    }
}

/// What the cases came to, so that a run that exercised nothing fails.
#[derive(Debug, Default)]
struct Tally {
    params: [usize; 3],
    vk: [usize; 2],
    proof: [usize; 2],
    peak: usize,
}

/// Runs case `case`: one of the three encodings, mutated, through every decoder of it.
fn run_case(
    fixture: &Fixture,
    file: &ScratchFile,
    case: u64,
    tally: &mut Tally,
) -> Result<(), String> {
    let mut choices = Seeded::new(SEED + case);
    let (result, peak) = peak_allocation(|| match case % 4 {
        0 | 1 => {
            let bytes = fixture.params_file.mutated(&mut choices);
            check_params(&bytes, file).map(|v| tally.params[v as usize] += 1)
        }
        2 => {
            let bytes = fixture.vk.mutated(&mut choices);
            check_vk(&bytes).map(|ok| tally.vk[usize::from(ok)] += 1)
        }
        _ => {
            let bytes = fixture.proof.mutated(&mut choices);
            check_proof(&bytes).map(|ok| tally.proof[usize::from(ok)] += 1)
        }
    });
    tally.peak = tally.peak.max(peak);
    result?;
    if peak > ALLOCATION_BOUND {
        return Err(format!("{peak} bytes allocated"));
    }
    Ok(())
}

#[test]
fn mutated_encodings_decode_consistently_or_fail_cleanly() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (progress, watch) = mpsc::channel::<Result<u64, String>>();
    // The cases run on a thread of their own, so a hung decoder is reported with its case.
    let worker = std::thread::spawn(move || {
        let fixture = Fixture::new(SEED);
        let file = ScratchFile::new("mutation");
        let mut tally = Tally::default();
        for case in 0..CASES {
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                run_case(&fixture, &file, case, &mut tally)
            }))
            .unwrap_or_else(|_| Err("a decoder panicked".to_owned()));
            let report = outcome
                .map(|()| case)
                .map_err(|e| format!("case {case} (seed {}): {e}", SEED + case));
            let failed = report.is_err();
            if progress.send(report).is_err() || failed {
                return tally;
            }
        }
        tally
    });
    for case in 0..CASES {
        match watch.recv_timeout(HANG) {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => panic!("{e}"),
            Err(_) => panic!(
                "case {case} (seed {}) ran for {HANG:?}: a decoder hangs",
                SEED + case
            ),
        }
    }
    let tally = worker.join().unwrap();
    println!("{CASES} cases from seed {SEED:#x}: {tally:?}");
    // Not vacuous: mutations were accepted and rejected, by each decoder.
    assert!(tally.params.iter().all(|&n| n > 0), "{tally:?}");
    assert!(
        tally.vk.iter().chain(&tally.proof).all(|&n| n > 0),
        "{tally:?}"
    );
}
