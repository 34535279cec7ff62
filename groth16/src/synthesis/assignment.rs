//! The proving assignment: what synthesis with a witness produces for the prover.
//!
//! It records, per constraint, the evaluations `a_i = <A_i, z>` and `b_i = <B_i, z>`, the
//! input and auxiliary assignments, and which variables the A and B queries use (the
//! density). It does **not** store `c_i = <C_i, z>`: for a satisfied circuit `c = a ∘ b` on
//! the domain, so the prover recomputes `c` from `a` and `b` where it needs it. That saves a
//! third of the evaluation vectors a prover holds. Satisfaction is still checked, constraint
//! by constraint, as the circuit enforces it: `c_i` is computed, compared and dropped.

use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination, SynthesisError, Variable};
use ff::Field;
use sluice_backend::compact::PAGE_LEN;
use sluice_backend::{CompactVec, ComputeBackend, HostAllocator, HostBudget, Storage};
use sluice_field::{Fr, FrCompatible};
use sluice_msm::Density;

use std::sync::{mpsc, Arc};

use crate::error::Groth16Error;
use crate::r1cs::satisfy::satisfies;
use crate::synthesis::combination::eval_lc;
use crate::synthesis::convention::synthesize_groth16;
use crate::synthesis::join::{Joinable, Prefix};
use crate::synthesis::matrices::{evaluate_early, ConstraintMatrices, Evaluation};
use crate::synthesis::options::{
    report_end, report_progress, report_start, Capacity, SynthesisOptions, SynthesisProgress,
    Unsatisfied, UNNAMED,
};
use crate::synthesis::system::{constraint_system, Synthesizer};
use crate::synthesis::witness::{ChunkSink, WitnessOnly};

/// The bytes a vector grown one push at a time holds for `len` elements of `size` bytes:
/// `Vec` doubles from 4 (an element of 8 bytes or more), so capacities are powers of two.
fn pushed_bytes(len: usize, size: usize) -> u64 {
    match len {
        0 => 0,
        n => (n.max(4).next_power_of_two() * size) as u64,
    }
}

/// The host bytes of the small parts of an assignment (the inputs and the density
/// bitmaps), counted by the capacities their pushes give them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct SmallParts {
    inputs: usize,
    aux: usize,
}

impl SmallParts {
    fn bytes(&self) -> u64 {
        let fr = std::mem::size_of::<Fr>();
        pushed_bytes(self.inputs, fr)
            + pushed_bytes(self.inputs.div_ceil(64), 8)
            + 2 * pushed_bytes(self.aux.div_ceil(64), 8)
    }
}

/// A `ConstraintSystem` that records what the prover needs (see the module docs), for
/// circuits over [`Fr`] or any other [`FrCompatible`] scalar (such as `blstrs::Scalar`): their
/// coefficients and values are read as `Fr` where they lie, at no cost.
///
/// a, b and the auxiliary assignment are [`CompactVec`]s: a byte per small value, so a
/// boolean-heavy circuit's assignment holds a few percent of what 32-byte elements would.
///
/// Use [`ProvingAssignment::synthesize`], which also adds the "one" input and the input
/// constraints Groth16 setup adds, so its figures match the parameters. A clone holds as
/// much host memory again, counted nowhere (benchmarks clone one assignment to prove it
/// repeatedly).
pub struct ProvingAssignment {
    a_aux_density: Density,
    b_input_density: Density,
    b_aux_density: Density,
    a: CompactVec,
    b: CompactVec,
    input_assignment: Vec<Fr>,
    aux_assignment: CompactVec,
    namespace: Vec<String>,
    unsatisfied: Option<Unsatisfied>,
    /// Whether a·b = c is checked in constant time (raw storage: see `enforce`).
    uniform_check: bool,
    /// Where the small parts' bytes are counted, and what they were counted at.
    budget: Option<Arc<dyn HostBudget>>,
    small_parts: SmallParts,
    progress: Option<SynthesisProgress>,
    /// The constraints expected (0: unknown), for progress reports.
    expected: usize,
}

