//! Streaming H: the H computation for a partition whose vectors do not fit in device memory.
//!
//! The a and b evaluations stay on the host (tracked as [`MemoryKind::Host`]); the device
//! holds at most a configured budget at once. Two schemes, by budget:
//!
//! - **Two vectors** (a budget of at least two full vectors): whole-vector transforms, one
//!   vector at a time, with c's coset evaluations kept on the device and the product
//!   A(gx)·B(gx) formed on the host, in a's memory ([`compute_h_two_vectors`]). Host: a and
//!   b only; device: two vectors; 5 vectors up and 2 down.
//! - **Four-step** (less): described below. Host: 3 vectors and a chunk; 9 vectors up and
//!   8 down.
//!
//! # The four-step scheme
//! Every transform is a four-step (Bailey) NTT
//! over the host vector viewed as an `n1 x n2` row-major matrix (`n1 <= n2`): a *column
//! pass* gathers a chunk of strided columns into a contiguous staging buffer, uploads it,
//! runs [`ComputeBackend::segment_powers`] / [`ComputeBackend::transform_segments`] and
//! scatters the result back; a *row pass* uploads a chunk of contiguous rows as they are.
//!
//! # Passes and orders
//!
//! A forward four-step from natural order ends in *transposed* order (position `k1 n2 + k2`
//! holds index `k1 + n1 k2`), and the mirrored four-step (rows, twiddle, columns) takes
//! transposed order back to natural. The twiddle of both is `omega^(row * column)` at matrix
//! position `(row, column)`. So the prover's three transforms chain with no transpose:
//!
//! 1. columns: `c = a ∘ b` is formed on the device, then for a, b, c a column iNTT and the
//!    twiddle `omega^-(i2 k1)` (coefficients left in transposed order after pass 2);
//! 2. rows: row iNTT, the coset factor `g^(n1 k2)` (its `g^k1` half is folded into pass 3's
//!    twiddle), row NTT;
//! 3. columns: twiddle `(g omega^j2)^k1` and column NTT give the coset evaluations in
//!    natural order; `h = (a b - c) / Z` pointwise; then the first half of the coset iNTT
//!    (column iNTT and twiddle `(g^-1 omega^-i2)^j1`);
//! 4. rows: row iNTT and `g^-(n1 j2)`; each row chunk is scattered into natural order (the
//!    one transpose of the scheme, done while downloading) for the h MSM.
//!
//! # Residency
//!
//! Device: three chunk buffers of [`StreamingPlan::chunk_len`] scalars plus one segment (the
//! temporary a backend's default segmented transform may use) — at most the budget.
//! Host: a and b (two vectors), plus a third vector for c's intermediate from pass 1 to
//! pass 3 and one chunk of staging. The third vector is not avoidable in this scheme: after
//! pass 1 the a, b and c paths are three independent full vectors that pass 2 needs at once
//! (c's transform cannot be formed from a's and b's transforms), so streaming holds
//! **3 vectors + one chunk** on the host while its H runs; a waiting partition holds 2.

use std::ops::Range;

use ff::{Field, PrimeField};
use rayon::prelude::*;
use sluice_backend::{
    BackendError, ComputeBackend, HostVector, MemoryKind, MemoryTracker, NttOrder, Transform,
};
use sluice_field::Fr;

use crate::error::Groth16Error;
use crate::r1cs::domain::omega;

const FR_BYTES: u64 = std::mem::size_of::<Fr>() as u64;
const NN: NttOrder = NttOrder::NaturalToNatural;

/// How a streaming H computation runs on a domain of `n = n1 * n2` points: with two whole
/// vectors on the device, or four-step over chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamingPlan {
    log_n: u32,
    log_n1: u32,
    chunk_len: usize,
    two_vectors: bool,
}

impl StreamingPlan {
    /// The device buffers a plan holds at once: three chunks of a, b and c.
    const BUFFERS: u64 = 3;

