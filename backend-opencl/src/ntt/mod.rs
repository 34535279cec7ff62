//! The NTT family on a device: the four transforms in every order, the fused coset steps of
//! the H computation and batched segment transforms, built from the passes
//! ([`passes`](mod@passes)), the bit reversal, the coset powers and the 1/n scale.

mod passes;
#[cfg(test)]
mod tests;
mod twiddles;

use ff::{Field, PrimeField};
use sluice_backend::{check_pow2_segment, BackendError, NttOrder, Transform};
use sluice_field::Fr;

use crate::chunked::Chunked;
use crate::fr_ops::{FrOps, COSET_BR_MIN_LOG};
use crate::tuning::NttTuning;
use passes::{bit_reverse, passes};
use twiddles::TwiddleCache;

/// A backend's NTTs: their tuning, and the twiddle tables they build, kept for the
/// backend's life.
#[derive(Default)]
pub(crate) struct Ntt {
    twiddles: TwiddleCache,
    tuning: NttTuning,
}

impl Ntt {
    /// NTTs with `tuning`.
    pub(crate) fn new(tuning: NttTuning) -> Self {
        Ntt {
            twiddles: TwiddleCache::default(),
            tuning,
        }
    }

    /// `transform` of `buf` in place (its device is `ops`'), on buffers of one chunk.
    pub(crate) fn transform(
        &self,
        ops: FrOps<'_>,
        buf: &Chunked,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        let n = buf.len;
        if !n.is_power_of_two() {
            return Err(BackendError::LengthMismatch {
                what: "ntt domain (a power of two)",
                expected: n.next_power_of_two(),
                got: n,
            });
        }
        let log_n = domain_log(n)?;
        if buf.chunks.len() > 1 {
            return Err(BackendError::Unsupported(format!(
                "an NTT over a buffer split into {} chunks (2^{log_n} elements exceed the \
                 device's largest allocation)",
                buf.chunks.len()
            )));
        }
        if n == 1 {
            return Ok(()); // every transform of one element is the identity
        }
        self.run(ops, buf)
            .chunk(&buf.chunks[0], n, log_n, transform, order)
    }

    /// [`ComputeBackend::domain_to_coset`](sluice_backend::ComputeBackend::domain_to_coset):
    /// the inverse by decimation in frequency without its 1/n, the coset shift of the
    /// bit-reversed coefficients with 1/n folded into its powers, then the forward
    /// transform by decimation in time. No scale pass and no bit reversal; runs shorter
    /// than 2^COSET_BR_MIN_LOG take the two transforms.
    pub(crate) fn domain_to_coset(
        &self,
        ops: FrOps<'_>,
        buf: &Chunked,
    ) -> Result<(), BackendError> {
        let Some(log_n) = fused_coset_log(buf) else {
            self.transform(ops, buf, Transform::Intt, NttOrder::NaturalToBitReversed)?;
            return self.transform(
                ops,
                buf,
                Transform::CosetNtt,
                NttOrder::BitReversedToNatural,
            );
        };
        let (mem, n) = (&buf.chunks[0], buf.len);
        let run = self.run(ops, buf);
        run.ntt(mem, log_n, n, None, false, true)?;
        run.coset_ntt_of_bit_reversed(mem, n, log_n, inverse_size(log_n), false)
    }

    /// [`ComputeBackend::coset_intt_scaled`](sluice_backend::ComputeBackend::coset_intt_scaled):
    /// the coset INTT with `factor` folded into its coset powers beside 1/n (no scale pass).
    pub(crate) fn coset_intt_scaled(
        &self,
        ops: FrOps<'_>,
        buf: &Chunked,
        factor: Fr,
    ) -> Result<(), BackendError> {
        let Some(log_n) = fused_coset_log(buf) else {
            ops.scale(buf, factor)?;
            return self.transform(ops, buf, Transform::CosetIntt, NttOrder::NaturalToNatural);
        };
        let (mem, n) = (&buf.chunks[0], buf.len);
        self.run(ops, buf)
            .coset_intt_of_natural(mem, n, log_n, factor, false)
    }

