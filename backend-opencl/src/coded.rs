//! Coded uploads of Fr vectors whose elements are nearly all 0, 1 or -1.
//!
//! A boolean-heavy witness (bit decompositions, as in Filecoin's SHA-256 and packing
//! constraints) gives a, b and auxiliary vectors whose elements are nearly all 0, 1 or -1.
//! Sent as they are, those vectors are a proof's largest transfers (three of 4 GiB at
//! 2^27), and a's and b's open H with the kernels waiting for them. Coded, such an element
//! costs 2 bits; the others ("literals") keep their 32 bytes. The device expands the codes
//! into the vector (`fr_expand_coded`, on the transfer queue), so the vector it gets is
//! byte for byte the one a plain upload makes.
//!
//! A vector is coded only where at most one element in [`LITERAL_SHARE`] is a literal, and
//! where the tracker grants the codes' device buffers (at most 4.5 bytes per element, 14%
//! of the vector, held until the expansion is done); otherwise it goes up as it is.

use ff::Field;
use rayon::prelude::*;
use sluice_backend::{BackendError, MemoryKind, MemoryTracker};
use sluice_field::Fr;

use crate::context::{Chunked, DeviceCtx};
use crate::repr::as_words;
use crate::source::ProgramKind;

/// Elements per block, log2: the unit of the host's parallel passes and of `bases`.
const BLOCK_LOG: u32 = 12;
const BLOCK: usize = 1 << BLOCK_LOG;
/// Elements per code word (2 bits each).
const PER_WORD: usize = 16;
/// 32-bit words per element.
const WORDS: usize = 8;
/// A vector is coded when at most one element in this many is a literal.
const LITERAL_SHARE: usize = 8;
/// Elements sampled first, so that a dense vector skips the counting pass.
const SAMPLES: usize = 1024;
/// Coded uploads start at this many elements (2^17: 4 MiB); below, the codes would not
/// save a transfer's fixed costs.
pub(crate) const CODED_MIN_ELEMS: usize = 1 << 17;

const LITERAL: u32 = 3;

/// The codes of a vector: element i's 2-bit code is `(codes[i / 16] >> 2 (i % 16)) & 3`
/// (0 zero, 1 one, 2 minus one, 3 literal), and literal i is the `bases[i / BLOCK] +
/// ranks[i / 16] + (literals before i in its code word)`-th literal in element order.
pub(crate) struct Coded {
    codes: Vec<u32>,
    /// Per code word: the literals before it in its block.
    ranks: Vec<u32>,
    /// Per block: the literals before it.
    bases: Vec<u32>,
    /// Literals in all.
    literals: usize,
}

/// One and minus one in the device layout (Montgomery form).
fn unit_words() -> ([u32; WORDS], [u32; WORDS]) {
    let words = |x: Fr| {
        let mut w = [0u32; WORDS];
        w.copy_from_slice(as_words(std::slice::from_ref(&x)));
        w
    };
    (words(Fr::ONE), words(-Fr::ONE))
}

/// The literal codes of a code word, as its odd bits cleared: bit 2k set for literal k.
fn literal_bits(word: u32) -> u32 {
    word & (word >> 1) & 0x5555_5555
}

impl Coded {
    /// The codes of `values` (8 words per element), or `None` where more than one element
    /// in [`LITERAL_SHARE`] is a literal (judged first on a sample, then exactly).
    pub(crate) fn new(values: &[u32]) -> Option<Coded> {
        let n = values.len() / WORDS;
        let (one, minus_one) = unit_words();
        let code = |i: usize| -> u32 {
            let e = &values[WORDS * i..WORDS * (i + 1)];
            match e {
                _ if e.iter().all(|&w| w == 0) => 0,
                _ if e == one => 1,
                _ if e == minus_one => 2,
                _ => LITERAL,
            }
        };
        let step = (n / SAMPLES).max(1);
        let sampled = (0..n).step_by(step).filter(|&i| code(i) == LITERAL).count();
        if n == 0 || sampled * LITERAL_SHARE > n.div_ceil(step) {
            return None;
        }
        let words = n.div_ceil(PER_WORD);
        let mut codes = vec![0u32; words];
        let mut ranks = vec![0u32; words];
        let per_block: Vec<u32> = codes
            .par_chunks_mut(BLOCK / PER_WORD)
            .zip(ranks.par_chunks_mut(BLOCK / PER_WORD))
            .enumerate()
            .map(|(b, (codes, ranks))| {
                let mut count = 0u32;
                for (w, (word, rank)) in codes.iter_mut().zip(ranks.iter_mut()).enumerate() {
                    *rank = count;
                    let first = b * BLOCK + w * PER_WORD;
                    for k in 0..PER_WORD.min(n - first) {
                        *word |= code(first + k) << (2 * k);
                    }
                    count += literal_bits(*word).count_ones();
                }
                count
            })
            .collect();
        let mut bases = Vec::with_capacity(per_block.len());
        let mut literals = 0usize;
        for count in per_block {
            bases.push(literals as u32);
            literals += count as usize;
        }
        (literals * LITERAL_SHARE <= n).then_some(Coded {
            codes,
            ranks,
            bases,
            literals,
        })
    }