    /// The plan for a domain of `n` points (a power of two, at least 2) whose device working
    /// set stays within `device_budget_bytes`: the two-vector scheme where two full vectors
    /// fit, else the four-step scheme with the largest chunk (a power of two, whole rows and
    /// whole columns) such that three chunks and one segment fit.
    ///
    /// Returns [`BackendError::OutOfMemory`] (device) when the budget cannot hold even the
    /// smallest working set, naming the bytes that would be needed.
    pub fn new(n: usize, device_budget_bytes: u64) -> Result<Self, Groth16Error> {
        if !n.is_power_of_two() || n < 2 {
            return Err(BackendError::InvalidInput(format!(
                "streaming H needs a power-of-two domain of at least 2 points, got {n}"
            ))
            .into());
        }
        let log_n = n.trailing_zeros();
        let log_n1 = log_n / 2;
        let n2 = n >> log_n1;
        if 2 * n as u64 * FR_BYTES <= device_budget_bytes {
            return Ok(StreamingPlan {
                log_n,
                log_n1,
                chunk_len: n,
                two_vectors: true,
            });
        }
        let fits = |chunk: usize| {
            (Self::BUFFERS * chunk as u64 + n2 as u64) * FR_BYTES <= device_budget_bytes
        };
        // The smallest chunk holding whole rows and whole columns is one row (n2 >= n1).
        if !fits(n2) {
            return Err(BackendError::OutOfMemory {
                kind: MemoryKind::Device,
                what: format!("streaming H working set for a 2^{log_n} domain"),
                requested: (Self::BUFFERS + 1) * n2 as u64 * FR_BYTES,
                available: device_budget_bytes,
            }
            .into());
        }
        let mut chunk_len = n2;
        while chunk_len < n && fits(chunk_len * 2) {
            chunk_len *= 2;
        }
        Ok(StreamingPlan {
            log_n,
            log_n1,
            chunk_len,
            two_vectors: false,
        })
    }

    /// Whether the plan uses the two-vector scheme (see the module docs).
    pub fn holds_two_vectors(&self) -> bool {
        self.two_vectors
    }

    /// The domain size n.
    pub fn domain_size(&self) -> usize {
        1 << self.log_n
    }

    /// Scalars per device chunk (n in the two-vector scheme).
    pub fn chunk_len(&self) -> usize {
        self.chunk_len
    }

    /// Column length n1 (the number of rows).
    pub fn column_len(&self) -> usize {
        1 << self.log_n1
    }

    /// Row length n2 (the number of columns).
    pub fn row_len(&self) -> usize {
        1 << (self.log_n - self.log_n1)
    }

    /// The most device bytes the H computation holds at once: two vectors, or three chunks
    /// and one segment. Tables a backend caches across calls (the OpenCL backend's
    /// twiddles, O(√n) per size) are outside this figure, as are the MSMs' temporaries
    /// ([`ComputeBackend::msm_scratch_bytes`]), which the pipeline's planner adds.
    pub fn device_bytes(&self) -> u64 {
        if self.two_vectors {
            return 2 * self.domain_size() as u64 * FR_BYTES;
        }
        (Self::BUFFERS * self.chunk_len as u64 + self.row_len() as u64) * FR_BYTES
    }

    /// Host bytes the H computation adds to the caller's a and b: none in the two-vector
    /// scheme; c's intermediate and one chunk of staging in the four-step scheme.
    pub fn extra_host_bytes(&self) -> u64 {
        if self.two_vectors {
            return 0;
        }
        (self.domain_size() + self.chunk_len) as u64 * FR_BYTES
    }
}

/// Columns per gather/scatter tile: each task moves 16-element (512-byte) runs, so strided
/// accesses touch a cache line and a page once per run rather than once per element.
const TILE: usize = 16;