impl Clone for ProvingAssignment {
    /// A copy counted nowhere, stored as the original is (raw vectors on the heap).
    fn clone(&self) -> Self {
        self.clone_into_lent(None)
    }
}

impl Default for ProvingAssignment {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for ProvingAssignment {
    fn drop(&mut self) {
        if let Some(budget) = &self.budget {
            budget.release(self.small_parts.bytes());
        }
    }
}

impl ProvingAssignment {
    /// A copy whose raw vectors are in memory `lender` lends where it does; counted nowhere.
    fn clone_into_lent(&self, lender: Option<&dyn HostAllocator>) -> Self {
        ProvingAssignment {
            a_aux_density: self.a_aux_density.clone(),
            b_input_density: self.b_input_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
            a: self.a.clone_into(lender),
            b: self.b.clone_into(lender),
            input_assignment: self.input_assignment.clone(),
            aux_assignment: self.aux_assignment.clone_into(lender),
            namespace: self.namespace.clone(),
            unsatisfied: self.unsatisfied.clone(),
            uniform_check: self.uniform_check,
            budget: None,
            small_parts: self.small_parts,
            progress: None,
            expected: self.expected,
        }
    }

    /// An empty assignment, for synthesis by hand (add the "one" input first). The same as
    /// `ConstraintSystem::new`, which for a system generic over its scalar would need the
    /// scalar type named.
    pub fn new() -> Self {
        Self::with_options(&SynthesisOptions::default())
    }

    /// An empty assignment storing and counting as `options` say, for synthesis by hand.
    pub fn with_options(options: &SynthesisOptions) -> Self {
        let none = || Density::new(0);
        let aux = options.vector(options.capacity.aux);
        let ab = (
            options.vector(options.capacity.constraints),
            options.vector(options.capacity.constraints),
        );
        Self::from_parts(options, Vec::new(), aux, [none(), none(), none()], ab)
    }

    /// An assignment of these inputs, witness, densities (A's aux, B's inputs, B's aux) and
    /// a and b, storing and counting as `options` say.
    fn from_parts(
        options: &SynthesisOptions,
        input_assignment: Vec<Fr>,
        aux_assignment: CompactVec,
        [a_aux_density, b_input_density, b_aux_density]: [Density; 3],
        (a, b): (CompactVec, CompactVec),
    ) -> Self {
        ProvingAssignment {
            a_aux_density,
            b_input_density,
            b_aux_density,
            a,
            b,
            input_assignment,
            aux_assignment,
            namespace: Vec::new(),
            unsatisfied: None,
            uniform_check: options.storage == Storage::Raw,
            budget: options.budget.clone(),
            small_parts: SmallParts::default(),
            progress: options.progress.clone(),
            expected: options.expected_constraints(),
        }
    }

    /// The "one" input, as `ConstraintSystem::one` (which would need the scalar type named).
    pub fn one() -> Variable {
        <Self as ConstraintSystem<Fr>>::one()
    }

    /// A copy whose raw vectors are in the memory `backend` uploads fastest from
    /// ([`ComputeBackend::host_allocator`]), where it lends any: what
    /// [`synthesize_for`](Self::synthesize_for) would have made. Benchmarks prove such
    /// copies of one assignment.
    pub fn clone_for<B: ComputeBackend>(&self, backend: &B) -> Self {
        self.clone_into_lent(backend.host_allocator().as_deref())
    }

    /// Synthesizes `circuit` with its witness.
    ///
    /// Returns [`Groth16Error::Unsatisfied`] naming the first failing constraint when the
    /// witness does not satisfy the circuit, and [`Groth16Error::Synthesis`] when synthesis
    /// itself fails.
    pub fn synthesize<S: FrCompatible, C: Circuit<S>>(circuit: C) -> Result<Self, Groth16Error> {
        Self::synthesize_with(circuit, &SynthesisOptions::default())
    }

