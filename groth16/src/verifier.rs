//! The verifier: one shared Miller loop over prepared G2 lines and one final exponentiation
//! per call, the public inputs combined by one MSM over precomputed tables.
//!
//! Everything here handles public data (the key, proofs, public inputs), so it runs in
//! variable time; the batch verifier's random multipliers stay on the verifier's side.

use blst::{blst_fp12, blst_p1, blst_p1_affine};
use ff::{Field, PrimeField};
use group::prime::PrimeCurveAffine;
use group::Curve;
use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use sluice_field::{Fr, G1Affine, G1Projective};

use crate::pairing::{is_one, multi_miller_loop, to_blst, G2Lines};
use crate::params::{Proof, VerifyingKey};
use crate::Groth16Error;

/// Window of the public-input tables: 2^7 multiples per input (12 KiB), 32 additions per
/// input and 255 doublings per verification.
const INPUT_WINDOW_BITS: usize = 8;

/// Above this many public inputs their tables (12 KiB each) are not made and the inputs
/// are combined by a Pippenger MSM instead, which needs no tables and wins at such sizes.
const MAX_TABLED_INPUTS: usize = 1 << 12;

/// A verifying key prepared for verification: e(alpha, beta), the Miller-loop lines of
/// -gamma, -delta and beta, and tables of multiples of the input bases.
#[derive(Clone, Debug)]
pub struct PreparedVerifyingKey {
    vk: VerifyingKey,
    /// e(alpha, beta), after the final exponentiation.
    alpha_beta: blst_fp12,
    neg_gamma: Option<G2Lines>,
    neg_delta: Option<G2Lines>,
    /// For batches, whose alpha term is a pair of its own.
    beta: Option<G2Lines>,
    inputs: InputBases,
}

impl PreparedVerifyingKey {
    /// The key it was prepared from.
    pub fn vk(&self) -> &VerifyingKey {
        &self.vk
    }
}

/// Prepares `vk` for verification: the G2 lines, e(alpha, beta), and the input tables
/// (about 12 KiB per public input up to 4096 inputs).
pub fn prepare_verifying_key(vk: &VerifyingKey) -> PreparedVerifyingKey {
    let beta = G2Lines::new(&vk.beta_g2);
    let alpha_beta = multi_miller_loop(&[(vk.alpha_g1, beta.as_ref())]).final_exp();
    PreparedVerifyingKey {
        vk: vk.clone(),
        alpha_beta,
        neg_gamma: G2Lines::new(&-vk.gamma_g2),
        neg_delta: G2Lines::new(&-vk.delta_g2),
        beta,
        inputs: InputBases::new(&vk.ic, MAX_TABLED_INPUTS),
    }
}

/// The bases of the public inputs, `ic[1..]`, with what combines them fastest.
#[derive(Clone, Debug)]
enum InputBases {
    /// blst's fixed-base tables (`blst_p1s_mult_wbits`): 2^(w-1) multiples of each base.
    Tables {
        count: usize,
        table: Vec<blst_p1_affine>,
    },
    /// Too many for tables: a Pippenger MSM over the bases themselves.
    Plain(Vec<G1Affine>),
}

impl InputBases {
    /// Tables for up to `max_tabled` bases, else the plain bases.
    fn new(ic: &[G1Affine], max_tabled: usize) -> Self {
        let bases = ic.get(1..).unwrap_or(&[]);
        // blst's tables take no identity (the key readers reject those; `ic` built by
        // hand might hold one).
        if bases.len() > max_tabled || bases.iter().any(|p| bool::from(p.is_identity())) {
            return InputBases::Plain(bases.to_vec());
        }
        let points: Vec<blst_p1_affine> = bases.iter().map(to_blst).collect();
        let count = points.len();
        // SAFETY: a pure size computation.
        let bytes =
            unsafe { blst::blst_p1s_mult_wbits_precompute_sizeof(INPUT_WINDOW_BITS, count) };
        let mut table =
            vec![blst_p1_affine::default(); bytes / std::mem::size_of::<blst_p1_affine>()];
        if count > 0 {
            let list = [points.as_ptr(), std::ptr::null()];
            // SAFETY: `table` has the size blst asked for; `list` names `count` contiguous
            // points (a null second entry means "contiguous from the first").
            unsafe {
                blst::blst_p1s_mult_wbits_precompute(
                    table.as_mut_ptr(),
                    INPUT_WINDOW_BITS,
                    list.as_ptr(),
                    count,
                )
            };
        }
        InputBases::Tables { count, table }
    }

    fn len(&self) -> usize {
        match self {
            InputBases::Tables { count, .. } => *count,
            InputBases::Plain(bases) => bases.len(),
        }
    }