    /// `transform` on each run of `segment` elements, chunk by chunk, in one batch of
    /// launches per chunk; a whole-buffer segment takes [`Ntt::transform`].
    pub(crate) fn transform_segments(
        &self,
        ops: FrOps<'_>,
        buf: &Chunked,
        segment: usize,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        let len = buf.len;
        check_pow2_segment("transform_segments", len, segment)?;
        if segment == len {
            return self.transform(ops, buf, transform, order);
        }
        let log_n = domain_log(segment)?;
        // Chunks hold a power of two elements, so a segment no longer than a chunk never
        // straddles two.
        if buf.chunks.len() > 1 && segment > buf.chunk_len {
            return Err(BackendError::Unsupported(format!(
                "transform_segments: segments of 2^{log_n} elements straddle the chunks of \
                 {} elements this buffer of {len} is split into (the device's largest \
                 allocation)",
                buf.chunk_len
            )));
        }
        if segment == 1 {
            return Ok(()); // every transform of one element is the identity
        }
        let run = self.run(ops, buf);
        for (i, mem) in buf.chunks.iter().enumerate() {
            run.chunk(mem, buf.chunk_elems(i), log_n, transform, order)?;
        }
        Ok(())
    }

    /// The transforms of `buf`'s device.
    fn run<'a>(&'a self, ops: FrOps<'a>, buf: &Chunked) -> Run<'a> {
        Run {
            ops,
            device: buf.device,
            twiddles: &self.twiddles,
            tuning: &self.tuning,
        }
    }
}

/// The transforms over the buffers of one device.
struct Run<'a> {
    ops: FrOps<'a>,
    device: usize,
    twiddles: &'a TwiddleCache,
    tuning: &'a NttTuning,
}

