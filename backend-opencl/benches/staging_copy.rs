//! The host's copy into pinned staging (`src/copy.rs`), plain against streaming stores:
//! a 1 GiB source through two 16 MiB slots, as a staged upload copies it (the pinned
//! slots are ordinary memory here; the copy is what sets a staged upload's pace).
//!
//!     cargo bench -p sluice-backend-opencl --bench staging_copy

// criterion_group! makes undocumented functions.
#![allow(missing_docs)]

#[path = "../src/copy.rs"]
#[allow(dead_code)]
mod copy;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn staging_copy(c: &mut Criterion) {
    const SOURCE_WORDS: usize = 1 << 28;
    const SLOT_WORDS: usize = 1 << 22;
    let src: Vec<u32> = (0..SOURCE_WORDS as u32).collect();
    let mut slots = vec![vec![0u32; SLOT_WORDS]; 2];
    let mut group = c.benchmark_group("staging copy 1 GiB");
    group.throughput(Throughput::Bytes(SOURCE_WORDS as u64 * 4));
    group.sample_size(10);
    for (name, streaming) in [("plain", false), ("streaming", true)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                for (k, piece) in src.chunks(SLOT_WORDS).enumerate() {
                    copy::copy_words(&mut slots[k % 2], piece, streaming);
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, staging_copy);
criterion_main!(benches);
