//! The verifier, on blst's pairing.

use blst::{blst_fp12, blst_p1_affine, blst_p2_affine};
use ff::{Field, PrimeField};
use group::prime::PrimeCurveAffine;
use rand_core::RngCore;
use sluice_field::{Fr, G1Affine, G1Projective};

use crate::params::{Proof, VerifyingKey};
use crate::Groth16Error;

/// A verifying key prepared for pairings.
#[derive(Clone, Debug)]
pub struct PreparedVerifyingKey {
    vk: VerifyingKey,
    /// e(alpha, beta), after the final exponentiation.
    alpha_beta: blst_fp12,
    neg_gamma_g2: blst_p2_affine,
    neg_delta_g2: blst_p2_affine,
    beta_g2: blst_p2_affine,
}

impl PreparedVerifyingKey {
    /// The key it was prepared from.
    pub fn vk(&self) -> &VerifyingKey {
        &self.vk
    }
}

/// Prepares `vk` for verification.
pub fn prepare_verifying_key(vk: &VerifyingKey) -> PreparedVerifyingKey {
    let alpha_beta = blst_fp12::miller_loop(&vk.beta_g2.into(), &vk.alpha_g1.into()).final_exp();
    PreparedVerifyingKey {
        vk: vk.clone(),
        alpha_beta,
        neg_gamma_g2: (-vk.gamma_g2).into(),
        neg_delta_g2: (-vk.delta_g2).into(),
        beta_g2: vk.beta_g2.into(),
    }
}

/// `ic[0] + sum_i inputs[i]·ic[i + 1]`, after checking the count.
fn input_accumulator(vk: &VerifyingKey, inputs: &[Fr]) -> Result<G1Projective, Groth16Error> {
    if inputs.len() + 1 != vk.ic.len() {
        return Err(Groth16Error::PublicInputCount {
            expected: vk.ic.len().saturating_sub(1),
            got: inputs.len(),
        });
    }
    Ok(inputs
        .iter()
        .zip(&vk.ic[1..])
        .fold(vk.ic[0].to_curve(), |acc, (x, p)| acc + *p * x))
}

/// The product of the Miller loops of `pairs`.
fn miller_product(pairs: &[(G1Affine, blst_p2_affine)]) -> blst_fp12 {
    let (p1, p2): (Vec<blst_p1_affine>, Vec<blst_p2_affine>) = pairs
        .iter()
        .map(|(p, q)| (blst_p1_affine::from(*p), *q))
        .unzip();
    blst_fp12::miller_loop_n(&p2, &p1)
}

/// Verifies one proof against its public inputs (without the constant one).
///
/// `Ok(true)` if the proof is valid, `Ok(false)` if not, and
/// [`Groth16Error::PublicInputCount`] if `public_inputs` has the wrong length.
pub fn verify_proof(
    pvk: &PreparedVerifyingKey,
    proof: &Proof,
    public_inputs: &[Fr],
) -> Result<bool, Groth16Error> {
    let acc = input_accumulator(&pvk.vk, public_inputs)?;
    // e(A, B) = e(alpha, beta) · e(acc, gamma) · e(C, delta)
    let f = miller_product(&[
        (proof.a, proof.b.into()),
        (acc.to_affine(), pvk.neg_gamma_g2),
        (proof.c, pvk.neg_delta_g2),
    ]);
    Ok(f.final_exp() == pvk.alpha_beta)
}

/// Verifies many proofs at once with a random linear combination: one final
/// exponentiation and `n + 3` Miller loops instead of `3n` (+ n final exponentiations).
///
/// `Ok(true)` iff every proof is valid (except with probability about 2^-128 over `rng`,
/// which must be unpredictable to the provers). An empty batch is valid.
pub fn verify_proofs_batch<R: RngCore>(
    pvk: &PreparedVerifyingKey,
    rng: &mut R,
    proofs: &[Proof],
    public_inputs: &[Vec<Fr>],
) -> Result<bool, Groth16Error> {
    if proofs.len() != public_inputs.len() {
        return Err(Groth16Error::ParameterMismatch {
            what: "the number of public-input vectors for the proofs",
            params: proofs.len(),
            circuit: public_inputs.len(),
        });
    }
    if proofs.is_empty() {
        return Ok(true);
    }
    let mut pairs = Vec::with_capacity(proofs.len() + 3);
    let mut sum_acc = G1Projective::default();
    let mut sum_c = G1Projective::default();
    let mut sum_r = Fr::ZERO;
    for (proof, inputs) in proofs.iter().zip(public_inputs) {
        // A 128-bit random multiplier is enough and halves the scalar work.
        let r = Fr::from_u128(rng.next_u64() as u128 | ((rng.next_u64() as u128) << 64));
        let acc = input_accumulator(&pvk.vk, inputs)?;
        sum_acc += acc * r;
        sum_c += proof.c.to_curve() * r;
        sum_r += r;
        pairs.push(((proof.a.to_curve() * r).to_affine(), proof.b.into()));
    }
    // prod e(r_i·A_i, B_i) = e(sum r_i · alpha, beta) · e(sum r_i·acc_i, gamma) · e(sum r_i·C_i, delta)
    pairs.push((sum_acc.to_affine(), pvk.neg_gamma_g2));
    pairs.push((sum_c.to_affine(), pvk.neg_delta_g2));
    pairs.push((
        (-(pvk.vk.alpha_g1.to_curve() * sum_r)).to_affine(),
        pvk.beta_g2,
    ));
    let f = miller_product(&pairs).final_exp();
    // SAFETY: `f` is a valid, initialised fp12 for the duration of the call.
    Ok(unsafe { blst::blst_fp12_is_one(&f) })
}
