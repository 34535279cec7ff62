//! The one synthesis convention setup, the prover and the recorded matrices share
//! (bellperson's), so that their counts and indices agree.

use bellpepper_core::{Circuit, ConstraintSystem, Index, SynthesisError, Variable};
use sluice_field::FrCompatible;

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
