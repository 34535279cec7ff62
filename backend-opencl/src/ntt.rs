//! The NTT family on a device: radix-2 passes of up to 9 rounds in local memory (each work
//! item running 2^r elements through r rounds in registers between exchanges), bit
//! reversal, coset scaling and the 1/n scale.

use ff::{Field, PrimeField};
use sluice_backend::{Allocation, BackendError, MemoryKind, NttOrder, Transform};
use sluice_field::Fr;

use crate::context::DeviceCtx;
use crate::repr::as_words;
use crate::source::ProgramKind;
use crate::{lock, OpenClBackend, OpenClFrBuffer};

/// Most elements one pass's tile holds in local memory: 2^9 elements and their twiddles,
/// 32 KiB per work group (OpenCL guarantees 32 KiB of local memory); 2^27 takes four
/// passes (9 rounds on contiguous data, then 6 on tiles of 8 columns).
const MAX_ROUNDS_PER_PASS: u32 = 9;

/// The smallest run (2^k elements) whose coset shift runs on bit-reversed elements
/// (`fr_coset_powers_br`: blocks of 2^11); smaller runs are reversed first.
pub(crate) const COSET_BR_MIN_LOG: u32 = 11;

/// 1 / 2^log_n, the scale of an inverse transform of 2^log_n elements.
fn inverse_size(log_n: u32) -> Fr {
    Fr::from(1u64 << log_n).invert().unwrap_or(Fr::ONE)
}

/// The pass kernels by register rounds r (`fr_ntt_pass_r{r}`, groups of 2^(k-r) items for a
/// tile of 2^k elements).
const PASS_KERNELS: [&str; 2] = ["fr_ntt_pass_r1", "fr_ntt_pass_r2"];

/// Work groups per compute unit a pass keeps before its groups take several tiles each
/// (sharing one twiddle table): enough to fill the device several times over.
const GROUPS_PER_UNIT: usize = 32;

/// The twiddles w^e for e < n/2 of one domain and direction, as two tables:
/// w^e = lo[e mod 2^lo_bits] * hi[e >> lo_bits] (O(sqrt n) memory instead of n/2).
pub(crate) struct Twiddles {
    lo: ocl::core::Mem,
    hi: ocl::core::Mem,
    lo_bits: u32,
    _tracked: Allocation,
}

impl Twiddles {
    fn new(
        b: &OpenClBackend,
        ctx: &DeviceCtx,
        log_n: u32,
        inverse: bool,
    ) -> Result<Self, BackendError> {
        let root = if inverse {
            Fr::ROOT_OF_UNITY_INV
        } else {
            Fr::ROOT_OF_UNITY
        };
        let w = root.pow_vartime([1u64 << (Fr::S - log_n)]);
        let bits = log_n - 1;
        let lo_bits = bits.div_ceil(2);
        let powers = |step: Fr, count: usize| {
            let mut v = Vec::with_capacity(count);
            let mut p = Fr::ONE;
            for _ in 0..count {
                v.push(p);
                p *= step;
            }
            v
        };
        let lo = powers(w, 1 << lo_bits);
        let hi = powers(w.pow_vartime([1u64 << lo_bits]), 1 << (bits - lo_bits));
        let tracked = b.tracker.allocate(
            MemoryKind::Device,
            "ntt twiddles",
            ((lo.len() + hi.len()) * 32) as u64,
        )?;
        let upload = |v: &[Fr]| -> Result<ocl::core::Mem, BackendError> {
            let m = ctx.raw_buffer("ntt twiddles", v.len() * 8)?;
            ctx.write(&m, 0, as_words(v))?;
            Ok(m)
        };
        Ok(Twiddles {
            lo: upload(&lo)?,
            hi: upload(&hi)?,
            lo_bits,
            _tracked: tracked,
        })
    }
}

