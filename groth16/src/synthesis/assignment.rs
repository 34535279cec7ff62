//! The proving assignment: what synthesis with a witness produces for the prover.
//!
//! It records, per constraint, the evaluations `a_i = <A_i, z>` and `b_i = <B_i, z>`, the
//! input and auxiliary assignments, and which variables the A and B queries use (the
//! density). It does **not** store `c_i = <C_i, z>`: for a satisfied circuit `c = a ∘ b` on
//! the domain, so the prover recomputes `c` from `a` and `b` where it needs it. That saves a
//! third of the evaluation vectors a prover holds. Satisfaction is still checked, constraint
//! by constraint, as the circuit enforces it: `c_i` is computed, compared and dropped.

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use ff::Field;
use sluice_backend::compact::{Entry, PAGE_LEN};
use sluice_backend::{
    CompactConfig, CompactVec, ComputeBackend, HostAllocator, HostBudget, Storage,
};
use sluice_field::{Fr, FrCompatible};
use sluice_msm::Density;
use subtle::ConstantTimeEq;

use std::sync::{mpsc, Arc};

use crate::keygen::synthesize_groth16;
use crate::matrices::{evaluate_early, Evaluation};
use crate::witness::{ChunkSink, WitnessOnly};
use crate::{ConstraintMatrices, Groth16Error, QueryLengths};

/// The name a failing constraint gets in a synthesis with recorded matrices, which keeps
/// no names.
pub const UNNAMED: &str =
    "(unnamed: synthesized with recorded constraint matrices; a synthesis without them names it)";

/// The first constraint a witness failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsatisfied {
    /// Index of the constraint in synthesis order.
    pub index: usize,
    /// Its name with the namespace path, `outer/inner/name`.
    pub name: String,
}

/// How many constraints and auxiliary variables a circuit has, for
/// [`ProvingAssignment::synthesize_with_capacity`] (from its parameters:
/// [`Capacity::for_queries`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capacity {
    /// Constraints (the a and b vectors), the input constraints included.
    pub constraints: usize,
    /// Auxiliary variables.
    pub aux: usize,
}

impl Capacity {
    /// The shape parameters with these query lengths were made for: at most the domain's
    /// constraints (h has one point fewer than the domain) and the l query's auxiliary
    /// variables.
    pub fn for_queries(lengths: &QueryLengths) -> Self {
        Capacity {
            constraints: lengths.h + 1,
            aux: lengths.l,
        }
    }
}

/// Constraints between two calls of [`SynthesisOptions::progress`].
pub const PROGRESS_STEP: usize = 1 << 16;

/// Called during synthesis with the number of constraints enforced so far, every
/// [`PROGRESS_STEP`] of them.
pub type SynthesisProgress = Arc<dyn Fn(usize) + Send + Sync>;

/// Tells `progress` and the progress log that `done` of `expected` (0: unknown)
/// constraints are enforced, every [`PROGRESS_STEP`].
pub(crate) fn report_progress(progress: Option<&SynthesisProgress>, done: usize, expected: usize) {
    if done % PROGRESS_STEP != 0 {
        return;
    }
    if let Some(progress) = progress {
        progress(done);
    }
    crate::progress::report(&crate::progress::ProgressEvent {
        task: crate::progress::Task::Synthesis,
        what: "",
        done: done as u64,
        total: expected as u64,
    });
}

