//! The key-generation assembly: synthesis without a witness, recording the R1CS matrices
//! column by column (per variable), as setup needs them.

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use sluice_field::{Fr, FrCompatible};

use crate::Groth16Error;

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

/// Synthesizes `circuit` into `cs` as Groth16 needs it, one convention for setup and prover
/// alike (bellperson's): the constant one as input 0, then the circuit, then one constraint
/// `x * 0 = 0` per input (which makes the IC query full). `num_inputs` reads the input count
/// of `cs` after synthesis.
pub(crate) fn synthesize_groth16<S, CS, C>(
    cs: &mut CS,
    circuit: C,
    num_inputs: fn(&CS) -> usize,
) -> Result<(), SynthesisError>
where
    S: FrCompatible,
    CS: ConstraintSystem<S>,
    C: Circuit<S>,
{
    cs.alloc_input(|| "one", || Ok(S::ONE))?;
    circuit.synthesize(cs)?;
    for i in 0..num_inputs(cs) {
        cs.enforce(
            || format!("input constraint {i}"),
            |lc| lc + Variable(Index::Input(i)),
            |lc| lc,
            |lc| lc,
        );
    }
    Ok(())
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

/// Generic over the scalar type like [`ProvingAssignment`](crate::ProvingAssignment)'s:
/// coefficients are stored as the `Fr`s they are.
impl<S: FrCompatible> ConstraintSystem<S> for KeypairAssembly {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<S, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        // No witness in setup: the assignment closure is never called.
        self.aux.iter_mut().for_each(|m| m.push(Vec::new()));
        Ok(Variable(Index::Aux(self.num_aux() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<S, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.iter_mut().for_each(|m| m.push(Vec::new()));
        Ok(Variable(Index::Input(self.num_inputs() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        LB: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        LC: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
    {
        let row = self.num_constraints;
        let lcs = [
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        ];
        let mut ok = true;
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
            self.unallocated = Some(annotation().into());
        }
        self.num_constraints += 1;
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
