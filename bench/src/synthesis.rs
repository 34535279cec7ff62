//! The synthesis rows: `ProvingAssignment::synthesize` of a circuit alone, on the calling
//! thread (as a prover's partition worker runs it); with `--matrices` also with its
//! constraint matrices recorded before the clock (the witness on the calling thread, a and
//! b evaluated on all cores) and the circuit's own code alone (row `circuit-alone`: its
//! value closures run, nothing stored, the floor of any prover's synthesis of it); with
//! `--compare` bellperson's own
//! synthesis of the same circuit in blstrs' field. bellperson keeps its assignment private
//! and reports the time of its synthesis only in its log (`synthesis time: ...` at info),
//! so its row runs one whole CPU proof per run and reads that line.

use std::time::{Duration, Instant};

use ff::PrimeField;
use sluice_field::{Fr, FrCompatible};
use sluice_groth16::demo::{BitDecomposition, MimcLike, Sha256Preimage};
use std::sync::Arc;

use sluice_groth16::{
    Circuit, ConstraintMatrices, ConstraintSystem, Fork, Forked, Index, LinearCombination,
    ProvingAssignment, SynthesisError, SynthesisOptions, Variable,
};

use crate::bar;
use crate::options::CircuitKind;

/// sluice's row: one warm-up and `reps` timed syntheses of `circuit` at 2^log, with its
/// constraint matrices (recorded untimed) where `matrices`; the assignment is dropped
/// outside the clock.
pub fn sluice_synthesis(
    circuit: CircuitKind,
    log: u32,
    seed: u64,
    reps: usize,
    matrices: bool,
) -> Result<Vec<Duration>, String> {
    match circuit {
        CircuitKind::Mimc => timed(
            reps,
            MimcLike::<Fr>::filling_domain(log, Some(Fr::from(seed))),
            matrices,
        ),
        CircuitKind::Bits => timed(
            reps,
            BitDecomposition::<Fr>::filling_domain(log, Some(seed)),
            matrices,
        ),
        CircuitKind::Sha256 => timed(
            reps,
            Sha256Preimage::<Fr>::filling_domain(log, Some(seed)),
            matrices,
        ),
        CircuitKind::Porep | CircuitKind::Post => {
            crate::filecoin::synthesis(circuit, log, seed, reps, matrices)
        }
    }
}

/// One warm-up and `reps` timed syntheses of `circuit` (over any scalar sluice proves).
pub(crate) fn timed<S: FrCompatible, C: Circuit<S> + Clone>(
    reps: usize,
    circuit: C,
    matrices: bool,
) -> Result<Vec<Duration>, String> {
    let options = options_with(matrices.then(|| circuit.clone()))?;
    reps_of(
        reps,
        || circuit.clone(),
        |copy| ProvingAssignment::synthesize_with(copy, &options),
    )
}

/// One warm-up and `reps` timed forked syntheses of `fork` in `pool`
/// (`ProvingAssignment::synthesize_forked`), with the constraint matrices of
/// `Forked(fork)` (recorded untimed) where `matrices`.
#[cfg_attr(not(feature = "filecoin"), allow(dead_code))] // Forks are Filecoin's circuits.
pub(crate) fn timed_forked<S: FrCompatible, F: Fork<S>>(
    reps: usize,
    fork: &F,
    matrices: bool,
    pool: &rayon::ThreadPool,
) -> Result<Vec<Duration>, String> {
    let options = options_with(matrices.then_some(Forked(fork)))?;
    reps_of(
        reps,
        || (),
        |()| pool.install(|| ProvingAssignment::synthesize_forked(fork, &options)),
    )
}

/// Synthesis options with the matrices of `circuit` (recorded untimed) where given.
fn options_with<S: FrCompatible, C: Circuit<S>>(
    circuit: Option<C>,
) -> Result<SynthesisOptions, String> {
    let matrices = circuit
        .map(|c| ConstraintMatrices::record(c).map(Arc::new))
        .transpose()
        .map_err(|e| e.to_string())?;
    Ok(SynthesisOptions {
        matrices,
        ..SynthesisOptions::default()
    })
}

/// One warm-up and `reps` timed runs of `synthesize` on what `prepare` makes (untimed, as
/// is dropping the result: a prover keeps it).
fn reps_of<T, R>(
    reps: usize,
    mut prepare: impl FnMut() -> T,
    mut synthesize: impl FnMut(T) -> Result<R, sluice_groth16::Groth16Error>,
) -> Result<Vec<Duration>, String> {
    let mut times = Vec::with_capacity(reps);
    for rep in 0..=reps {
        if rep > 0 {
            bar::runs(rep - 1, reps);
        }
        let input = prepare();
        let start = Instant::now();
        let out = synthesize(input).map_err(|e| e.to_string())?;
        let took = start.elapsed();
        drop(out);
        if rep > 0 {
            times.push(took);
        }
    }
    Ok(times)
}

