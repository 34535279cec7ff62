//! `a = A z`, `b = B z` and `c = C z` from the recorded rows, in parallel blocks of
//! [`BLOCK_ROWS`] rows appended in order, each constraint checked (`a b = c`): while the
//! witness is synthesized, block by block as the pages of the witness that a block reads
//! fill ([`evaluate_early`]), then what is left once it is complete
//! ([`ConstraintMatrices::evaluate`]). A proof's synthesis then ends with the witness plus
//! the last blocks, not plus every block.

use std::sync::mpsc::Receiver;

use ff::Field;
use rayon::prelude::*;
use sluice_backend::compact::{Entry, SealedPage, SealedPages};
use sluice_backend::{CompactVec, HostBudget};
use sluice_field::Fr;

use crate::error::Groth16Error;
use crate::r1cs::satisfy::satisfies;
use crate::synthesis::matrices::record::ConstraintMatrices;
use crate::synthesis::matrices::rows::{Term, BLOCK_ROWS, INPUT_FLAG, MINUS_ONE_ID, ONE_ID};

/// Blocks evaluated per thread between two appends to the a and b vectors: bounds the
/// decoded rows held at once (64 bytes a row) to a few MiB per thread.
const BLOCKS_PER_THREAD: usize = 4;

/// Where evaluation reads the auxiliary values: the whole witness, or its pages filled so
/// far.
pub(crate) trait AuxValues: Sync {
    /// Value `i` as it is stored, `None` where it is not (yet) readable.
    fn entry_vartime(&self, i: usize) -> Option<Entry>;

    /// The values readable.
    fn len(&self) -> usize;
}

impl AuxValues for CompactVec {
    #[inline]
    fn entry_vartime(&self, i: usize) -> Option<Entry> {
        CompactVec::entry_vartime(self, i)
    }

    fn len(&self) -> usize {
        CompactVec::len(self)
    }
}

impl AuxValues for SealedPages {
    #[inline]
    fn entry_vartime(&self, i: usize) -> Option<Entry> {
        SealedPages::entry_vartime(self, i)
    }

    fn len(&self) -> usize {
        SealedPages::len(self)
    }
}

/// The a and b of the blocks evaluated so far, in order, and the first constraint that
/// failed its check among them.
pub(crate) struct Evaluation {
    pub(crate) a: CompactVec,
    pub(crate) b: CompactVec,
    /// Blocks appended.
    blocks: usize,
    first_failure: Option<usize>,
}

impl Evaluation {
    /// Nothing evaluated yet; the values go to `a` and `b`.
    pub(crate) fn new(a: CompactVec, b: CompactVec) -> Self {
        Evaluation {
            a,
            b,
            blocks: 0,
            first_failure: None,
        }
    }
}

/// Evaluates blocks while synthesis writes the witness, on the calling thread (and the
/// rayon pool): `pages` brings each page of the witness as it fills, with the inputs
/// allocated by then, and every block whose terms are all written by then is evaluated.
/// Returns when the channel closes (synthesis ended), leaving the rest to
/// [`ConstraintMatrices::evaluate`]; a block that cannot be evaluated (a variable past
/// what it needs, which a recorded block never names) is left there too, which reports it.
pub(crate) fn evaluate_early(
    matrices: &ConstraintMatrices,
    pages: Receiver<(SealedPage, Vec<Fr>)>,
    uniform: bool,
    mut evaluation: Evaluation,
    budget: Option<&dyn HostBudget>,
) -> Evaluation {
    let mut sealed = SealedPages::default();
    for (page, inputs) in pages {
        sealed.push(page);
        let end = matrices.ready_until(evaluation.blocks, sealed.len(), inputs.len());
        let evaluated =
            matrices.evaluate_until(end, &inputs, &sealed, uniform, &mut evaluation, budget);
        if evaluated.is_err() {
            break;
        }
    }
    evaluation
}

impl ConstraintMatrices {
    /// Evaluates the blocks `evaluation` has not (see [the module docs](self)) from the
    /// complete witness, and returns the first constraint with `a_i b_i != c_i`, if any.
    /// `uniform`: compare in constant time (raw storage).
    ///
    /// The witness must have the matrices' counts ([`check_counts`](Self::check_counts)).
    /// The rows decoded at once are counted in `budget` while they are held.
    pub(crate) fn evaluate(
        &self,
        inputs: &[Fr],
        aux: &CompactVec,
        uniform: bool,
        evaluation: &mut Evaluation,
        budget: Option<&dyn HostBudget>,
    ) -> Result<Option<usize>, Groth16Error> {
        let blocks = self.block_needs.len();
        self.evaluate_until(blocks, inputs, aux, uniform, evaluation, budget)?;
        Ok(evaluation.first_failure)
    }