/// How synthesis stores what it records, and where it counts it.
#[derive(Clone, Default)]
pub struct SynthesisOptions {
    /// The circuit's shape (from its parameters: [`Capacity::for_queries`]), or the default
    /// when unknown: a vector that turns out dense is then made at this capacity ahead of
    /// synthesis ([`CompactConfig::capacity`]). A wrong capacity costs memory or growth,
    /// never correctness.
    pub capacity: Capacity,
    /// How a, b and the auxiliary assignment are stored ([`Storage::Auto`]: compact where
    /// their values are small).
    pub storage: Storage,
    /// Where raw storage comes from when a backend lends host memory
    /// ([`ComputeBackend::host_allocator`]).
    pub lender: Option<Arc<dyn HostAllocator>>,
    /// Where every host byte the assignment holds is counted, before it is allocated
    /// (synthesis waits while the budget is full).
    pub budget: Option<Arc<dyn HostBudget>>,
    /// Told how many constraints are done, every [`PROGRESS_STEP`].
    pub progress: Option<SynthesisProgress>,
    /// The circuit's constraint matrices, recorded once ([`ConstraintMatrices::record`]):
    /// synthesis then computes the witness only, and a and b from the matrices on all
    /// cores. The assignment is the same; a circuit of another shape is refused
    /// ([`Groth16Error::MatricesMismatch`]) or fails the satisfaction check, and a failing
    /// constraint is named by its index only (a synthesis without matrices names it).
    pub matrices: Option<Arc<ConstraintMatrices>>,
}

impl std::fmt::Debug for SynthesisOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SynthesisOptions")
            .field("capacity", &self.capacity)
            .field("storage", &self.storage)
            .field("lender", &self.lender.is_some())
            .field("budget", &self.budget.is_some())
            .field("progress", &self.progress.is_some())
            .field("matrices", &self.matrices.is_some())
            .finish()
    }
}

