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
use sluice_backend::huge_pages::{copy_with_huge_pages, filled_with_huge_pages};
use sluice_backend::{ComputeBackend, FrVec, HostAllocator};
use sluice_field::{Fr, FrCompatible};
use sluice_msm::Density;
use subtle::ConstantTimeEq;

use std::sync::mpsc::{sync_channel, Receiver, TryRecvError};
use std::sync::Arc;

use crate::keygen::synthesize_groth16;
use crate::{Groth16Error, QueryLengths};

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

/// The a, b and auxiliary vectors at their full capacity, made by another thread, waiting
/// to replace the growing ones: in memory a backend lends where it does, else with every
/// page already written once.
struct Prefaulted {
    a: FrVec,
    b: FrVec,
    aux: FrVec,
}

impl Prefaulted {
    /// `None` when the allocator refuses a vector (an absurd capacity): synthesis then
    /// grows its own, as without a capacity.
    fn new(capacity: Capacity, lender: Option<&dyn HostAllocator>) -> Option<Self> {
        let vector = |n: usize| match lender.and_then(|l| l.fr_vec(n)) {
            // Lent (page-locked) memory is mapped already.
            Some(v) => Some(v),
            // Writing each element makes the kernel map and zero the pages here, not on
            // the synthesizing thread; on huge pages where the system offers them, faster
            // to write and far faster to free after the proof (sluice_backend::huge_pages).
            None => {
                let mut v = filled_with_huge_pages(n, Fr::ZERO)?;
                v.clear();
                Some(FrVec::from(v))
            }
        };
        Some(Prefaulted {
            a: vector(capacity.constraints)?,
            b: vector(capacity.constraints)?,
            aux: vector(capacity.aux)?,
        })
    }
}

/// Where prefaulted vectors of a capacity will arrive from. A clone waits for none.
struct PrefaultedLater(Option<(Receiver<Prefaulted>, Capacity)>);

impl Clone for PrefaultedLater {
    fn clone(&self) -> Self {
        PrefaultedLater(None)
    }
}

/// A `ConstraintSystem` that records what the prover needs (see the module docs), for
/// circuits over [`Fr`] or any other [`FrCompatible`] scalar (such as `blstrs::Scalar`): their
/// coefficients and values are read as `Fr` where they lie, at no cost.
///
/// Use [`ProvingAssignment::synthesize`], which also adds the "one" input and the input
/// constraints Groth16 setup adds, so its figures match the parameters. A clone holds as
/// much host memory again (benchmarks clone one assignment to prove it repeatedly).
pub struct ProvingAssignment {
    a_aux_density: Density,
    b_input_density: Density,
    b_aux_density: Density,
    a: FrVec,
    b: FrVec,
    input_assignment: Vec<Fr>,
    aux_assignment: FrVec,
    namespace: Vec<String>,
    unsatisfied: Option<Unsatisfied>,
    prefaulted: PrefaultedLater,
}

impl Clone for ProvingAssignment {
    /// The large vectors are copied onto huge pages where the system offers them, as
    /// synthesis with a capacity makes them (the prover frees them on its own thread).
    fn clone(&self) -> Self {
        self.clone_into_lent(None)
    }
}

impl Default for ProvingAssignment {
    fn default() -> Self {
        Self::new()
    }
}

impl ProvingAssignment {
    /// A copy whose a, b and auxiliary vectors are in memory `lender` lends where it does
    /// (else on huge pages where the system offers them, as [`Clone`] makes them).
    fn clone_into_lent(&self, lender: Option<&dyn HostAllocator>) -> Self {
        let copy = |v: &[Fr]| match lender.and_then(|l| l.fr_vec(v.len())) {
            Some(mut lent) => {
                lent.extend_from_slice(v);
                lent
            }
            None => FrVec::from(copy_with_huge_pages(v)),
        };
        ProvingAssignment {
            a_aux_density: self.a_aux_density.clone(),
            b_input_density: self.b_input_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
            a: copy(&self.a),
            b: copy(&self.b),
            input_assignment: copy_with_huge_pages(&self.input_assignment),
            aux_assignment: copy(&self.aux_assignment),
            namespace: self.namespace.clone(),
            unsatisfied: self.unsatisfied.clone(),
            prefaulted: self.prefaulted.clone(),
        }
    }