    /// [`synthesize`](Self::synthesize) for a circuit of (about) `capacity`'s shape: a
    /// vector that turns out dense is made at that size on another thread, every page
    /// written ahead (the kernel's zeroing of fresh pages, about a tenth of a dense
    /// synthesis, BENCHMARKS.md#synthesis, happens off the synthesizing thread).
    pub fn synthesize_with_capacity<S: FrCompatible, C: Circuit<S>>(
        circuit: C,
        capacity: Capacity,
    ) -> Result<Self, Groth16Error> {
        let options = SynthesisOptions {
            capacity,
            ..SynthesisOptions::default()
        };
        Self::synthesize_with(circuit, &options)
    }

    /// [`synthesize_with_capacity`](Self::synthesize_with_capacity) with raw vectors in the
    /// memory `backend` uploads fastest from ([`ComputeBackend::host_allocator`]:
    /// page-locked memory on a GPU, which its DMA reads with no staging copy), where it
    /// lends any. The prover's `create_proof` uses it.
    ///
    /// Memory: lent memory is host memory too, and page-locked: the system cannot swap it
    /// out. A backend lends up to a limit and then refuses (the OpenCL backend's is a
    /// quarter of the host's memory), so many dense assignments at once fall back to
    /// ordinary memory rather than lock the host's.
    pub fn synthesize_for<S: FrCompatible, C: Circuit<S>, B: ComputeBackend>(
        circuit: C,
        capacity: Capacity,
        backend: &B,
    ) -> Result<Self, Groth16Error> {
        let options = SynthesisOptions {
            capacity,
            lender: backend.host_allocator(),
            ..SynthesisOptions::default()
        };
        Self::synthesize_with(circuit, &options)
    }

    /// Synthesizes `circuit` storing and counting as `options` say.
    pub fn synthesize_with<S: FrCompatible, C: Circuit<S>>(
        circuit: C,
        options: &SynthesisOptions,
    ) -> Result<Self, Groth16Error> {
        if let Some(matrices) = &options.matrices {
            return Self::synthesize_witness(circuit, matrices, options, None);
        }
        let mut cs = Self::with_options(options);
        report_start(cs.expected);
        synthesize_groth16::<S, _, _>(&mut cs, circuit, |cs| cs.input_assignment.len())?;
        report_end(cs.num_constraints());
        match cs.unsatisfied.take() {
            Some(Unsatisfied { index, name }) => Err(Groth16Error::Unsatisfied { index, name }),
            None => Ok(cs),
        }
    }

    /// Synthesizes the witness of `circuit` alone, sending its completed chunks to
    /// `chunks` where given, then a and b from `matrices` (see
    /// [`SynthesisOptions::matrices`]).
    pub(crate) fn synthesize_witness<S: FrCompatible, C: Circuit<S>>(
        circuit: C,
        matrices: &ConstraintMatrices,
        options: &SynthesisOptions,
        chunks: Option<ChunkSink>,
    ) -> Result<Self, Groth16Error> {
        let started = std::time::Instant::now();
        report_start(matrices.num_constraints());
        let uniform = options.storage == Storage::Raw;
        let budget = options.budget.as_deref();
        let fresh = || Self::fresh_evaluation(options);
        // The witness lives inside the scope, so that a panicking circuit drops it (and the
        // pages' channel) before the scope waits for the evaluation's thread.
        let (synthesized, witness, evaluation) = std::thread::scope(|scope| {
            let mut witness = WitnessOnly::new(options, matrices.num_constraints());
            witness.chunks = chunks;
            // Rows are evaluated during synthesis once a page of the witness fills.
            let mut evaluator = None;
            if matrices.num_aux() > PAGE_LEN {
                let (tx, rx) = mpsc::channel();
                let first = fresh();
                let spawned = std::thread::Builder::new()
                    .name("sluice-evaluate".into())
                    .spawn_scoped(scope, move || {
                        evaluate_early(matrices, rx, uniform, first, budget)
                    });
                match spawned {
                    Ok(handle) => {
                        witness.pages = Some(tx);
                        evaluator = Some(handle);
                    }
                    Err(e) => log::warn!("no thread to evaluate rows during synthesis: {e}"),
                }
            }
            let synthesized =
                synthesize_groth16::<S, _, _>(&mut witness, circuit, |w| w.inputs.len());
            witness.pages = None;
            // The last chunk goes (and the channel closes) before the rest is evaluated.
            if let Some(sink) = witness.chunks.take() {
                sink.finish(&witness.aux);
            }
            let evaluation = match evaluator {
                Some(handle) => handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                None => fresh(),
            };
            (synthesized, witness, evaluation)
        });
        synthesized?;
        report_end(witness.constraints);
        log::debug!(
            "synthesis with matrices: witness {:.1} ms",
            started.elapsed().as_secs_f64() * 1e3
        );
        Self::from_witness(witness, matrices, options, evaluation)
    }

