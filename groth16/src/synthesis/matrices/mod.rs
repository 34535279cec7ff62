//! A circuit's constraint matrices, recorded once, so that each proof's synthesis computes
//! only the witness.
//!
//! Most of a gadget circuit's synthesis is spent building linear combinations (sorted
//! inserts, allocations, merges) that are the same in every proof of that circuit. With
//! [`ConstraintMatrices`] recorded once (by a synthesis without a witness), a proof's
//! synthesis runs the circuit with a constraint system that records the assignment and
//! never calls the `enforce` closures, then evaluates `a = A z`, `b = B z` and `c = C z`
//! from the matrices on all cores, checking `a b = c` per constraint. The assignment and
//! the densities are exactly those a full synthesis gives (tested on every demo circuit and
//! on bellpepper's SHA-256 gadget), so the proof bytes do not change.
//!
//! A circuit whose counts differ from the matrices' is refused
//! ([`Groth16Error::MatricesMismatch`]); one of the same counts but other constraints fails
//! the satisfaction check (for a real circuit's witness), so matrices of the wrong circuit
//! never give a silently wrong proof.

use std::collections::HashMap;

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use ff::Field;
use sluice_field::{Density, Fr, FrCompatible};

use crate::generator::domain_size;
use crate::keygen::synthesize_groth16;
use crate::prover::{check_shape, ShapeCounts};
use crate::{Groth16Error, QueryLengths};

/// Rows evaluated by one task: small enough to spread a 2^16 circuit over 16 cores, large
/// enough that a task's overhead is a fraction of a percent.
const BLOCK_ROWS: usize = 4096;

/// The coefficient ids of one and minus one; other coefficients are numbered from 2 in the
/// order they first occur.
const ONE_ID: u32 = 0;
const MINUS_ONE_ID: u32 = 1;

/// The bit of a term's variable that marks a public input.
const INPUT_FLAG: u32 = 1 << 31;

/// A row length stored as this byte is in the row's entry of `long_lens`.
const LONG_ROW: u8 = u8::MAX;

/// One nonzero term of a row: its variable (an input when [`INPUT_FLAG`] is set) and its
/// coefficient's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Term {
    var: u32,
    coeff: u32,
}

/// The rows of one matrix, their terms one after the other.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Rows {
    terms: Vec<Term>,
    /// Terms per row; [`LONG_ROW`] for rows listed in `long_lens`.
    lens: Vec<u8>,
    /// `(row, terms)` of every row of at least [`LONG_ROW`] terms, ascending.
    long_lens: Vec<(usize, usize)>,
    /// The index in `terms` of the first term of every [`BLOCK_ROWS`]-th row.
    block_starts: Vec<usize>,
}

impl Rows {
    /// The rows of these terms, row lengths and long rows (as `push_row` leaves them).
    fn from_parts(terms: Vec<Term>, lens: Vec<u8>, long_lens: Vec<(usize, usize)>) -> Self {
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

    fn push_row(&mut self, terms: &[Term]) {
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
    fn block(&self, k: usize) -> impl Iterator<Item = &[Term]> + '_ {
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

    fn host_bytes(&self) -> u64 {
        (self.terms.capacity() * std::mem::size_of::<Term>()
            + self.lens.capacity()
            + self.long_lens.capacity() * std::mem::size_of::<(usize, usize)>()
            + self.block_starts.capacity() * std::mem::size_of::<usize>()) as u64
    }
}

/// The A, B and C matrices of a circuit as Groth16 proves it (the "one" input first, one
/// input constraint per input at the end), with the densities its queries use: what a
/// proof's synthesis needs besides the witness. Record them once per circuit shape with
/// [`record`](Self::record) and give them to synthesis in
/// [`SynthesisOptions::matrices`](crate::SynthesisOptions::matrices); every proof of the
/// shape (a Filecoin proof's partitions, repeated PoSt proofs) then synthesizes its
/// witness only.
///
/// Memory: 8 bytes a nonzero term and a byte a row per matrix, plus each distinct
/// coefficient other than one and minus one ([`host_bytes`](Self::host_bytes)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstraintMatrices {
    num_inputs: usize,
    num_aux: usize,
    /// A, B, C.
    rows: [Rows; 3],
    /// The coefficients by id: one, minus one, then the others in order of appearance.
    coefficients: Vec<Fr>,
    a_aux_density: Density,
    b_input_density: Density,
    b_aux_density: Density,
    /// What each block of [`BLOCK_ROWS`] rows reads ([`evaluate_early`]).
    block_needs: Vec<BlockNeed>,
}

impl ConstraintMatrices {
    /// Records the matrices of `circuit` by a synthesis without a witness (no assignment
    /// closure is called, so a circuit built for setup, without values, will do).
    ///
    /// Returns [`Groth16Error::Synthesis`] when synthesis fails or a constraint names a
    /// variable that was never allocated, and [`Groth16Error::TooManyVariables`] past 2^31
    /// variables of a kind.
    pub fn record<S: FrCompatible, C: Circuit<S>>(circuit: C) -> Result<Self, Groth16Error> {
        let mut recorder = Recorder::default();
        synthesize_groth16::<S, _, _>(&mut recorder, circuit, |r| r.matrices.num_inputs)?;
        if let Some(name) = recorder.unallocated.take() {
            log::error!("constraint `{name}` uses a variable that was never allocated");
            return Err(SynthesisError::AssignmentMissing.into());
        }
        if let Some(what) = recorder.rows.too_many {
            return Err(Groth16Error::TooManyVariables { what });
        }
        let mut m = recorder.finish();
        for rows in &mut m.rows {
            rows.terms.shrink_to_fit();
        }
        m.block_needs = block_needs(&m.rows, m.num_constraints());
        log::debug!(
            "constraint matrices: {} constraints, {} terms, {} coefficients, {} bytes",
            m.num_constraints(),
            m.num_terms(),
            m.coefficients.len(),
            m.host_bytes()
        );
        Ok(m)
    }