/// `out[j * col_len + r] = x[r * row_len + c0 + j]` for `j < out.len() / col_len`,
/// `r < col_len`: columns `c0..` of a row-major matrix, each made contiguous. Tiled: a task
/// owns [`TILE`] output columns and reads [`TILE`] consecutive elements of every row.
fn gather_columns(x: &[Fr], row_len: usize, c0: usize, col_len: usize, out: &mut [Fr]) {
    out.par_chunks_mut(TILE * col_len)
        .enumerate()
        .for_each(|(t, block)| {
            let first = c0 + t * TILE;
            let width = block.len() / col_len;
            for r in 0..col_len {
                let run = &x[r * row_len + first..][..width];
                for (k, v) in run.iter().enumerate() {
                    block[k * col_len + r] = *v;
                }
            }
        });
}

/// The inverse of [`gather_columns`]: writes contiguous columns back to `c0..`. Tiled: a
/// task owns [`TILE`] rows and reads [`TILE`] consecutive elements of every column.
fn scatter_columns(x: &mut [Fr], row_len: usize, c0: usize, col_len: usize, inp: &[Fr]) {
    let w = inp.len() / col_len;
    x[..col_len * row_len]
        .par_chunks_mut(TILE * row_len)
        .enumerate()
        .for_each(|(t, rows)| {
            let first = t * TILE;
            let height = rows.len() / row_len;
            for j in 0..w {
                let run = &inp[j * col_len + first..][..height];
                for (k, v) in run.iter().enumerate() {
                    rows[k * row_len + c0 + j] = *v;
                }
            }
        });
}

/// The streaming H computation's shape and host staging (one chunk).
struct Streamer<'a, B: ComputeBackend> {
    backend: &'a B,
    n: usize,
    n1: usize,
    n2: usize,
    chunk: usize,
    staging: HostVector,
}

impl<B: ComputeBackend> Streamer<'_, B> {
    /// First columns of each column chunk.
    fn column_chunks(&self) -> impl Iterator<Item = usize> {
        (0..self.n2).step_by(self.chunk / self.n1)
    }

    /// Element ranges of each row chunk (whole rows).
    fn row_chunks(&self) -> impl Iterator<Item = Range<usize>> {
        let chunk = self.chunk;
        (0..self.n).step_by(chunk).map(move |s| s..s + chunk)
    }

    /// Uploads columns `c0..` of `x` into `dev`, each column one contiguous segment.
    fn upload_columns(
        &mut self,
        x: &[Fr],
        c0: usize,
        dev: &mut B::FrBuffer,
    ) -> Result<(), BackendError> {
        gather_columns(x, self.n2, c0, self.n1, &mut self.staging);
        self.backend.write_fr(dev, 0, &self.staging)
    }

    /// Downloads `dev` into columns `c0..` of `x`.
    fn download_columns(
        &mut self,
        dev: &B::FrBuffer,
        x: &mut [Fr],
        c0: usize,
    ) -> Result<(), BackendError> {
        self.backend.read_fr(dev, 0, &mut self.staging)?;
        scatter_columns(x, self.n2, c0, self.n1, &self.staging);
        Ok(())
    }
}

/// The coefficients of h = (a·b - c) / Z in natural order (n of them, the last zero), from
/// the evaluations `a` and `b` (n each, zero-padded), with c = a ∘ b formed on the device,
/// holding two full vectors on the device and nothing on the host beyond a and b: c's
/// coset evaluations stay on the device while a's and b's are computed one after the
/// other in the second buffer and downloaded, their product is formed on the host in a's
/// memory and uploaded, and h is left on the device (for its MSM). Consumes a and b.
pub fn compute_h_two_vectors<B: ComputeBackend>(
    backend: &B,
    mut a: HostVector,
    mut b: HostVector,
) -> Result<B::FrBuffer, Groth16Error> {
    let n = a.len();
    if !n.is_power_of_two() || n < 2 {
        return Err(BackendError::InvalidInput(format!(
            "two-vector H needs a power-of-two domain of at least 2 points, got {n}"
        ))
        .into());
    }
    sluice_backend::check_len("two-vector H: b", n, b.len())?;
    let mut dc = backend.alloc_fr("two-vector H: c", n)?;
    let mut dx = backend.alloc_fr("two-vector H: a, b, h", n)?;
    backend.write_fr(&mut dc, 0, &a)?;
    backend.write_fr(&mut dx, 0, &b)?;
    backend.mul_assign(&mut dc, &dx)?;
    backend.domain_to_coset(&mut dc)?;
    backend.write_fr(&mut dx, 0, &a)?;
    backend.domain_to_coset(&mut dx)?;
    backend.read_fr(&dx, 0, &mut a)?;
    backend.write_fr(&mut dx, 0, &b)?;
    backend.domain_to_coset(&mut dx)?;
    backend.read_fr(&dx, 0, &mut b)?;
    a.par_iter_mut()
        .zip(b.par_iter())
        .for_each(|(x, y)| *x *= y);
    drop(b);
    backend.write_fr(&mut dx, 0, &a)?;
    drop(a);
    backend.sub_assign(&mut dx, &dc)?;
    drop(dc);
    quotient_to_h(backend, &mut dx, n)?;
    Ok(dx)
}