    /// Fresh a and b vectors for a circuit of `options`' capacity.
    pub(crate) fn fresh_evaluation(options: &SynthesisOptions) -> Evaluation {
        let len = options.capacity.constraints;
        Evaluation::new(options.vector(len), options.vector(len))
    }

    /// The assignment of a synthesized witness: its counts checked against `matrices`, the
    /// rows `evaluation` does not hold yet evaluated (every row's a·b = c checked), the
    /// densities taken from the matrices.
    pub(crate) fn from_witness(
        witness: WitnessOnly,
        matrices: &ConstraintMatrices,
        options: &SynthesisOptions,
        mut evaluation: Evaluation,
    ) -> Result<Self, Groth16Error> {
        let started = std::time::Instant::now();
        let uniform = options.storage == Storage::Raw;
        let (inputs, aux) = (witness.inputs.len(), witness.aux.len());
        matrices.check_counts(inputs, aux, witness.constraints)?;
        let failed = matrices.evaluate(
            &witness.inputs,
            &witness.aux,
            uniform,
            &mut evaluation,
            options.budget.as_deref(),
        )?;
        let densities = matrices.densities().map(Clone::clone);
        let mut cs = Self::from_parts(
            options,
            witness.inputs,
            witness.aux,
            densities,
            (evaluation.a, evaluation.b),
        );
        cs.count_small_parts(SmallParts {
            inputs,
            aux: aux.next_multiple_of(64),
        });
        log::debug!(
            "the rows left after the witness: {:.1} ms",
            started.elapsed().as_secs_f64() * 1e3
        );
        match failed {
            Some(index) => Err(Groth16Error::Unsatisfied {
                index,
                name: UNNAMED.into(),
            }),
            None => Ok(cs),
        }
    }

    /// The first constraint the witness failed, if any (during manual synthesis).
    pub fn first_unsatisfied(&self) -> Option<&Unsatisfied> {
        self.unsatisfied.as_ref()
    }

    /// `SynthesisError::Unsatisfiable` if some constraint failed: the bellpepper view of
    /// [`first_unsatisfied`](Self::first_unsatisfied).
    pub fn check(&self) -> Result<(), SynthesisError> {
        match self.unsatisfied {
            Some(_) => Err(SynthesisError::Unsatisfiable),
            None => Ok(()),
        }
    }

    /// Number of constraints enforced so far.
    pub fn num_constraints(&self) -> usize {
        self.a.len()
    }

    /// `a_i = <A_i, z>` per constraint.
    pub fn a(&self) -> &CompactVec {
        &self.a
    }

    /// `b_i = <B_i, z>` per constraint.
    pub fn b(&self) -> &CompactVec {
        &self.b
    }

    /// The public inputs, the constant one first.
    pub fn input_assignment(&self) -> &[Fr] {
        &self.input_assignment
    }

    /// The auxiliary (private) variables.
    pub fn aux_assignment(&self) -> &CompactVec {
        &self.aux_assignment
    }

    /// Which auxiliary variables occur (with a nonzero coefficient) in some A.
    pub fn a_aux_density(&self) -> &Density {
        &self.a_aux_density
    }

    /// Which inputs occur in some B.
    pub fn b_input_density(&self) -> &Density {
        &self.b_input_density
    }

    /// Which auxiliary variables occur in some B.
    pub fn b_aux_density(&self) -> &Density {
        &self.b_aux_density
    }