    /// `sum_i scalars[i] · ic[i + 1]`; `scalars` has [`len`](Self::len) elements.
    fn combine(&self, scalars: &[Fr]) -> Result<G1Projective, Groth16Error> {
        match self {
            InputBases::Tables { count: 0, .. } => Ok(G1Projective::identity()),
            InputBases::Tables { count, table } => {
                let bytes: Vec<[u8; 32]> = scalars.iter().map(Fr::to_bytes_le).collect();
                let list = [bytes.as_ptr().cast::<u8>(), std::ptr::null()];
                let mut out = blst_p1::default();
                // SAFETY: `table` was made for `count` points at this window; `list` names
                // `count` contiguous 32-byte scalars; a null scratch makes blst use its own.
                unsafe {
                    blst::blst_p1s_mult_wbits(
                        &mut out,
                        table.as_ptr(),
                        INPUT_WINDOW_BITS,
                        *count,
                        list.as_ptr(),
                        Fr::NUM_BITS as usize,
                        std::ptr::null_mut(),
                    )
                };
                Ok(G1Projective::from(out))
            }
            InputBases::Plain(bases) => Ok(sluice_msm::msm_g1_vartime(bases, scalars, None)?),
        }
    }
}

/// The constant one's base, `ic[0]`, after checking that `inputs` has one element per
/// other base (a key with no `ic` at all fits no inputs).
fn check_input_count(pvk: &PreparedVerifyingKey, inputs: &[Fr]) -> Result<G1Affine, Groth16Error> {
    match pvk.vk.ic.first() {
        Some(ic0) if inputs.len() + 1 == pvk.vk.ic.len() => Ok(*ic0),
        _ => Err(Groth16Error::PublicInputCount {
            expected: pvk.vk.ic.len().saturating_sub(1),
            got: inputs.len(),
        }),
    }
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
    let ic0 = check_input_count(pvk, public_inputs)?;
    // e(A, B) · e(acc, -gamma) · e(C, -delta) = e(alpha, beta), as two Miller loops on two
    // threads where there are two: B's lines (G2 arithmetic) and its loop on one, the
    // inputs' MSM and the loop over the prepared pairs on the other (three loops shared
    // by two threads measured slower: BENCHMARKS.md#verification).
    let (ab, rest) = rayon::join(
        || {
            let b = G2Lines::new(&proof.b);
            multi_miller_loop(&[(proof.a, b.as_ref())])
        },
        || -> Result<_, Groth16Error> {
            let acc = (pvk.inputs.combine(public_inputs)? + ic0).to_affine();
            Ok(multi_miller_loop(&[
                (acc, pvk.neg_gamma.as_ref()),
                (proof.c, pvk.neg_delta.as_ref()),
            ]))
        },
    );
    Ok((ab * rest?).final_exp() == pvk.alpha_beta)
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
pub fn verify_proofs_batch<R: RngCore + CryptoRng>(
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
    let Some(first) = public_inputs.first() else {
        return Ok(true);
    };
    let ic0 = check_input_count(pvk, first)?;
    for inputs in public_inputs {
        check_input_count(pvk, inputs)?;
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
    let sum_r: Fr = r.iter().sum();
    let mut combined = vec![Fr::ZERO; pvk.inputs.len()];
    for (ri, inputs) in r.iter().zip(public_inputs) {
        for (c, x) in combined.iter_mut().zip(inputs) {
            *c += *ri * x;
        }
    }
    // The four sums are independent: on the threads there are.
    let c_points: Vec<G1Affine> = proofs.iter().map(|p| p.c).collect();
    let ((acc, sum_c), (minus_alpha, b_lines)) = rayon::join(
        || {
            rayon::join(
                || -> Result<_, Groth16Error> {
                    Ok(pvk.inputs.combine(&combined)? + ic0.to_curve() * sum_r)
                },
                || sluice_msm::msm_g1_vartime(&c_points, &r, None),
            )
        },
        || {
            rayon::join(
                || -(pvk.vk.alpha_g1.to_curve() * sum_r),
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
        .map(|(p, ri)| p.a.to_curve() * ri)
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

#[cfg(test)]
mod tests {
    use super::*;
    use group::Group;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    /// Both ways of combining the inputs (tables, plain Pippenger) equal the naive sum, for
    /// 0, 1, 5 and 33 bases and scalars 0, 1, -1 and random; a base at the identity takes
    /// the plain path and still sums right.
    #[test]
    fn input_combinations_equal_the_naive_sum() {
        let seed = 248;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        for n in [0usize, 1, 5, 33] {
            let mut ic: Vec<G1Affine> = (0..=n)
                .map(|_| G1Projective::random(&mut rng).to_affine())
                .collect();
            let mut scalars: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
            for (i, edge) in [Fr::ZERO, Fr::ONE, -Fr::ONE].into_iter().enumerate() {
                if let Some(s) = scalars.get_mut(i) {
                    *s = edge;
                }
            }
            for with_identity in [false, true] {
                if with_identity && n > 1 {
                    ic[2] = G1Affine::identity();
                }
                let naive: G1Projective = scalars.iter().zip(&ic[1..]).map(|(s, p)| *p * s).sum();
                for max_tabled in [usize::MAX, 0] {
                    let bases = InputBases::new(&ic, max_tabled);
                    assert_eq!(bases.len(), n);
                    let tabled = matches!(bases, InputBases::Tables { .. });
                    assert_eq!(tabled, n <= max_tabled && !(with_identity && n > 1));
                    assert_eq!(
                        bases.combine(&scalars).unwrap(),
                        naive,
                        "seed {seed}, {n} bases, tables {tabled}"
                    );
                }
            }
        }
    }
}
