//! A demo and benchmark circuit: a MiMC-like chain of cubings with a public start and end.
//!
//! Generic over the scalar field, so the very same circuit runs on sluice (`sluice_field::Fr`)
//! and on bellperson (`blstrs::Scalar`) — both speak bellpepper-core 0.2 — which is what a
//! side-by-side benchmark needs.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use ff::PrimeField;

/// `x_{i+1} = (x_i + k_i)^3` for `rounds` rounds: two multiplication constraints per round.
/// Public inputs: the start `x_0` and the end `x_rounds`. With `x: None` it synthesizes
/// the shape only (for setup).
#[derive(Clone, Debug)]
pub struct MimcLike<F> {
    /// The start, or `None` when only the shape is needed.
    pub x: Option<F>,
    /// The number of rounds.
    pub rounds: usize,
}

impl<F: PrimeField> MimcLike<F> {
    /// The circuit with the most rounds whose constraints (two per round, plus one per
    /// public input, as Groth16 adds) fill a domain of 2^log_domain.
    pub fn filling_domain(log_domain: u32, x: Option<F>) -> Self {
        let n = 1usize << log_domain;
        MimcLike {
            x,
            rounds: n.saturating_sub(3) / 2,
        }
    }

    /// The number of constraints Groth16 proves for it, public-input constraints included.
    pub fn num_constraints(&self) -> usize {
        if self.rounds == 0 {
            2
        } else {
            2 * self.rounds + 3
        }
    }

    /// The public inputs for start `x` (without the leading one): `[x_0, x_rounds]`, or
    /// just `[x_0]` for a circuit of no rounds.
    pub fn public_inputs(x: F, rounds: usize) -> Vec<F> {
        let mut y = x;
        for i in 0..rounds {
            let t = y + round_constant::<F>(i);
            y = t.square() * t;
        }
        if rounds == 0 {
            vec![x]
        } else {
            vec![x, y]
        }
    }
}

/// The constant of round `i` (fixed, public, and different for every round).
fn round_constant<F: PrimeField>(i: usize) -> F {
    F::from((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

impl<F: PrimeField> Circuit<F> for MimcLike<F> {
    fn synthesize<CS: ConstraintSystem<F>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let missing = || SynthesisError::AssignmentMissing;
        let mut x_val = self.x;
        let mut x = cs.alloc_input(|| "x", || x_val.ok_or_else(missing))?;
        for i in 0..self.rounds {
            let mut cs = cs.namespace(|| format!("round {i}"));
            let k = round_constant::<F>(i);
            let t_val = x_val.map(|v| v + k);
            let sq_val = t_val.map(|t| t.square());
            let sq = cs.alloc(|| "sq", || sq_val.ok_or_else(missing))?;
            cs.enforce(
                || "t^2",
                |lc| lc + x + (k, CS::one()),
                |lc| lc + x + (k, CS::one()),
                |lc| lc + sq,
            );
            x_val = sq_val.zip(t_val).map(|(s, t)| s * t);
            let next = if i + 1 == self.rounds {
                cs.alloc_input(|| "out", || x_val.ok_or_else(missing))?
            } else {
                cs.alloc(|| "cube", || x_val.ok_or_else(missing))?
            };
            cs.enforce(
                || "t^3",
                |lc| lc + sq,
                |lc| lc + x + (k, CS::one()),
                |lc| lc + next,
            );
            x = next;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProvingAssignment;
    use sluice_field::Fr;

    #[test]
    fn shape_and_inputs_agree_with_synthesis() {
        for log in [2, 5, 10] {
            let x = Fr::from(5u64);
            let c = MimcLike::filling_domain(log, Some(x));
            let cs = ProvingAssignment::synthesize(c.clone()).unwrap();
            let inputs = MimcLike::public_inputs(x, c.rounds);
            assert_eq!(&cs.input_assignment()[1..], &inputs[..]);
            assert_eq!(cs.num_constraints(), c.num_constraints());
            assert!(c.num_constraints() <= 1 << log);
        }
    }
}