    /// Whether every vector stored raw (32-byte elements) is in memory a backend lent
    /// ([`synthesize_for`](Self::synthesize_for)), which uploads read with no staging copy;
    /// compact vectors upload a small fraction of their values' bytes and need none.
    pub fn in_lent_memory(&self) -> bool {
        [&self.a, &self.b, &self.aux_assignment].iter().all(|v| {
            v.as_raw()
                .map_or(true, |r| r.is_lent() || r.capacity() == 0)
        })
    }

    /// Host bytes this assignment holds: a, b and the auxiliary assignment as stored, the
    /// inputs and the density bitmaps (what a partition waiting for its device holds).
    pub fn host_bytes(&self) -> u64 {
        self.a.host_bytes()
            + self.b.host_bytes()
            + self.aux_assignment.host_bytes()
            + self.small_parts.bytes()
    }

    /// The most host bytes an assignment of this shape holds whatever its values (what a
    /// planner reserves before the values are known): a, b and the auxiliary assignment at
    /// [`max_host_bytes`](sluice_backend::compact::max_host_bytes), the inputs and bitmaps.
    pub fn max_host_bytes(capacity: Capacity, inputs: usize) -> u64 {
        use sluice_backend::compact::max_host_bytes;
        2 * max_host_bytes(capacity.constraints)
            + max_host_bytes(capacity.aux)
            + SmallParts {
                inputs,
                aux: capacity.aux.next_multiple_of(64),
            }
            .bytes()
    }

    /// Takes the auxiliary assignment out (to free it once it is on the device).
    pub(crate) fn take_aux(&mut self) -> CompactVec {
        std::mem::take(&mut self.aux_assignment)
    }

    /// Takes the a and b vectors out (to upload them and free the host copies).
    pub(crate) fn take_ab(&mut self) -> (CompactVec, CompactVec) {
        (std::mem::take(&mut self.a), std::mem::take(&mut self.b))
    }

    /// Counts the small parts at their sizes after one more input or auxiliary variable,
    /// before they grow.
    fn count_small_parts(&mut self, more: SmallParts) {
        let next = SmallParts {
            inputs: self.small_parts.inputs + more.inputs,
            aux: self.small_parts.aux + more.aux,
        };
        let (now, then) = (self.small_parts.bytes(), next.bytes());
        if let (Some(budget), true) = (&self.budget, then > now) {
            budget.acquire(then - now);
        }
        self.small_parts = next;
    }

    fn record_failure(&mut self, name: String) {
        if self.unsatisfied.is_none() {
            let mut path = self.namespace.join("/");
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(&name);
            self.unsatisfied = Some(Unsatisfied {
                index: self.a.len(),
                name: path,
            });
        }
    }
}

impl Synthesizer for ProvingAssignment {
    const WITNESS: bool = true;

    fn fresh() -> Self {
        Self::new()
    }

    #[inline]
    fn aux(&mut self, value: Option<Fr>) -> usize {
        if self.aux_assignment.len() % 64 == 0 {
            // The bitmaps grow by a word: count them first.
            self.count_small_parts(SmallParts { inputs: 0, aux: 64 });
        }
        self.aux_assignment.push(value.unwrap_or(Fr::ZERO));
        self.a_aux_density.push(false);
        self.b_aux_density.push(false);
        self.aux_assignment.len() - 1
    }

    #[inline]
    fn input(&mut self, value: Option<Fr>) -> usize {
        self.count_small_parts(SmallParts { inputs: 1, aux: 0 });
        self.input_assignment.push(value.unwrap_or(Fr::ZERO));
        self.b_input_density.push(false);
        self.input_assignment.len() - 1
    }

    fn constraint<S: FrCompatible>(
        &mut self,
        name: impl FnOnce() -> String,
        a: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        b: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        c: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
    ) {
        let zero = LinearCombination::zero;
        let (a, b, c) = (a(zero()), b(zero()), c(zero()));
        let (inputs, aux) = (&self.input_assignment, &self.aux_assignment);
        // Inputs have full density in A (the input constraints), so A tracks aux only.
        let a = eval_lc(&a, inputs, aux, None, Some(&mut self.a_aux_density));
        let b = eval_lc(
            &b,
            inputs,
            aux,
            Some(&mut self.b_input_density),
            Some(&mut self.b_aux_density),
        );
        let c = eval_lc(&c, inputs, aux, None, None);
        match (a, b, c) {
            (Some(a), Some(b), Some(c)) => {
                let satisfied = satisfies(&a, &b, &c, self.uniform_check);
                if !satisfied {
                    self.record_failure(name());
                }
                self.a.push(a);
                self.b.push(b);
            }
            _ => {
                let name = format!("{} (uses an unallocated variable)", name());
                self.record_failure(name);
                self.a.push(Fr::ZERO);
                self.b.push(Fr::ZERO);
            }
        }
        report_progress(self.progress.as_ref(), self.a.len(), self.expected);
    }

