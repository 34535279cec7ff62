//! Joining parts synthesized apart (forked synthesis): each part repeated a shared prefix of
//! the circuit, so the whole is the first part, then every later part's rest, once each
//! later part's prefix is known to hold the same values as the first's.

use ff::Field;
use sluice_backend::compact::PAGE_LEN;
use sluice_backend::CompactVec;
use sluice_field::Fr;
use subtle::{Choice, ConstantTimeEq};

use crate::error::Groth16Error;
use crate::synthesis::counts::Counts;

/// What a part's system holds at its start that the whole holds once: the constant one and
/// the prefix's inputs, the prefix's variables and constraints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Prefix {
    /// Inputs, the constant one included.
    pub(crate) inputs: usize,
    /// Auxiliary variables.
    pub(crate) aux: usize,
    /// Constraints.
    pub(crate) constraints: usize,
}

impl Prefix {
    /// The prefix of parts synthesized after the constant one, whose own prefix circuit
    /// holds `counts`.
    pub(crate) fn after_one(counts: Counts) -> Self {
        Prefix {
            inputs: counts.inputs + 1,
            aux: counts.aux,
            constraints: counts.constraints,
        }
    }

    /// Fails unless part `part` (`inputs`, `aux` variables and `constraints`) holds at least
    /// the prefix.
    pub(crate) fn check_len(
        &self,
        part: usize,
        inputs: usize,
        aux: usize,
        constraints: usize,
    ) -> Result<(), Groth16Error> {
        if inputs < self.inputs || aux < self.aux || constraints < self.constraints {
            return Err(Groth16Error::Fork {
                part,
                reason: format!(
                    "it holds {inputs} inputs, {aux} variables and {constraints} constraints, \
                     fewer than the prefix it must repeat ({} inputs, {} variables, {} \
                     constraints)",
                    self.inputs, self.aux, self.constraints
                ),
            });
        }
        Ok(())
    }

    /// Fails unless part `part`'s prefix inputs and variables equal the first part's
    /// (compared in constant time: they are witness values).
    pub(crate) fn check_values(
        &self,
        part: usize,
        (first_inputs, first_aux): (&[Fr], &CompactVec),
        (inputs, aux): (&[Fr], &CompactVec),
    ) -> Result<(), Groth16Error> {
        let same_inputs = first_inputs[..self.inputs]
            .iter()
            .zip(&inputs[..self.inputs])
            .fold(Choice::from(1), |all, (x, y)| all & x.ct_eq(y));
        let mut same_aux = Choice::from(1);
        let page = PAGE_LEN.min(self.aux);
        let (mut x, mut y) = (vec![Fr::ZERO; page], vec![Fr::ZERO; page]);
        for start in (0..self.aux).step_by(PAGE_LEN) {
            let len = page.min(self.aux - start);
            first_aux.decode_into(start, &mut x[..len]);
            aux.decode_into(start, &mut y[..len]);
            same_aux &= x[..len]
                .iter()
                .zip(&y[..len])
                .fold(Choice::from(1), |all, (x, y)| all & x.ct_eq(y));
        }
        if !bool::from(same_inputs & same_aux) {
            return Err(Groth16Error::Fork {
                part,
                reason: "its prefix holds other values than part 0's (the parts were built \
                         from different shared values)"
                    .into(),
            });
        }
        Ok(())
    }
}

/// A system the parts of a fork are synthesized into, as the join sees it.
pub(crate) trait Joinable: Sized {
    /// Its inputs (the constant one included), auxiliary variables and constraints.
    fn lengths(&self) -> (usize, usize, usize);
    /// Its input and auxiliary values.
    fn values(&self) -> (&[Fr], &CompactVec);
    /// Appends part `index`'s rest, what follows the prefix, to this whole.
    fn append_rest(&mut self, index: usize, part: Self, prefix: Prefix);
}

/// The whole circuit's system from `parts` in order, each synthesized alone: part 0 whole,
/// then each later part's rest, once its lengths hold the prefix and its prefix values equal
/// part 0's.
pub(crate) fn join<S: Joinable>(parts: Vec<S>, prefix: Prefix) -> Result<S, Groth16Error> {
    let check_len = |index: usize, part: &S| {
        let (inputs, aux, constraints) = part.lengths();
        prefix.check_len(index, inputs, aux, constraints)
    };
    let mut parts = parts.into_iter().enumerate();
    let Some((_, mut whole)) = parts.next() else {
        return Err(Groth16Error::Fork {
            part: 0,
            reason: "a fork needs at least one part".into(),
        });
    };
    check_len(0, &whole)?;
    for (index, part) in parts {
        check_len(index, &part)?;
        prefix.check_values(index, whole.values(), part.values())?;
        whole.append_rest(index, part, prefix);
    }
    Ok(whole)
}
