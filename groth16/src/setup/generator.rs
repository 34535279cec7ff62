//! The Groth16 trusted setup (for tests and private use): toxic waste in, parameters out,
//! its query points made in constant time ([`FixedBase`]) or, for test parameters, in
//! variable time (`vartime.rs`'s [`VartimeTable`]).

use bellpepper_core::{Circuit, SynthesisError};
use ff::{Field, PrimeField};
use group::{Curve, Group};
use rand_core::RngCore;
use rayon::prelude::*;
use sluice_field::{Fr, FrCompatible, G1Affine, G1Projective, G2Affine, G2Projective};
use std::ops::Neg;

use subtle::{ConditionallySelectable, ConstantTimeEq};

use crate::error::Groth16Error;
use crate::params::keys::{Parameters, VerifyingKey};
use crate::progress::{self, ProgressEvent, Task};
use crate::r1cs::domain::{domain_size, omega};
use crate::setup::vartime::{width_for, FixedBaseMul, VartimeTable};
use crate::synthesis::keypair::{Column, KeypairAssembly};
use std::sync::atomic::{AtomicU64, Ordering};

/// Scalars are converted to points in chunks of this many, per rayon task.
const CHUNK: usize = 1024;

/// The toxic waste of a setup. Its fields are overwritten with zeros when it is dropped.
pub struct ToxicWaste {
    /// alpha.
    pub alpha: Fr,
    /// beta.
    pub beta: Fr,
    /// gamma.
    pub gamma: Fr,
    /// delta.
    pub delta: Fr,
    /// tau, the secret evaluation point.
    pub tau: Fr,
}

impl ToxicWaste {
    /// Draws all five from `rng` (which must be a CSPRNG for a real setup).
    pub fn random<R: RngCore>(rng: &mut R) -> Self {
        ToxicWaste {
            alpha: Fr::random(&mut *rng),
            beta: Fr::random(&mut *rng),
            gamma: Fr::random(&mut *rng),
            delta: Fr::random(&mut *rng),
            tau: Fr::random(&mut *rng),
        }
    }
}

impl Drop for ToxicWaste {
    fn drop(&mut self) {
        wipe(&mut [
            &mut self.alpha,
            &mut self.beta,
            &mut self.gamma,
            &mut self.delta,
            &mut self.tau,
        ]);
    }
}