    /// Public inputs, counting the constant one.
    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }

    /// Auxiliary variables.
    pub fn num_aux(&self) -> usize {
        self.num_aux
    }

    /// Constraints, counting one per input.
    pub fn num_constraints(&self) -> usize {
        self.rows[0].lens.len()
    }

    /// Nonzero terms of A, B and C together.
    pub fn num_terms(&self) -> usize {
        self.rows.iter().map(|r| r.terms.len()).sum()
    }

    /// Host bytes the matrices hold.
    pub fn host_bytes(&self) -> u64 {
        self.rows.iter().map(Rows::host_bytes).sum::<u64>()
            + (self.coefficients.capacity() * std::mem::size_of::<Fr>()) as u64
            + [
                &self.a_aux_density,
                &self.b_input_density,
                &self.b_aux_density,
            ]
            .iter()
            .map(|d| d.words().len() as u64 * 8)
            .sum::<u64>()
            + (self.block_needs.capacity() * std::mem::size_of::<BlockNeed>()) as u64
    }

    /// Which auxiliary variables occur in some A, which inputs and which auxiliary
    /// variables in some B (bellperson's density rule: a nonzero coefficient).
    pub(crate) fn densities(&self) -> [&Density; 3] {
        [
            &self.a_aux_density,
            &self.b_input_density,
            &self.b_aux_density,
        ]
    }

    /// Checks that parameters with query lengths `lens` and `ic` verifying-key inputs were
    /// made for this circuit shape: every query length a proof uses, as the prover checks
    /// after synthesis, here before it (what a prover that starts MSMs during synthesis
    /// needs). [`Groth16Error::ParameterMismatch`] names the first that differs.
    pub fn check_parameters(&self, lens: &QueryLengths, ic: usize) -> Result<(), Groth16Error> {
        let counts = ShapeCounts {
            inputs: self.num_inputs,
            aux: self.num_aux,
            a_aux: self.a_aux_density.count_ones(),
            b: self.b_input_density.count_ones() + self.b_aux_density.count_ones(),
            domain: domain_size(self.num_constraints())?.1,
        };
        check_shape(lens, ic, &counts)
    }

    /// Checks that a witness synthesis's counts are the matrices'.
    pub(crate) fn check_counts(
        &self,
        inputs: usize,
        aux: usize,
        constraints: usize,
    ) -> Result<(), Groth16Error> {
        for (what, matrices, circuit) in [
            ("the number of public inputs", self.num_inputs, inputs),
            ("the number of auxiliary variables", self.num_aux, aux),
            (
                "the number of constraints",
                self.num_constraints(),
                constraints,
            ),
        ] {
            if matrices != circuit {
                return Err(Groth16Error::MatricesMismatch {
                    what,
                    matrices,
                    circuit,
                });
            }
        }
        Ok(())
    }
}

/// The constraint system [`ConstraintMatrices::record`] synthesizes into.
struct Recorder {
    /// Everything but the coefficients, which `rows` numbers.
    matrices: ConstraintMatrices,
    rows: RowRecorder,
    /// The first constraint naming a variable never allocated.
    unallocated: Option<String>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder {
            matrices: ConstraintMatrices {
                num_inputs: 0,
                num_aux: 0,
                rows: Default::default(),
                coefficients: Vec::new(),
                a_aux_density: Density::new(0),
                b_input_density: Density::new(0),
                b_aux_density: Density::new(0),
                block_needs: Vec::new(),
            },
            rows: RowRecorder::default(),
            unallocated: None,
        }
    }
}

