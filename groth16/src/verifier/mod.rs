//! The verifier: Miller loops over prepared G2 lines and one final exponentiation per call,
//! the public inputs combined by one MSM over precomputed tables ([`tables`]).
//!
//! Everything here handles public data (the key, proofs, public inputs), so it runs in
//! variable time; the batch verifier's random multipliers stay on the verifier's side.

mod pairing;
mod tables;

use blst::{blst_fp12, blst_p1};
use ff::{Field, PrimeField};
use group::Curve;
use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use sluice_field::{Fr, G1Affine, G1Projective};

use crate::error::Groth16Error;
use crate::params::keys::{Proof, VerifyingKey};
use crate::verifier::pairing::{is_one, multi_miller_loop, to_blst, G2Lines};
use tables::{FixedBases, MAX_SHIFTED_BASES};

/// A verifying key prepared for verification: e(alpha, beta), the Miller-loop lines of
/// -gamma, -delta and beta, and tables of multiples of the input bases `ic`.
#[derive(Clone, Debug)]
pub struct PreparedVerifyingKey {
    vk: VerifyingKey,
    /// e(alpha, beta), after the final exponentiation.
    alpha_beta: blst_fp12,
    neg_gamma: Option<G2Lines>,
    neg_delta: Option<G2Lines>,
    /// For batches, whose alpha term is a pair of its own.
    beta: Option<G2Lines>,
    /// All of `ic`, the constant one's base first.
    inputs: FixedBases,
}

impl PreparedVerifyingKey {
    /// The key it was prepared from.
    pub fn vk(&self) -> &VerifyingKey {
        &self.vk
    }
}

/// Prepares `vk` for verification: the G2 lines, e(alpha, beta), and the input tables
/// (96 KiB per public input up to 511 inputs, then less per input, 48 MiB at most; none
/// above 4095 inputs).
pub fn prepare_verifying_key(vk: &VerifyingKey) -> PreparedVerifyingKey {
    let beta = G2Lines::new(&vk.beta_g2);
    let alpha_beta = multi_miller_loop(&[(vk.alpha_g1, beta.as_ref())]).final_exp();
    PreparedVerifyingKey {
        vk: vk.clone(),
        alpha_beta,
        neg_gamma: G2Lines::new(&-vk.gamma_g2),
        neg_delta: G2Lines::new(&-vk.delta_g2),
        beta,
        inputs: FixedBases::new(&vk.ic, MAX_SHIFTED_BASES),
    }
}

/// Checks that `inputs` has one element per base of `ic` after the constant one's (a key
/// with no `ic` at all fits no inputs).
fn check_input_count(pvk: &PreparedVerifyingKey, inputs: &[Fr]) -> Result<(), Groth16Error> {
    if pvk.vk.ic.is_empty() || inputs.len() + 1 != pvk.vk.ic.len() {
        return Err(Groth16Error::PublicInputCount {
            expected: pvk.vk.ic.len().saturating_sub(1),
            got: inputs.len(),
        });
    }
    Ok(())
}

/// `p` in affine form by blst's inversion, several times faster than this crate's.
fn to_affine_blst(p: &G1Projective) -> G1Affine {
    let mut affine = blst::blst_p1_affine::default();
    // SAFETY: a valid point in and out.
    unsafe { blst::blst_p1_to_affine(&mut affine, &blst_p1::from(*p)) };
    G1Affine::from(affine)
}

/// `k · p` for a scalar below 2^`bits`, by blst's windowed multiplication, whose time depends
/// on `bits` alone: the batch's multipliers are the verifier's secret, and a short scalar
/// costs half the doublings of a full one.
fn mul_short(p: &G1Affine, k: &Fr, bits: usize) -> G1Projective {
    let bytes = k.to_bytes_le();
    let mut point = blst_p1::default();
    let mut out = blst_p1::default();
    // SAFETY: valid points in and out; `bytes` holds 32 >= bits / 8 bytes of the scalar.
    unsafe {
        blst::blst_p1_from_affine(&mut point, &to_blst(p));
        blst::blst_p1_mult(&mut out, &point, bytes.as_ptr(), bits.min(256));
    }
    G1Projective::from(out)
}

/// Verifies one proof against its public inputs (without the constant one).
///
/// `Ok(true)` if the proof is valid, `Ok(false)` if not, and
/// [`Groth16Error::PublicInputCount`] if `public_inputs` has the wrong length. Inputs over
/// another [`FrCompatible`](sluice_field::FrCompatible) scalar convert in place:
/// `verify_proof(&pvk, &proof, blstrs::Scalar::as_fr_slice(&inputs))`.
pub fn verify_proof(
    pvk: &PreparedVerifyingKey,
    proof: &Proof,
    public_inputs: &[Fr],
) -> Result<bool, Groth16Error> {
    check_input_count(pvk, public_inputs)?;
    // e(A, B) · e(C, -delta) · e(acc, -gamma) = e(alpha, beta) as two Miller loops on two
    // threads: B's lines (G2 arithmetic) and the loop over A and C spawned, the inputs' MSM
    // and acc's loop, the longer side, on the calling thread, which needs no waking
    // (BENCHMARKS.md#verification).
    let scalars: Vec<Fr> = std::iter::once(Fr::ONE)
        .chain(public_inputs.iter().copied())
        .collect();
    let mut ab_cd = None;
    let mut acc_gamma = None;
    rayon::in_place_scope(|scope| {
        let ab_cd = &mut ab_cd;
        scope.spawn(move |_| {
            let b = G2Lines::new(&proof.b);
            *ab_cd = Some(multi_miller_loop(&[
                (proof.a, b.as_ref()),
                (proof.c, pvk.neg_delta.as_ref()),
            ]));
        });
        acc_gamma = Some(
            pvk.inputs
                .combine_vartime(&scalars)
                .map(|acc| multi_miller_loop(&[(to_affine_blst(&acc), pvk.neg_gamma.as_ref())])),
        );
    });
    // Both are set once the scope has returned (a panic inside it propagates instead).
    let (Some(ab_cd), Some(acc_gamma)) = (ab_cd, acc_gamma) else {
        unreachable!("the scope ran both sides")
    };
    Ok((ab_cd * acc_gamma?).final_exp() == pvk.alpha_beta)
}