/// 1 / Z on the coset gH of a domain of `n` points: Z(x) = x^n - 1 is the constant g^n - 1
/// there.
fn z_inv_on_coset(n: usize) -> Result<Fr, Groth16Error> {
    inverse(
        Fr::MULTIPLICATIVE_GENERATOR.pow_vartime([n as u64]) - Fr::ONE,
        "Z on the coset",
    )
}

/// h's coefficients, in place, from a·b - c on the coset gH: divided by Z, then the coset
/// inverse NTT.
pub(crate) fn quotient_to_h<B: ComputeBackend>(
    backend: &B,
    buf: &mut B::FrBuffer,
    n: usize,
) -> Result<(), Groth16Error> {
    backend.coset_intt_scaled(buf, z_inv_on_coset(n)?)?;
    Ok(())
}

/// The coefficients of h = (a·b - c) / Z in natural order (n of them, the last zero), from
/// the evaluations `a` and `b` (each exactly `plan.domain_size()` long, zero-padded), with
/// `c = a ∘ b` formed on the device. The device holds at most
/// [`plan.device_bytes()`](StreamingPlan::device_bytes) at once; see the module docs for
/// the schemes, passes and the host residency. Consumes a and b; h is returned in b's
/// memory (four-step) or in a vector of its size allocated once a and b are freed
/// (two vectors). The host intermediates are counted in `host` (as [`MemoryKind::Host`]).
pub fn compute_h_streaming<B: ComputeBackend>(
    backend: &B,
    host: &MemoryTracker,
    mut a: HostVector,
    mut b: HostVector,
    plan: &StreamingPlan,
) -> Result<HostVector, Groth16Error> {
    let n = plan.domain_size();
    for (what, v) in [("streaming H: a", &a), ("streaming H: b", &b)] {
        if v.len() != n {
            return Err(BackendError::LengthMismatch {
                what,
                expected: n,
                got: v.len(),
            }
            .into());
        }
    }
    if plan.holds_two_vectors() {
        // h comes back into a second allocation of b's size, after a and b are gone.
        let h = compute_h_two_vectors(backend, a, b)?;
        let mut out = HostVector::zeroed(host, "streaming H: h", n)?;
        backend.read_fr(&h, 0, &mut out)?;
        return Ok(out);
    }
    let (n1, n2, chunk) = (plan.column_len(), plan.row_len(), plan.chunk_len());
    let mut s = Streamer {
        backend,
        n,
        n1,
        n2,
        chunk,
        staging: HostVector::zeroed(host, "streaming H staging", chunk)?,
    };
    let w = omega(plan.log_n)?;
    let w_inv = inverse(w, "the root of unity")?;
    let g = Fr::MULTIPLICATIVE_GENERATOR;
    let g_inv = inverse(g, "the coset generator")?;
    let twiddles = FourStepTwiddles {
        w,
        w_inv,
        g,
        g_inv,
        g_n1: g.pow_vartime([n1 as u64]),
        g_inv_n1: g_inv.pow_vartime([n1 as u64]),
        z_inv: z_inv_on_coset(n)?,
    };

    let mut c = HostVector::zeroed(host, "streaming H: c intermediate", n)?;
    let mut dev = [
        backend.alloc_fr("streaming H: a chunk", chunk)?,
        backend.alloc_fr("streaming H: b chunk", chunk)?,
        backend.alloc_fr("streaming H: c chunk", chunk)?,
    ];
    s.product_and_column_intt(&mut a, &mut b, &mut c, &mut dev, &twiddles)?;
    s.rows_to_coset(&mut a, &mut b, &mut c, &mut dev, &twiddles)?;
    s.quotient_and_column_intt(&mut a, &b, &c, &mut dev, &twiddles)?;
    drop(c);
    let [mut dh, db, dc] = dev;
    drop((db, dc));
    s.rows_to_natural_h(&a, &mut b, &mut dh, &twiddles)?;
    Ok(b)
}