/// The label of the row that times the circuit's own code alone ([`circuit_alone`]).
pub const CIRCUIT_ALONE: &str = "circuit-alone";

/// The `circuit-alone` row: one warm-up and `reps` timed runs of `circuit`'s
/// `synthesize` against [`CircuitAlone`], on the calling thread. What a synthesis costs
/// beyond this row is the constraint system's; no prover that runs the circuit's code
/// can synthesize it faster.
pub fn circuit_alone(
    circuit: CircuitKind,
    log: u32,
    seed: u64,
    reps: usize,
) -> Result<Vec<Duration>, String> {
    match circuit {
        CircuitKind::Mimc => timed_alone(
            reps,
            MimcLike::<Fr>::filling_domain(log, Some(Fr::from(seed))),
        ),
        CircuitKind::Bits => timed_alone(
            reps,
            BitDecomposition::<Fr>::filling_domain(log, Some(seed)),
        ),
        CircuitKind::Sha256 => {
            timed_alone(reps, Sha256Preimage::<Fr>::filling_domain(log, Some(seed)))
        }
        CircuitKind::Porep | CircuitKind::Post => {
            crate::filecoin::circuit_alone(circuit, log, seed, reps)
        }
    }
}

/// One warm-up and `reps` timed runs of `circuit`'s own code ([`CircuitAlone`]).
pub(crate) fn timed_alone<S: PrimeField, C: Circuit<S> + Clone>(
    reps: usize,
    circuit: C,
) -> Result<Vec<Duration>, String> {
    let mut times = Vec::with_capacity(reps);
    for rep in 0..=reps {
        if rep > 0 {
            bar::runs(rep - 1, reps);
        }
        let copy = circuit.clone();
        let mut cs = CircuitAlone::default();
        let start = Instant::now();
        copy.synthesize(&mut cs).map_err(|e| e.to_string())?;
        let took = start.elapsed();
        if cs.aux == 0 && cs.constraints == 0 {
            return Err("the circuit allocated and enforced nothing".into());
        }
        if rep > 0 {
            times.push(took);
        }
    }
    Ok(times)
}

/// A constraint system that runs each value closure (the values are the circuit's work)
/// and counts, storing nothing: `enforce` and name closures are never called.
#[derive(Default)]
struct CircuitAlone {
    inputs: usize,
    aux: usize,
    constraints: usize,
}

impl<S: PrimeField> ConstraintSystem<S> for CircuitAlone {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<S, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        std::hint::black_box(f()?);
        self.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<S, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        std::hint::black_box(f()?);
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        LB: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        LC: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
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

/// Parses a `Duration`'s `Debug` form (`1.5s`, `12.3ms`, `4.56µs`, `789ns`): how
/// bellperson logs its synthesis time.
#[cfg(any(feature = "compare", test))]
pub fn parse_debug_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (number, unit) = s.split_at(split);
    let value: f64 = number.parse().ok()?;
    let scale = match unit {
        "s" => 1.0,
        "ms" => 1e-3,
        "µs" | "us" => 1e-6,
        "ns" => 1e-9,
        _ => return None,
    };
    Some(Duration::from_secs_f64(value * scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_durations_parse_back() {
        for d in [
            Duration::from_nanos(789),
            Duration::from_micros(4560),
            Duration::from_millis(12_345),
            Duration::from_secs_f64(1.5),
        ] {
            let back = parse_debug_duration(&format!("{d:?}")).unwrap();
            assert!((back.as_secs_f64() - d.as_secs_f64()).abs() < 1e-9, "{d:?}");
        }
        assert_eq!(parse_debug_duration("12 parsecs"), None);
        assert_eq!(parse_debug_duration("ms"), None);
    }

    #[test]
    fn synthesis_rows_time_every_circuit() {
        for circuit in [CircuitKind::Mimc, CircuitKind::Bits, CircuitKind::Sha256] {
            for matrices in [false, true] {
                let times = sluice_synthesis(circuit, 10, 7, 2, matrices).unwrap();
                assert_eq!(times.len(), 2, "{circuit:?}");
            }
            assert_eq!(
                circuit_alone(circuit, 10, 7, 2).unwrap().len(),
                2,
                "{circuit:?}"
            );
        }
    }
}