    /// The end of the run of blocks from `from` that read only the first `aux` auxiliary
    /// values and `inputs` inputs.
    pub(super) fn ready_until(&self, from: usize, aux: usize, inputs: usize) -> usize {
        from + self.block_needs[from.min(self.block_needs.len())..]
            .iter()
            .take_while(|need| need.aux <= aux && need.inputs <= inputs)
            .count()
    }

    /// Evaluates and appends the blocks from `evaluation`'s next to `end`, in batches of a
    /// few blocks per thread.
    fn evaluate_until<V: AuxValues>(
        &self,
        end: usize,
        inputs: &[Fr],
        aux: &V,
        uniform: bool,
        evaluation: &mut Evaluation,
        budget: Option<&dyn HostBudget>,
    ) -> Result<(), Groth16Error> {
        if evaluation.blocks >= end {
            return Ok(());
        }
        let batch =
            (rayon::current_num_threads() * BLOCKS_PER_THREAD).clamp(1, end - evaluation.blocks);
        let held = (batch * BLOCK_ROWS * 2 * std::mem::size_of::<Fr>()) as u64;
        if let Some(budget) = budget {
            budget.acquire(held);
        }
        let evaluated = self.evaluate_batches(end, inputs, aux, uniform, evaluation, batch);
        if let Some(budget) = budget {
            budget.release(held);
        }
        evaluated
    }

    fn evaluate_batches<V: AuxValues>(
        &self,
        end: usize,
        inputs: &[Fr],
        aux: &V,
        uniform: bool,
        evaluation: &mut Evaluation,
        batch: usize,
    ) -> Result<(), Groth16Error> {
        while evaluation.blocks < end {
            let start = evaluation.blocks;
            let evaluated: Vec<Block> = (start..(start + batch).min(end))
                .into_par_iter()
                .map(|k| self.evaluate_block(k, inputs, aux, uniform))
                .collect::<Option<_>>()
                .ok_or(Groth16Error::MatricesMismatch {
                    what: "the variables a constraint uses",
                    matrices: self.num_aux,
                    circuit: aux.len(),
                })?;
            for block in evaluated {
                evaluation.a.extend_from_slice(&block.a);
                evaluation.b.extend_from_slice(&block.b);
                evaluation.first_failure = evaluation.first_failure.or(block.first_failure);
                evaluation.blocks += 1;
            }
        }
        Ok(())
    }

    /// Block `k`'s rows evaluated; `None` if a term's variable is past the witness.
    fn evaluate_block<V: AuxValues>(
        &self,
        k: usize,
        inputs: &[Fr],
        aux: &V,
        uniform: bool,
    ) -> Option<Block> {
        let [a_rows, b_rows, c_rows] = &self.rows;
        let rows = a_rows.block(k).zip(b_rows.block(k)).zip(c_rows.block(k));
        let len = BLOCK_ROWS.min(self.num_constraints() - k * BLOCK_ROWS);
        let mut block = Block {
            a: Vec::with_capacity(len),
            b: Vec::with_capacity(len),
            first_failure: None,
        };
        for (i, ((a, b), c)) in rows.enumerate() {
            let (a, b, c) = (
                self.dot(a, inputs, aux)?,
                self.dot(b, inputs, aux)?,
                self.dot(c, inputs, aux)?,
            );
            if !satisfies(&a, &b, &c, uniform) && block.first_failure.is_none() {
                block.first_failure = Some(k * BLOCK_ROWS + i);
            }
            block.a.push(a);
            block.b.push(b);
        }
        Some(block)
    }

    /// `<row, z>`, with the shortcuts of a full synthesis: no product for a coefficient of
    /// one or minus one, an input of one, or an auxiliary value stored as 0, 1 or -1.
    ///
    /// # Security
    /// Variable time in compactly stored values, as their storage is
    /// (`sluice_backend::compact`); raw storage gives full elements.
    #[inline]
    fn dot<V: AuxValues>(&self, row: &[Term], inputs: &[Fr], aux: &V) -> Option<Fr> {
        let mut acc = Fr::ZERO;
        for t in row {
            let coeff = &self.coefficients[t.coeff as usize];
            let value = match t.var & INPUT_FLAG {
                0 => aux.entry_vartime(t.var as usize)?,
                _ => match inputs.get((t.var & !INPUT_FLAG) as usize)? {
                    x if *x == Fr::ONE => Entry::Small(1),
                    x => Entry::Full(*x),
                },
            };
            match value {
                Entry::Small(0) => {}
                Entry::Small(1) => acc += coeff,
                Entry::Small(-1) => acc -= coeff,
                value => match t.coeff {
                    ONE_ID => acc += value.to_fr(),
                    MINUS_ONE_ID => acc -= value.to_fr(),
                    _ => acc += value.to_fr() * coeff,
                },
            }
        }
        Some(acc)
    }
}

/// One block's evaluations.
struct Block {
    a: Vec<Fr>,
    b: Vec<Fr>,
    first_failure: Option<usize>,
}
