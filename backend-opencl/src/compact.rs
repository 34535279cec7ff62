//! Compact host vectors ([`sluice_backend::compact`]) written into device buffers: the code
//! bytes and the exceptions go up, and two Fr-program kernels (`kernels/compact.cl`) expand
//! them, so a boolean-heavy vector moves about a thirtieth of its raw bytes.

use std::ops::Range;

use sluice_backend::compact::{small_values, Piece};
use sluice_backend::{BackendError, CompactVec};
use sluice_field::Fr;

use crate::chunked::Chunked;
use crate::context::DeviceCtx;
use crate::fr_ops::FrOps;
use crate::release::DeviceTemp;
use crate::repr::{as_words, words_as_bytes_mut};
use crate::source::ProgramKind;

/// Most values one batch expands: the bound of the codes' host temporary (16 MiB), which
/// keeps a 2^27 vector's write at eight launches of each kernel.
const BATCH: usize = 1 << 24;

/// Most exceptions a batch gathers before it goes up (36 MiB of them), raw pages' values
/// among them: a batch ends at the page that passes it.
const BATCH_EXCEPTIONS: usize = 1 << 20;

/// One batch packed for the device: the codes as words, and the exceptions (raw pieces'
/// values too) at their positions in the destination chunk. The buffers are kept between
/// batches, so a batch overwrites them rather than clearing and filling them again.
#[derive(Default)]
struct Packed {
    codes: Vec<u32>,
    at: Vec<u32>,
    values: Vec<Fr>,
}

impl Packed {
    /// Packs values from `src.start` of `data` (a paged vector), to land at element `first`
    /// of a chunk, until `src.end` or a batch is full; returns where it stopped. The pages
    /// are packed in parallel: one core packs a 2^24-value batch (two copies of about
    /// 25 MB) far slower than the link sends it, and the device waits for the first batch.
    fn pack(&mut self, data: &CompactVec, src: Range<usize>, first: usize) -> usize {
        use rayon::prelude::*;
        let end = src.end.min(src.start + BATCH);
        // The pieces of the batch with their exceptions (a code piece's positions in its
        // page; a raw piece's values are all exceptions); the batch ends at the piece that
        // passes BATCH_EXCEPTIONS.
        let mut pieces = Vec::new();
        let (mut exceptions, mut stop) = (0, end);
        for (start, piece) in data.pieces(src.start..end) {
            let (positions, from) = match &piece {
                Piece::Codes { page, range } => page.exceptions_in(range.clone()),
                Piece::Raw(values) => (&[][..], *values),
            };
            let len = piece.len();
            pieces.push((start, piece, positions, from));
            exceptions += from.len();
            if exceptions >= BATCH_EXCEPTIONS {
                stop = start + len;
                break;
            }
        }
        let code_bytes = stop - src.start;
        // Every code byte below `code_bytes` is written below; the padding of the last
        // word is never expanded.
        if self.codes.len() < code_bytes.div_ceil(4) {
            self.codes.resize(code_bytes.div_ceil(4), 0);
        }
        self.at.clear();
        self.at.reserve(exceptions);
        self.values.clear();
        self.values.reserve(exceptions);
        // Each piece's share of the three outputs, split off in order.
        let mut shares = Vec::with_capacity(pieces.len());
        let mut codes = &mut words_as_bytes_mut(&mut self.codes)[..code_bytes];
        let mut at = &mut self.at.spare_capacity_mut()[..exceptions];
        let mut values = &mut self.values.spare_capacity_mut()[..exceptions];
        for (start, piece, positions, from) in pieces {
            let m = from.len();
            let (c, c_rest) = std::mem::take(&mut codes).split_at_mut(piece.len());
            let (a, a_rest) = std::mem::take(&mut at).split_at_mut(m);
            let (v, v_rest) = std::mem::take(&mut values).split_at_mut(m);
            (codes, at, values) = (c_rest, a_rest, v_rest);
            shares.push((first + start - src.start, piece, positions, from, (c, a, v)));
        }
        // On the device's host pool: the device waits for this batch.
        crate::host_pool::install(|| {
            shares.into_par_iter().for_each(
                |(base, piece, positions, from, (codes, at, values))| {
                    match piece {
                        Piece::Codes { page, range } => {
                            codes.copy_from_slice(&page.codes()[range.clone()]);
                            for (slot, &p) in at.iter_mut().zip(positions) {
                                slot.write((base + p as usize - range.start) as u32);
                            }
                        }
                        Piece::Raw(_) => {
                            // Their codes are overwritten by the exceptions; zeros keep them tidy.
                            codes.fill(0);
                            for (k, slot) in at.iter_mut().enumerate() {
                                slot.write((base + k) as u32);
                            }
                        }
                    }
                    for (slot, x) in values.iter_mut().zip(from) {
                        slot.write(*x);
                    }
                },
            )
        });
        // SAFETY: the shares split the first `exceptions` spare slots of `at` and `values`
        // among the pieces, each share as long as its piece's exceptions, and every slot of
        // each share was written above.
        unsafe {
            self.at.set_len(exceptions);
            self.values.set_len(exceptions);
        }
        stop
    }
}