impl OpenClBackend {
    pub(crate) fn ntt_transform(
        &self,
        buf: &mut OpenClFrBuffer,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        let n = buf.data.len;
        if !n.is_power_of_two() {
            return Err(BackendError::LengthMismatch {
                what: "ntt domain (a power of two)",
                expected: n.next_power_of_two(),
                got: n,
            });
        }
        let log_n = domain_log(n)?;
        if buf.data.chunks.len() > 1 {
            return Err(BackendError::Unsupported(format!(
                "an NTT over a buffer split into {} chunks (2^{log_n} elements exceed the \
                 device's largest allocation)",
                buf.data.chunks.len()
            )));
        }
        if n == 1 {
            return Ok(()); // every transform of one element is the identity
        }
        let ctx = &self.devices[buf.data.device];
        self.transform_chunk(ctx, &buf.data.chunks[0], n, log_n, transform, order)
    }

    /// [`ComputeBackend::domain_to_coset`](sluice_backend::ComputeBackend::domain_to_coset):
    /// the inverse by decimation in frequency without its 1/n, the coset shift of the
    /// bit-reversed coefficients with 1/n folded into its powers, then the forward
    /// transform by decimation in time. No scale pass and no bit reversal; runs shorter
    /// than 2^COSET_BR_MIN_LOG take the two transforms.
    pub(crate) fn ntt_domain_to_coset(&self, buf: &mut OpenClFrBuffer) -> Result<(), BackendError> {
        let Some((ctx, log_n)) = self.fused_coset_run(buf) else {
            self.ntt_transform(buf, Transform::Intt, NttOrder::NaturalToBitReversed)?;
            return self.ntt_transform(buf, Transform::CosetNtt, NttOrder::BitReversedToNatural);
        };
        let (mem, n) = (&buf.data.chunks[0], buf.data.len);
        self.ntt(ctx, mem, log_n, n, None, false, true)?;
        self.coset_ntt_of_bit_reversed(ctx, mem, n, log_n, inverse_size(log_n), false)
    }

    /// [`ComputeBackend::coset_intt_scaled`](sluice_backend::ComputeBackend::coset_intt_scaled):
    /// the coset INTT with `factor` folded into its coset powers beside 1/n (no scale pass).
    pub(crate) fn ntt_coset_intt_scaled(
        &self,
        buf: &mut OpenClFrBuffer,
        factor: Fr,
    ) -> Result<(), BackendError> {
        let Some((ctx, log_n)) = self.fused_coset_run(buf) else {
            sluice_backend::ComputeBackend::scale(self, buf, factor)?;
            return self.ntt_transform(buf, Transform::CosetIntt, NttOrder::NaturalToNatural);
        };
        let (mem, n) = (&buf.data.chunks[0], buf.data.len);
        self.coset_intt_of_natural(ctx, mem, n, log_n, factor, false)
    }

    /// The coset NTT, every element times `factor`, of bit-reversed runs of 2^log_n
    /// (`log_n >= COSET_BR_MIN_LOG`): shifted where they are, then decimation in time
    /// (natural output, reversed again where `output_br`). Reversing them first cost two
    /// passes over the data.
    fn coset_ntt_of_bit_reversed(
        &self,
        ctx: &DeviceCtx,
        mem: &ocl::core::Mem,
        count: usize,
        log_n: u32,
        factor: Fr,
        output_br: bool,
    ) -> Result<(), BackendError> {
        let g = Fr::MULTIPLICATIVE_GENERATOR;
        self.coset_powers_br_chunk(ctx, mem, count, log_n, g, factor)?;
        self.ntt(ctx, mem, log_n, count, Some(false), true, output_br)
    }

    /// The coset INTT, every element times `factor`, of natural runs of 2^log_n
    /// (`log_n >= COSET_BR_MIN_LOG`): decimation in frequency without its 1/n, then the
    /// shift of the bit-reversed output with `factor` / n folded into its powers (no scale
    /// pass), reversed back unless `output_br`.
    fn coset_intt_of_natural(
        &self,
        ctx: &DeviceCtx,
        mem: &ocl::core::Mem,
        count: usize,
        log_n: u32,
        factor: Fr,
        output_br: bool,
    ) -> Result<(), BackendError> {
        self.ntt(ctx, mem, log_n, count, None, false, true)?;
        let g_inv = Fr::MULTIPLICATIVE_GENERATOR.invert().unwrap_or(Fr::ONE);
        let scale = inverse_size(log_n) * factor;
        self.coset_powers_br_chunk(ctx, mem, count, log_n, g_inv, scale)?;
        if !output_br {
            bit_reverse(ctx, mem, log_n, count)?;
        }
        Ok(())
    }

