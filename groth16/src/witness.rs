//! The constraint system of a synthesis with recorded
//! [`ConstraintMatrices`](crate::ConstraintMatrices): it records the assignment and counts
//! the constraints, and never calls an `enforce` closure or a name closure, whose linear
//! combinations and names the matrices make unnecessary.

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use sluice_backend::CompactVec;
use sluice_field::{Fr, FrCompatible};

use crate::assignment::{report_progress, SynthesisOptions, SynthesisProgress};

/// The witness of a circuit and its constraint count.
pub(crate) struct WitnessOnly {
    /// The public inputs, the constant one first.
    pub(crate) inputs: Vec<Fr>,
    /// The auxiliary assignment, stored as `options` say.
    pub(crate) aux: CompactVec,
    /// Constraints enforced.
    pub(crate) constraints: usize,
    progress: Option<SynthesisProgress>,
    expected: usize,
}

impl WitnessOnly {
    pub(crate) fn new(options: &SynthesisOptions) -> Self {
        WitnessOnly {
            inputs: Vec::new(),
            aux: options.vector(options.capacity.aux),
            constraints: 0,
            progress: options.progress.clone(),
            expected: options.capacity.constraints,
        }
    }
}

impl<S: FrCompatible> ConstraintSystem<S> for WitnessOnly {
    type Root = Self;

    fn new() -> Self {
        WitnessOnly::new(&SynthesisOptions::default())
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<S, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?.to_fr());
        Ok(Variable(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<S, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(f()?.to_fr());
        Ok(Variable(Index::Input(self.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        LB: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        LC: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
    {
        self.constraints += 1;
        report_progress(self.progress.as_ref(), self.constraints, self.expected);
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
