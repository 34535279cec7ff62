//! A fork's parts synthesized on the rayon pool and joined (see the module docs).

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use rayon::prelude::*;
use sluice_field::FrCompatible;

use crate::error::Groth16Error;
use crate::fork::circuit::Fork;
use crate::synthesis::assignment::ProvingAssignment;
use crate::synthesis::convention::{begin_groth16, finish_groth16};
use crate::synthesis::counts::count_circuit;
use crate::synthesis::join::{join, Prefix};
use crate::synthesis::options::{Capacity, SynthesisOptions, Unsatisfied};
use crate::synthesis::witness::WitnessOnly;

impl ProvingAssignment {
    /// Synthesizes `fork` with its witness, every part on its own task in the rayon pool
    /// this runs in (install a pool to choose the threads), and joins the parts into the
    /// assignment [`synthesize_with`](Self::synthesize_with) makes of [`Forked`](crate::Forked)`(fork)`:
    /// the same a, b, witness and densities, so the same proof for given r and s.
    ///
    /// With [`SynthesisOptions::matrices`] each part computes its witness only and a and b
    /// are evaluated from the matrices over the joined witness (every row's a·b = c
    /// checked). Without, each part evaluates its own constraints; a failing one is named
    /// with its part and its index in the whole circuit.
    ///
    /// Memory: every part's vectors are counted in `options.budget` while they exist; the
    /// join frees each part a page at a time as the whole grows by it. Part 0 becomes the
    /// whole and is made at `options`' capacity in memory `options.lender` lends; the
    /// others at an even share of it, on the heap.
    ///
    /// Errors: [`Groth16Error::Fork`] names a part that failed to synthesize, holds fewer
    /// variables or constraints than the prefix, or whose prefix holds other values than
    /// part 0's.
    pub fn synthesize_forked<S: FrCompatible, F: Fork<S>>(
        fork: F,
        options: &SynthesisOptions,
    ) -> Result<Self, Groth16Error> {
        let started = std::time::Instant::now();
        let prefix =
            Prefix::after_one(count_circuit(fork.prefix()?).map_err(|e| fork_error(0, e))?);
        let parts = fork.parts().max(1);
        let whole = match &options.matrices {
            Some(matrices) => {
                let parts = synthesize_parts(&fork, parts, |index| {
                    WitnessOnly::new(&part_options(options, index, parts), 0)
                })?;
                let mut witness = join::<WitnessOnly>(parts, prefix)?;
                // The input constraints, which the matrices hold.
                witness.constraints += witness.inputs.len();
                let evaluation = Self::fresh_evaluation(options);
                Self::from_witness(witness, matrices, options, evaluation)?
            }
            None => {
                let parts = synthesize_parts(&fork, parts, |index| {
                    ProvingAssignment::with_options(&part_options(options, index, parts))
                })?;
                let mut whole = join::<ProvingAssignment>(parts, prefix)?;
                let inputs = whole.input_assignment().len();
                finish_groth16::<S, _>(&mut whole, inputs);
                if let Some(Unsatisfied { index, name }) = whole.first_unsatisfied() {
                    return Err(Groth16Error::Unsatisfied {
                        index: *index,
                        name: name.clone(),
                    });
                }
                whole
            }
        };
        log::debug!(
            "forked synthesis: {parts} parts, {} constraints in {:.1} ms",
            whole.num_constraints(),
            started.elapsed().as_secs_f64() * 1e3
        );
        Ok(whole)
    }
}

/// A part's failure, named with the part.
fn fork_error(part: usize, error: SynthesisError) -> Groth16Error {
    Groth16Error::Fork {
        part,
        reason: error.to_string(),
    }
}

/// What part `index` of `parts` is synthesized with: part 0 (which becomes the whole) as
/// `options` say, the others at an even share of the capacity on the heap; all counted in
/// the same budget; progress is reported by no part.
fn part_options(options: &SynthesisOptions, index: usize, parts: usize) -> SynthesisOptions {
    let (capacity, lender) = match index {
        0 => (options.capacity, options.lender.clone()),
        _ => (
            Capacity {
                constraints: options.capacity.constraints.div_ceil(parts),
                aux: options.capacity.aux.div_ceil(parts),
            },
            None,
        ),
    };
    SynthesisOptions {
        capacity,
        storage: options.storage,
        lender,
        budget: options.budget.clone(),
        progress: None,
        matrices: None,
    }
}

/// Synthesizes parts `0..parts` of `fork` (its prefix alone when it has none), each into a
/// system `fresh` makes for it, after the constant one, on the rayon pool.
fn synthesize_parts<S, F, Sys>(
    fork: &F,
    parts: usize,
    fresh: impl Fn(usize) -> Sys + Sync,
) -> Result<Vec<Sys>, Groth16Error>
where
    S: FrCompatible,
    F: Fork<S>,
    Sys: ConstraintSystem<S> + Send,
{
    let whole_is_prefix = fork.parts() == 0;
    (0..parts)
        .into_par_iter()
        .map(|index| {
            let fail = |e| fork_error(index, e);
            let part = match whole_is_prefix {
                true => fork.prefix(),
                false => fork.part(index),
            };
            let mut cs = fresh(index);
            begin_groth16(&mut cs).map_err(fail)?;
            part.and_then(|part| part.synthesize(&mut cs))
                .map_err(fail)?;
            Ok(cs)
        })
        .collect()
}