    /// Copies literals `from..` (in element order) of `values` into `out`, as many as it
    /// holds (whole elements).
    fn fill_literals(&self, values: &[u32], from: usize, out: &mut [u32]) {
        let to = from + out.len() / WORDS;
        // Cut `out` along the blocks holding literals from..to: from the last block that
        // starts at or before `from`.
        let mut pieces = Vec::new();
        let mut rest = out;
        let mut block = self.bases.partition_point(|&b| b as usize <= from) - 1;
        let mut at = from;
        while at < to {
            let end = self
                .bases
                .get(block + 1)
                .map_or(self.literals, |&b| b as usize)
                .min(to);
            let (piece, tail) = std::mem::take(&mut rest).split_at_mut((end - at) * WORDS);
            if !piece.is_empty() {
                pieces.push((block, at - self.bases[block] as usize, piece));
            }
            rest = tail;
            at = end;
            block += 1;
        }
        pieces.into_par_iter().for_each(|(block, mut skip, piece)| {
            let mut out = piece.chunks_exact_mut(WORDS);
            let words = BLOCK / PER_WORD;
            for (w, &word) in self.codes[block * words..].iter().take(words).enumerate() {
                let mut bits = literal_bits(word);
                while bits != 0 {
                    let k = bits.trailing_zeros() as usize / 2;
                    bits &= bits - 1;
                    if skip > 0 {
                        skip -= 1;
                        continue;
                    }
                    let Some(slot) = out.next() else { return };
                    let i = block * BLOCK + w * PER_WORD + k;
                    slot.copy_from_slice(&values[WORDS * i..WORDS * (i + 1)]);
                }
            }
        });
    }
}

/// A new buffer of `len` Fr holding `values` (8 words each, at most `len` elements) then
/// zeros, on device `device`: coded where the values allow it (see the module doc), as
/// they are otherwise. Like [`Chunked::upload`] the values go up on the transfer queue,
/// beside the kernels already queued; unlike it, the call also waits for the expansion.
pub(crate) fn upload_fr(
    ctx: &DeviceCtx,
    device: usize,
    tracker: &MemoryTracker,
    name: &str,
    len: usize,
    values: &[u32],
) -> Result<Chunked, BackendError> {
    let filled = values.len() / WORDS;
    // The host's codes, tracked while they live; a host budget that cannot hold them sends
    // the values as they are.
    let host = match filled >= CODED_MIN_ELEMS {
        true => tracker
            .allocate(MemoryKind::Host, "upload codes", host_bytes(filled))
            .ok(),
        false => None,
    };
    let coded = host.as_ref().and_then(|_| Coded::new(values));
    let Some(coded) = coded else {
        return Chunked::upload(ctx, device, tracker, name, len, WORDS, values);
    };
    let buf = Chunked::alloc(ctx, device, tracker, name, len, WORDS)?;
    // The codes' buffers; a budget that cannot hold them sends the values as they are.
    let temps = [
        ("upload codes", coded.codes.len()),
        ("upload code ranks", coded.ranks.len()),
        ("upload code bases", coded.bases.len()),
        ("upload literals", coded.literals * WORDS),
    ]
    .into_iter()
    .map(|(what, words)| ctx.temp(tracker, what, words))
    .collect::<Result<Vec<_>, _>>();
    let temps = match temps {
        Ok(t) => t,
        Err(BackendError::OutOfMemory { .. }) => {
            buf.write_fresh(ctx, values)?;
            buf.zero_from(ctx, filled)?;
            return Ok(buf);
        }
        Err(e) => return Err(e),
    };
    let [codes, ranks, bases, lits] = [0, 1, 2, 3].map(|i| &temps[i].0);
    ctx.write_fresh(codes, 0, &coded.codes)?;
    ctx.write_fresh(ranks, 0, &coded.ranks)?;
    ctx.write_fresh(bases, 0, &coded.bases)?;
    let fill = |at: usize, piece: &mut [u32]| coded.fill_literals(values, at / WORDS, piece);
    ctx.write_fresh_with(lits, 0, coded.literals * WORDS, &fill)?;
    buf.each_range(0, filled, |chunk, at, from, n| {
        ctx.kernel(ProgramKind::Fr, "fr_expand_coded")?
            .mem(&buf.chunks[chunk])?
            .mem(codes)?
            .mem(ranks)?
            .mem(bases)?
            .mem(lits)?
            .u64(at as u64)?
            .u64(from as u64)?
            .u32(n as u32)?
            .u32(BLOCK_LOG)?
            .on_transfer_queue()
            .run(n, None)
    })?;
    // The codes are released once expanded: waited for here, so that the release does
    // not wait for the kernel queue's work.
    ctx.finish_transfers()?;
    drop(temps);
    buf.zero_from(ctx, filled)?;
    Ok(buf)
}

