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
use rayon::prelude::*;
use sluice_backend::compact::Entry;
use sluice_backend::{CompactVec, HostBudget};
use sluice_field::{Density, Fr, FrCompatible};

use crate::assignment::satisfies;
use crate::generator::domain_size;
use crate::keygen::synthesize_groth16;
use crate::prover::{check_shape, ShapeCounts};
use crate::{Groth16Error, QueryLengths};

/// Rows evaluated by one task: small enough to spread a 2^16 circuit over 16 cores, large
/// enough that a task's overhead is a fraction of a percent.
const BLOCK_ROWS: usize = 4096;

/// Blocks evaluated per thread between two appends to the a and b vectors: bounds the
/// decoded rows held at once (64 bytes a row) to a few MiB per thread.
const BLOCKS_PER_THREAD: usize = 4;

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
#[derive(Clone, Debug, Default)]
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
#[derive(Clone, Debug)]
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

    /// Appends `a_i = <A_i, z>` and `b_i = <B_i, z>` of every constraint to `a` and `b`
    /// (evaluated in parallel, appended in order) and returns the first constraint with
    /// `a_i b_i != c_i`, if any. `uniform`: compare in constant time (raw storage).
    ///
    /// The witness must have the matrices' counts ([`check_counts`](Self::check_counts)).
    /// The rows decoded at once are counted in `budget` while they are held.
    pub(crate) fn evaluate(
        &self,
        inputs: &[Fr],
        aux: &CompactVec,
        uniform: bool,
        (a, b): (&mut CompactVec, &mut CompactVec),
        budget: Option<&dyn HostBudget>,
    ) -> Result<Option<usize>, Groth16Error> {
        let blocks = self.num_constraints().div_ceil(BLOCK_ROWS);
        let batch = (rayon::current_num_threads() * BLOCKS_PER_THREAD).clamp(1, blocks.max(1));
        let held = (batch * BLOCK_ROWS * 2 * std::mem::size_of::<Fr>()) as u64;
        if let Some(budget) = budget {
            budget.acquire(held);
        }
        let evaluated = self.evaluate_batches(inputs, aux, uniform, (a, b), batch);
        if let Some(budget) = budget {
            budget.release(held);
        }
        evaluated
    }

    fn evaluate_batches(
        &self,
        inputs: &[Fr],
        aux: &CompactVec,
        uniform: bool,
        (a, b): (&mut CompactVec, &mut CompactVec),
        batch: usize,
    ) -> Result<Option<usize>, Groth16Error> {
        let blocks = self.num_constraints().div_ceil(BLOCK_ROWS);
        let mut first_failure = None;
        for start in (0..blocks).step_by(batch) {
            let evaluated: Vec<Block> = (start..(start + batch).min(blocks))
                .into_par_iter()
                .map(|k| self.evaluate_block(k, inputs, aux, uniform))
                .collect::<Option<_>>()
                .ok_or(Groth16Error::MatricesMismatch {
                    what: "the variables a constraint uses",
                    matrices: self.num_aux,
                    circuit: aux.len(),
                })?;
            for block in evaluated {
                a.extend_from_slice(&block.a);
                b.extend_from_slice(&block.b);
                first_failure = first_failure.or(block.first_failure);
            }
        }
        Ok(first_failure)
    }

    /// Block `k`'s rows evaluated; `None` if a term's variable is past the witness.
    fn evaluate_block(
        &self,
        k: usize,
        inputs: &[Fr],
        aux: &CompactVec,
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
    fn dot(&self, row: &[Term], inputs: &[Fr], aux: &CompactVec) -> Option<Fr> {
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
mod tests {
    use super::*;
    use crate::assignment::tests::same_assignment;
    use crate::demo::{BitDecomposition, MimcLike, Sha256Preimage};
    use crate::{ProvingAssignment, Storage, SynthesisOptions, UNNAMED};
    use std::sync::Arc;

    fn with_matrices(matrices: &Arc<ConstraintMatrices>, storage: Storage) -> SynthesisOptions {
        SynthesisOptions {
            storage,
            matrices: Some(matrices.clone()),
            ..SynthesisOptions::default()
        }
    }

    /// With recorded matrices, synthesis gives the assignment a full synthesis gives, in
    /// every storage, on a dense circuit, a boolean one and bellpepper's SHA-256 gadget
    /// (rows of hundreds of terms, and more constraints than one evaluation block).
    #[test]
    fn matrices_give_the_full_synthesis_assignment() {
        fn check<C: Circuit<Fr> + Clone>(name: &str, circuit: C) {
            let matrices = Arc::new(ConstraintMatrices::record(circuit.clone()).unwrap());
            assert!(matrices.num_constraints() > BLOCK_ROWS, "{name}");
            for storage in [Storage::Auto, Storage::Compact, Storage::Raw] {
                let plain = ProvingAssignment::synthesize_with(
                    circuit.clone(),
                    &SynthesisOptions {
                        storage,
                        ..SynthesisOptions::default()
                    },
                )
                .unwrap();
                let options = with_matrices(&matrices, storage);
                let fast = ProvingAssignment::synthesize_with(circuit.clone(), &options).unwrap();
                same_assignment(&fast, &plain, &format!("{name}, {storage:?}"));
                assert_eq!(matrices.num_constraints(), plain.num_constraints());
                assert_eq!(matrices.num_aux(), plain.aux_assignment().len());
            }
        }
        check(
            "mimc",
            MimcLike::<Fr>::filling_domain(13, Some(Fr::from(5u64))),
        );
        check("bits", BitDecomposition::<Fr>::filling_domain(13, Some(9)));
        let sha = Sha256Preimage::<Fr>::new(1, Some(3));
        let m = ConstraintMatrices::record(sha.clone()).unwrap();
        assert!(!m.rows.iter().all(|r| r.long_lens.is_empty()), "long rows");
        check("sha256", sha);
    }

    /// A circuit over `blstrs::Scalar` records and synthesizes as its `Fr` twin does.
    #[test]
    fn matrices_of_a_blstrs_circuit() {
        let circuit = BitDecomposition::<blstrs::Scalar>::filling_domain(12, Some(4));
        let matrices = Arc::new(ConstraintMatrices::record(circuit.clone()).unwrap());
        let options = with_matrices(&matrices, Storage::Auto);
        let fast = ProvingAssignment::synthesize_with(circuit, &options).unwrap();
        let plain =
            ProvingAssignment::synthesize(BitDecomposition::<Fr>::filling_domain(12, Some(4)))
                .unwrap();
        same_assignment(&fast, &plain, "blstrs");
    }

    /// x (aux 0) * y (aux 1) = z (aux 2), then z * 1 = the input; `swap` enforces
    /// x * z = y instead (the same counts, another circuit).
    #[derive(Clone)]
    struct Product {
        x: u64,
        y: u64,
        z: u64,
        swap: bool,
    }

    impl Circuit<Fr> for Product {
        fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            let inp = cs.alloc_input(|| "in", || Ok(Fr::from(self.z)))?;
            let x = cs.alloc(|| "x", || Ok(Fr::from(self.x)))?;
            let y = cs.alloc(|| "y", || Ok(Fr::from(self.y)))?;
            let z = cs.alloc(|| "z", || Ok(Fr::from(self.z)))?;
            let (b, c) = if self.swap { (z, y) } else { (y, z) };
            cs.enforce(|| "mul", |lc| lc + x, |lc| lc + b, |lc| lc + c);
            cs.enforce(|| "eq", |lc| lc + z, |lc| lc + CS::one(), |lc| lc + inp);
            Ok(())
        }
    }

    fn error(result: Result<ProvingAssignment, Groth16Error>) -> Groth16Error {
        match result {
            Ok(_) => panic!("synthesis passed"),
            Err(e) => e,
        }
    }

    /// A failing witness names the index a full synthesis names; matrices of another
    /// circuit of the same counts fail the check; other counts are refused.
    #[test]
    fn wrong_witnesses_and_wrong_matrices_are_caught() {
        let good = Product {
            x: 2,
            y: 3,
            z: 6,
            swap: false,
        };
        let matrices = Arc::new(ConstraintMatrices::record(good.clone()).unwrap());
        let options = with_matrices(&matrices, Storage::Auto);
        assert!(ProvingAssignment::synthesize_with(good.clone(), &options).is_ok());
        let bad = Product {
            y: 4,
            ..good.clone()
        };
        let full = error(ProvingAssignment::synthesize(bad.clone()));
        assert!(
            matches!(full, Groth16Error::Unsatisfied { index: 0, .. }),
            "{full}"
        );
        match ProvingAssignment::synthesize_with(bad, &options) {
            Err(Groth16Error::Unsatisfied { index: 0, name }) => assert_eq!(name, UNNAMED),
            other => panic!("{:?}", other.map(|_| ())),
        }
        let swapped = Product {
            swap: true,
            ..good.clone()
        };
        assert!(ProvingAssignment::synthesize(swapped.clone()).is_err());
        let other = Arc::new(ConstraintMatrices::record(swapped).unwrap());
        let err = error(ProvingAssignment::synthesize_with(
            good,
            &with_matrices(&other, Storage::Raw),
        ));
        assert!(
            matches!(err, Groth16Error::Unsatisfied { index: 0, .. }),
            "{err}"
        );
        let mimc = MimcLike::<Fr>::filling_domain(8, Some(Fr::from(5u64)));
        let err = error(ProvingAssignment::synthesize_with(mimc, &options));
        assert!(
            matches!(err, Groth16Error::MatricesMismatch { .. }),
            "{err}"
        );
    }

    /// A constraint naming a variable never allocated is refused when recording.
    #[test]
    fn foreign_variables_are_refused() {
        struct Foreign;
        impl Circuit<Fr> for Foreign {
            fn synthesize<CS: ConstraintSystem<Fr>>(
                self,
                cs: &mut CS,
            ) -> Result<(), SynthesisError> {
                cs.enforce(
                    || "bad",
                    |lc| lc + Variable(Index::Aux(3)),
                    |lc| lc,
                    |lc| lc,
                );
                Ok(())
            }
        }
        assert!(matches!(
            ConstraintMatrices::record(Foreign),
            Err(Groth16Error::Synthesis(SynthesisError::AssignmentMissing))
        ));
    }

    /// Rows of any length (short, exactly [`LONG_ROW`], longer) across block boundaries
    /// come back as they were pushed.
    #[test]
    fn rows_come_back_as_pushed() {
        let mut rows = Rows::default();
        let row = |r: usize| -> Vec<Term> {
            let len = match r % 7 {
                0 => LONG_ROW as usize,
                1 => 300 + r % 5,
                2 => 0,
                _ => r % 254,
            };
            (0..len)
                .map(|j| Term {
                    var: (r + j) as u32,
                    coeff: (r % 3) as u32,
                })
                .collect()
        };
        let n = 2 * BLOCK_ROWS + 17;
        for r in 0..n {
            rows.push_row(&row(r));
        }
        let mut r = 0;
        for k in 0..n.div_ceil(BLOCK_ROWS) {
            for got in rows.block(k) {
                assert_eq!(got, row(r).as_slice(), "row {r}");
                r += 1;
            }
        }
        assert_eq!(r, n);
    }
}
