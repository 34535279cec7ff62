//! A fast generator of *benchmark* parameters that have a circuit's shape but come from no
//! setup.

use group::Group;
use rand_core::RngCore;
use sluice_field::{G1Projective, G2Projective};

use crate::error::Groth16Error;
use crate::params::keys::{Parameters, VerifyingKey};
use crate::r1cs::domain::domain_size;
use crate::synthesis::assignment::ProvingAssignment;

/// The shape of a circuit: what the sizes of its parameters depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CircuitShape {
    /// Public inputs, counting the constant one.
    pub num_inputs: usize,
    /// Auxiliary variables.
    pub num_aux: usize,
    /// Constraints, counting one per input.
    pub num_constraints: usize,
    /// Auxiliary variables used in A.
    pub a_aux: usize,
    /// Inputs used in B.
    pub b_inputs: usize,
    /// Auxiliary variables used in B.
    pub b_aux: usize,
}

impl CircuitShape {
    /// The shape of a synthesized circuit.
    pub fn of(assignment: &ProvingAssignment) -> Self {
        CircuitShape {
            num_inputs: assignment.input_assignment().len(),
            num_aux: assignment.aux_assignment().len(),
            num_constraints: assignment.num_constraints(),
            a_aux: assignment.a_aux_density().count_ones(),
            b_inputs: assignment.b_input_density().count_ones(),
            b_aux: assignment.b_aux_density().count_ones(),
        }
    }
}

/// **Benchmark** parameters for a circuit of the given shape: valid curve points (in the
/// subgroup, never the identity) in exactly the counts real parameters have, made in
/// seconds even for 2^24 points — but **not** from a setup. Proofs made with them are
/// well-formed and take exactly as long as real ones, and they **do not verify**. Use them
/// only to measure provers.
pub fn generate_benchmark_parameters<R: RngCore>(
    shape: &CircuitShape,
    rng: &mut R,
) -> Result<Parameters, Groth16Error> {
    let (_, n) = domain_size(shape.num_constraints)?;
    let g1 = |count: usize, rng: &mut R| sluice_msm::random_points::<G1Projective>(count, rng);
    let vk = VerifyingKey {
        alpha_g1: G1Projective::random(&mut *rng).to_affine(),
        beta_g1: G1Projective::random(&mut *rng).to_affine(),
        beta_g2: G2Projective::random(&mut *rng).to_affine(),
        gamma_g2: G2Projective::random(&mut *rng).to_affine(),
        delta_g1: G1Projective::random(&mut *rng).to_affine(),
        delta_g2: G2Projective::random(&mut *rng).to_affine(),
        ic: g1(shape.num_inputs, rng),
    };
    let b = shape.b_inputs + shape.b_aux;
    Ok(Parameters {
        vk,
        h: g1(n - 1, rng),
        l: g1(shape.num_aux, rng),
        a: g1(shape.num_inputs + shape.a_aux, rng),
        b_g1: g1(b, rng),
        b_g2: sluice_msm::random_points::<G2Projective>(b, rng),
    })
}
