//! The key-generation assembly: synthesis without a witness, recording the R1CS matrices
//! column by column (per variable), as setup needs them.

use bellpepper_core::{Circuit, Index, LinearCombination, SynthesisError};
use sluice_field::{Fr, FrCompatible};

use crate::error::Groth16Error;
use crate::synthesis::convention::synthesize_groth16;
use crate::synthesis::system::{constraint_system, Synthesizer};

/// One variable's column of a QAP matrix: `(coefficient, constraint index)`, nonzero
/// coefficients only (a zero coefficient does not use the variable; bellperson's density
/// rule).
pub type Column = Vec<(Fr, usize)>;

/// The R1CS of a circuit in the column form setup evaluates (like bellperson's
/// `KeypairAssembly`): for every input and auxiliary variable, where it occurs in A, B, C.
#[derive(Default)]
pub struct KeypairAssembly {
    num_constraints: usize,
    /// Columns of A, B, C for the inputs.
    pub(crate) inputs: [Vec<Column>; 3],
    /// Columns of A, B, C for the auxiliary variables.
    pub(crate) aux: [Vec<Column>; 3],
    unallocated: Option<String>,
}

impl KeypairAssembly {
    /// Synthesizes `circuit` without a witness, with the "one" input first and one input
    /// constraint `x * 0 = 0` per input at the end (which makes the IC query full), exactly
    /// as bellperson's setup and the prover do.
    pub fn synthesize<S: FrCompatible, C: Circuit<S>>(circuit: C) -> Result<Self, Groth16Error> {
        let mut cs = Self::default();
        synthesize_groth16::<S, _, _>(&mut cs, circuit, Self::num_inputs)?;
        if let Some(name) = cs.unallocated.take() {
            log::error!("constraint `{name}` uses a variable that was never allocated");
            return Err(SynthesisError::AssignmentMissing.into());
        }
        Ok(cs)
    }

    /// Number of public inputs, counting the constant one.
    pub fn num_inputs(&self) -> usize {
        self.inputs[0].len()
    }

    /// Number of auxiliary variables.
    pub fn num_aux(&self) -> usize {
        self.aux[0].len()
    }

    /// Number of constraints, counting the input constraints.
    pub fn num_constraints(&self) -> usize {
        self.num_constraints
    }
}

/// Coefficients are stored as the `Fr`s they are, whatever the circuit's scalar.
impl Synthesizer for KeypairAssembly {
    // No witness in setup: the assignment closures are never called.
    const WITNESS: bool = false;

    fn fresh() -> Self {
        Self::default()
    }

    fn aux(&mut self, _: Option<Fr>) -> usize {
        self.aux.iter_mut().for_each(|m| m.push(Vec::new()));
        self.num_aux() - 1
    }

    fn input(&mut self, _: Option<Fr>) -> usize {
        self.inputs.iter_mut().for_each(|m| m.push(Vec::new()));
        self.num_inputs() - 1
    }

    fn constraint<S: FrCompatible>(
        &mut self,
        name: impl FnOnce() -> String,
        a: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        b: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        c: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
    ) {
        let row = self.num_constraints;
        let mut ok = true;
        let zero = LinearCombination::zero;
        let lcs = [a(zero()), b(zero()), c(zero())];
        for (m, lc) in lcs.iter().enumerate() {
            for (var, coeff) in lc.iter() {
                if coeff.is_zero_vartime() {
                    continue;
                }
                let column = match var.0 {
                    Index::Input(i) => self.inputs[m].get_mut(i),
                    Index::Aux(i) => self.aux[m].get_mut(i),
                };
                match column {
                    Some(col) => col.push((coeff.to_fr(), row)),
                    None => ok = false,
                }
            }
        }
        if !ok && self.unallocated.is_none() {
            self.unallocated = Some(name());
        }
        self.num_constraints += 1;
    }
}

constraint_system!(KeypairAssembly);