impl FrOps<'_> {
    /// Writes values `range` of `data` at element `offset` of `dst` (on this device).
    /// `fresh`: no queued command uses `dst` yet, so raw data goes up on the transfer queue
    /// ([`DeviceCtx::write_fresh`]); the codes' temporaries always do.
    pub(crate) fn write_compact_into(
        &self,
        dst: &Chunked,
        offset: usize,
        data: &CompactVec,
        range: Range<usize>,
        fresh: bool,
    ) -> Result<(), BackendError> {
        let ctx = self.ctx;
        if let Some(raw) = data.as_raw() {
            let values = as_words(&raw[range]);
            return dst.each_range(offset, values.len() / 8, |chunk, at, from, n| {
                let words = &values[from * 8..(from + n) * 8];
                match fresh {
                    true => ctx.write_fresh(&dst.chunks[chunk], at * 8, words),
                    false => ctx.write(&dst.chunks[chunk], at * 8, words),
                }
            });
        }
        let small = self.device_copy(ctx, "compact small values", small_values())?;
        let mut packed = Packed::default();
        dst.each_range(offset, range.len(), |chunk, at, from, n| {
            let (first, end) = (range.start + from, range.start + from + n);
            let mut src = first;
            while src < end {
                let stop = packed.pack(data, src..end, at + src - first);
                let out = &dst.chunks[chunk];
                let (to, len) = (at + src - first, stop - src);
                self.expand(out, &packed, &small, to, len)?;
                src = stop;
            }
            Ok(())
        })
    }

    /// A tracked device copy of `values`, sent on the transfer queue.
    fn device_copy(
        &self,
        ctx: &DeviceCtx,
        what: &str,
        values: &[Fr],
    ) -> Result<DeviceTemp, BackendError> {
        let words = as_words(values);
        let mem = ctx.temp(self.tracker, what, words.len())?;
        ctx.write_fresh(&mem, 0, words)?;
        Ok(mem)
    }

    /// Uploads one packed batch and expands it into `out` from element `first`. Its device
    /// temporaries are dropped once the kernels are queued, to be freed at the queue's next
    /// drain ([`crate::release`]).
    fn expand(
        &self,
        out: &ocl::core::Mem,
        packed: &Packed,
        small: &ocl::core::Mem,
        first: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        let ctx = self.ctx;
        let words = &packed.codes[..len.div_ceil(4)];
        let codes = ctx.temp(self.tracker, "compact codes", words.len())?;
        ctx.write_fresh(&codes, 0, words)?;
        ctx.kernel(ProgramKind::Fr, "fr_expand_codes")?
            .mem(out)?
            .mem(&codes)?
            .mem(small)?
            .u32(first as u32)?
            .u32(len as u32)?
            .run(2 * len, None)?;
        let m = packed.at.len();
        if m == 0 {
            return Ok(());
        }
        let at = ctx.temp(self.tracker, "compact exception positions", m)?;
        ctx.write_fresh(&at, 0, &packed.at)?;
        let values = self.device_copy(ctx, "compact exceptions", &packed.values)?;
        ctx.kernel(ProgramKind::Fr, "fr_scatter_exceptions")?
            .mem(out)?
            .mem(&at)?
            .mem(&values)?
            .u32(m as u32)?
            .run(m, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{backend, rng, split_backend};
    use ff::Field;
    use rand_core::RngCore;
    use sluice_backend::compact::PAGE_LEN;
    use sluice_backend::{CompactConfig, ComputeBackend, Storage};

    /// Bits, small integers and full elements, `full` percent of the last.
    fn values(n: usize, full: u32, seed: u64) -> Vec<Fr> {
        let mut r = rng(seed);
        (0..n)
            .map(|_| match r.next_u32() % 100 {
                x if x < full => Fr::random(&mut r),
                x if x < full + 10 => -Fr::from(u64::from(r.next_u32() % 128)),
                _ => Fr::from(u64::from(r.next_u32() & 1)),
            })
            .collect()
    }

    /// Batches packed one after another cover the range exactly, and each decodes (codes,
    /// then the exceptions at their positions) to the host values: pages of codes, dense
    /// pages stored raw, and enough exceptions that batches end at the exception cap.
    #[test]
    fn packed_batches_decode_to_the_values() {
        let seed = 7302;
        let dense_pages = BATCH_EXCEPTIONS / PAGE_LEN + 3;
        let model = [
            values(PAGE_LEN + 77, 3, seed),
            values(dense_pages * PAGE_LEN, 95, seed + 1),
            values(2 * PAGE_LEN + 5, 1, seed + 2),
        ]
        .concat();
        let mut v = CompactVec::new(CompactConfig {
            storage: Storage::Compact,
            capacity: model.len(),
            ..CompactConfig::default()
        });
        v.extend_from_slice(&model);
        let small = small_values();
        let (mut packed, mut src, mut batches) = (Packed::default(), 11, 0);
        let end = model.len() - 3;
        while src < end {
            let first = 5 + src;
            let stop = packed.pack(&v, src..end, first);
            assert!(
                stop > src && stop <= end,
                "seed {seed}: batch {batches} at {src}"
            );
            let codes: Vec<u8> = packed.codes.iter().flat_map(|w| w.to_ne_bytes()).collect();
            let mut expect: Vec<Fr> = (src..stop)
                .map(|i| small[codes[i - src] as usize])
                .collect();
            for (&at, x) in packed.at.iter().zip(&packed.values) {
                expect[at as usize - first] = *x;
            }
            assert_eq!(packed.at.len(), packed.values.len(), "seed {seed}");
            for (i, x) in (src..stop).zip(&expect) {
                assert_eq!(*x, model[i], "seed {seed}: value {i}, batch {batches}");
            }
            (src, batches) = (stop, batches + 1);
        }
        // Under BATCH values in all: a second batch means one ended at the exception cap.
        assert!(
            model.len() < BATCH && batches >= 2,
            "seed {seed}: {batches} batches"
        );
    }

    /// Compact and raw vectors written whole and in part, at offsets, across pages and
    /// (on the split backend) across chunks, read back as the host decodes them; the
    /// elements around the written range are untouched.
    #[test]
    fn compact_writes_expand_to_the_host_values() {
        let seed = 7301;
        for (b, split) in [(backend(), false), (split_backend(), true)] {
            let Some(b) = b else { return };
            // A dense page between pages of codes becomes a raw page.
            let mixed = [
                values(PAGE_LEN, 3, seed),
                values(PAGE_LEN, 90, seed),
                values(9, 3, seed),
            ];
            for (model, storage) in [
                (values(PAGE_LEN + 300, 3, seed), Storage::Compact),
                (values(1000, 0, seed), Storage::Compact),
                (mixed.concat(), Storage::Compact),
                (values(5000, 80, seed), Storage::Raw),
            ] {
                let n = model.len();
                let mut v = CompactVec::new(CompactConfig {
                    storage,
                    capacity: n,
                    ..CompactConfig::default()
                });
                v.extend_from_slice(&model);
                let kinds: Vec<bool> = v
                    .pieces(0..n)
                    .map(|(_, p)| matches!(p, Piece::Raw(_)))
                    .collect();
                assert_eq!(
                    kinds.contains(&true),
                    storage == Storage::Raw || n == mixed.concat().len(),
                    "{kinds:?}"
                );
                for (offset, range, fresh) in [(0, 0..n, true), (7, 5..n - 9, false)] {
                    let what = format!(
                        "seed {seed}, split {split}, n {n}, {storage:?}, {range:?} at {offset}"
                    );
                    let len = n + 16;
                    let buf = b.alloc_fr("compact test", len).unwrap();
                    // alloc_fr queues a zero fill, and a fresh write must follow no queued
                    // command on its buffer (it goes up on the transfer queue).
                    b.synchronize().unwrap();
                    b.fr_ops()
                        .write_compact_into(&buf.data, offset, &v, range.clone(), fresh)
                        .unwrap();
                    let mut out = vec![Fr::ONE; len];
                    b.read_fr(&buf, 0, &mut out).unwrap();
                    let mut expect = vec![Fr::ZERO; len];
                    expect[offset..offset + range.len()].copy_from_slice(&model[range.clone()]);
                    assert_eq!(out, expect, "{what}");
                }
            }
        }
    }
}