impl Run<'_> {
    /// `transform` on each run of 2^log_n elements (log_n >= 1) of the `count` elements of
    /// `mem`, `count` a multiple of 2^log_n: every launch covers all the runs.
    fn chunk(
        &self,
        mem: &ocl::core::Mem,
        count: usize,
        log_n: u32,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        let ctx = self.ops.ctx;
        let g = Fr::MULTIPLICATIVE_GENERATOR;
        let input_br = order.input_bit_reversed();
        let output_br = order.output_bit_reversed();
        let coset = |shift: Fr| {
            self.ops
                .segment_powers_chunk(mem, count, 0, 1 << log_n, &[shift])
        };
        // Runs long enough to be shifted in bit-reversed order.
        let shift_br = log_n >= COSET_BR_MIN_LOG;
        let ntt = |inverse, input_br, output_br| {
            self.ntt(mem, log_n, count, inverse, input_br, output_br)
        };
        match transform {
            Transform::Ntt => ntt(Some(false), input_br, output_br),
            Transform::Intt => ntt(Some(true), input_br, output_br),
            Transform::CosetNtt if input_br && shift_br => {
                self.coset_ntt_of_bit_reversed(mem, count, log_n, Fr::ONE, output_br)
            }
            Transform::CosetNtt => {
                if input_br {
                    bit_reverse(ctx, mem, log_n, count)?;
                }
                coset(g)?;
                ntt(Some(false), false, output_br)
            }
            Transform::CosetIntt if !input_br && shift_br => {
                self.coset_intt_of_natural(mem, count, log_n, Fr::ONE, output_br)
            }
            Transform::CosetIntt => {
                ntt(Some(true), input_br, false)?;
                coset(g.invert().unwrap_or(Fr::ONE))?;
                if output_br {
                    bit_reverse(ctx, mem, log_n, count)?;
                }
                Ok(())
            }
        }
    }

    /// The coset NTT, every element times `factor`, of bit-reversed runs of 2^log_n
    /// (`log_n >= COSET_BR_MIN_LOG`): shifted where they are, then decimation in time
    /// (natural output, reversed again where `output_br`). Reversing them first cost two
    /// passes over the data.
    fn coset_ntt_of_bit_reversed(
        &self,
        mem: &ocl::core::Mem,
        count: usize,
        log_n: u32,
        factor: Fr,
        output_br: bool,
    ) -> Result<(), BackendError> {
        let g = Fr::MULTIPLICATIVE_GENERATOR;
        self.ops
            .coset_powers_br_chunk(mem, count, log_n, g, factor)?;
        self.ntt(mem, log_n, count, Some(false), true, output_br)
    }

    /// The coset INTT, every element times `factor`, of natural runs of 2^log_n
    /// (`log_n >= COSET_BR_MIN_LOG`): decimation in frequency without its 1/n, then the
    /// shift of the bit-reversed output with `factor` / n folded into its powers (no scale
    /// pass), reversed back unless `output_br`.
    fn coset_intt_of_natural(
        &self,
        mem: &ocl::core::Mem,
        count: usize,
        log_n: u32,
        factor: Fr,
        output_br: bool,
    ) -> Result<(), BackendError> {
        self.ntt(mem, log_n, count, None, false, true)?;
        let g_inv = Fr::MULTIPLICATIVE_GENERATOR.invert().unwrap_or(Fr::ONE);
        let scale = inverse_size(log_n) * factor;
        self.ops
            .coset_powers_br_chunk(mem, count, log_n, g_inv, scale)?;
        if !output_br {
            bit_reverse(self.ops.ctx, mem, log_n, count)?;
        }
        Ok(())
    }

    /// (I)NTT of each run of 2^log_n elements of the `count` in `mem`; input and output
    /// orders as given (not both bit-reversed). Natural input runs decimation in frequency
    /// (bit-reversed output), bit-reversed input decimation in time (natural output); a bit
    /// reversal fixes the order otherwise. `inverse`: `Some(false)` forward, `Some(true)`
    /// inverse with its 1/n, `None` inverse without it (the caller folds 1/n into a later
    /// pass).
    fn ntt(
        &self,
        mem: &ocl::core::Mem,
        log_n: u32,
        count: usize,
        inverse: Option<bool>,
        input_br: bool,
        output_br: bool,
    ) -> Result<(), BackendError> {
        let ctx = self.ops.ctx;
        let tw = self
            .twiddles
            .get(self.ops, self.device, log_n, inverse != Some(false))?;
        if input_br {
            passes(ctx, mem, &tw, (log_n, count), false, self.tuning)?;
            if output_br {
                bit_reverse(ctx, mem, log_n, count)?;
            }
        } else {
            passes(ctx, mem, &tw, (log_n, count), true, self.tuning)?;
            if !output_br {
                bit_reverse(ctx, mem, log_n, count)?;
            }
        }
        if inverse == Some(true) {
            self.ops.scale_chunk(mem, count, inverse_size(log_n))?;
        }
        Ok(())
    }
}

/// 1 / 2^log_n, the scale of an inverse transform of 2^log_n elements.
fn inverse_size(log_n: u32) -> Fr {
    Fr::from(1u64 << log_n).invert().unwrap_or(Fr::ONE)
}

/// The log2 length of a buffer whose coset transforms can be fused: one chunk of 2^k
/// elements, k at least COSET_BR_MIN_LOG; `None` for the others, which take the unfused
/// transforms (and their errors).
fn fused_coset_log(buf: &Chunked) -> Option<u32> {
    let n = buf.len;
    let log_n = n.trailing_zeros();
    (n.is_power_of_two() && buf.chunks.len() == 1 && log_n >= COSET_BR_MIN_LOG).then_some(log_n)
}

/// The log2 of a domain of `n` (a power of two) elements, if Fr has roots of unity for it.
fn domain_log(n: usize) -> Result<u32, BackendError> {
    let log_n = n.trailing_zeros();
    if log_n > Fr::S {
        return Err(BackendError::DomainTooLarge {
            log_size: log_n,
            max: Fr::S,
        });
    }
    Ok(log_n)
}
