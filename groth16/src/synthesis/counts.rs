//! Counting what a circuit allocates and enforces, storing nothing: the layout checks of
//! forked synthesis and the sizing of real circuits (which domain, which parameters) read it.

use bellpepper_core::{Circuit, LinearCombination};
use sluice_field::{Fr, FrCompatible};

use crate::synthesis::system::{constraint_system, Synthesizer};

/// How many inputs, auxiliary variables and constraints something holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Counts {
    /// Public inputs.
    pub inputs: usize,
    /// Auxiliary (witness) variables.
    pub aux: usize,
    /// Constraints.
    pub constraints: usize,
}

impl Counts {
    /// log2 of the evaluation domain a circuit of these Groth16 counts needs (the smallest
    /// power of two holding its constraints).
    pub fn domain_log2(&self) -> u32 {
        self.constraints.max(1).next_power_of_two().trailing_zeros()
    }
}

/// Counts `circuit` as the prover lays it out for Groth16: the constant one is input 0, and
/// each input adds a constraint (the convention bellperson and sluice share), so
/// `constraints` is what the evaluation domain must hold.
///
/// No value closure and no `enforce` closure is called: a circuit without values counts the
/// same as one with them, and as fast as its gadget code runs.
pub fn count_constraints<S: FrCompatible, C: Circuit<S>>(
    circuit: C,
) -> Result<Counts, bellpepper_core::SynthesisError> {
    let inner = count_circuit(circuit)?;
    Ok(Counts {
        inputs: inner.inputs + 1,
        aux: inner.aux,
        constraints: inner.constraints + inner.inputs + 1,
    })
}

/// Counts what `circuit` itself allocates and enforces (no constant one, no input
/// constraints).
pub(crate) fn count_circuit<S: FrCompatible, C: Circuit<S>>(
    circuit: C,
) -> Result<Counts, bellpepper_core::SynthesisError> {
    let mut counter = Counter::default();
    circuit.synthesize(&mut counter)?;
    Ok(counter.0)
}

/// The counting constraint system: no witness, nothing stored.
#[derive(Default)]
struct Counter(Counts);

impl Synthesizer for Counter {
    const WITNESS: bool = false;

    fn fresh() -> Self {
        Counter::default()
    }

    fn aux(&mut self, _: Option<Fr>) -> usize {
        self.0.aux += 1;
        self.0.aux - 1
    }

    fn input(&mut self, _: Option<Fr>) -> usize {
        self.0.inputs += 1;
        self.0.inputs - 1
    }

    fn constraint<S: FrCompatible>(
        &mut self,
        _: impl FnOnce() -> String,
        _: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        _: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        _: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
    ) {
        self.0.constraints += 1;
    }
}

constraint_system!(Counter);

#[cfg(test)]
mod tests {
    use super::*;
    use bellpepper_core::{ConstraintSystem, SynthesisError};

    /// x^3 = y with x private and y public: 2 aux, 1 input, 2 constraints.
    struct Cube(Option<Fr>);

    impl Circuit<Fr> for Cube {
        fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            let x = cs.alloc(|| "x", || self.0.ok_or(SynthesisError::AssignmentMissing))?;
            let x2 = cs.alloc(|| "x2", || unreachable!("a counter calls no value closure"))?;
            let y = cs.alloc_input(|| "y", || Err(SynthesisError::AssignmentMissing))?;
            cs.enforce(|| "x*x", |lc| lc + x, |lc| lc + x, |lc| lc + x2);
            cs.enforce(|| "x2*x", |lc| lc + x2, |lc| lc + x, |lc| lc + y);
            Ok(())
        }
    }

    #[test]
    fn counts_follow_the_groth16_convention_without_values() {
        assert_eq!(
            count_circuit(Cube(None)).expect("counts"),
            Counts {
                inputs: 1,
                aux: 2,
                constraints: 2
            }
        );
        let groth16 = count_constraints(Cube(None)).expect("counts");
        assert_eq!(
            groth16,
            Counts {
                inputs: 2,
                aux: 2,
                constraints: 4
            }
        );
        assert_eq!(groth16.domain_log2(), 2);
    }
}
