//! What a synthesis is asked for: the shape it expects ([`Capacity`]), how it stores and
//! counts what it records ([`SynthesisOptions`]), how it reports progress, and how it
//! names a failed constraint ([`Unsatisfied`]).

use std::sync::Arc;

use sluice_backend::{CompactConfig, CompactVec, HostAllocator, HostBudget, Storage};

use crate::progress::{self, ProgressEvent, Task};
use crate::r1cs::shape::QueryLengths;
use crate::synthesis::matrices::ConstraintMatrices;

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
/// [`ProvingAssignment::synthesize_with_capacity`](crate::ProvingAssignment::synthesize_with_capacity)
/// (from its parameters: [`Capacity::for_queries`]).
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

/// Tells the progress hook that a synthesis of `expected` constraints (0: unknown) starts,
/// so that its time is counted from here and not from an earlier synthesis's start.
pub(crate) fn report_start(expected: usize) {
    report_event(0, expected);
}

/// Tells `progress` and the progress hook that `done` of `expected` (0: unknown)
/// constraints are enforced, every [`PROGRESS_STEP`].
pub(crate) fn report_progress(progress: Option<&SynthesisProgress>, done: usize, expected: usize) {
    if done % PROGRESS_STEP != 0 {
        return;
    }
    if let Some(progress) = progress {
        progress(done);
    }
    report_event(done, expected);
}

/// Tells the progress hook that a synthesis ended with `done` constraints, its total.
pub(crate) fn report_end(done: usize) {
    report_event(done, done);
}

fn report_event(done: usize, total: usize) {
    progress::report(&ProgressEvent {
        task: Task::Synthesis,
        what: "",
        done: done as u64,
        total: total as u64,
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
    /// ([`ComputeBackend::host_allocator`](sluice_backend::ComputeBackend::host_allocator)).
    pub lender: Option<Arc<dyn HostAllocator>>,
    /// Where every host byte the assignment holds is counted, before it is allocated
    /// (synthesis waits while the budget is full).
    pub budget: Option<Arc<dyn HostBudget>>,
    /// Told how many constraints are done, every [`PROGRESS_STEP`].
    pub progress: Option<SynthesisProgress>,
    /// The circuit's constraint matrices, recorded once ([`ConstraintMatrices::record`]):
    /// synthesis then computes the witness only, and a and b from the matrices on all
    /// cores. The assignment is the same; a circuit of another shape is refused
    /// ([`Groth16Error::MatricesMismatch`](crate::Groth16Error::MatricesMismatch)) or fails
    /// the satisfaction check, and a failing constraint is named by its index only (a
    /// synthesis without matrices names it).
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
    /// The constraints a synthesis with these options will enforce where known: the
    /// recorded matrices' count, else 0 (unknown; the capacity is the domain, only a bound).
    pub(crate) fn expected_constraints(&self) -> usize {
        self.matrices.as_ref().map_or(0, |m| m.num_constraints())
    }

    pub(crate) fn vector(&self, capacity: usize) -> CompactVec {
        CompactVec::new(CompactConfig {
            storage: self.storage,
            capacity,
            lender: self.lender.clone(),
            budget: self.budget.clone(),
        })
    }
}