    /// The device and log2 length of a buffer whose coset transforms can be fused: one
    /// chunk of 2^k elements, k at least COSET_BR_MIN_LOG; `None` for the others, which
    /// take the unfused transforms (and their errors).
    fn fused_coset_run(&self, buf: &OpenClFrBuffer) -> Option<(&DeviceCtx, u32)> {
        let n = buf.data.len;
        let log_n = n.trailing_zeros();
        (n.is_power_of_two() && buf.data.chunks.len() == 1 && log_n >= COSET_BR_MIN_LOG)
            .then(|| (&self.devices[buf.data.device], log_n))
    }

    /// `transform` on each run of `segment` elements, chunk by chunk, in one batch of
    /// launches per chunk; a whole-buffer segment takes [`Self::ntt_transform`].
    pub(crate) fn ntt_transform_segments(
        &self,
        buf: &mut OpenClFrBuffer,
        segment: usize,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        let len = buf.data.len;
        sluice_backend::check_pow2_segment("transform_segments", len, segment)?;
        if segment == len {
            return self.ntt_transform(buf, transform, order);
        }
        let log_n = domain_log(segment)?;
        // Chunks hold a power of two elements, so a segment no longer than a chunk never
        // straddles two.
        if buf.data.chunks.len() > 1 && segment > buf.data.chunk_len {
            return Err(BackendError::Unsupported(format!(
                "transform_segments: segments of 2^{log_n} elements straddle the chunks of \
                 {} elements this buffer of {len} is split into (the device's largest \
                 allocation)",
                buf.data.chunk_len
            )));
        }
        if segment == 1 {
            return Ok(()); // every transform of one element is the identity
        }
        let ctx = &self.devices[buf.data.device];
        for (i, mem) in buf.data.chunks.iter().enumerate() {
            self.transform_chunk(ctx, mem, buf.data.chunk_elems(i), log_n, transform, order)?;
        }
        Ok(())
    }