/// Verifies many proofs at once with a random linear combination: one shared Miller loop
/// over `n + 3` pairs and one final exponentiation instead of `n` of each, the public
/// inputs of all proofs combined by one MSM.
///
/// `Ok(true)` iff every proof is valid, except with probability about 2^-128 over `rng`,
/// which must be a CSPRNG whose output the provers cannot predict. An empty batch is
/// valid. Errors: [`Groth16Error::ParameterMismatch`] when the counts of proofs and of
/// input vectors differ, [`Groth16Error::PublicInputCount`] for an input vector of the
/// wrong length.
///
/// Each proof's inputs are anything that reads as `&[Fr]` (`Vec<Fr>`, `&[Fr]`), so inputs
/// over `blstrs::Scalar` pass as views with no copy: `Scalar::as_fr_slice(&inputs)`.
pub fn verify_proofs_batch<R: RngCore + CryptoRng, I: AsRef<[Fr]>>(
    pvk: &PreparedVerifyingKey,
    rng: &mut R,
    proofs: &[Proof],
    public_inputs: &[I],
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
    for inputs in public_inputs {
        check_input_count(pvk, inputs.as_ref())?;
    }
    // Nonzero 128-bit multipliers: enough for 2^-128, and half the scalar work of full ones.
    let r: Vec<Fr> = proofs
        .iter()
        .map(|_| loop {
            let r = Fr::from_u128(u128::from(rng.next_u64()) | u128::from(rng.next_u64()) << 64);
            if !bool::from(r.is_zero()) {
                break r;
            }
        })
        .collect();
    // prod e(r_i A_i, B_i) = e(sum r_i alpha, beta) e(sum r_i acc_i, gamma) e(sum r_i C_i, delta),
    // where sum r_i acc_i = (sum r_i) ic[0] + sum_j (sum_i r_i x_ij) ic[j + 1].
    // combined[0] = sum r_i multiplies ic[0]; sum_r needs 128 bits and one per doubling of n.
    let sum_r_bits = 128 + usize::BITS as usize - proofs.len().leading_zeros() as usize;
    let mut combined = vec![Fr::ZERO; pvk.inputs.len()];
    for (ri, inputs) in r.iter().zip(public_inputs) {
        combined[0] += ri;
        for (c, x) in combined[1..].iter_mut().zip(inputs.as_ref()) {
            *c += *ri * x;
        }
    }
    // The four sums are independent: on the threads there are.
    let c_points: Vec<G1Affine> = proofs.iter().map(|p| p.c).collect();
    let ((acc, sum_c), (minus_alpha, b_lines)) = rayon::join(
        || {
            rayon::join(
                || pvk.inputs.combine_vartime(&combined),
                || sluice_msm::msm_g1_vartime(&c_points, &r, None),
            )
        },
        || {
            rayon::join(
                || -mul_short(&pvk.vk.alpha_g1, &combined[0], sum_r_bits),
                || -> Vec<Option<G2Lines>> {
                    proofs.par_iter().map(|p| G2Lines::new(&p.b)).collect()
                },
            )
        },
    );
    let (acc, sum_c) = (acc?, sum_c?);
    let mut g1 = vec![G1Affine::identity(); proofs.len() + 3];
    let scaled_a: Vec<G1Projective> = proofs
        .par_iter()
        .zip(&r)
        .map(|(p, ri)| mul_short(&p.a, ri, 128))
        .chain([acc, sum_c, minus_alpha])
        .collect();
    G1Projective::batch_normalize(&scaled_a, &mut g1);
    let mut pairs: Vec<(G1Affine, Option<&G2Lines>)> = g1[..proofs.len()]
        .iter()
        .zip(&b_lines)
        .map(|(a, b)| (*a, b.as_ref()))
        .collect();
    let n = proofs.len();
    // The right-hand side moved left: e(acc, -gamma) e(C, -delta) e(-alpha, beta).
    pairs.push((g1[n], pvk.neg_gamma.as_ref()));
    pairs.push((g1[n + 1], pvk.neg_delta.as_ref()));
    pairs.push((g1[n + 2], pvk.beta.as_ref()));
    // One shared loop per thread over its share of the pairs, the products multiplied.
    let share = pairs.len().div_ceil(rayon::current_num_threads());
    let f = pairs
        .par_chunks(share)
        .map(multi_miller_loop)
        .reduce(|| multi_miller_loop(&[]), |a, b| a * b);
    Ok(is_one(&f.final_exp()))
}
