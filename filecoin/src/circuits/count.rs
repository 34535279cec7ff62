//! Counting a circuit's constraints as sluice lays it out, without storing anything.

use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar as Fr;

/// What a circuit holds once sluice (like bellperson) has synthesized it for Groth16.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Public inputs, the constant one included.
    pub inputs: usize,
    /// Auxiliary (witness) variables.
    pub aux: usize,
    /// Constraints, one per public input included: what the evaluation domain must hold.
    pub constraints: usize,
}

impl Counts {
    /// log2 of the evaluation domain the circuit needs (the smallest power of two holding
    /// its constraints).
    pub fn domain_log2(&self) -> u32 {
        self.constraints.max(1).next_power_of_two().trailing_zeros()
    }
}

/// Counts `circuit`'s inputs, variables and constraints, as sluice's synthesis would: the
/// constant one is input 0 and every input adds a constraint (the Groth16 convention
/// bellperson and sluice share). No value or linear combination is evaluated (a blank
/// circuit counts the same as a full one, and as fast as its gadget code runs).
pub fn constraints<C: Circuit<Fr>>(circuit: C) -> Result<Counts, SynthesisError> {
    let mut cs = Counter {
        inputs: 1,
        ..Counter::default()
    };
    circuit.synthesize(&mut cs)?;
    Ok(Counts {
        inputs: cs.inputs,
        aux: cs.aux,
        constraints: cs.constraints + cs.inputs,
    })
}

/// A constraint system that counts: neither value closures (a blank circuit has no values)
/// nor `enforce`'s closures are called, so counting a PoRep partition of 1.2 million
/// constraints costs only its gadget code.
#[derive(Default)]
struct Counter {
    inputs: usize,
    aux: usize,
    constraints: usize,
}

impl ConstraintSystem<Fr> for Counter {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        self.constraints += 1;
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

/// The largest `k` with `base + k * step <= 2^log2`, for a circuit whose size grows by
/// `step` constraints per unit (a challenge, a sector) from `base`; 0 where one unit does
/// not fit.
pub(crate) fn units_for_domain(log2: u32, base: usize, step: usize) -> usize {
    let domain = 1usize.checked_shl(log2).unwrap_or(usize::MAX);
    domain.saturating_sub(base) / step.max(1)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

    use super::*;

    /// Two inputs, one product: x * y = z with x public.
    struct Product;

    impl Circuit<Fr> for Product {
        fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            let x = cs.alloc_input(|| "x", || Err(SynthesisError::AssignmentMissing))?;
            let y = cs.alloc(|| "y", || Err(SynthesisError::AssignmentMissing))?;
            let z = cs.alloc(|| "z", || Err(SynthesisError::AssignmentMissing))?;
            cs.namespace(|| "product").enforce(
                || "x * y = z",
                |lc| lc + x,
                |lc| lc + y,
                |lc| lc + z,
            );
            Ok(())
        }
    }

    #[test]
    fn counts_follow_the_groth16_convention() {
        let counts = constraints(Product).unwrap();
        // The constant one and x; the product and one constraint per input.
        assert_eq!(
            counts,
            Counts {
                inputs: 2,
                aux: 2,
                constraints: 3
            }
        );
        assert_eq!(counts.domain_log2(), 2);
    }

    #[test]
    fn units_fill_the_domain() {
        assert_eq!(units_for_domain(4, 2, 3), 4);
        assert_eq!(units_for_domain(4, 1, 3), 5);
        assert_eq!(units_for_domain(4, 17, 3), 0);
        assert_eq!(units_for_domain(2, 0, 0), 4);
    }
}