    #[inline]
    fn enter(&mut self, name: impl FnOnce() -> String) {
        self.namespace.push(name());
    }

    #[inline]
    fn leave(&mut self) {
        self.namespace.pop();
    }
}

constraint_system!(ProvingAssignment);

// Joining parts synthesized apart (forked synthesis, see `synthesis::join`).

/// Marks in `to` the positions below `len` used in `from` (a prefix both share).
fn or_prefix(to: &mut Density, from: &Density, len: usize) {
    for i in from.positions_in(0..len.min(from.len())) {
        // In range: `to` holds the prefix too.
        let _ = to.set(i, true);
    }
}

/// Appends `from`'s flags from `start` on to `to`.
fn extend_density(to: &mut Density, from: &Density, start: usize) {
    for i in start..from.len() {
        to.push(from.get(i));
    }
}

/// Parts of a fork join (`synthesis::join`) as the assignment the sequential circuit
/// gives. Each part is dropped once appended, so the memory held peaks at the whole plus
/// the parts not yet joined.
impl Joinable for ProvingAssignment {
    fn lengths(&self) -> (usize, usize, usize) {
        (
            self.input_assignment.len(),
            self.aux_assignment.len(),
            self.num_constraints(),
        )
    }

    fn values(&self) -> (&[Fr], &CompactVec) {
        (&self.input_assignment, &self.aux_assignment)
    }

    /// Appends `part`'s inputs, variables and constraints after the prefix; its uses of the
    /// prefix's variables mark the prefix's densities; its first failure, if it is the
    /// first of the whole, is named with the part. Its vectors are moved out (and freed a
    /// page at a time).
    fn append_rest(&mut self, index: usize, mut part: Self, prefix: Prefix) {
        let first_rest_constraint = self.num_constraints();
        if self.unsatisfied.is_none() {
            if let Some(Unsatisfied { index: at, name }) = &part.unsatisfied {
                let at = match at.checked_sub(prefix.constraints) {
                    Some(in_rest) => first_rest_constraint + in_rest,
                    None => *at,
                };
                self.unsatisfied = Some(Unsatisfied {
                    index: at,
                    name: format!("part {index}: {name}"),
                });
            }
        }
        let inputs = part.input_assignment.len() - prefix.inputs;
        self.count_small_parts(SmallParts { inputs, aux: 0 });
        self.input_assignment
            .extend_from_slice(&part.input_assignment[prefix.inputs..]);
        or_prefix(
            &mut self.b_input_density,
            &part.b_input_density,
            prefix.inputs,
        );
        extend_density(
            &mut self.b_input_density,
            &part.b_input_density,
            prefix.inputs,
        );

        let before = self.aux_assignment.len().next_multiple_of(64);
        std::mem::take(&mut part.aux_assignment)
            .move_tail_into(prefix.aux, &mut self.aux_assignment);
        let after = self.aux_assignment.len().next_multiple_of(64);
        self.count_small_parts(SmallParts {
            inputs: 0,
            aux: after - before,
        });
        for (to, from) in [
            (&mut self.a_aux_density, &part.a_aux_density),
            (&mut self.b_aux_density, &part.b_aux_density),
        ] {
            or_prefix(to, from, prefix.aux);
            extend_density(to, from, prefix.aux);
        }
        std::mem::take(&mut part.a).move_tail_into(prefix.constraints, &mut self.a);
        std::mem::take(&mut part.b).move_tail_into(prefix.constraints, &mut self.b);
    }
}

#[cfg(test)]
pub(crate) mod tests;