/// Host bytes the codes of `elements` elements take.
fn host_bytes(elements: usize) -> u64 {
    let words = elements.div_ceil(PER_WORD) * 2 + elements.div_ceil(BLOCK);
    words as u64 * 4
}

#[cfg(test)]
mod tests {
    use super::{Coded, BLOCK, WORDS};
    use crate::repr::as_words;
    use ff::Field;
    use rand_chacha::rand_core::{RngCore, SeedableRng};
    use rand_chacha::ChaCha20Rng;
    use sluice_field::Fr;

    /// The vector the codes describe, expanded on the host as the kernel does.
    fn expand(coded: &Coded, values: &[u32]) -> Vec<Fr> {
        let n = values.len() / WORDS;
        let mut lits = vec![0u32; coded.literals * WORDS];
        coded.fill_literals(values, 0, &mut lits);
        let lits: Vec<&[u32]> = lits.chunks_exact(WORDS).collect();
        (0..n)
            .map(|i| {
                let word = coded.codes[i / 16];
                let shift = 2 * (i % 16);
                match (word >> shift) & 3 {
                    0 => Fr::ZERO,
                    1 => Fr::ONE,
                    2 => -Fr::ONE,
                    _ => {
                        let below = super::literal_bits(word) & ((1u32 << shift) - 1);
                        let k = coded.bases[i / BLOCK] as usize
                            + coded.ranks[i / 16] as usize
                            + below.count_ones() as usize;
                        let mut x = Fr::ZERO;
                        crate::repr::as_words_mut(std::slice::from_mut(&mut x))
                            .copy_from_slice(lits[k]);
                        x
                    }
                }
            })
            .collect()
    }

    /// n elements: 0, 1, -1 or random, a random one with probability `1 / literal_one_in`.
    fn witness(n: usize, literal_one_in: u32, seed: u64) -> Vec<Fr> {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| match rng.next_u32() % literal_one_in {
                0 => Fr::random(&mut rng),
                _ => [Fr::ZERO, Fr::ONE, -Fr::ONE][rng.next_u32() as usize % 3],
            })
            .collect()
    }

    #[test]
    fn codes_describe_the_vector() {
        for (n, one_in, seed) in [
            (1, 2, 1),
            (17, 9, 2),
            (BLOCK * 3 + 5, 20, 3),
            (100_000, 65, 4),
        ] {
            let v = witness(n, one_in, seed);
            let words = as_words(&v);
            match Coded::new(words) {
                Some(coded) => assert_eq!(expand(&coded, words), v, "n {n} seed {seed}"),
                // Only a vector with too many literals may be refused.
                None => assert!(n < 64, "n {n} seed {seed} refused"),
            }
        }
    }

    #[test]
    fn literals_fill_from_any_offset() {
        let seed = 5;
        let v = witness(BLOCK * 5 + 77, 12, seed);
        let words = as_words(&v);
        let coded = Coded::new(words).expect("sparse enough");
        let mut all = vec![0u32; coded.literals * WORDS];
        coded.fill_literals(words, 0, &mut all);
        for (from, count) in [(0, 1), (3, 100), (coded.literals - 7, 7), (400, 517)] {
            let mut part = vec![0u32; count * WORDS];
            coded.fill_literals(words, from, &mut part);
            assert_eq!(
                part,
                all[from * WORDS..(from + count) * WORDS],
                "from {from} seed {seed}"
            );
        }
    }

    #[test]
    fn dense_vectors_are_not_coded() {
        // Every element random, then one in four: both far over one literal in eight.
        for one_in in [1, 4] {
            let v = witness(50_000, one_in, 6);
            assert!(Coded::new(as_words(&v)).is_none(), "1 in {one_in}");
        }
    }
}
