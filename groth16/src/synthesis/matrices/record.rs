//! Recording a circuit's matrices: [`ConstraintMatrices`] and the constraint system that
//! records them by a synthesis without a witness.

use std::collections::HashMap;

use bellpepper_core::{Circuit, LinearCombination, SynthesisError};
use ff::Field;
use sluice_field::{Density, Fr, FrCompatible};

use crate::error::Groth16Error;
use crate::r1cs::domain::domain_size;
use crate::r1cs::shape::{check_shape, QueryLengths, ShapeCounts};
use crate::synthesis::convention::synthesize_groth16;
use crate::synthesis::matrices::rows::{block_needs, BlockNeed, Rows, Term, INPUT_FLAG};
use crate::synthesis::system::{constraint_system, Synthesizer};

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
    pub(super) num_inputs: usize,
    pub(super) num_aux: usize,
    /// A, B, C.
    pub(super) rows: [Rows; 3],
    /// The coefficients by id: one, minus one, then the others in order of appearance.
    pub(super) coefficients: Vec<Fr>,
    pub(super) a_aux_density: Density,
    pub(super) b_input_density: Density,
    pub(super) b_aux_density: Density,
    /// What each block of [`BLOCK_ROWS`] rows reads ([`evaluate_early`]).
    pub(super) block_needs: Vec<BlockNeed>,
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

impl Synthesizer for Recorder {
    // No witness: the assignment closures are never called.
    const WITNESS: bool = false;

    fn fresh() -> Self {
        Self::default()
    }

    fn aux(&mut self, _: Option<Fr>) -> usize {
        let m = &mut self.matrices;
        m.a_aux_density.push(false);
        m.b_aux_density.push(false);
        m.num_aux += 1;
        m.num_aux - 1
    }

    fn input(&mut self, _: Option<Fr>) -> usize {
        let m = &mut self.matrices;
        m.b_input_density.push(false);
        m.num_inputs += 1;
        m.num_inputs - 1
    }

    fn constraint<S: FrCompatible>(
        &mut self,
        name: impl FnOnce() -> String,
        a: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        b: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        c: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
    ) {
        let zero = LinearCombination::zero;
        let (a, b, c) = (a(zero()), b(zero()), c(zero()));
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
            self.unallocated = Some(name());
        }
    }
}

constraint_system!(Recorder);
