//! Synthesis of the same circuits over `Fr` and over `blstrs::Scalar`, side by side: the
//! `FrCompatible` conversions in `ProvingAssignment` should cost nothing measurable.
//!
//! A circuit's own arithmetic (its witness, and `lc - x`, which negates) runs in the scalar
//! type it is given: sluice's inlined field code or blst's (calls into C). So the `replay`
//! rows, a recorded bit decomposition whose synthesis does no field arithmetic of its own,
//! measure the constraint system alone; the demo circuits show what a whole circuit sees.

#![allow(missing_docs)] // A benchmark binary.

use ff::{Field, PrimeField};
use sluice_field::{Fr, FrCompatible};
use sluice_groth16::demo::{BitDecomposition, MimcLike};
use sluice_groth16::{Circuit, ConstraintSystem, ProvingAssignment, SynthesisError, Variable};
use std::hint::black_box;
use std::time::Instant;

const LOG_DOMAIN: u32 = 16;

/// A term of a recorded linear combination: `(coefficient, variable)`, where variable 0 is
/// the one and `k > 0` is auxiliary variable `k - 1`.
type Term<S> = (S, usize);

/// A circuit recorded as data: its auxiliary values and, per constraint, its A, B and C.
struct Replay<S> {
    values: Vec<S>,
    constraints: Vec<[Vec<Term<S>>; 3]>,
}

impl Replay<Fr> {
    /// `words` 64-bit words with their bits, as `demo::BitDecomposition` builds them.
    fn bit_decomposition(words: usize) -> Self {
        let (mut values, mut constraints) = (Vec::new(), Vec::new());
        for w in 0..words as u64 {
            let word = w.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let first = values.len() + 1;
            let mut packed = Vec::new();
            let mut weight = Fr::ONE;
            for i in 0..64 {
                values.push(Fr::from((word >> i) & 1));
                let bit = values.len();
                constraints.push([
                    vec![(Fr::ONE, bit)],
                    vec![(Fr::ONE, bit), (-Fr::ONE, 0)],
                    vec![],
                ]);
                packed.push((weight, first + i));
                weight = weight.double();
            }
            values.push(Fr::from(word));
            constraints.push([packed, vec![(Fr::ONE, 0)], vec![(Fr::ONE, values.len())]]);
        }
        Replay {
            values,
            constraints,
        }
    }

    /// The same circuit over another `FrCompatible` scalar (a view of the same values).
    fn over<S: FrCompatible>(&self) -> Replay<S> {
        let terms = |lc: &Vec<Term<Fr>>| lc.iter().map(|&(c, v)| (S::from_fr(c), v)).collect();
        Replay {
            values: S::from_fr_slice(&self.values).to_vec(),
            constraints: self
                .constraints
                .iter()
                .map(|[a, b, c]| [terms(a), terms(b), terms(c)])
                .collect(),
        }
    }
}

impl<S: PrimeField> Circuit<S> for &Replay<S> {
    fn synthesize<CS: ConstraintSystem<S>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut vars = vec![CS::one()];
        for (i, v) in self.values.iter().enumerate() {
            vars.push(cs.alloc(|| format!("v{i}"), || Ok(*v))?);
        }
        let lc = |terms: &[Term<S>], vars: &[Variable]| {
            terms
                .iter()
                .fold(bellpepper_core::LinearCombination::zero(), |lc, &(c, v)| {
                    lc + (c, vars[v])
                })
        };
        for (k, [a, b, c]) in self.constraints.iter().enumerate() {
            cs.enforce(
                || format!("c{k}"),
                |_| lc(a, &vars),
                |_| lc(b, &vars),
                |_| lc(c, &vars),
            );
        }
        Ok(())
    }
}

/// Runs `a` and `b` alternately (`a` first in even rounds, `b` in odd ones), so that load from
/// other processes, which drifts over seconds, falls on both alike; prints each one's
/// minimum and median and the median of the per-round ratios b / a.
fn side_by_side(name: &str, rounds: usize, mut a: impl FnMut(), mut b: impl FnMut()) {
    let time = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        f();
        start.elapsed().as_secs_f64() * 1e3
    };
    let (mut ta, mut tb, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (x, y) = if round % 2 == 0 {
            let x = time(&mut a);
            (x, time(&mut b))
        } else {
            let y = time(&mut b);
            (time(&mut a), y)
        };
        ta.push(x);
        tb.push(y);
        ratio.push(y / x);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (min_a, min_b) = (
        ta.iter().copied().fold(f64::MAX, f64::min),
        tb.iter().copied().fold(f64::MAX, f64::min),
    );
    println!(
        "{name:<24} Fr: min {min_a:7.2} ms, median {:7.2} ms | blstrs::Scalar: min {min_b:7.2} ms, median {:7.2} ms | Scalar/Fr: median {:.3}, of minima {:.3} ({rounds} rounds)",
        median(&mut ta),
        median(&mut tb),
        median(&mut ratio),
        min_b / min_a,
    );
}

fn synthesize<S: FrCompatible, C: Circuit<S>>(circuit: C) {
    black_box(ProvingAssignment::synthesize(black_box(circuit)).map(|cs| cs.num_constraints()))
        .ok();
}

fn main() {
    // `cargo bench` passes `--bench`; a filter, if any, picks rows by name.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let rounds = std::env::var("SYNTHESIS_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(40);
    let wanted = |name: &str| filter.as_deref().map_or(true, |f| name.contains(f));
    let words = BitDecomposition::<Fr>::filling_domain(LOG_DOMAIN, None).words;

    let name = format!("replay-bits-2^{LOG_DOMAIN}");
    if wanted(&name) {
        let replay = Replay::bit_decomposition(words);
        let replay_scalar = replay.over::<blstrs::Scalar>();
        side_by_side(
            &name,
            rounds,
            || synthesize(&replay),
            || synthesize(&replay_scalar),
        );
    }
    let name = format!("bits-2^{LOG_DOMAIN}");
    if wanted(&name) {
        side_by_side(
            &name,
            rounds,
            || synthesize(BitDecomposition::<Fr>::filling_domain(LOG_DOMAIN, Some(3))),
            || {
                synthesize(BitDecomposition::<blstrs::Scalar>::filling_domain(
                    LOG_DOMAIN,
                    Some(3),
                ))
            },
        );
    }
    let name = format!("mimc-2^{LOG_DOMAIN}");
    if wanted(&name) {
        side_by_side(
            &name,
            rounds,
            || synthesize(MimcLike::filling_domain(LOG_DOMAIN, Some(Fr::from(7u64)))),
            || {
                synthesize(MimcLike::filling_domain(
                    LOG_DOMAIN,
                    Some(blstrs::Scalar::from(7u64)),
                ))
            },
        );
    }
}