/// The constants of the four-step passes: the root of unity, the coset generator, their
/// inverses and n1-th powers, and 1 / Z on the coset.
struct FourStepTwiddles {
    w: Fr,
    w_inv: Fr,
    g: Fr,
    g_inv: Fr,
    g_n1: Fr,
    g_inv_n1: Fr,
    z_inv: Fr,
}

impl<B: ComputeBackend> Streamer<'_, B> {
    /// Pass 1 (columns): c = a ∘ b, then the column half of the iNTT for all three.
    fn product_and_column_intt(
        &mut self,
        a: &mut [Fr],
        b: &mut [Fr],
        c: &mut [Fr],
        dev: &mut [B::FrBuffer; 3],
        t: &FourStepTwiddles,
    ) -> Result<(), BackendError> {
        let (backend, n1) = (self.backend, self.n1);
        for c0 in self.column_chunks() {
            let [da, db, dc] = &mut *dev;
            self.upload_columns(a, c0, da)?;
            backend.write_fr(dc, 0, &self.staging)?;
            self.upload_columns(b, c0, db)?;
            backend.mul_assign(dc, db)?;
            let base = t.w_inv.pow_vartime([c0 as u64]);
            for d in dev.iter_mut() {
                backend.transform_segments(d, n1, Transform::Intt, NN)?;
                backend.segment_powers(d, n1, base, t.w_inv)?;
            }
            let [da, db, dc] = &*dev;
            self.download_columns(da, a, c0)?;
            self.download_columns(db, b, c0)?;
            self.download_columns(dc, c, c0)?;
        }
        Ok(())
    }

    /// Pass 2 (rows): row iNTT (coefficients, transposed), g^(n1 k2), row NTT.
    fn rows_to_coset(
        &mut self,
        a: &mut [Fr],
        b: &mut [Fr],
        c: &mut [Fr],
        dev: &mut [B::FrBuffer; 3],
        t: &FourStepTwiddles,
    ) -> Result<(), BackendError> {
        let (backend, n2) = (self.backend, self.n2);
        for range in self.row_chunks() {
            let hosts = [&mut *a, &mut *b, &mut *c];
            for (d, x) in dev.iter_mut().zip(&hosts) {
                backend.write_fr(d, 0, &x[range.clone()])?;
            }
            for d in dev.iter_mut() {
                backend.transform_segments(d, n2, Transform::Intt, NN)?;
                backend.segment_powers(d, n2, t.g_n1, Fr::ONE)?;
                backend.transform_segments(d, n2, Transform::Ntt, NN)?;
            }
            for (d, x) in dev.iter().zip(hosts) {
                backend.read_fr(d, 0, &mut x[range.clone()])?;
            }
        }
        Ok(())
    }

    /// Pass 3 (columns): coset evaluations in natural order, h on the coset, and the
    /// column half of the coset iNTT; h goes back into a's memory.
    fn quotient_and_column_intt(
        &mut self,
        a: &mut [Fr],
        b: &[Fr],
        c: &[Fr],
        dev: &mut [B::FrBuffer; 3],
        t: &FourStepTwiddles,
    ) -> Result<(), BackendError> {
        let (backend, n1) = (self.backend, self.n1);
        for c0 in self.column_chunks() {
            for (d, x) in dev.iter_mut().zip([&*a, b, c]) {
                self.upload_columns(x, c0, d)?;
            }
            let base = t.g * t.w.pow_vartime([c0 as u64]);
            for d in dev.iter_mut() {
                backend.segment_powers(d, n1, base, t.w)?;
                backend.transform_segments(d, n1, Transform::Ntt, NN)?;
            }
            let [da, db, dc] = &mut *dev;
            backend.mul_assign(da, db)?;
            backend.sub_assign(da, dc)?;
            backend.scale(da, t.z_inv)?;
            backend.transform_segments(da, n1, Transform::Intt, NN)?;
            let base = t.g_inv * t.w_inv.pow_vartime([c0 as u64]);
            backend.segment_powers(da, n1, base, t.w_inv)?;
            self.download_columns(da, a, c0)?;
        }
        Ok(())
    }

    /// Pass 4 (rows): row iNTT and g^-(n1 j2); row j1 holds h[j1 + n1 j2], scattered into
    /// natural order in `h` (b's memory: its contents are no longer needed).
    fn rows_to_natural_h(
        &mut self,
        a: &[Fr],
        h: &mut [Fr],
        dh: &mut B::FrBuffer,
        t: &FourStepTwiddles,
    ) -> Result<(), BackendError> {
        let (backend, n1, n2) = (self.backend, self.n1, self.n2);
        for range in self.row_chunks() {
            backend.write_fr(dh, 0, &a[range.clone()])?;
            backend.transform_segments(dh, n2, Transform::Intt, NN)?;
            backend.segment_powers(dh, n2, t.g_inv_n1, Fr::ONE)?;
            backend.read_fr(dh, 0, &mut self.staging)?;
            // Viewed as an n2 x n1 matrix, natural h has row j2 = h[j2 n1 ..], so row j1 of
            // the transposed result is column j1 there.
            scatter_columns(h, n1, range.start / n2, n2, &self.staging);
        }
        Ok(())
    }
}