/// Overwrites secrets with zero in a way the optimiser keeps.
fn wipe(secrets: &mut [&mut Fr]) {
    for s in secrets.iter_mut() {
        // SAFETY: `s` is a valid, aligned, exclusive reference to an `Fr`.
        unsafe { std::ptr::write_volatile(&mut **s, Fr::ZERO) };
    }
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

/// Overwrites a vector of secrets with zeros.
fn wipe_vec(v: &mut [Fr]) {
    for s in v.iter_mut() {
        // SAFETY: as in `wipe`.
        unsafe { std::ptr::write_volatile(s, Fr::ZERO) };
    }
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

/// A fixed-base table for constant-time scalar multiplication: signed windows of `W`
/// bits, `rows[j][k] = (k + 1)·2^(W·j)·base` in affine form. A multiplication selects one
/// entry per window by scanning the whole row with constant-time selects and adds it with a
/// (constant-time, complete) mixed addition, so neither memory access nor control flow
/// depends on the scalar.
struct FixedBase<G: Curve> {
    rows: Vec<Vec<G::AffineRepr>>,
    identity: G::AffineRepr,
}

const W: usize = 5;
const HALF: usize = 1 << (W - 1);

impl<G> FixedBase<G>
where
    G: Curve<Scalar = Fr>,
    G::AffineRepr: ConditionallySelectable + Neg<Output = G::AffineRepr> + Default + Copy,
{
    fn new(base: G) -> Self {
        // Signed digits of a 255-bit scalar need one extra window for the last carry.
        let windows = 255usize.div_ceil(W) + 1;
        let mut rows = Vec::with_capacity(windows);
        let mut p = base;
        for _ in 0..windows {
            let mut row = Vec::with_capacity(HALF);
            let mut acc = p;
            for _ in 0..HALF {
                row.push(acc);
                acc += p;
            }
            let mut affine = vec![G::AffineRepr::default(); HALF];
            G::batch_normalize(&row, &mut affine);
            rows.push(affine);
            for _ in 0..W {
                p = p.double();
            }
        }
        FixedBase {
            rows,
            identity: G::identity().to_affine(),
        }
    }

    /// `s·base` in constant time.
    fn mul(&self, s: &Fr) -> G {
        let bytes = s.to_repr();
        // Bit positions are public; only the bits' values are secret.
        let bit = |i: usize| -> u32 {
            bytes
                .get(i / 8)
                .map_or(0, |b| u32::from((b >> (i % 8)) & 1))
        };
        let mut acc = G::identity();
        let mut carry = 0u32;
        for (j, row) in self.rows.iter().enumerate() {
            let mut raw = 0u32;
            for b in 0..W {
                raw |= bit(j * W + b) << b;
            }
            // Recode to [-2^(W-1), 2^(W-1)) without branches.
            let d = raw + carry;
            carry = (d + HALF as u32) >> W;
            let signed = d as i32 - ((carry as i32) << W);
            let negative = subtle::Choice::from((signed >> 31) as u8 & 1);
            let abs = signed.unsigned_abs();
            let mut sel = self.identity;
            for (k, e) in row.iter().enumerate() {
                sel.conditional_assign(e, abs.ct_eq(&(k as u32 + 1)));
            }
            let neg = -sel;
            sel.conditional_assign(&neg, negative);
            acc += sel;
        }
        acc
    }
}

impl<G> FixedBaseMul for FixedBase<G>
where
    G: Curve<Scalar = Fr>,
    G::AffineRepr: ConditionallySelectable + Neg<Output = G::AffineRepr> + Default + Copy,
{
    type Point = G;

    fn multiply(&self, s: &Fr) -> G {
        self.mul(s)
    }
}

/// How the setup multiplies its generators by the secret scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Multiplication {
    /// [`FixedBase`]: constant time, for real parameters.
    ConstantTime,
    /// [`VartimeTable`]: several times faster, variable time in the toxic waste; for test
    /// parameters only.
    Vartime,
}

/// Setup's progress: query points made, of all of them ([`Task::Setup`]).
struct SetupProgress {
    done: AtomicU64,
    total: u64,
}

impl SetupProgress {
    fn new(total: usize) -> Self {
        let p = SetupProgress {
            done: AtomicU64::new(0),
            total: total as u64,
        };
        p.add(0, "");
        p
    }

    fn add(&self, points: usize, query: &str) {
        let done = self.done.fetch_add(points as u64, Ordering::Relaxed) + points as u64;
        progress::report(&ProgressEvent {
            task: Task::Setup,
            what: query,
            done,
            total: self.total,
        });
    }
}

/// `scalars[i]·base` for every i, in parallel, as affine points (`query`'s, for progress).
fn fixed_base_batch<T>(
    table: &T,
    scalars: &[Fr],
    progress: &SetupProgress,
    query: &str,
) -> Vec<<T::Point as Curve>::AffineRepr>
where
    T: FixedBaseMul + Sync,
    T::Point: Send,
    <T::Point as Curve>::AffineRepr: Default + Copy + Send,
{
    let mut out = vec![<T::Point as Curve>::AffineRepr::default(); scalars.len()];
    out.par_chunks_mut(CHUNK)
        .zip(scalars.par_chunks(CHUNK))
        .for_each(|(out, scalars)| {
            let points: Vec<T::Point> = scalars.iter().map(|s| table.multiply(s)).collect();
            T::Point::batch_normalize(&points, out);
            progress.add(scalars.len(), query);
        });
    out
}

/// `1, w, w^2, ..., w^(n-1)` in parallel chunks. Constant time in `w` (only multiplications;
/// the starting power of each chunk has a public exponent).
fn powers_of(w: Fr, n: usize) -> Vec<Fr> {
    let mut out = vec![Fr::ZERO; n];
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let mut p = w.pow_vartime([(c * CHUNK) as u64]);
            for x in chunk {
                *x = p;
                p *= w;
            }
        });
    out
}

