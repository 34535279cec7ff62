//! The [`Fork`] trait and [`Forked`], a fork as one plain circuit.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use sluice_field::FrCompatible;

use crate::fork::rebase::{PrefixRecord, Rebase};
use crate::synthesis::counts::count_circuit;

/// A circuit made of a shared prefix and independent parts (see the [module docs](crate::fork)).
///
/// `Sync`: the parts are built on the threads that synthesize them.
pub trait Fork<S: FrCompatible>: Sync {
    /// A circuit that synthesizes the prefix and then one part (or none: [`Fork::prefix`]).
    type Part: Circuit<S>;

    /// How many parts the circuit has.
    fn parts(&self) -> usize;

    /// The prefix alone: the circuit with no part.
    fn prefix(&self) -> Result<Self::Part, SynthesisError>;

    /// The prefix and then part `index` alone (`index < parts()`).
    fn part(&self, index: usize) -> Result<Self::Part, SynthesisError>;
}

/// A fork by reference: `synthesize_forked(&fork, ..)` and `Forked(&fork)` leave it to be
/// used again.
impl<S: FrCompatible, F: Fork<S>> Fork<S> for &F {
    type Part = F::Part;

    fn parts(&self) -> usize {
        F::parts(self)
    }

    fn prefix(&self) -> Result<Self::Part, SynthesisError> {
        F::prefix(self)
    }

    fn part(&self, index: usize) -> Result<Self::Part, SynthesisError> {
        F::part(self, index)
    }
}

/// A [`Fork`] as one plain circuit, synthesized part after part in any constraint system:
/// part 0 as it is, then each later part inside a namespace `part_<i>`, its copy of the
/// prefix identified with part 0's (the same variables, its constraints not enforced again,
/// its values checked equal where the system takes a witness). A fork of no parts is its
/// prefix.
#[derive(Clone, Debug)]
pub struct Forked<F>(pub F);

impl<S: FrCompatible, F: Fork<S>> Circuit<S> for Forked<F> {
    fn synthesize<CS: ConstraintSystem<S>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let fork = self.0;
        if fork.parts() == 0 {
            return fork.prefix()?.synthesize(cs);
        }
        let prefix = count_circuit(fork.prefix()?)?;
        let mut record = PrefixRecord::new();
        for index in 0..fork.parts() {
            let part = fork.part(index)?;
            if index > 0 {
                cs.get_root().push_namespace(|| format!("part_{index}"));
            }
            let mut rebased = Rebase::new(&mut *cs, prefix, &mut record, index);
            let synthesized = part
                .synthesize(&mut rebased)
                .and_then(|()| rebased.finish());
            if index > 0 {
                cs.get_root().pop_namespace();
            }
            synthesized?;
        }
        Ok(())
    }
}