impl Recorder {
    /// The matrices with their coefficients.
    fn finish(mut self) -> ConstraintMatrices {
        self.matrices.coefficients = self.rows.coefficients;
        self.matrices
    }
}

/// Turns linear combinations into rows, numbering their coefficients.
struct RowRecorder {
    /// The coefficients by id: one, minus one, then the others in order of appearance.
    coefficients: Vec<Fr>,
    /// Coefficient ids by their Montgomery limbs.
    ids: HashMap<[u64; 4], u32>,
    /// The kind of a variable whose index is past what a term holds.
    too_many: Option<&'static str>,
    /// The row being recorded.
    row: Vec<Term>,
}

impl Default for RowRecorder {
    fn default() -> Self {
        let coefficients = vec![Fr::ONE, -Fr::ONE];
        let ids = coefficients
            .iter()
            .zip(0..)
            .map(|(c, id)| (c.mont_limbs(), id))
            .collect();
        RowRecorder {
            coefficients,
            ids,
            too_many: None,
            row: Vec::new(),
        }
    }
}

impl RowRecorder {
    /// Appends `lc`'s nonzero terms to `rows` as one row, marking the densities given;
    /// false if it names a variable past `(inputs, aux)`, the variables allocated.
    fn record<S: FrCompatible>(
        &mut self,
        rows: &mut Rows,
        lc: &LinearCombination<S>,
        (inputs, aux): (usize, usize),
        mut input_density: Option<&mut Density>,
        mut aux_density: Option<&mut Density>,
    ) -> bool {
        let mut ok = true;
        self.row.clear();
        let terms = lc
            .iter_inputs()
            .map(|(&i, c)| (i, c, true))
            .chain(lc.iter_aux().map(|(&i, c)| (i, c, false)));
        for (i, coeff, input) in terms {
            let coeff = coeff.as_fr();
            if coeff.is_zero_vartime() {
                continue;
            }
            let (count, density, flag) = match input {
                true => (inputs, input_density.as_deref_mut(), INPUT_FLAG),
                false => (aux, aux_density.as_deref_mut(), 0),
            };
            if i >= count {
                ok = false;
                continue;
            }
            if let Some(d) = density {
                // In range: i is below the count, the density's length.
                let _ = d.set(i, true);
            }
            let var = match u32::try_from(i) {
                Ok(v) if v < INPUT_FLAG => v | flag,
                _ => {
                    self.too_many = Some(match input {
                        true => "inputs",
                        false => "auxiliary variables",
                    });
                    continue;
                }
            };
            let next = self.coefficients.len() as u32;
            let id = *self.ids.entry(coeff.mont_limbs()).or_insert(next);
            if id == next {
                self.coefficients.push(*coeff);
            }
            self.row.push(Term { var, coeff: id });
        }
        rows.push_row(&self.row);
        ok
    }
}

impl<S: FrCompatible> ConstraintSystem<S> for Recorder {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<S, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        // No witness: the assignment closure is never called.
        let m = &mut self.matrices;
        m.a_aux_density.push(false);
        m.b_aux_density.push(false);
        m.num_aux += 1;
        Ok(Variable(Index::Aux(m.num_aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<S, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let m = &mut self.matrices;
        m.b_input_density.push(false);
        m.num_inputs += 1;
        Ok(Variable(Index::Input(m.num_inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        LB: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        LC: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
    {
        let (a, b, c) = (
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        );
        let m = &mut self.matrices;
        let counts = (m.num_inputs, m.num_aux);
        let [a_rows, b_rows, c_rows] = &mut m.rows;
        // Inputs have full density in A (the input constraints), so A tracks aux only.
        let ok = self
            .rows
            .record(a_rows, &a, counts, None, Some(&mut m.a_aux_density))
            & self.rows.record(
                b_rows,
                &b,
                counts,
                Some(&mut m.b_input_density),
                Some(&mut m.b_aux_density),
            )
            & self.rows.record(c_rows, &c, counts, None, None);
        if !ok && self.unallocated.is_none() {
            self.unallocated = Some(annotation().into());
        }
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

#[cfg(test)]
mod tests;

mod evaluate;
mod file;

use evaluate::{block_needs, BlockNeed};
pub(crate) use evaluate::{evaluate_early, Evaluation};
