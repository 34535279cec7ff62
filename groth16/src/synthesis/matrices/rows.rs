//! How the matrices hold their rows: terms of 8 bytes (a variable and a coefficient id),
//! a byte of length per row, and the blocks of rows the evaluation hands to one task.

use rayon::prelude::*;

/// Rows evaluated by one task: small enough to spread a 2^16 circuit over 16 cores, large
/// enough that a task's overhead is a fraction of a percent.
pub(super) const BLOCK_ROWS: usize = 4096;

/// The coefficient ids of one and minus one; other coefficients are numbered from 2 in the
/// order they first occur.
pub(super) const ONE_ID: u32 = 0;
pub(super) const MINUS_ONE_ID: u32 = 1;

/// The bit of a term's variable that marks a public input.
pub(super) const INPUT_FLAG: u32 = 1 << 31;

/// A row length stored as this byte is in the row's entry of `long_lens`.
pub(super) const LONG_ROW: u8 = u8::MAX;

/// One nonzero term of a row: its variable (an input when [`INPUT_FLAG`] is set) and its
/// coefficient's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Term {
    pub(super) var: u32,
    pub(super) coeff: u32,
}

/// The rows of one matrix, their terms one after the other.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Rows {
    pub(super) terms: Vec<Term>,
    /// Terms per row; [`LONG_ROW`] for rows listed in `long_lens`.
    pub(super) lens: Vec<u8>,
    /// `(row, terms)` of every row of at least [`LONG_ROW`] terms, ascending.
    pub(super) long_lens: Vec<(usize, usize)>,
    /// The index in `terms` of the first term of every [`BLOCK_ROWS`]-th row.
    pub(super) block_starts: Vec<usize>,
}

impl Rows {
    /// The rows of these terms, row lengths and long rows (as `push_row` leaves them).
    pub(super) fn from_parts(
        terms: Vec<Term>,
        lens: Vec<u8>,
        long_lens: Vec<(usize, usize)>,
    ) -> Self {
        let mut block_starts = Vec::with_capacity(lens.len().div_ceil(BLOCK_ROWS));
        let (mut at, mut long) = (0, 0);
        for (row, &len) in lens.iter().enumerate() {
            if row % BLOCK_ROWS == 0 {
                block_starts.push(at);
            }
            at += match len {
                LONG_ROW => {
                    long += 1;
                    long_lens.get(long - 1).map_or(0, |&(_, len)| len)
                }
                len => len as usize,
            };
        }
        Rows {
            terms,
            lens,
            long_lens,
            block_starts,
        }
    }

    pub(super) fn push_row(&mut self, terms: &[Term]) {
        let row = self.lens.len();
        if row % BLOCK_ROWS == 0 {
            self.block_starts.push(self.terms.len());
        }
        match u8::try_from(terms.len()) {
            Ok(len) if len < LONG_ROW => self.lens.push(len),
            _ => {
                self.lens.push(LONG_ROW);
                self.long_lens.push((row, terms.len()));
            }
        }
        self.terms.extend_from_slice(terms);
    }

    /// The rows of block `k`, in order.
    pub(super) fn block(&self, k: usize) -> impl Iterator<Item = &[Term]> + '_ {
        let first = k * BLOCK_ROWS;
        let end = (first + BLOCK_ROWS).min(self.lens.len());
        let mut long = self.long_lens.partition_point(|&(row, _)| row < first);
        let mut at = self.block_starts[k];
        self.lens[first..end].iter().map(move |&len| {
            let len = match len {
                LONG_ROW => {
                    long += 1;
                    self.long_lens[long - 1].1
                }
                len => len as usize,
            };
            at += len;
            &self.terms[at - len..at]
        })
    }

    pub(super) fn host_bytes(&self) -> u64 {
        (self.terms.capacity() * std::mem::size_of::<Term>()
            + self.lens.capacity()
            + self.long_lens.capacity() * std::mem::size_of::<(usize, usize)>()
            + self.block_starts.capacity() * std::mem::size_of::<usize>()) as u64
    }
}

/// What a block of rows reads: one past the largest auxiliary index and input index its
/// terms name, in A, B or C.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct BlockNeed {
    pub(super) aux: usize,
    pub(super) inputs: usize,
}

/// Each block's [`BlockNeed`] (one pass over the terms, on all cores).
pub(super) fn block_needs(rows: &[Rows; 3], constraints: usize) -> Vec<BlockNeed> {
    (0..constraints.div_ceil(BLOCK_ROWS))
        .into_par_iter()
        .map(|k| {
            let mut need = BlockNeed::default();
            for t in rows.iter().flat_map(|r| r.block(k)).flatten() {
                let index = (t.var & !INPUT_FLAG) as usize + 1;
                match t.var & INPUT_FLAG {
                    0 => need.aux = need.aux.max(index),
                    _ => need.inputs = need.inputs.max(index),
                }
            }
            need
        })
        .collect()
}