/// The Lagrange basis of the domain of size `2^log_n` evaluated at `tau`, given
/// `z_tau = tau^n - 1`: `L_i(tau) = Z(tau)/n · w^i / (tau - w^i)`. This is what an inverse
/// NTT of the powers of tau computes (bellperson's way), in O(n) with one batch inversion.
fn lagrange_at(tau: Fr, z_tau: Fr, log_n: u32) -> Result<Vec<Fr>, Groth16Error> {
    let n = 1usize << log_n;
    let w_pows = powers_of(omega(log_n)?, n);
    let mut lagrange: Vec<Fr> = w_pows.par_iter().map(|wi| tau - wi).collect();
    if !bool::from(Fr::batch_invert(&mut lagrange)) {
        wipe_vec(&mut lagrange);
        return Err(Groth16Error::DegenerateSetup(
            "tau is a root of unity of the domain",
        ));
    }
    // n < r, so n is invertible.
    let n_inv = Fr::from(n as u64).invert().unwrap_or(Fr::ZERO);
    let mut z_over_n = z_tau * n_inv;
    lagrange
        .par_iter_mut()
        .zip(w_pows.par_iter())
        .for_each(|(l, wi)| *l *= z_over_n * wi);
    wipe(&mut [&mut z_over_n]);
    Ok(lagrange)
}

/// [`generate_random_parameters`](crate::generate_random_parameters) for circuits over any
/// `S`.
pub(crate) fn generate_random_parameters<S, C, R>(
    circuit: C,
    rng: &mut R,
) -> Result<Parameters, Groth16Error>
where
    S: FrCompatible,
    C: Circuit<S>,
    R: RngCore,
{
    random_setup(circuit, rng, Multiplication::ConstantTime)
}

/// [`generate_random_parameters_vartime`](crate::generate_random_parameters_vartime) for
/// circuits over any `S`.
pub(crate) fn generate_random_parameters_vartime<S, C, R>(
    circuit: C,
    rng: &mut R,
) -> Result<Parameters, Groth16Error>
where
    S: FrCompatible,
    C: Circuit<S>,
    R: RngCore,
{
    random_setup(circuit, rng, Multiplication::Vartime)
}

/// The random setups: the generators, then the toxic waste, drawn from `rng`.
fn random_setup<S, C, R>(
    circuit: C,
    rng: &mut R,
    mode: Multiplication,
) -> Result<Parameters, Groth16Error>
where
    S: FrCompatible,
    C: Circuit<S>,
    R: RngCore,
{
    let g1 = G1Projective::random(&mut *rng);
    let g2 = G2Projective::random(&mut *rng);
    let toxic = ToxicWaste::random(rng);
    setup(circuit, g1, g2, &toxic, mode)
}

/// [`generate_parameters`](crate::generate_parameters) for circuits over any `S`. Which
/// query points are left out (variables a matrix never uses) is decided by the circuit's
/// structure, never by a secret value; intermediate secret vectors are wiped.
pub(crate) fn generate_parameters<S: FrCompatible, C: Circuit<S>>(
    circuit: C,
    g1: G1Projective,
    g2: G2Projective,
    toxic: &ToxicWaste,
) -> Result<Parameters, Groth16Error> {
    setup(circuit, g1, g2, toxic, Multiplication::ConstantTime)
}

/// [`generate_parameters_vartime`](crate::generate_parameters_vartime) for circuits over any
/// `S`: the same parameters as [`generate_parameters`], their query points multiplied in
/// variable time.
pub(crate) fn generate_parameters_vartime<S: FrCompatible, C: Circuit<S>>(
    circuit: C,
    g1: G1Projective,
    g2: G2Projective,
    toxic: &ToxicWaste,
) -> Result<Parameters, Groth16Error> {
    setup(circuit, g1, g2, toxic, Multiplication::Vartime)
}

/// The query points of one setup.
struct QueryPoints {
    h: Vec<G1Affine>,
    ic: Vec<G1Affine>,
    l: Vec<G1Affine>,
    a: Vec<G1Affine>,
    b_g1: Vec<G1Affine>,
    b_g2: Vec<G2Affine>,
}

/// The query points from their scalars (`[h, ic, l, a, b]`) with tables `t1` (of g1) and
/// `t2` (of g2).
fn query_points<T1, T2>(
    t1: &T1,
    t2: &T2,
    [h, ic, l, a, b]: [&[Fr]; 5],
    progress: &SetupProgress,
) -> QueryPoints
where
    T1: FixedBaseMul<Point = G1Projective> + Sync,
    T2: FixedBaseMul<Point = G2Projective> + Sync,
{
    QueryPoints {
        h: fixed_base_batch(t1, h, progress, "h"),
        ic: fixed_base_batch(t1, ic, progress, "ic"),
        l: fixed_base_batch(t1, l, progress, "l"),
        a: fixed_base_batch(t1, a, progress, "a"),
        b_g1: fixed_base_batch(t1, b, progress, "b_g1"),
        b_g2: fixed_base_batch(t2, b, progress, "b_g2"),
    }
}

