//! Test circuits, generic over the scalar field so that bellperson (blstrs) and sluice
//! synthesize exactly the same constraint system.
#![allow(dead_code)]

pub mod mutate;
pub mod readers;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use ff::PrimeField;

/// `x_{i+1} = x_i^2 · (x_i + i + 3)`, two constraints per round, with the start and the end
/// of the chain as public inputs. `tamper` makes the witness of one round's square wrong.
#[derive(Clone)]
pub struct Chain<S: PrimeField> {
    pub x: Option<S>,
    pub rounds: usize,
    pub tamper: Option<usize>,
}

impl<S: PrimeField> Chain<S> {
    pub fn new(x: Option<S>, rounds: usize) -> Self {
        Chain {
            x,
            rounds,
            tamper: None,
        }
    }

    /// The public inputs for start `x`: `[x, end]`.
    pub fn public_inputs(x: S, rounds: usize) -> Vec<S> {
        let mut v = x;
        for i in 0..rounds {
            v = v.square() * (v + S::from(i as u64 + 3));
        }
        vec![x, v]
    }
}

impl<S: PrimeField> Circuit<S> for Chain<S> {
    fn synthesize<CS: ConstraintSystem<S>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut x_val = self.x;
        let x_in = cs.alloc_input(|| "x", || x_val.ok_or(SynthesisError::AssignmentMissing))?;
        let mut x = cs.alloc(
            || "x aux",
            || x_val.ok_or(SynthesisError::AssignmentMissing),
        )?;
        cs.enforce(
            || "x = input",
            |lc| lc + x,
            |lc| lc + CS::one(),
            |lc| lc + x_in,
        );
        for i in 0..self.rounds {
            let mut ns = cs.namespace(|| format!("round {i}"));
            let c = S::from(i as u64 + 3);
            let mut sq_val = x_val.map(|v| v.square());
            if self.tamper == Some(i) {
                sq_val = sq_val.map(|v| v + S::ONE);
            }
            let sq = ns.alloc(|| "sq", || sq_val.ok_or(SynthesisError::AssignmentMissing))?;
            ns.enforce(|| "square", |lc| lc + x, |lc| lc + x, |lc| lc + sq);
            let next_val = sq_val.zip(x_val).map(|(s, v)| s * (v + c));
            let next = ns.alloc(
                || "next",
                || next_val.ok_or(SynthesisError::AssignmentMissing),
            )?;
            ns.enforce(
                || "cube",
                |lc| lc + sq,
                |lc| lc + x + (c, CS::one()),
                |lc| lc + next,
            );
            x = next;
            x_val = next_val;
        }
        let out = cs.alloc_input(|| "out", || x_val.ok_or(SynthesisError::AssignmentMissing))?;
        cs.enforce(|| "output", |lc| lc + x, |lc| lc + CS::one(), |lc| lc + out);
        Ok(())
    }
}

/// Public inputs only, no constraints.
#[derive(Clone)]
pub struct InputsOnly<S: PrimeField>(pub Vec<Option<S>>);

impl<S: PrimeField> Circuit<S> for InputsOnly<S> {
    fn synthesize<CS: ConstraintSystem<S>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        for (i, v) in self.0.into_iter().enumerate() {
            cs.alloc_input(
                || format!("in {i}"),
                || v.ok_or(SynthesisError::AssignmentMissing),
            )?;
        }
        Ok(())
    }
}

/// Nothing at all.
#[derive(Clone)]
pub struct Empty;

impl<S: PrimeField> Circuit<S> for Empty {
    fn synthesize<CS: ConstraintSystem<S>>(self, _: &mut CS) -> Result<(), SynthesisError> {
        Ok(())
    }
}
