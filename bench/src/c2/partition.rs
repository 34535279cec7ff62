//! How the c2 job synthesizes its partitions: a circuit on its worker's thread, or a fork's
//! parts on every core (Filecoin's circuits, as `sluice-filecoin` proves them by default).

use rand_core::RngCore;
use sluice_field::FrCompatible;
use sluice_groth16::{Circuit, ConstraintMatrices, Groth16Error, ProvingAssignment};
#[cfg(feature = "filecoin")]
use sluice_groth16::{Fork, Forked, SynthesisOptions};
use sluice_pipeline::{Pipeline, PipelineError, ProofHandle};

/// A partition of the c2 job over the scalar `S`.
pub(crate) trait Partition<S: FrCompatible>: Send + Sized + 'static {
    /// Synthesizes it alone, as the set-up does for the parameters' shape.
    fn synthesize(self) -> Result<ProvingAssignment, Groth16Error>;

    /// Records its constraint matrices (the `--matrices` row).
    fn record(self) -> Result<ConstraintMatrices, Groth16Error>;

    /// Submits one proof's `partitions` to `pipeline`, `r` and `s` drawn from `rng`.
    fn submit<R: RngCore>(
        pipeline: &Pipeline,
        partitions: Vec<Self>,
        rng: &mut R,
    ) -> Result<ProofHandle, PipelineError>;
}

/// A circuit synthesized on its worker's thread.
pub(crate) struct OnOneThread<C>(pub C);

impl<S: FrCompatible, C: Circuit<S> + Send + 'static> Partition<S> for OnOneThread<C> {
    fn synthesize(self) -> Result<ProvingAssignment, Groth16Error> {
        ProvingAssignment::synthesize(self.0)
    }

    fn record(self) -> Result<ConstraintMatrices, Groth16Error> {
        ConstraintMatrices::record(self.0)
    }

    fn submit<R: RngCore>(
        pipeline: &Pipeline,
        partitions: Vec<Self>,
        rng: &mut R,
    ) -> Result<ProofHandle, PipelineError> {
        pipeline.submit(partitions.into_iter().map(|p| p.0).collect(), rng)
    }
}

/// A fork, its parts synthesized on every core (Filecoin's circuits).
#[cfg(feature = "filecoin")]
pub(crate) struct OnEveryCore<F>(pub F);

#[cfg(feature = "filecoin")]
impl<S: FrCompatible, F: Fork<S> + Send + 'static> Partition<S> for OnEveryCore<F> {
    fn synthesize(self) -> Result<ProvingAssignment, Groth16Error> {
        ProvingAssignment::synthesize_forked(self.0, &SynthesisOptions::default())
    }

    fn record(self) -> Result<ConstraintMatrices, Groth16Error> {
        // The matrices of the circuit the forked synthesis fills: the fork's parts in turn.
        ConstraintMatrices::record(Forked(self.0))
    }

    fn submit<R: RngCore>(
        pipeline: &Pipeline,
        partitions: Vec<Self>,
        rng: &mut R,
    ) -> Result<ProofHandle, PipelineError> {
        pipeline.submit_forked(partitions.into_iter().map(|p| p.0).collect(), rng)
    }
}