    /// `transform` on each run of 2^log_n elements (log_n >= 1) of the `count` elements of
    /// `mem`, `count` a multiple of 2^log_n: every launch covers all the runs.
    fn transform_chunk(
        &self,
        ctx: &DeviceCtx,
        mem: &ocl::core::Mem,
        count: usize,
        log_n: u32,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        let g = Fr::MULTIPLICATIVE_GENERATOR;
        let input_br = order.input_bit_reversed();
        let output_br = order.output_bit_reversed();
        let coset = |shift: Fr| self.segment_powers_chunk(ctx, mem, count, 0, 1 << log_n, &[shift]);
        // Runs long enough to be shifted in bit-reversed order.
        let shift_br = log_n >= COSET_BR_MIN_LOG;
        let ntt = |inverse, input_br, output_br| {
            self.ntt(ctx, mem, log_n, count, inverse, input_br, output_br)
        };
        match transform {
            Transform::Ntt => ntt(Some(false), input_br, output_br),
            Transform::Intt => ntt(Some(true), input_br, output_br),
            Transform::CosetNtt if input_br && shift_br => {
                self.coset_ntt_of_bit_reversed(ctx, mem, count, log_n, Fr::ONE, output_br)
            }
            Transform::CosetNtt => {
                if input_br {
                    bit_reverse(ctx, mem, log_n, count)?;
                }
                coset(g)?;
                ntt(Some(false), false, output_br)
            }
            Transform::CosetIntt if !input_br && shift_br => {
                self.coset_intt_of_natural(ctx, mem, count, log_n, Fr::ONE, output_br)
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

    /// (I)NTT of each run of 2^log_n elements of the `count` in `mem`; input and output
    /// orders as given (not both bit-reversed). Natural input runs decimation in frequency (bit-reversed output),
    /// bit-reversed input decimation in time (natural output); a bit reversal fixes the
    /// order otherwise. `inverse`: `Some(false)` forward, `Some(true)` inverse with its
    /// 1/n, `None` inverse without it (the caller folds 1/n into a later pass).
    #[allow(clippy::too_many_arguments)]
    fn ntt(
        &self,
        ctx: &DeviceCtx,
        mem: &ocl::core::Mem,
        log_n: u32,
        count: usize,
        inverse: Option<bool>,
        input_br: bool,
        output_br: bool,
    ) -> Result<(), BackendError> {
        let tw = self.twiddles(ctx, log_n, inverse != Some(false))?;
        if input_br {
            passes(ctx, mem, &tw, log_n, count, false)?;
            if output_br {
                bit_reverse(ctx, mem, log_n, count)?;
            }
        } else {
            passes(ctx, mem, &tw, log_n, count, true)?;
            if !output_br {
                bit_reverse(ctx, mem, log_n, count)?;
            }
        }
        if inverse == Some(true) {
            self.scale_chunk(ctx, mem, count, inverse_size(log_n))?;
        }
        Ok(())
    }

    fn twiddles(
        &self,
        ctx: &DeviceCtx,
        log_n: u32,
        inverse: bool,
    ) -> Result<std::sync::Arc<Twiddles>, BackendError> {
        let mut map = lock(&ctx.twiddles);
        if let Some(t) = map.get(&(log_n, inverse)) {
            return Ok(t.clone());
        }
        let t = std::sync::Arc::new(Twiddles::new(self, ctx, log_n, inverse)?);
        map.insert((log_n, inverse), t.clone());
        Ok(t)
    }
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

/// Most columns (log2) one pass's work group owns: 8 adjacent elements, 256 contiguous bytes
/// per tile row. `SLUICE_NTT_COLUMNS` (0-3) overrides it for experiments; 0 gives the old
/// one-column sets.
fn max_columns_log() -> u32 {
    static C: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *C.get_or_init(|| crate::env_in("SLUICE_NTT_COLUMNS", 0..=3).unwrap_or(3))
}

/// Rounds each work item of a pass runs in registers between local-memory exchanges (log2
/// of the register radix): 1 (one butterfly per item per round, an exchange after every
/// round), or `SLUICE_NTT_RADIX` (1-2) for experiments. Measured on an H200, NTT 2^27 / 2^24
/// with the default tiles: r = 1 63.9 / 7.5 ms, 2 67.1 / 9.0 ms, 3 100 / 14.6 ms (122
/// registers: 14 warps per SM against 32 at r = 1, and a stage of 12 inline products). The
/// r = 3 kernel is gone: it also took 5.4 of the Fr program's 12 s cold build.
fn radix_log() -> u32 {
    static R: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *R.get_or_init(|| crate::env_in("SLUICE_NTT_RADIX", 1..=2).unwrap_or(1))
}

/// Most tiles (log2) one work group of a pass runs with one twiddle table: 3, or
/// `SLUICE_NTT_TILES` (0-3) for experiments; 0 computes the table for every tile. Measured
/// on an H200 at r = 1, NTT 2^27: 3 tiles (log2) 63.9 ms, 2 64.6, 1 66.1, 0 69.7.
fn max_tiles_log() -> u32 {
    static T: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *T.get_or_init(|| crate::env_in("SLUICE_NTT_TILES", 0..=3).unwrap_or(3))
}

/// How [`passes_with`] lays out the passes of one transform.
#[derive(Clone, Copy, Debug)]
struct PassConfig {
    /// Rounds per register stage (1-2), at most the pass's rounds.
    radix_log: u32,
    /// Most elements (log2) per tile.
    max_rounds: u32,
    /// Most adjacent columns (log2) per tile.
    max_cols_log: u32,
    /// Most tiles (log2) per work group.
    max_tiles_log: u32,
    /// Work groups a pass keeps at least when its groups take several tiles.
    min_groups: usize,
}

impl PassConfig {
    fn for_device(ctx: &DeviceCtx) -> Self {
        PassConfig {
            radix_log: radix_log(),
            max_rounds: MAX_ROUNDS_PER_PASS,
            max_cols_log: max_columns_log(),
            max_tiles_log: max_tiles_log(),
            min_groups: GROUPS_PER_UNIT * ctx.info.compute_units.max(1) as usize,
        }
    }
}

/// The passes of one transform of 2^log_n: `(log_m0, deg, log_c)`, `deg` rounds from
/// half-size 2^log_m0 over tiles of 2^log_c adjacent columns, at most `max_log` (work items
/// per group, log2, plus the register rounds) elements per tile; in DIT order (DIF runs
/// them reversed).
fn schedule(log_n: u32, max_log: u32, max_cols_log: u32) -> Vec<(u32, u32, u32)> {
    let mut passes = Vec::new();
    let mut log_m0 = 0;
    while log_m0 < log_n {
        let log_c = log_m0.min(max_cols_log).min(max_log - 1);
        let deg = (max_log - log_c).min(log_n - log_m0);
        passes.push((log_m0, deg, log_c));
        log_m0 += deg;
    }
    passes
}

/// Tiles (log2) per work group for a pass of `deg` rounds from 2^log_m0 over tiles of
/// 2^log_c columns, `count` elements in transforms of 2^log_n: tiles of the same columns
/// (the transform's 2^(log_n - log_m0 - deg) blocks) share a group, as many as keep
/// `min_groups` groups.
fn tiles_log(
    count: usize,
    log_n: u32,
    (log_m0, deg, log_c): (u32, u32, u32),
    c: &PassConfig,
) -> u32 {
    let tiles = count >> (deg + log_c);
    let mut t = c.max_tiles_log.min(log_n - log_m0 - deg);
    while t > 0 && tiles >> t < c.min_groups {
        t -= 1;
    }
    t
}

/// All radix-2 rounds of each run of 2^log_n of the `count` elements, grouped into passes
/// of up to MAX_ROUNDS_PER_PASS rounds over tiles of adjacent columns.
fn passes(
    ctx: &DeviceCtx,
    mem: &ocl::core::Mem,
    tw: &Twiddles,
    log_n: u32,
    count: usize,
    dif: bool,
) -> Result<(), BackendError> {
    passes_with(
        ctx,
        mem,
        tw,
        log_n,
        count,
        dif,
        &PassConfig::for_device(ctx),
    )
}

fn passes_with(
    ctx: &DeviceCtx,
    mem: &ocl::core::Mem,
    tw: &Twiddles,
    log_n: u32,
    count: usize,
    dif: bool,
    c: &PassConfig,
) -> Result<(), BackendError> {
    let kernel = |r: u32| ctx.kernel(ProgramKind::Fr, PASS_KERNELS[r as usize - 1]);
    // A tile of 2^k elements needs 2^(k-r) work items, within the kernel's limit (its
    // registers) and the device's.
    let limit = match kernel(c.radix_log)?.work_group_limit() {
        0 => ctx.info.max_work_group_size,
        l => l.min(ctx.info.max_work_group_size),
    };
    let wg_log = usize::BITS - 1 - limit.max(1).leading_zeros();
    let max_log = c.max_rounds.min(wg_log + c.radix_log);
    let mut plan = schedule(log_n, max_log, c.max_cols_log);
    if dif {
        plan.reverse();
    }
    for pass in plan {
        let (log_m0, deg, log_c) = pass;
        // A pass of fewer rounds than the radix runs them all in one stage.
        let r = c.radix_log.min(deg);
        let tiles = tiles_log(count, log_n, pass, c);
        kernel(r)?
            .mem(mem)?
            .mem(&tw.lo)?
            .mem(&tw.hi)?
            .local_words(16 << (deg + log_c))?
            .u32(log_n)?
            .u32(log_m0)?
            .u32(deg)?
            .u32(tw.lo_bits)?
            .u32(u32::from(dif))?
            .u32(log_c)?
            .u32(tiles)?
            .run(count >> (r + tiles), Some(1 << (deg + log_c - r)))?;
    }
    Ok(())
}

/// Bit-reverses each run of 2^log_n (log_n >= 1) of the `count` elements: groups of 256
/// items over 256 elements each, 512 elements of local memory.
fn bit_reverse(
    ctx: &DeviceCtx,
    mem: &ocl::core::Mem,
    log_n: u32,
    count: usize,
) -> Result<(), BackendError> {
    ctx.kernel(ProgramKind::Fr, "fr_bit_reverse")?
        .mem(mem)?
        .local_words(8 * 512)?
        .u32(log_n)?
        .u32(count as u32)?
        .run(count, Some(256))
}

#[cfg(test)]
mod tests {
    use ff::Field;
    use sluice_backend::{BackendError, ComputeBackend, NttOrder, Transform};
    use sluice_field::Fr;
    use sluice_ntt::Domain;

    use crate::testing::{backend, rng, split_backend};
    use crate::OpenClBackend;

    /// The CPU reference (sluice-ntt) for one transform.
    fn reference(data: &mut [Fr], t: Transform, order: NttOrder) {
        let d = Domain::<Fr>::for_size(data.len()).unwrap();
        sluice_backend_cpu::transform_on_host(&d, data, t, order).unwrap();
    }

    /// Every round of every size is run once, in order, each tile within the work-group
    /// limit and never wider than the stride; a group's tiles are blocks of one transform.
    #[test]
    fn schedules_cover_every_round_once() {
        for max_log in [2, 5, 9] {
            for max_cols in 0..=3 {
                for log_n in 1..=27 {
                    let plan = super::schedule(log_n, max_log, max_cols);
                    let mut next = 0;
                    for &(log_m0, deg, log_c) in &plan {
                        assert_eq!(log_m0, next, "2^{log_n}: {plan:?}");
                        assert!(deg >= 1 && deg + log_c <= max_log, "{plan:?}");
                        assert!(log_c <= log_m0 && log_c <= max_cols, "{plan:?}");
                        next += deg;
                        for min_groups in [0, 1 << 12] {
                            let c = config(3, max_log, max_cols, 3, min_groups);
                            let t = super::tiles_log(3 << log_n, log_n, (log_m0, deg, log_c), &c);
                            assert!(t <= 3 && t + log_m0 + deg <= log_n, "{plan:?}: {t}");
                            let groups = (3usize << log_n) >> (deg + log_c + t);
                            assert!(t == 0 || groups >= min_groups, "{plan:?}: {t}");
                        }
                    }
                    assert_eq!(next, log_n, "2^{log_n}: {plan:?}");
                }
            }
        }
    }

    fn config(
        radix_log: u32,
        max_rounds: u32,
        max_cols_log: u32,
        max_tiles_log: u32,
        min_groups: usize,
    ) -> super::PassConfig {
        super::PassConfig {
            radix_log,
            max_rounds,
            max_cols_log,
            max_tiles_log,
            min_groups,
        }
    }

    /// The passes alone (DIT: bit-reversed to natural, DIF: natural to bit-reversed) on 3
    /// transforms of 2^log_n against sluice-ntt, for every register radix, with tiles small
    /// enough for passes of every length (rounds not a multiple of the radix, short last
    /// passes, passes shorter than the radix), one or several columns, and one or up to 8
    /// tiles per group.
    #[test]
    fn passes_match_sluice_ntt_for_every_radix_and_layout() {
        let Some(b) = backend() else { return };
        let ctx = &b.devices[0];
        for log_n in 1..=12u32 {
            let mut r = rng(500 + u64::from(log_n));
            let input: Vec<Fr> = (0..3usize << log_n).map(|_| Fr::random(&mut r)).collect();
            let tw = b.twiddles(ctx, log_n, false).unwrap();
            for dif in [false, true] {
                let order = if dif {
                    NttOrder::NaturalToBitReversed
                } else {
                    NttOrder::BitReversedToNatural
                };
                let mut want = input.clone();
                want.chunks_mut(1 << log_n)
                    .for_each(|s| reference(s, Transform::Ntt, order));
                for radix in 1..=2 {
                    for max_rounds in [3, 4, 5, 7, 9] {
                        for (cols, tiles) in [(0, 0), (3, 0), (2, 3), (3, 3)] {
                            let c = config(radix, max_rounds, cols, tiles, 0);
                            let buf = b.upload_fr("passes", &input, input.len()).unwrap();
                            let mem = &buf.data.chunks[0];
                            super::passes_with(ctx, mem, &tw, log_n, input.len(), dif, &c).unwrap();
                            let mut got = vec![Fr::ZERO; input.len()];
                            b.read_fr(&buf, 0, &mut got).unwrap();
                            let seed = 500 + log_n;
                            assert!(got == want, "2^{log_n} dif {dif}: {c:?} (seed {seed})");
                        }
                    }
                }
            }
        }
    }

    /// The bit reversal of every size from 2^1 to 2^16 (both of its paths) in one and in
    /// three runs against the host's permutation.
    #[test]
    fn bit_reversal_matches_the_host() {
        let Some(b) = backend() else { return };
        let ctx = &b.devices[0];
        for log_n in 1..=16u32 {
            for runs in [1usize, 3] {
                let n = 1usize << log_n;
                let mut r = rng(600 + u64::from(log_n));
                let input: Vec<Fr> = (0..runs * n).map(|_| Fr::random(&mut r)).collect();
                let want: Vec<Fr> = (0..runs * n)
                    .map(|i| {
                        let j = (i % n).reverse_bits() >> (usize::BITS - log_n);
                        input[i - i % n + j]
                    })
                    .collect();
                let buf = b.upload_fr("bit reversal", &input, input.len()).unwrap();
                super::bit_reverse(ctx, &buf.data.chunks[0], log_n, input.len()).unwrap();
                let mut got = vec![Fr::ZERO; input.len()];
                b.read_fr(&buf, 0, &mut got).unwrap();
                assert!(got == want, "2^{log_n} x {runs} (seed {})", 600 + log_n);
            }
        }
    }

    #[test]
    fn every_transform_and_order_matches_sluice_ntt() {
        let Some(b) = backend() else { return };
        // 2^10 and 2^13 need a partial second pass; 2^9 ends on one full pass.
        for log_n in [0u32, 1, 2, 3, 5, 8, 9, 10, 13] {
            for (ti, t) in Transform::ALL.into_iter().enumerate() {
                for (oi, order) in NttOrder::ALL.into_iter().enumerate() {
                    let seed = u64::from(log_n) * 100 + ti as u64 * 10 + oi as u64;
                    let mut r = rng(seed);
                    let input: Vec<Fr> = (0..1usize << log_n).map(|_| Fr::random(&mut r)).collect();
                    let mut want = input.clone();
                    reference(&mut want, t, order);
                    let mut buf = b.upload_fr("ntt", &input, input.len()).unwrap();
                    b.transform(&mut buf, t, order).unwrap();
                    let mut got = vec![Fr::ZERO; input.len()];
                    b.read_fr(&buf, 0, &mut got).unwrap();
                    assert!(
                        got == want,
                        "{t:?} {order:?} of 2^{log_n} differs (seed {seed})"
                    );
                }
            }
        }
    }

    /// `transform_segments` in segments of 2^seg_log of `len` random elements against
    /// sluice-ntt on each segment, for every transform and order.
    fn segments_match_sluice_ntt(b: &OpenClBackend, len: usize, seg_log: u32, seed: u64) {
        let segment = 1usize << seg_log;
        let mut r = rng(seed);
        let input: Vec<Fr> = (0..len).map(|_| Fr::random(&mut r)).collect();
        for t in Transform::ALL {
            for order in NttOrder::ALL {
                let mut want = input.clone();
                want.chunks_mut(segment)
                    .for_each(|s| reference(s, t, order));
                let mut buf = b.upload_fr("segments", &input, input.len()).unwrap();
                b.transform_segments(&mut buf, segment, t, order).unwrap();
                let mut got = vec![Fr::ZERO; len];
                b.read_fr(&buf, 0, &mut got).unwrap();
                assert!(
                    got == want,
                    "{t:?} {order:?} in segments of 2^{seg_log} of {len} differs (seed {seed})"
                );
            }
        }
    }

    #[test]
    fn transform_segments_matches_sluice_ntt_per_segment() {
        let Some(b) = backend() else { return };
        // Segments of one and two elements; a partial pass; one full pass (2^9); a full and
        // a partial pass (2^10); many segments of a two-pass transform; the whole buffer.
        for (i, (log_n, seg_log)) in [(4, 0), (5, 1), (6, 3), (10, 9), (12, 10), (13, 5), (11, 11)]
            .into_iter()
            .enumerate()
        {
            segments_match_sluice_ntt(b, 1 << log_n, seg_log, 300 + i as u64);
        }
    }

    #[test]
    fn transform_segments_on_split_buffers() {
        let Some(s) = split_backend() else { return };
        // Chunks of 128 elements: segments of a chunk, of less, and 2.5 chunks (the last one
        // partial) in segments of 64.
        for (i, (len, seg_log)) in [(1024, 7), (1024, 4), (320, 6)].into_iter().enumerate() {
            segments_match_sluice_ntt(s, len, seg_log, 400 + i as u64);
        }
        let mut buf = s.alloc_fr("split", 1024).unwrap();
        for segment in [256, 1024] {
            assert!(
                matches!(
                    s.transform_segments(
                        &mut buf,
                        segment,
                        Transform::Ntt,
                        NttOrder::NaturalToNatural
                    ),
                    Err(BackendError::Unsupported(_))
                ),
                "segments of {segment} straddle chunks of 128"
            );
        }
    }

    #[test]
    fn bad_segments_are_invalid_input() {
        let Some(b) = backend() else { return };
        let mut buf = b.alloc_fr("segments", 48).unwrap();
        for segment in [0, 3, 32, 96] {
            assert!(
                matches!(
                    b.transform_segments(
                        &mut buf,
                        segment,
                        Transform::Intt,
                        NttOrder::NaturalToNatural
                    ),
                    Err(BackendError::InvalidInput(_))
                ),
                "segment {segment} of 48"
            );
        }
    }

    #[test]
    fn ntt_then_intt_is_the_identity_at_2_14() {
        let Some(b) = backend() else { return };
        let seed = 7;
        let mut r = rng(seed);
        let input: Vec<Fr> = (0..1 << 14).map(|_| Fr::random(&mut r)).collect();
        let mut buf = b.upload_fr("ntt", &input, input.len()).unwrap();
        b.transform(
            &mut buf,
            Transform::CosetNtt,
            NttOrder::NaturalToBitReversed,
        )
        .unwrap();
        b.transform(
            &mut buf,
            Transform::CosetIntt,
            NttOrder::BitReversedToNatural,
        )
        .unwrap();
        let mut got = vec![Fr::ZERO; input.len()];
        b.read_fr(&buf, 0, &mut got).unwrap();
        assert!(got == input, "coset round trip at 2^14 (seed {seed})");
    }

    #[test]
    fn bad_sizes_and_split_buffers_are_errors() {
        let Some(b) = backend() else { return };
        let mut buf = b.alloc_fr("odd", 6).unwrap();
        assert!(matches!(
            b.transform(&mut buf, Transform::Ntt, NttOrder::NaturalToNatural),
            Err(BackendError::LengthMismatch {
                expected: 8,
                got: 6,
                ..
            })
        ));
        let Some(s) = split_backend() else { return };
        let mut buf = s.alloc_fr("split", 1024).unwrap();
        assert!(matches!(
            s.transform(&mut buf, Transform::Ntt, NttOrder::NaturalToNatural),
            Err(BackendError::Unsupported(_))
        ));
    }
}