/// The setup, its query points multiplied as `mode` says.
fn setup<S: FrCompatible, C: Circuit<S>>(
    circuit: C,
    g1: G1Projective,
    g2: G2Projective,
    toxic: &ToxicWaste,
    mode: Multiplication,
) -> Result<Parameters, Groth16Error> {
    let started = std::time::Instant::now();
    let assembly = KeypairAssembly::synthesize(circuit)?;
    let (log_n, n) = domain_size(assembly.num_constraints())?;
    log::info!(
        "setup: {} inputs, {} aux, {} constraints, domain 2^{log_n}{}",
        assembly.num_inputs(),
        assembly.num_aux(),
        assembly.num_constraints(),
        match mode {
            Multiplication::ConstantTime => "",
            Multiplication::Vartime => " (variable time: test parameters)",
        }
    );
    // Unconstrained auxiliary variables would make an L point the identity.
    if (0..assembly.num_aux()).any(|i| assembly.aux.iter().all(|m| m[i].is_empty())) {
        return Err(SynthesisError::UnconstrainedVariable.into());
    }

    let gamma_inv: Option<Fr> = toxic.gamma.invert().into();
    let delta_inv: Option<Fr> = toxic.delta.invert().into();
    let (Some(mut gamma_inv), Some(mut delta_inv)) = (gamma_inv, delta_inv) else {
        return Err(Groth16Error::DegenerateSetup("gamma or delta is zero"));
    };
    let tau = toxic.tau;

    // Powers of tau (the exponents are public; tau is only multiplied, in constant time).
    let mut powers = powers_of(tau, n);
    // Z(tau) = tau^n - 1.
    let mut z_tau = powers[n - 1] * tau - Fr::ONE;

    // H query scalars: tau^i · Z(tau) / delta for i < n - 1.
    let mut coeff = z_tau * delta_inv;
    let mut h_scalars: Vec<Fr> = powers[..n - 1].par_iter().map(|p| *p * coeff).collect();
    wipe_vec(&mut powers);
    drop(powers);

    let mut lagrange = lagrange_at(tau, z_tau, log_n)?;

    // Evaluate every variable's A, B, C columns at tau.
    let eval = |col: &Column| -> Fr { col.iter().map(|(coeff, row)| lagrange[*row] * coeff).sum() };
    let (alpha, beta) = (toxic.alpha, toxic.beta);
    // (A, B, ext) per variable, where ext = (beta·A + alpha·B + C) · inv.
    let evaluate = |m: &[Vec<Column>; 3], inv: Fr| -> (Vec<Fr>, Vec<Fr>, Vec<Fr>) {
        let rows: Vec<(Fr, Fr, Fr)> = (0..m[0].len())
            .into_par_iter()
            .map(|i| {
                let (a, b, c) = (eval(&m[0][i]), eval(&m[1][i]), eval(&m[2][i]));
                (a, b, (beta * a + alpha * b + c) * inv)
            })
            .collect();
        let mut out = (Vec::new(), Vec::new(), Vec::new());
        for (i, (a, b, e)) in rows.into_iter().enumerate() {
            // Left-out points are decided by structure (the variable never occurs).
            if !m[0][i].is_empty() {
                out.0.push(a);
            }
            if !m[1][i].is_empty() {
                out.1.push(b);
            }
            out.2.push(e);
        }
        out
    };
    let (mut a_in, mut b_in, mut ic_scalars) = evaluate(&assembly.inputs, gamma_inv);
    let (mut a_aux, mut b_aux, mut l_scalars) = evaluate(&assembly.aux, delta_inv);
    wipe_vec(&mut lagrange);
    a_in.append(&mut a_aux);
    b_in.append(&mut b_aux);
    let (mut a_scalars, mut b_scalars) = (a_in, b_in);

    let scalars: [&[Fr]; 5] = [&h_scalars, &ic_scalars, &l_scalars, &a_scalars, &b_scalars];
    let g1_points: usize = scalars.iter().map(|s| s.len()).sum();
    let progress = SetupProgress::new(g1_points + b_scalars.len());
    let QueryPoints {
        h,
        ic,
        l,
        a,
        b_g1,
        b_g2,
    } = match mode {
        Multiplication::ConstantTime => {
            query_points(&FixedBase::new(g1), &FixedBase::new(g2), scalars, &progress)
        }
        Multiplication::Vartime => {
            let tables = std::time::Instant::now();
            let t1 = VartimeTable::new(g1, width_for::<G1Projective>(g1_points));
            let t2 = VartimeTable::new(g2, width_for::<G2Projective>(b_scalars.len()));
            log::debug!(
                "setup: variable-time tables of {} and {} bits ({} and {} points) in {:.2} s",
                t1.width(),
                t2.width(),
                t1.table_len(),
                t2.table_len(),
                tables.elapsed().as_secs_f64()
            );
            query_points(&t1, &t2, scalars, &progress)
        }
    };
    for v in [
        &mut h_scalars,
        &mut ic_scalars,
        &mut l_scalars,
        &mut a_scalars,
        &mut b_scalars,
    ] {
        wipe_vec(v);
    }
    wipe(&mut [&mut gamma_inv, &mut delta_inv, &mut z_tau, &mut coeff]);

    let vk = VerifyingKey {
        alpha_g1: (g1 * toxic.alpha).to_affine(),
        beta_g1: (g1 * toxic.beta).to_affine(),
        beta_g2: (g2 * toxic.beta).to_affine(),
        gamma_g2: (g2 * toxic.gamma).to_affine(),
        delta_g1: (g1 * toxic.delta).to_affine(),
        delta_g2: (g2 * toxic.delta).to_affine(),
        ic,
    };
    log::info!(
        "setup: done in {:.1} s ({} G1 and {} G2 query points)",
        started.elapsed().as_secs_f64(),
        h.len() + l.len() + a.len() + b_g1.len() + vk.ic.len(),
        b_g2.len()
    );
    Ok(Parameters {
        vk,
        h,
        l,
        a,
        b_g1,
        b_g2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    #[test]
    fn fixed_base_matches_scalar_multiplication() {
        let seed = 31;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let g1 = G1Projective::random(&mut rng);
        let g2 = G2Projective::random(&mut rng);
        let (t1, t2) = (FixedBase::new(g1), FixedBase::new(g2));
        let mut scalars = vec![
            Fr::ZERO,
            Fr::ONE,
            -Fr::ONE,
            Fr::from(HALF as u64),
            -Fr::from(2),
        ];
        scalars.extend((0..40).map(|_| Fr::random(&mut rng)));
        scalars.push(Fr::from(u64::MAX));
        for s in &scalars {
            assert_eq!(t1.mul(s), g1 * s, "seed {seed}, scalar {s:?}");
            assert_eq!(t2.mul(s), g2 * s, "seed {seed}, scalar {s:?}");
        }
        let progress = SetupProgress::new(scalars.len());
        let batch = fixed_base_batch(&t1, &scalars, &progress, "test");
        assert_eq!(progress.done.load(Ordering::Relaxed), scalars.len() as u64);
        for (p, s) in batch.iter().zip(&scalars) {
            assert_eq!(*p, (g1 * s).to_affine(), "seed {seed}");
        }
    }

    #[test]
    fn lagrange_basis_matches_naive_interpolation() {
        let seed = 32;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        for log_n in 0..5u32 {
            let n = 1usize << log_n;
            let tau = Fr::random(&mut rng);
            let w = omega(log_n).unwrap();
            assert_eq!(w.pow_vartime([n as u64]), Fr::ONE);
            if n > 1 {
                assert_ne!(w.pow_vartime([n as u64 / 2]), Fr::ONE, "primitive root");
            }
            let z = tau.pow_vartime([n as u64]) - Fr::ONE;
            let fast = lagrange_at(tau, z, log_n).unwrap();
            let pts: Vec<Fr> = (0..n).map(|i| w.pow_vartime([i as u64])).collect();
            for (i, l) in fast.iter().enumerate() {
                // prod_{j != i} (tau - w^j) / (w^i - w^j)
                let naive = (0..n).filter(|&j| j != i).fold(Fr::ONE, |acc, j| {
                    acc * (tau - pts[j]) * (pts[i] - pts[j]).invert().unwrap()
                });
                assert_eq!(*l, naive, "seed {seed}, n {n}, i {i}");
            }
        }
        // tau on the domain is refused rather than divided by zero.
        let w = omega(3).unwrap();
        assert!(matches!(
            lagrange_at(w, Fr::ZERO, 3),
            Err(Groth16Error::DegenerateSetup(_))
        ));
    }
}
