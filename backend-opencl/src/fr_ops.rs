//! The Fr kernels over one device's buffers, besides the NTT: pointwise operations, scaling,
//! coset and segment powers (the NTT's own steps use them too).

use ff::Field;
use sluice_backend::{check_len, check_segment, BackendError, MemoryTracker};
use sluice_field::Fr;

use crate::chunked::Chunked;
use crate::context::DeviceCtx;
use crate::release::DeviceTemp;
use crate::repr::as_words;
use crate::source::ProgramKind;

/// The smallest run (2^k elements) whose coset shift runs on bit-reversed elements
/// (`fr_coset_powers_br`: blocks of 2^11); smaller runs are reversed first.
pub(crate) const COSET_BR_MIN_LOG: u32 = 11;

/// The Fr kernels on one device, with the tracker their temporaries are counted in.
#[derive(Clone, Copy)]
pub(crate) struct FrOps<'a> {
    pub(crate) ctx: &'a DeviceCtx,
    pub(crate) tracker: &'a MemoryTracker,
}

impl FrOps<'_> {
    /// Element-wise `a op= b` (`kernel`: `fr_mul_assign`, `fr_sub_assign`) over matching
    /// chunks.
    pub(crate) fn pointwise(
        &self,
        kernel: &str,
        a: &Chunked,
        b: &Chunked,
    ) -> Result<(), BackendError> {
        check_len("pointwise operands", a.len, b.len)?;
        for (i, (ca, cb)) in a.chunks.iter().zip(&b.chunks).enumerate() {
            let n = a.chunk_elems(i);
            self.ctx
                .kernel(ProgramKind::Fr, kernel)?
                .mem(ca)?
                .mem(cb)?
                .u32(n as u32)?
                .run(n, None)?;
        }
        Ok(())
    }

    /// `a[i] *= s` over every chunk.
    pub(crate) fn scale(&self, a: &Chunked, s: Fr) -> Result<(), BackendError> {
        for (i, c) in a.chunks.iter().enumerate() {
            self.scale_chunk(c, a.chunk_elems(i), s)?;
        }
        Ok(())
    }

    /// `a[i] *= s` over the `n` elements of one chunk.
    pub(crate) fn scale_chunk(
        &self,
        mem: &ocl::core::Mem,
        n: usize,
        s: Fr,
    ) -> Result<(), BackendError> {
        let s = self.constants(&[s])?;
        self.ctx
            .kernel(ProgramKind::Fr, "fr_scale")?
            .mem(mem)?
            .mem(&s)?
            .u32(n as u32)?
            .run(n, None)
    }

    /// `a[i] *= factor g^rev(j)` over the `count` elements of `mem`, runs of 2^log_n
    /// (`log_n >= COSET_BR_MIN_LOG`) in bit-reversed order, element `i` being element `j`
    /// of its run: the coset shift of bit-reversed evaluations, without reversing them.
    pub(crate) fn coset_powers_br_chunk(
        &self,
        mem: &ocl::core::Mem,
        count: usize,
        log_n: u32,
        g: Fr,
        factor: Fr,
    ) -> Result<(), BackendError> {
        // The kernel's blocks: 32 items of 64 elements each (see `fr_coset_powers_br`).
        const BLOCK: usize = 1 << COSET_BR_MIN_LOG;
        let step = g.pow_vartime([1u64 << (log_n - COSET_BR_MIN_LOG)]);
        let c = self.constants(&[factor, g, step])?;
        self.ctx
            .kernel(ProgramKind::Fr, "fr_coset_powers_br")?
            .mem(mem)?
            .mem(&c)?
            .u32(count as u32)?
            .u32(log_n)?
            .run(count.div_ceil(BLOCK) * 32, None)
    }

    /// Element `i` of segment `k` (runs of `segment` elements, `segment` dividing the
    /// length) times `(base · ratio^k)^i`: one launch per chunk, with the generators of the
    /// chunk's segments computed on the host. Any chunking.
    pub(crate) fn segment_powers(
        &self,
        buf: &Chunked,
        segment: usize,
        base: Fr,
        ratio: Fr,
    ) -> Result<(), BackendError> {
        let len = buf.len;
        check_segment("segment_powers", len, segment)?;
        if segment == len {
            if base == Fr::ONE {
                return Ok(());
            }
            for (i, c) in buf.chunks.iter().enumerate() {
                let first = (i * buf.chunk_len) as u64;
                // One segment longer than any buffer: base^(first + i).
                self.segment_powers_chunk(c, buf.chunk_elems(i), first, u64::MAX, &[base])?;
            }
            return Ok(());
        }
        if segment == 1 {
            return Ok(()); // every element is the 0th of its segment: g^0
        }
        for (i, c) in buf.chunks.iter().enumerate() {
            let first = i * buf.chunk_len;
            let n = buf.chunk_elems(i);
            let (k0, k1) = (first / segment, (first + n - 1) / segment);
            // Variable time in the exponent k0 only, a public segment index.
            let mut g = base * ratio.pow_vartime([k0 as u64]);
            let gens: Vec<Fr> = (k0..=k1)
                .map(|_| {
                    let gk = g;
                    g *= ratio;
                    gk
                })
                .collect();
            self.segment_powers_chunk(c, n, first as u64, segment as u64, &gens)?;
        }
        Ok(())
    }

    /// `a[i] *= g_k^j` over one chunk of `n` elements starting at element `first` of its
    /// buffer, element `first + i` being element `j` of segment `k`: `g_k` is
    /// `gens[k - first / segment]`, or `gens[0]` for every segment when `gens` holds one
    /// value (a coset shift; or a chunk within one segment, where both agree).
    pub(crate) fn segment_powers_chunk(
        &self,
        mem: &ocl::core::Mem,
        n: usize,
        first: u64,
        segment: u64,
        gens: &[Fr],
    ) -> Result<(), BackendError> {
        // Elements per work item: one exponentiation (log2 of the index, square and
        // multiply) per 64 multiplications; items in blocks of a warp's width (see the
        // kernel: each step of a block touches consecutive elements).
        const PER_ITEM: usize = 64;
        const LANES: usize = 32;
        let ctx = self.ctx;
        let g = ctx.temp(self.tracker, "segment generators", gens.len() * 8)?;
        // Not behind the queued kernels (see `constants`).
        ctx.write_fresh(&g, 0, as_words(gens))?;
        ctx.kernel(ProgramKind::Fr, "fr_segment_powers")?
            .mem(mem)?
            .mem(&g)?
            .u32(n as u32)?
            .u32(PER_ITEM as u32)?
            .u32(LANES as u32)?
            .u64(first)?
            .u64(segment)?
            .u64(first / segment)?
            .u32(u32::from(gens.len() == 1))?
            .run(n.div_ceil(PER_ITEM * LANES) * LANES, None)
    }

    /// A device buffer holding `v`, for kernels that take scalar operands. It goes up on
    /// the transfer queue ([`DeviceCtx::write_fresh`]): a blocking write behind the queued
    /// kernels would wait for them, and each NTT's 1/n and each coset shift would then hold
    /// the host until the device had caught up.
    fn constants(&self, v: &[Fr]) -> Result<DeviceTemp, BackendError> {
        let m = self
            .ctx
            .untracked_temp(self.ctx.raw_buffer("fr constants", 8 * v.len())?);
        self.ctx.write_fresh(&m, 0, as_words(v))?;
        Ok(m)
    }
}