impl SynthesisOptions {
    pub(crate) fn vector(&self, capacity: usize) -> CompactVec {
        CompactVec::new(CompactConfig {
            storage: self.storage,
            capacity,
            lender: self.lender.clone(),
            budget: self.budget.clone(),
        })
    }
}

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
            expected: options.capacity.constraints,
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
        synthesize_groth16::<S, _, _>(&mut cs, circuit, |cs| cs.input_assignment.len())?;
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
        let uniform = options.storage == Storage::Raw;
        let budget = options.budget.as_deref();
        let fresh = || {
            let len = options.capacity.constraints;
            Evaluation::new(options.vector(len), options.vector(len))
        };
        // The witness lives inside the scope, so that a panicking circuit drops it (and the
        // pages' channel) before the scope waits for the evaluation's thread.
        let (synthesized, witness, mut evaluation) = std::thread::scope(|scope| {
            let mut witness = WitnessOnly::new(options);
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
        let (inputs, aux) = (witness.inputs.len(), witness.aux.len());
        matrices.check_counts(inputs, aux, witness.constraints)?;
        let witnessed = started.elapsed();
        let failed = matrices.evaluate(
            &witness.inputs,
            &witness.aux,
            uniform,
            &mut evaluation,
            budget,
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
            "synthesis with matrices: witness {:.1} ms, the rows left after it {:.1} ms",
            witnessed.as_secs_f64() * 1e3,
            (started.elapsed() - witnessed).as_secs_f64() * 1e3
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

/// The Montgomery limbs of -1: p - R (R = 2^256 mod p being one's), so that `eval_lc`
/// need not negate per call.
const MINUS_ONE: [u64; 4] = {
    let (p, r) = (Fr::MODULUS_LIMBS, Fr::ONE.mont_limbs());
    let (mut out, mut borrow, mut i) = ([0u64; 4], false, 0);
    while i < 4 {
        let (d, b1) = p[i].overflowing_sub(r[i]);
        let (d, b2) = d.overflowing_sub(borrow as u64);
        out[i] = d;
        borrow = b1 | b2;
        i += 1;
    }
    out
};

/// Whether a·b = c. `uniform` (raw storage) keeps the check constant time, so branching
/// reveals only whether the witness is valid; otherwise it is variable time, as compact
/// storage is, and skips the product where a or b is 0 or 1 (most gadget constraints).
#[inline]
pub(crate) fn satisfies(a: &Fr, b: &Fr, c: &Fr, uniform: bool) -> bool {
    match uniform {
        true => bool::from((*a * b).ct_eq(c)),
        false => product_is_vartime(a, b, c),
    }
}

/// Whether a·b = c, without the product where a or b is 0 or 1.
///
/// # Security
/// Variable time in a and b.
#[inline]
fn product_is_vartime(a: &Fr, b: &Fr, c: &Fr) -> bool {
    const ZERO: [u64; 4] = Fr::ZERO.mont_limbs();
    const ONE: [u64; 4] = Fr::ONE.mont_limbs();
    match (a.mont_limbs(), b.mont_limbs()) {
        (ZERO, _) | (_, ZERO) => c.mont_limbs() == ZERO,
        (ONE, _) => b.mont_limbs() == c.mont_limbs(),
        (_, ONE) => a.mont_limbs() == c.mont_limbs(),
        _ => (*a * b).mont_limbs() == c.mont_limbs(),
    }
}

/// `<lc, z>`, marking used variables in the densities given. `None` if the combination
/// names a variable this system never allocated.
fn eval_lc<S: FrCompatible>(
    lc: &LinearCombination<S>,
    inputs: &[Fr],
    aux: &CompactVec,
    mut input_density: Option<&mut Density>,
    mut aux_density: Option<&mut Density>,
) -> Option<Fr> {
    let mut acc = Fr::ZERO;
    // Coefficients are circuit structure, public: they are compared in variable time (their
    // Montgomery limbs). Skipping zeros is what defines density in bellperson (a zero
    // coefficient does not use the variable); a coefficient of one or minus one needs no
    // product. Inputs are public too, so an input of one (the constant every circuit uses
    // for its constants) needs no product either. An auxiliary value stored as a small
    // code needs no product when it is 0, 1 or -1 (most of a gadget circuit's witness):
    // variable time in the witness, as compact storage is (sluice_backend::compact);
    // raw storage gives full elements, whose arithmetic does not depend on the value.
    #[inline(always)]
    fn coefficient_used(coeff: &Fr) -> bool {
        const ZERO: [u64; 4] = Fr::ZERO.mont_limbs();
        coeff.mont_limbs() != ZERO
    }
    // Adds coeff * value to acc (coeff nonzero); inlined (as a closure it was a call per
    // term, with acc on the stack).
    #[inline(always)]
    fn add_product(acc: &mut Fr, value: Fr, coeff: &Fr) {
        const ONE: [u64; 4] = Fr::ONE.mont_limbs();
        match coeff.mont_limbs() {
            ONE => *acc += value,
            MINUS_ONE => *acc -= value,
            _ => *acc += value * coeff,
        }
    }
    #[inline(always)]
    fn mark(density: Option<&mut Density>, i: usize) -> Option<()> {
        match density {
            Some(d) => d.set(i, true).ok(),
            None => Some(()),
        }
    }
    for (&i, coeff) in lc.iter_inputs() {
        let coeff = coeff.as_fr();
        if !coefficient_used(coeff) {
            continue;
        }
        let value = *inputs.get(i)?;
        match value.mont_limbs() == Fr::ONE.mont_limbs() {
            true => acc += *coeff,
            false => add_product(&mut acc, value, coeff),
        }
        mark(input_density.as_deref_mut(), i)?;
    }
    for (&i, coeff) in lc.iter_aux() {
        let coeff = coeff.as_fr();
        if !coefficient_used(coeff) {
            continue;
        }
        match aux.entry_vartime(i)? {
            Entry::Small(0) => {}
            Entry::Small(1) => acc += *coeff,
            Entry::Small(-1) => acc -= *coeff,
            entry => add_product(&mut acc, entry.to_fr(), coeff),
        }
        mark(aux_density.as_deref_mut(), i)?;
    }
    Some(acc)
}

/// Generic over the scalar type so circuits written for a concrete one (Filecoin's for
/// `blstrs::Scalar`) synthesize here unchanged; `FrCompatible` makes every conversion a
/// reinterpretation, so the `Fr` path compiles to the same code.
impl<S: FrCompatible> ConstraintSystem<S> for ProvingAssignment {
    type Root = Self;

    fn new() -> Self {
        ProvingAssignment::with_options(&SynthesisOptions::default())
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<S, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let value = f()?.to_fr();
        if self.aux_assignment.len() % 64 == 0 {
            // The bitmaps grow by a word: count them first.
            self.count_small_parts(SmallParts { inputs: 0, aux: 64 });
        }
        self.aux_assignment.push(value);
        self.a_aux_density.push(false);
        self.b_aux_density.push(false);
        Ok(Variable(Index::Aux(self.aux_assignment.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<S, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let value = f()?.to_fr();
        self.count_small_parts(SmallParts { inputs: 1, aux: 0 });
        self.input_assignment.push(value);
        self.b_input_density.push(false);
        Ok(Variable(Index::Input(self.input_assignment.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        LB: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        LC: FnOnce(LinearCombination<S>) -> LinearCombination<S>,
    {
        let (a, b, c) = (
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        );
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
                    self.record_failure(annotation().into());
                }
                self.a.push(a);
                self.b.push(b);
            }
            _ => {
                let name = format!("{} (uses an unallocated variable)", annotation().into());
                self.record_failure(name);
                self.a.push(Fr::ZERO);
                self.b.push(Fr::ZERO);
            }
        }
        report_progress(self.progress.as_ref(), self.a.len(), self.expected);
    }

    fn push_namespace<NR, N>(&mut self, name_fn: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        self.namespace.push(name_fn().into());
    }

    fn pop_namespace(&mut self) {
        self.namespace.pop();
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// x (aux 0), y (aux 1), z (aux 2, never in A or B), input 1.
    fn tiny(cs: &mut ProvingAssignment, y_val: u64) {
        let one = ProvingAssignment::one();
        let inp = cs.alloc_input(|| "in", || Ok(Fr::from(6u64))).unwrap();
        let x = cs.alloc(|| "x", || Ok(Fr::from(2u64))).unwrap();
        let y = cs.alloc(|| "y", || Ok(Fr::from(y_val))).unwrap();
        let z = cs.alloc(|| "z", || Ok(Fr::from(6u64))).unwrap();
        {
            let mut outer = cs.namespace(|| "outer");
            let mut ns = outer.namespace(|| "inner");
            // x * y = z, with a zero-coefficient term of the input in B that must not count.
            ns.enforce(
                || "mul",
                |lc| lc + x,
                |lc| lc + y + (Fr::ZERO, inp),
                |lc| lc + z,
            );
        }
        // z * 1 = input
        cs.enforce(
            || "eq",
            |lc: LinearCombination<Fr>| lc + z,
            |lc| lc + one,
            |lc| lc + inp,
        );
    }

    fn bits(d: &Density) -> Vec<bool> {
        (0..d.len()).map(|i| d.get(i)).collect()
    }

    #[test]
    fn records_a_b_and_bellperson_density() {
        let mut cs = ProvingAssignment::new();
        cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
        tiny(&mut cs, 3);
        assert!(cs.first_unsatisfied().is_none());
        assert_eq!(cs.a(), &[Fr::from(2u64), Fr::from(6u64)]);
        assert_eq!(cs.b(), &[Fr::from(3u64), Fr::ONE]);
        assert_eq!(bits(cs.a_aux_density()), [true, false, true]);
        assert_eq!(bits(cs.b_aux_density()), [false, true, false]);
        // The one is used in B; the input only with a zero coefficient, so not.
        assert_eq!(bits(cs.b_input_density()), [true, false]);
        assert!(cs.check().is_ok());
    }

    #[test]
    fn names_the_first_failing_constraint_with_its_namespace() {
        let mut cs = ProvingAssignment::new();
        cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
        tiny(&mut cs, 4);
        assert_eq!(
            cs.first_unsatisfied(),
            Some(&Unsatisfied {
                index: 0,
                name: "outer/inner/mul".into()
            })
        );
        assert!(matches!(cs.check(), Err(SynthesisError::Unsatisfiable)));
        // Both constraints are still recorded: synthesis goes on.
        assert_eq!(cs.num_constraints(), 2);
    }

    /// The shortcut check agrees with the product on every mix of 0, 1, -1, small and
    /// full values, satisfied or not.
    #[test]
    fn the_shortcut_check_agrees_with_the_product() {
        let values = [
            Fr::ZERO,
            Fr::ONE,
            -Fr::ONE,
            Fr::from(5u64),
            Fr::from(0x9e37_79b9_7f4a_7c15u64).square(),
        ];
        for a in values {
            for b in values {
                for c in values.iter().copied().chain([a * b]) {
                    assert_eq!(
                        product_is_vartime(&a, &b, &c),
                        a * b == c,
                        "{a:?} * {b:?} = {c:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn foreign_variables_are_reported_not_panicked_on() {
        let mut cs = ProvingAssignment::new();
        cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
        cs.enforce(
            || "bad",
            |lc: LinearCombination<Fr>| lc + Variable(Index::Aux(7)),
            |lc| lc,
            |lc| lc,
        );
        let u = cs.first_unsatisfied().unwrap();
        assert!(u.name.starts_with("bad"), "{}", u.name);
    }

    /// A capacity no allocator can give is ignored, not a crash.
    #[test]
    fn an_impossible_capacity_is_ignored() {
        let circuit = crate::demo::MimcLike::<Fr>::filling_domain(13, Some(Fr::from(5u64)));
        let huge = Capacity {
            constraints: usize::MAX / 2,
            aux: usize::MAX / 2,
        };
        let cs = ProvingAssignment::synthesize_with_capacity(circuit.clone(), huge).unwrap();
        let plain = ProvingAssignment::synthesize(circuit).unwrap();
        same_assignment(&cs, &plain, "impossible capacity");
    }

    /// Asserts that two assignments hold the same values and densities.
    pub(crate) fn same_assignment(cs: &ProvingAssignment, plain: &ProvingAssignment, what: &str) {
        assert_eq!(cs.a(), plain.a(), "{what}");
        assert_eq!(cs.b(), plain.b(), "{what}");
        assert_eq!(cs.input_assignment(), plain.input_assignment(), "{what}");
        assert_eq!(cs.aux_assignment(), plain.aux_assignment(), "{what}");
        for (d, e) in [
            (cs.a_aux_density(), plain.a_aux_density()),
            (cs.b_input_density(), plain.b_input_density()),
            (cs.b_aux_density(), plain.b_aux_density()),
        ] {
            assert_eq!(bits(d), bits(e), "{what}");
        }
    }

    /// The same values, recorded without compact storage: a plain reference.
    fn raw_reference<C: Circuit<Fr>>(circuit: C) -> ProvingAssignment {
        let options = SynthesisOptions {
            storage: Storage::Raw,
            ..SynthesisOptions::default()
        };
        ProvingAssignment::synthesize_with(circuit, &options).unwrap()
    }

    /// Every storage, capacity and lender gives the same assignment, densities included,
    /// on a dense and on a boolean-heavy circuit: compact where the values are small, raw
    /// (lent where a lender lends, at the capacity made ahead) where they are not.
    #[test]
    fn storage_never_changes_the_assignment() {
        use crate::demo::{BitDecomposition, MimcLike};
        use sluice_backend::HeapLender;
        let dense = || MimcLike::<Fr>::filling_domain(14, Some(Fr::from(5u64)));
        let bits = || BitDecomposition::<Fr>::filling_domain(14, Some(9));
        for (name, plain, dense_values) in [
            ("mimc", raw_reference(dense()), true),
            ("bits", raw_reference(bits()), false),
        ] {
            let exact = Capacity {
                constraints: plain.num_constraints(),
                aux: plain.aux_assignment().len(),
            };
            let small = Capacity {
                constraints: 7,
                aux: 3,
            };
            for (capacity, storage, lend) in [
                (exact, Storage::Auto, true),
                (exact, Storage::Auto, false),
                (small, Storage::Auto, true),
                (Capacity::default(), Storage::Auto, false),
                (exact, Storage::Compact, false),
                (exact, Storage::Raw, true),
            ] {
                let lender = HeapLender::new(u64::MAX);
                let options = SynthesisOptions {
                    capacity,
                    storage,
                    lender: lend.then(|| Arc::new(lender) as Arc<dyn HostAllocator>),
                    ..SynthesisOptions::default()
                };
                let what = format!("{name}, {capacity:?}, {storage:?}, lent {lend}");
                let cs = match name {
                    "mimc" => ProvingAssignment::synthesize_with(dense(), &options),
                    _ => ProvingAssignment::synthesize_with(bits(), &options),
                }
                .unwrap();
                same_assignment(&cs, &plain, &what);
                let one_raw_vector = storage == Storage::Raw
                    || (storage == Storage::Auto && dense_values && capacity == exact);
                assert_eq!(cs.a().is_raw(), one_raw_vector, "{what}");
                assert_eq!(
                    cs.a().as_raw().is_some_and(|v| v.is_lent()),
                    one_raw_vector && lend,
                    "{what}"
                );
                assert_eq!(cs.in_lent_memory(), !one_raw_vector || lend, "{what}");
            }
        }
    }

    /// A boolean-heavy assignment holds a small fraction of its raw size, a dense one about
    /// its raw size; a copy made for a lender is lent and equal.
    #[test]
    fn boolean_heavy_assignments_are_compact() {
        use crate::demo::{BitDecomposition, MimcLike};
        let log = 14;
        let vector = 32u64 << log;
        let cs =
            ProvingAssignment::synthesize(BitDecomposition::<Fr>::filling_domain(log, Some(3)))
                .unwrap();
        let share = cs.host_bytes() as f64 / vector as f64;
        assert!(share < 0.2, "{share} vectors");
        let dense = Capacity {
            constraints: 1 << log,
            aux: 1 << log,
        };
        let mimc = MimcLike::<Fr>::filling_domain(log, Some(Fr::from(2u64)));
        let cs = ProvingAssignment::synthesize_with_capacity(mimc, dense).unwrap();
        let share = cs.host_bytes() as f64 / vector as f64;
        assert!((2.9..3.1).contains(&share), "{share} vectors");
        let lender = sluice_backend::HeapLender::new(u64::MAX);
        let copy = cs.clone_into_lent(Some(&lender));
        assert!(copy.in_lent_memory() && !cs.in_lent_memory());
        same_assignment(&copy, &cs, "a copy into lent memory");
        drop(copy);
        assert_eq!(lender.lent_bytes(), 0);
    }

    /// A budget that records what is held.
    #[derive(Default)]
    struct Recorder(std::sync::atomic::AtomicU64);

    impl HostBudget for Recorder {
        fn acquire(&self, bytes: u64) {
            self.0.fetch_add(bytes, std::sync::atomic::Ordering::SeqCst);
        }
        fn release(&self, bytes: u64) {
            self.0.fetch_sub(bytes, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// The budget counts exactly what the assignment says it holds, inputs and bitmaps
    /// included, and gets every byte back when it drops; progress comes every step.
    #[test]
    fn the_budget_counts_the_whole_assignment() {
        use crate::demo::{BitDecomposition, MimcLike};
        use std::sync::atomic::Ordering;
        use std::sync::Mutex;
        let log = 17;
        for dense in [false, true] {
            let budget = Arc::new(Recorder::default());
            let seen = Arc::new(Mutex::new(Vec::new()));
            let progress: SynthesisProgress = {
                let seen = Arc::clone(&seen);
                Arc::new(move |done| seen.lock().unwrap().push(done))
            };
            let options = SynthesisOptions {
                capacity: Capacity {
                    constraints: 1 << log,
                    aux: 1 << log,
                },
                budget: Some(budget.clone()),
                progress: Some(progress),
                ..SynthesisOptions::default()
            };
            let cs = match dense {
                true => ProvingAssignment::synthesize_with(
                    MimcLike::<Fr>::filling_domain(log, Some(Fr::from(2u64))),
                    &options,
                ),
                false => ProvingAssignment::synthesize_with(
                    BitDecomposition::<Fr>::filling_domain(log, Some(2)),
                    &options,
                ),
            }
            .unwrap();
            assert_eq!(
                budget.0.load(Ordering::SeqCst),
                cs.host_bytes(),
                "dense {dense}"
            );
            let steps = cs.num_constraints() / PROGRESS_STEP;
            let expected: Vec<usize> = (1..=steps).map(|k| k * PROGRESS_STEP).collect();
            assert_eq!(*seen.lock().unwrap(), expected, "dense {dense}");
            drop(cs);
            assert_eq!(budget.0.load(Ordering::SeqCst), 0, "dense {dense}");
        }
    }

    /// Coefficients other than 0 and 1 multiply; a zero one ignores even a variable that
    /// does not exist.
    #[test]
    fn general_coefficients_multiply_and_zero_ones_are_ignored() {
        let mut cs = ProvingAssignment::new();
        cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
        let x = cs.alloc(|| "x", || Ok(Fr::from(5u64))).unwrap();
        let y = cs.alloc(|| "y", || Ok(Fr::from(30u64))).unwrap();
        // (3 x - 1 + 0 aux_9) * 2 = y - 2, with x = 5 and y = 30 (aux 9 does not exist).
        cs.enforce(
            || "affine",
            |lc| {
                lc + (Fr::from(3u64), x) - ProvingAssignment::one()
                    + (Fr::ZERO, Variable(Index::Aux(9)))
            },
            |lc| lc + (Fr::from(2u64), ProvingAssignment::one()),
            |lc| lc + y - (Fr::from(2u64), ProvingAssignment::one()),
        );
        assert!(cs.first_unsatisfied().is_none());
        assert_eq!(cs.a(), &[Fr::from(14u64)]);
        assert_eq!(cs.b(), &[Fr::from(2u64)]);
    }

    #[test]
    fn minus_one_limbs_are_those_of_minus_one() {
        assert_eq!(MINUS_ONE, (-Fr::ONE).mont_limbs());
    }

    /// Every shortcut of `eval_lc` against the plain sum of products: minus-one
    /// coefficients on inputs and aux, a general coefficient on an input other than one.
    #[test]
    fn shortcuts_agree_with_products() {
        let mut cs = ProvingAssignment::new();
        cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
        let seven = cs.alloc_input(|| "seven", || Ok(Fr::from(7u64))).unwrap();
        let x = cs.alloc(|| "x", || Ok(Fr::from(5u64))).unwrap();
        let y = cs.alloc(|| "y", || Ok(Fr::from(9u64))).unwrap();
        let minus = -Fr::ONE;
        // (4 * seven - x - 1) * (y - seven + 3) = 22 * 5 = 110, as 10 y + 20 one.
        cs.enforce(
            || "mixed",
            |lc| lc + (Fr::from(4u64), seven) + (minus, x) + (minus, ProvingAssignment::one()),
            |lc| lc + y + (minus, seven) + (Fr::from(3u64), ProvingAssignment::one()),
            |lc| lc + (Fr::from(10u64), y) + (Fr::from(20u64), ProvingAssignment::one()),
        );
        assert!(cs.first_unsatisfied().is_none());
        assert_eq!(cs.a(), &[Fr::from(22u64)]);
        assert_eq!(cs.b(), &[Fr::from(5u64)]);
    }
}