    /// An empty assignment, for synthesis by hand (add the "one" input first). The same as
    /// `ConstraintSystem::new`, which for a system generic over its scalar would need the
    /// scalar type named.
    pub fn new() -> Self {
        <Self as ConstraintSystem<Fr>>::new()
    }

    /// The "one" input, as `ConstraintSystem::one` (which would need the scalar type named).
    pub fn one() -> Variable {
        <Self as ConstraintSystem<Fr>>::one()
    }

    /// A copy whose a, b and auxiliary vectors are in the memory `backend` uploads fastest
    /// from ([`ComputeBackend::host_allocator`]), where it lends any: what
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
        Self::synthesize_with_capacity(circuit, Capacity::default())
    }

    /// [`synthesize`](Self::synthesize) for a circuit of (about) `capacity`'s shape: another
    /// thread allocates a, b and the auxiliary vector at that size and touches every page,
    /// and synthesis moves into them when they are ready. The kernel's zeroing of fresh
    /// pages, about a tenth of synthesis (BENCHMARKS.md#synthesis), then happens off the
    /// synthesizing thread. A wrong capacity costs memory or growth, never correctness;
    /// one the allocator refuses outright is ignored. Take it from the circuit's parameters:
    /// every page of the vectors is written up front.
    ///
    /// Memory: until the move, the growing vectors exist next to the prefaulted ones.
    /// Synthesis waits for the prefaulted vectors rather than grow a or b past a quarter
    /// of `capacity.constraints` (or the auxiliary vector past a quarter of
    /// `capacity.aux`), so the host holds at most about 1.5 times the capacity's vectors
    /// for that while. [`synthesize`](Self::synthesize) holds at most their doubling
    /// growth.
    pub fn synthesize_with_capacity<S: FrCompatible, C: Circuit<S>>(
        circuit: C,
        capacity: Capacity,
    ) -> Result<Self, Groth16Error> {
        Self::synthesize_into(circuit, capacity, None)
    }

    /// [`synthesize_with_capacity`](Self::synthesize_with_capacity) into the memory
    /// `backend` uploads fastest from ([`ComputeBackend::host_allocator`]: page-locked
    /// memory on a GPU, which its DMA reads with no staging copy), where it lends any; what
    /// it does not lend is ordinary memory, as there. The prover's `create_proof` uses it.
    ///
    /// Memory: lent memory is host memory too, and page-locked: the system cannot swap it
    /// out. A backend lends up to a limit and then refuses (the OpenCL backend's is a
    /// quarter of the host's memory), so many assignments at once fall back to ordinary
    /// memory rather than lock the host's.
    pub fn synthesize_for<S: FrCompatible, C: Circuit<S>, B: ComputeBackend>(
        circuit: C,
        capacity: Capacity,
        backend: &B,
    ) -> Result<Self, Groth16Error> {
        Self::synthesize_into(circuit, capacity, backend.host_allocator())
    }

    fn synthesize_into<S: FrCompatible, C: Circuit<S>>(
        circuit: C,
        capacity: Capacity,
        lender: Option<Arc<dyn HostAllocator>>,
    ) -> Result<Self, Groth16Error> {
        let mut cs = Self::new();
        if capacity != Capacity::default() {
            let (tx, rx) = sync_channel(1);
            // Detached: if synthesis ends first, the vectors are dropped with the channel.
            std::thread::spawn(move || {
                if let Some(p) = Prefaulted::new(capacity, lender.as_deref()) {
                    let _ = tx.send(p);
                }
            });
            cs.prefaulted = PrefaultedLater(Some((rx, capacity)));
        }
        synthesize_groth16::<S, _, _>(&mut cs, circuit, |cs| cs.input_assignment.len())?;
        cs.prefaulted = PrefaultedLater(None);
        match cs.unsatisfied.take() {
            Some(Unsatisfied { index, name }) => Err(Groth16Error::Unsatisfied { index, name }),
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
    pub fn a(&self) -> &[Fr] {
        &self.a
    }

    /// `b_i = <B_i, z>` per constraint.
    pub fn b(&self) -> &[Fr] {
        &self.b
    }

    /// The public inputs, the constant one first.
    pub fn input_assignment(&self) -> &[Fr] {
        &self.input_assignment
    }

    /// The auxiliary (private) variables.
    pub fn aux_assignment(&self) -> &[Fr] {
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

    /// Whether a, b and the auxiliary vector are all in memory a backend lent
    /// ([`synthesize_for`](Self::synthesize_for)), which uploads read fastest; an empty
    /// one holds no memory and counts as lent.
    pub fn in_lent_memory(&self) -> bool {
        [&self.a, &self.b, &self.aux_assignment]
            .iter()
            .all(|v| v.is_lent() || v.capacity() == 0)
    }

    /// Host bytes this assignment holds: the capacity of a, b and the witness, and the
    /// density bitmaps (what a partition waiting for its device holds).
    pub fn host_bytes(&self) -> u64 {
        let scalars = self.a.capacity()
            + self.b.capacity()
            + self.input_assignment.capacity()
            + self.aux_assignment.capacity();
        let words = [
            &self.a_aux_density,
            &self.b_input_density,
            &self.b_aux_density,
        ]
        .iter()
        .map(|d| d.words().len())
        .sum::<usize>();
        (scalars * std::mem::size_of::<Fr>() + words * 8) as u64
    }

    /// Takes the a and b vectors out (to upload them and free the host copies).
    pub(crate) fn take_ab(&mut self) -> (FrVec, FrVec) {
        (std::mem::take(&mut self.a), std::mem::take(&mut self.b))
    }

    /// Called where a, b or the auxiliary vector is full: moves them into the prefaulted
    /// vectors if those have arrived (they then grow no more, up to the capacity).
    fn adopt_prefaulted(&mut self) {
        let Some((rx, capacity)) = &self.prefaulted.0 else {
            return;
        };
        // Past a quarter of the capacity, wait rather than grow (see
        // synthesize_with_capacity): the growing vectors stay below half of it. Waiting
        // earlier costs time, as synthesis catches up with the other thread
        // (BENCHMARKS.md#synthesis).
        let wait = self.a.len() * 4 >= capacity.constraints.max(1)
            || self.aux_assignment.len() * 4 >= capacity.aux.max(1);
        let arrived = match wait {
            true => rx.recv().map_err(|_| TryRecvError::Disconnected),
            false => rx.try_recv(),
        };
        match arrived {
            Ok(mut p) => {
                for (to, from) in [
                    (&mut p.a, &mut self.a),
                    (&mut p.b, &mut self.b),
                    (&mut p.aux, &mut self.aux_assignment),
                ] {
                    if to.capacity() > from.len() {
                        to.extend_from_slice(from);
                        std::mem::swap(to, from);
                    }
                }
                self.prefaulted = PrefaultedLater(None);
            }
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => self.prefaulted = PrefaultedLater(None),
        }
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

/// `<lc, z>`, marking used variables in the densities given. `None` if the combination
/// names a variable this system never allocated.
fn eval_lc<S: FrCompatible>(
    lc: &LinearCombination<S>,
    inputs: &[Fr],
    aux: &[Fr],
    mut input_density: Option<&mut Density>,
    mut aux_density: Option<&mut Density>,
) -> Option<Fr> {
    let mut acc = Fr::ZERO;
    // Coefficients are circuit structure, public: they are compared in variable time (their
    // Montgomery limbs). Skipping zeros is what defines density in bellperson (a zero
    // coefficient does not use the variable); a coefficient of one or minus one needs no
    // product. Inputs are public too, so an input of one (the constant every circuit uses
    // for its constants) needs no product either; auxiliary values are secret and always
    // take the same path.
    // Adds coeff * value to acc and marks variable i; inlined (as a closure it was a call
    // per term, with acc on the stack).
    #[inline(always)]
    fn add(
        acc: &mut Fr,
        value: Option<&Fr>,
        coeff: &Fr,
        public: bool,
        density: Option<&mut Density>,
        i: usize,
    ) -> Option<()> {
        const ZERO: [u64; 4] = Fr::ZERO.mont_limbs();
        const ONE: [u64; 4] = Fr::ONE.mont_limbs();
        let limbs = coeff.mont_limbs();
        if limbs == ZERO {
            return Some(());
        }
        let value = value?;
        if limbs == ONE {
            *acc += *value;
        } else if limbs == MINUS_ONE {
            *acc -= *value;
        } else if public && value.mont_limbs() == ONE {
            *acc += *coeff;
        } else {
            *acc += *value * coeff;
        }
        if let Some(d) = density {
            d.set(i, true).ok()?;
        }
        Some(())
    }
    for (&i, coeff) in lc.iter_inputs() {
        add(
            &mut acc,
            inputs.get(i),
            coeff.as_fr(),
            true,
            input_density.as_deref_mut(),
            i,
        )?;
    }
    for (&i, coeff) in lc.iter_aux() {
        add(
            &mut acc,
            aux.get(i),
            coeff.as_fr(),
            false,
            aux_density.as_deref_mut(),
            i,
        )?;
    }
    Some(acc)
}

/// Generic over the scalar type so circuits written for a concrete one (Filecoin's for
/// `blstrs::Scalar`) synthesize here unchanged; `FrCompatible` makes every conversion a
/// reinterpretation, so the `Fr` path compiles to the same code.
impl<S: FrCompatible> ConstraintSystem<S> for ProvingAssignment {
    type Root = Self;

    fn new() -> Self {
        ProvingAssignment {
            a_aux_density: Density::new(0),
            b_input_density: Density::new(0),
            b_aux_density: Density::new(0),
            a: FrVec::new(),
            b: FrVec::new(),
            input_assignment: Vec::new(),
            aux_assignment: FrVec::new(),
            namespace: Vec::new(),
            unsatisfied: None,
            prefaulted: PrefaultedLater(None),
        }
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<S, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        if self.aux_assignment.len() == self.aux_assignment.capacity() {
            self.adopt_prefaulted();
        }
        self.aux_assignment.push(f()?.to_fr());
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
        self.input_assignment.push(f()?.to_fr());
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
        if self.a.len() == self.a.capacity() {
            self.adopt_prefaulted();
        }
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
                // Branching reveals only whether the witness is valid.
                if !bool::from((a * b).ct_eq(&c)) {
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
mod tests {
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

    /// Prefaulted vectors that arrive mid-synthesis are adopted at the next full vector,
    /// keep what was written so far, and hold the requested capacity; a capacity too small
    /// for one of them leaves that one growing.
    #[test]
    fn prefaulted_vectors_are_adopted_with_their_contents() {
        for (capacity, grown) in [
            (
                Capacity {
                    constraints: 64,
                    aux: 64,
                },
                false,
            ),
            (
                Capacity {
                    constraints: 64,
                    aux: 0,
                },
                true,
            ),
        ] {
            let mut cs = ProvingAssignment::new();
            cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
            // They arrive after four constraints, when a and b are full (capacity 4).
            for k in 0..5 {
                if k == 2 {
                    let (tx, rx) = sync_channel(1);
                    tx.send(Prefaulted::new(capacity, None).unwrap()).unwrap();
                    cs.prefaulted = PrefaultedLater(Some((rx, capacity)));
                }
                tiny(&mut cs, 3);
            }
            assert!(cs.first_unsatisfied().is_none());
            assert_eq!(cs.num_constraints(), 10);
            assert_eq!(cs.a.capacity(), 64, "{capacity:?}");
            assert_eq!(cs.aux_assignment.capacity() != 64, grown, "{capacity:?}");
            assert_eq!(&cs.a()[..2], &[Fr::from(2u64), Fr::from(6u64)]);
            assert_eq!(&cs.b()[8..], &[Fr::from(3u64), Fr::ONE]);
            assert_eq!(cs.aux_assignment().len(), 15);
            assert_eq!(cs.aux_assignment()[13], Fr::from(3u64));
        }
    }

    /// Vectors that never come (their thread gone) neither block synthesis past the point
    /// where it would wait for them nor change it.
    #[test]
    fn prefaulted_vectors_that_never_come_are_not_waited_for() {
        let mut cs = ProvingAssignment::new();
        let (tx, rx) = sync_channel::<Prefaulted>(1);
        drop(tx);
        let capacity = Capacity {
            constraints: 8,
            aux: 8,
        };
        cs.prefaulted = PrefaultedLater(Some((rx, capacity)));
        cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
        for _ in 0..5 {
            tiny(&mut cs, 3);
        }
        assert!(cs.prefaulted.0.is_none());
        assert_eq!(cs.num_constraints(), 10);
        assert_eq!(&cs.b()[8..], &[Fr::from(3u64), Fr::ONE]);
    }

    /// A capacity no allocator can give is ignored, not a crash.
    #[test]
    fn an_impossible_capacity_is_ignored() {
        assert!(Prefaulted::new(
            Capacity {
                constraints: usize::MAX / 2,
                aux: 1
            },
            None
        )
        .is_none());
        let circuit = crate::demo::MimcLike::<Fr>::filling_domain(6, Some(Fr::from(5u64)));
        let huge = Capacity {
            constraints: usize::MAX / 2,
            aux: usize::MAX / 2,
        };
        let cs = ProvingAssignment::synthesize_with_capacity(circuit.clone(), huge).unwrap();
        let plain = ProvingAssignment::synthesize(circuit).unwrap();
        assert_eq!(cs.a(), plain.a());
    }

    /// Synthesis with any capacity (exact, too small, too large, none) gives the same
    /// assignment, densities included, whenever the prefaulted vectors arrive.
    #[test]
    fn capacity_never_changes_the_assignment() {
        let circuit = || crate::demo::MimcLike::<Fr>::filling_domain(12, Some(Fr::from(5u64)));
        let plain = ProvingAssignment::synthesize(circuit()).unwrap();
        let exact = Capacity {
            constraints: plain.num_constraints(),
            aux: plain.aux_assignment().len(),
        };
        for capacity in [
            exact,
            Capacity {
                constraints: 7,
                aux: 3,
            },
            Capacity {
                constraints: 1 << 13,
                aux: 1 << 13,
            },
        ] {
            let cs = ProvingAssignment::synthesize_with_capacity(circuit(), capacity).unwrap();
            same_assignment(&cs, &plain, &format!("{capacity:?}"));
        }
    }

    fn same_assignment(cs: &ProvingAssignment, plain: &ProvingAssignment, what: &str) {
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

    /// Synthesis into lent memory gives the same assignment as without: in lent memory
    /// where the lender lends all three vectors at a large enough capacity, moved to the
    /// heap where the capacity is too small, partly lent where the lender refuses some,
    /// and a copy for a lender is lent too. Every lent byte is given back.
    #[test]
    fn lent_memory_never_changes_the_assignment() {
        use sluice_backend::HeapLender;
        let circuit = || crate::demo::MimcLike::<Fr>::filling_domain(10, Some(Fr::from(7u64)));
        let plain = ProvingAssignment::synthesize(circuit()).unwrap();
        let exact = Capacity {
            constraints: plain.num_constraints(),
            aux: plain.aux_assignment().len(),
        };
        let vector_bytes = (exact.constraints * 32) as u64;
        let small = Capacity {
            constraints: 5,
            aux: 5,
        };
        for (capacity, limit, lent) in [
            (exact, u64::MAX, true),
            (small, u64::MAX, false),
            // Room for a only: b and the auxiliary vector are ordinary memory.
            (exact, vector_bytes, false),
        ] {
            let lender: Arc<dyn HostAllocator> = Arc::new(HeapLender::new(limit));
            let cs = ProvingAssignment::synthesize_into(circuit(), capacity, Some(lender)).unwrap();
            let what = format!("{capacity:?}, limit {limit}");
            assert_eq!(cs.in_lent_memory(), lent, "{what}");
            same_assignment(&cs, &plain, &what);
        }
        let lender = HeapLender::new(u64::MAX);
        let copy = plain.clone_into_lent(Some(&lender));
        assert!(copy.in_lent_memory() && !plain.in_lent_memory());
        same_assignment(&copy, &plain, "a copy into lent memory");
        drop(copy);
        assert_eq!(lender.lent_bytes(), 0);
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
