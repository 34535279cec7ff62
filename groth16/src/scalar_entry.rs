//! The calls that take a circuit, for one scalar type at a time: [`for_fr`] for circuits over
//! sluice's [`Fr`](sluice_field::Fr) (re-exported at the crate's root) and, with feature
//! `blstrs`, [`for_blstrs`] for circuits over `blstrs::Scalar` (Filecoin's). The names keep
//! clear of the `blstrs` crate in a glob import.
//!
//! Naming the scalar in the function lets a circuit generic over its field
//! (`impl<F: PrimeField> Circuit<F> for C`) prove with no type annotation, as bellperson's
//! engine-typed parameters let it; the work itself is generic
//! ([`FrCompatible`](sluice_field::FrCompatible) makes every conversion a reinterpretation).

/// Writes the circuit-taking calls for circuits over `$scalar`.
macro_rules! entry_points {
    ($scalar:ty) => {
        use std::sync::Arc;

        use bellpepper_core::Circuit;
        use rand_core::RngCore;
        use sluice_backend::ComputeBackend;
        use sluice_field::{Fr, G1Projective, G2Projective};

        use crate::error::Groth16Error;
        use crate::params::keys::{Parameters, Proof};
        use crate::params::source::ParameterSource;
        use crate::prover::report::ProofReport;
        use crate::setup::generator::ToxicWaste;
        use crate::synthesis::matrices::ConstraintMatrices;

        /// Generates random Groth16 parameters for `circuit`: draws the toxic waste and two
        /// random generators from `rng` (use a CSPRNG), runs the setup, and wipes the waste.
        ///
        /// This is a single-party setup: whoever runs it can forge proofs. Use it for tests
        /// and private deployments; production systems use parameters from a ceremony.
        pub fn generate_random_parameters<C, R>(
            circuit: C,
            rng: &mut R,
        ) -> Result<Parameters, Groth16Error>
        where
            C: Circuit<$scalar>,
            R: RngCore,
        {
            crate::setup::generator::generate_random_parameters::<$scalar, C, R>(circuit, rng)
        }

        /// The Groth16 setup with given generators and toxic waste (bellperson's
        /// `generate_parameters`).
        ///
        /// Every operation on the secrets is a constant-time field or group operation. Which
        /// query points are left out (variables a matrix never uses) is decided by the
        /// circuit's structure, never by a secret value. Intermediate secret vectors are
        /// wiped.
        pub fn generate_parameters<C: Circuit<$scalar>>(
            circuit: C,
            g1: G1Projective,
            g2: G2Projective,
            toxic: &ToxicWaste,
        ) -> Result<Parameters, Groth16Error> {
            crate::setup::generator::generate_parameters::<$scalar, C>(circuit, g1, g2, toxic)
        }

        /// [`generate_random_parameters`] with the query points multiplied in variable time,
        /// several times faster: for test and benchmark parameters (e.g. Filecoin's test
        /// sectors, set up on the fly in CI). The same draws from `rng` as
        /// [`generate_random_parameters`], so the same parameters for the same seed.
        ///
        /// # Security
        /// Variable time in the toxic waste: each query point is made by looking up table
        /// entries indexed by bits of a secret scalar, with additions that branch on their
        /// operands, so the time and the memory accesses (cache timing) reveal the waste to
        /// anyone who can observe the machine during the setup, and with it the power to
        /// forge proofs. Use it only where nobody can, or where the parameters are not
        /// trusted anyway; real deployments use a ceremony's parameters or the constant-time
        /// [`generate_random_parameters`].
        pub fn generate_random_parameters_vartime<C, R>(
            circuit: C,
            rng: &mut R,
        ) -> Result<Parameters, Groth16Error>
        where
            C: Circuit<$scalar>,
            R: RngCore,
        {
            crate::setup::generator::generate_random_parameters_vartime::<$scalar, C, R>(
                circuit, rng,
            )
        }

        /// [`generate_parameters`] with the query points multiplied in variable time:
        /// exactly the same parameters for the same generators and toxic waste, several
        /// times faster. For test and benchmark parameters.
        ///
        /// # Security
        /// Variable time in the toxic waste: each query point is made by looking up table
        /// entries indexed by bits of a secret scalar, with additions that branch on their
        /// operands, so the time and the memory accesses (cache timing) reveal the waste to
        /// anyone who can observe the machine during the setup, and with it the power to
        /// forge proofs. Use it only where nobody can, or where the parameters are not
        /// trusted anyway; real deployments use a ceremony's parameters or the constant-time
        /// [`generate_parameters`].
        pub fn generate_parameters_vartime<C: Circuit<$scalar>>(
            circuit: C,
            g1: G1Projective,
            g2: G2Projective,
            toxic: &ToxicWaste,
        ) -> Result<Parameters, Groth16Error> {
            crate::setup::generator::generate_parameters_vartime::<$scalar, C>(
                circuit, g1, g2, toxic,
            )
        }

        /// Proves `circuit` with blinding `r`, `s` (uniformly random and secret). Synthesis
        /// writes the assignment where `backend` uploads fastest from
        /// ([`ProvingAssignment::synthesize_for`](crate::ProvingAssignment::synthesize_for)).
        pub fn create_proof<B, C, P>(
            circuit: C,
            params: &P,
            r: Fr,
            s: Fr,
            backend: &B,
        ) -> Result<Proof, Groth16Error>
        where
            B: ComputeBackend,
            C: Circuit<$scalar>,
            P: ParameterSource<B> + ?Sized,
        {
            crate::prover::entry::create_proof::<$scalar, B, C, P>(circuit, params, r, s, backend)
        }

        /// Proves `circuit`, drawing `r` and `s` from `rng` (pass a CSPRNG such as `OsRng`
        /// or `ChaCha20Rng`).
        pub fn create_random_proof<B, C, P, R>(
            circuit: C,
            params: &P,
            rng: &mut R,
            backend: &B,
        ) -> Result<Proof, Groth16Error>
        where
            B: ComputeBackend,
            C: Circuit<$scalar>,
            P: ParameterSource<B> + ?Sized,
            R: RngCore,
        {
            crate::prover::entry::create_random_proof::<$scalar, B, C, P, R>(
                circuit, params, rng, backend,
            )
        }

        /// Proves many circuits with one parameter set (e.g. the partitions of a Filecoin
        /// proof): synthesizes them in parallel on the CPU, then proves them one after the
        /// other in the backend. With [`ResidentParameters`](crate::ResidentParameters) the
        /// bases are uploaded once for the whole batch; other sources upload each query per
        /// proof.
        ///
        /// All circuits are synthesized before the first proof, so the host holds every
        /// partition's a and b vectors at once: in the memory the backend lends up to its
        /// limit, in ordinary memory beyond it.
        pub fn create_random_proof_batch<B, C, P, R>(
            circuits: Vec<C>,
            params: &P,
            rng: &mut R,
            backend: &B,
        ) -> Result<Vec<Proof>, Groth16Error>
        where
            B: ComputeBackend,
            C: Circuit<$scalar> + Send,
            P: ParameterSource<B> + ?Sized,
            R: RngCore,
        {
            crate::prover::entry::create_random_proof_batch::<$scalar, B, C, P, R>(
                circuits, params, rng, backend,
            )
        }

        /// Proves `circuit` with blinding `r`, `s` (uniformly random and secret), its
        /// constraint matrices recorded once ([`ConstraintMatrices::record`]): synthesis
        /// computes the witness alone, and its completed chunks go to the device for the L,
        /// A and B MSMs while synthesis goes on, so a proof's latency is its witness
        /// synthesis plus H and a short tail. `chunk_len`: witness values per chunk
        /// (`None`: a sixteenth of the witness, at least 2^16; shorter chunks leave less
        /// after synthesis and launch more MSMs).
        ///
        /// It pays where the witness is mostly bits and small integers (gadget circuits); a
        /// dense witness's chunk MSMs take longer than its synthesis, so prove those with
        /// [`prove_assignment`](crate::prove_assignment) (BENCHMARKS.md#proof). The
        /// parameters are checked against the matrices before synthesis; a witness that
        /// fails a constraint is [`Groth16Error::Unsatisfied`] by index.
        pub fn create_proof_streamed<B, C, P>(
            circuit: C,
            matrices: &Arc<ConstraintMatrices>,
            params: &P,
            r: Fr,
            s: Fr,
            backend: &B,
            chunk_len: Option<usize>,
        ) -> Result<(Proof, ProofReport), Groth16Error>
        where
            B: ComputeBackend,
            C: Circuit<$scalar>,
            P: ParameterSource<B> + Sync + ?Sized,
        {
            crate::prover::streamed::create_proof_streamed::<$scalar, B, C, P>(
                circuit, matrices, params, r, s, backend, chunk_len,
            )
        }
    };
}

/// The circuit-taking calls for circuits over sluice's [`Fr`](sluice_field::Fr), also at
/// the crate's root.
pub mod for_fr {
    entry_points!(sluice_field::Fr);
}

/// The circuit-taking calls for circuits over `blstrs::Scalar`, as Filecoin's are
/// (`sluice_groth16::for_blstrs::create_random_proof(circuit, ...)`). Feature `blstrs`; without
/// it, a `blstrs::Scalar` circuit is refused at compile time with a hint naming the feature.
#[cfg(feature = "blstrs")]
pub mod for_blstrs {
    entry_points!(::blstrs::Scalar);
}
