//! The one bridge from bellpepper's `ConstraintSystem` to this crate's constraint systems.
//!
//! Each system (the prover's [`ProvingAssignment`](super::assignment::ProvingAssignment),
//! the witness-only synthesis, setup's assembly and the matrices' recorder) says what it does
//! with a variable, an input, a constraint and a namespace by implementing [`Synthesizer`];
//! [`constraint_system!`] writes the bellpepper impl for it. The closures' plumbing (which
//! are called, and when), the root and the constant one are then written once.

use bellpepper_core::{LinearCombination, SynthesisError};
use sluice_field::{Fr, FrCompatible};

/// What a constraint system of this crate does with each event of a synthesis.
pub(crate) trait Synthesizer: Sized + Send {
    /// Whether the circuit's value closures are called: false where there is no witness
    /// (setup, recording the matrices), so a circuit without values synthesizes there.
    const WITNESS: bool;

    /// A system with the default options (bellpepper's `ConstraintSystem::new`).
    fn fresh() -> Self;

    /// Allocates an auxiliary variable (`value` is `Some` where [`Self::WITNESS`]) and
    /// returns its index.
    fn aux(&mut self, value: Option<Fr>) -> usize;

    /// Allocates a public input (`value` is `Some` where [`Self::WITNESS`]) and returns its
    /// index.
    fn input(&mut self, value: Option<Fr>) -> usize;

    /// Records the constraint `a * b = c`: `a`, `b` and `c` build the three combinations
    /// from zero (as bellpepper's `enforce` takes them) and `name` the constraint's
    /// annotation; a system calls each only if it needs it (the witness-only synthesis
    /// needs none).
    fn constraint<S: FrCompatible>(
        &mut self,
        name: impl FnOnce() -> String,
        a: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        b: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        c: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
    );

    /// Enters a namespace; only a system that names failed constraints calls `name`.
    fn enter(&mut self, name: impl FnOnce() -> String) {
        let _ = name;
    }

    /// Leaves the namespace entered last.
    fn leave(&mut self) {}
}

/// The value a system records for a new variable: the circuit's, as `Fr`, where the system
/// takes a witness; `None` (the closure never called) where it does not.
pub(crate) fn witness_value<Sys: Synthesizer, S: FrCompatible>(
    value: impl FnOnce() -> Result<S, SynthesisError>,
) -> Result<Option<Fr>, SynthesisError> {
    match Sys::WITNESS {
        true => Ok(Some(value()?.to_fr())),
        false => Ok(None),
    }
}

/// Implements bellpepper's `ConstraintSystem<S>` for every `S: FrCompatible` on a type
/// that implements [`Synthesizer`]. Generic over the scalar so circuits written for a
/// concrete one (Filecoin's, over `blstrs::Scalar`) synthesize here unchanged;
/// `FrCompatible` makes every conversion a reinterpretation, so the `Fr` path compiles to
/// the same code.
macro_rules! constraint_system {
    ($system:ty) => {
        impl<S: sluice_field::FrCompatible> bellpepper_core::ConstraintSystem<S> for $system {
            type Root = Self;

            fn new() -> Self {
                <Self as $crate::synthesis::system::Synthesizer>::fresh()
            }

            fn alloc<F, A, AR>(
                &mut self,
                _: A,
                f: F,
            ) -> Result<bellpepper_core::Variable, bellpepper_core::SynthesisError>
            where
                F: FnOnce() -> Result<S, bellpepper_core::SynthesisError>,
                A: FnOnce() -> AR,
                AR: Into<String>,
            {
                use $crate::synthesis::system::{witness_value, Synthesizer};
                let index = Synthesizer::aux(self, witness_value::<Self, S>(f)?);
                Ok(bellpepper_core::Variable(bellpepper_core::Index::Aux(
                    index,
                )))
            }

            fn alloc_input<F, A, AR>(
                &mut self,
                _: A,
                f: F,
            ) -> Result<bellpepper_core::Variable, bellpepper_core::SynthesisError>
            where
                F: FnOnce() -> Result<S, bellpepper_core::SynthesisError>,
                A: FnOnce() -> AR,
                AR: Into<String>,
            {
                use $crate::synthesis::system::{witness_value, Synthesizer};
                let index = Synthesizer::input(self, witness_value::<Self, S>(f)?);
                Ok(bellpepper_core::Variable(bellpepper_core::Index::Input(
                    index,
                )))
            }

            fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
            where
                A: FnOnce() -> AR,
                AR: Into<String>,
                LA: FnOnce(
                    bellpepper_core::LinearCombination<S>,
                ) -> bellpepper_core::LinearCombination<S>,
                LB: FnOnce(
                    bellpepper_core::LinearCombination<S>,
                ) -> bellpepper_core::LinearCombination<S>,
                LC: FnOnce(
                    bellpepper_core::LinearCombination<S>,
                ) -> bellpepper_core::LinearCombination<S>,
            {
                $crate::synthesis::system::Synthesizer::constraint(
                    self,
                    || annotation().into(),
                    a,
                    b,
                    c,
                );
            }

            fn push_namespace<NR, N>(&mut self, name_fn: N)
            where
                NR: Into<String>,
                N: FnOnce() -> NR,
            {
                $crate::synthesis::system::Synthesizer::enter(self, || name_fn().into());
            }

            fn pop_namespace(&mut self) {
                $crate::synthesis::system::Synthesizer::leave(self);
            }

            fn get_root(&mut self) -> &mut Self::Root {
                self
            }
        }
    };
}
pub(crate) use constraint_system;
