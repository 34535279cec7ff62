//! The one synthesis convention setup, the prover and the recorded matrices share
//! (bellperson's), so that their counts and indices agree.

use bellpepper_core::{Circuit, ConstraintSystem, Index, SynthesisError, Variable};
use sluice_field::FrCompatible;

/// Synthesizes `circuit` into `cs` as Groth16 needs it, one convention for setup and prover
/// alike (bellperson's): the constant one as input 0 ([`begin_groth16`]), then the circuit,
/// then the input constraints ([`finish_groth16`]). `num_inputs` reads the input count of
/// `cs` after synthesis.
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
    begin_groth16(cs)?;
    circuit.synthesize(cs)?;
    finish_groth16(cs, num_inputs(cs));
    Ok(())
}

/// Allocates the constant one as input 0.
pub(crate) fn begin_groth16<S: FrCompatible, CS: ConstraintSystem<S>>(
    cs: &mut CS,
) -> Result<(), SynthesisError> {
    cs.alloc_input(|| "one", || Ok(S::ONE)).map(drop)
}

/// Enforces `x * 0 = 0` for each of the `num_inputs` inputs (which makes the IC query full).
pub(crate) fn finish_groth16<S: FrCompatible, CS: ConstraintSystem<S>>(
    cs: &mut CS,
    num_inputs: usize,
) {
    for i in 0..num_inputs {
        cs.enforce(
            || format!("input constraint {i}"),
            |lc| lc + Variable(Index::Input(i)),
            |lc| lc,
            |lc| lc,
        );
    }
}