fn inverse(x: Fr, what: &'static str) -> Result<Fr, Groth16Error> {
    Option::from(x.invert()).ok_or(Groth16Error::DegenerateSetup(what))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;
    use sluice_backend_cpu::CpuBackend;

    /// h by definition, independent of any NTT: coefficients by the naive inverse DFT, and
    /// h = the upper half of A·B (A·B - C = h (X^n - 1) with deg C < n); the lower half is
    /// checked against C's coefficients on the way.
    fn naive_h(a: &[Fr], b: &[Fr], seed: u64) -> Vec<Fr> {
        let n = a.len();
        let w_inv = omega(n.trailing_zeros()).unwrap().invert().unwrap();
        let pw: Vec<Fr> = (0..n).map(|k| w_inv.pow_vartime([k as u64])).collect();
        let n_inv = Fr::from(n as u64).invert().unwrap();
        let coeffs = |e: &[Fr]| -> Vec<Fr> {
            (0..n)
                .map(|j| (0..n).map(|i| e[i] * pw[(i * j) % n]).sum::<Fr>() * n_inv)
                .collect()
        };
        let c: Vec<Fr> = a.iter().zip(b).map(|(x, y)| *x * y).collect();
        let (alpha, beta, gamma) = (coeffs(a), coeffs(b), coeffs(&c));
        let mut prod = vec![Fr::ZERO; 2 * n];
        for (i, x) in alpha.iter().enumerate() {
            for (j, y) in beta.iter().enumerate() {
                prod[i + j] += *x * y;
            }
        }
        let h = prod[n..].to_vec();
        for j in 0..n {
            assert_eq!(
                prod[j] - gamma[j],
                -h[j],
                "reference, seed {seed}, n {n}, j {j}"
            );
        }
        h
    }

    fn random(n: usize, rng: &mut ChaCha20Rng) -> Vec<Fr> {
        (0..n).map(|_| Fr::random(&mut *rng)).collect()
    }

    #[test]
    fn gather_and_scatter_move_columns_like_the_naive_loops() {
        let seed = 70;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        for (rows, cols, c0, w) in [(4, 8, 2, 3), (40, 64, 8, 20), (33, 17, 0, 17), (1, 5, 4, 1)] {
            let x = random(rows * cols, &mut rng);
            let mut out = vec![Fr::ZERO; w * rows];
            gather_columns(&x, cols, c0, rows, &mut out);
            for j in 0..w {
                for r in 0..rows {
                    assert_eq!(out[j * rows + r], x[r * cols + c0 + j], "seed {seed}");
                }
            }
            let mut y = x.clone();
            let fresh = random(w * rows, &mut rng);
            scatter_columns(&mut y, cols, c0, rows, &fresh);
            for r in 0..rows {
                for c in 0..cols {
                    let expected = if (c0..c0 + w).contains(&c) {
                        fresh[(c - c0) * rows + r]
                    } else {
                        x[r * cols + c]
                    };
                    assert_eq!(y[r * cols + c], expected, "seed {seed}, ({r}, {c})");
                }
            }
        }
    }

    #[test]
    fn plan_fits_the_budget_and_refuses_too_small_ones() {
        let n = 1 << 12; // 64 x 64
        let plan = StreamingPlan::new(n, 1 << 30).unwrap();
        assert_eq!(plan.chunk_len(), n, "a large budget streams in one chunk");
        let two = StreamingPlan::new(n, 2 * n as u64 * 32).unwrap();
        assert!(two.holds_two_vectors());
        assert_eq!(
            (two.device_bytes(), two.extra_host_bytes()),
            (2 * n as u64 * 32, 0)
        );
        let four = StreamingPlan::new(n, 2 * n as u64 * 32 - 1).unwrap();
        assert!(
            !four.holds_two_vectors(),
            "one byte short of two vectors: four-step"
        );
        assert!(four.device_bytes() < 2 * n as u64 * 32);
        let budget = 20 * 64 * 32;
        let plan = StreamingPlan::new(n, budget).unwrap();
        assert_eq!((plan.column_len(), plan.row_len()), (64, 64));
        assert_eq!(
            plan.chunk_len(),
            256,
            "3 x 256 + 64 <= 1280 scalars < 3 x 512 + 64"
        );
        assert!(plan.device_bytes() <= budget);
        match StreamingPlan::new(n, 4 * 64 * 32 - 1) {
            Err(Groth16Error::Backend(BackendError::OutOfMemory { requested, .. })) => {
                assert_eq!(requested, 4 * 64 * 32)
            }
            other => panic!("expected OutOfMemory, got {:?}", other.map(|_| ())),
        }
        assert!(
            StreamingPlan::new(1 << 13, 4 * 128 * 32).is_ok(),
            "n2 = 128 for 2^13"
        );
        assert!(StreamingPlan::new(12, 1 << 30).is_err());
    }

    #[test]
    fn streaming_h_matches_the_definition_within_the_device_budget() {
        let seed = 71;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        for log_n in 1..=7u32 {
            let n = 1usize << log_n;
            let a = random(n, &mut rng);
            let b = random(n, &mut rng);
            let expected = naive_h(&a, &b, seed);
            let n2 = n >> (log_n / 2);
            // The smallest budget (one row per chunk), a middle one, and one chunk.
            let least = 4 * n2 as u64 * 32;
            for budget in [least, least.max((3 * n / 2 + n2) as u64 * 32), 1 << 20] {
                let tracker = MemoryTracker::new(None, Some(budget));
                let backend = CpuBackend::with_tracker(tracker.clone());
                let plan = StreamingPlan::new(n, budget).unwrap();
                let h = compute_h_streaming(
                    &backend,
                    &tracker,
                    HostVector::track(&tracker, "a", a.clone()).unwrap(),
                    HostVector::track(&tracker, "b", b.clone()).unwrap(),
                    &plan,
                )
                .unwrap();
                assert_eq!(&h[..], &expected[..], "seed {seed}, n {n}, budget {budget}");
                assert_eq!(h[n - 1], Fr::ZERO, "deg h <= n - 2");
                assert_eq!(
                    h.bytes(),
                    n as u64 * 32,
                    "h is returned in a vector of b's size"
                );
                let peak = tracker.peak(MemoryKind::Device);
                assert!(
                    peak <= budget && peak <= plan.device_bytes(),
                    "seed {seed}, n {n}: device peak {peak} > budget {budget}"
                );
                // Two vectors: a and b. Four-step: a, b, c's intermediate and one chunk.
                let host = tracker.peak(MemoryKind::Host);
                let expected = match plan.holds_two_vectors() {
                    true => 2 * n,
                    false => 3 * n + plan.chunk_len(),
                };
                assert_eq!(host, expected as u64 * 32, "n {n}, budget {budget}");
            }
        }
    }

    #[test]
    fn streaming_h_equals_the_in_memory_h() {
        let seed = 73;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let backend = CpuBackend::new();
        let tracker = backend.tracker();
        for log_n in 8..=12u32 {
            let n = 1usize << log_n;
            // Evaluations of a shorter circuit (zero-padded by the prover), as synthesis
            // leaves them.
            let a = random(n - 3, &mut rng);
            let b = random(n - 3, &mut rng);
            let in_memory = crate::prover::h::compute_h(
                &backend,
                HostVector::track(tracker, "a", a.clone()).unwrap(),
                HostVector::track(tracker, "b", b.clone()).unwrap(),
                n,
            )
            .unwrap();
            let pad = |mut v: Vec<Fr>| {
                v.resize(n, Fr::ZERO);
                HostVector::track(tracker, "v", v).unwrap()
            };
            let n2 = n >> (log_n / 2);
            let plan = StreamingPlan::new(n, (3 * n / 8 + n2) as u64 * 32).unwrap();
            assert!(plan.chunk_len() < n / 4, "several chunks per pass");
            let streamed =
                compute_h_streaming(&backend, tracker, pad(a.clone()), pad(b.clone()), &plan)
                    .unwrap();
            assert_eq!(&streamed[..], in_memory.as_slice(), "seed {seed}, n {n}");
            let on_device = compute_h_two_vectors(&backend, pad(a), pad(b)).unwrap();
            let mut two = vec![Fr::ZERO; n];
            backend.read_fr(&on_device, 0, &mut two).unwrap();
            assert_eq!(
                &two[..],
                in_memory.as_slice(),
                "two vectors, seed {seed}, n {n}"
            );
        }
    }

    #[test]
    fn two_vector_h_refuses_bad_lengths() {
        let tracker = MemoryTracker::default();
        let backend = CpuBackend::with_tracker(tracker.clone());
        for (la, lb) in [(0, 0), (1, 1), (12, 12), (8, 7)] {
            let a = HostVector::zeroed(&tracker, "a", la).unwrap();
            let b = HostVector::zeroed(&tracker, "b", lb).unwrap();
            assert!(
                matches!(
                    compute_h_two_vectors(&backend, a, b),
                    Err(Groth16Error::Backend(
                        BackendError::InvalidInput(_) | BackendError::LengthMismatch { .. }
                    ))
                ),
                "lengths {la}, {lb}"
            );
        }
        assert_eq!(tracker.current(MemoryKind::Device), 0);
    }

    #[test]
    fn wrong_lengths_are_errors() {
        let tracker = MemoryTracker::default();
        let backend = CpuBackend::with_tracker(tracker.clone());
        let plan = StreamingPlan::new(8, 1 << 20).unwrap();
        let short = HostVector::zeroed(&tracker, "a", 7).unwrap();
        let b = HostVector::zeroed(&tracker, "b", 8).unwrap();
        assert!(matches!(
            compute_h_streaming(&backend, &tracker, short, b, &plan),
            Err(Groth16Error::Backend(BackendError::LengthMismatch {
                expected: 8,
                got: 7,
                ..
            }))
        ));
    }
}
