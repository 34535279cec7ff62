//! The passes of a transform: radix-2 rounds grouped into passes over tiles in local
//! memory (each work item running 2^r elements through r rounds in registers between
//! exchanges), and the bit reversal.

use sluice_backend::BackendError;

use super::twiddles::Twiddles;
use crate::context::DeviceCtx;
use crate::source::ProgramKind;
use crate::tuning::NttTuning;

/// Most elements one pass's tile holds in local memory: 2^9 elements and their twiddles,
/// 32 KiB per work group (OpenCL guarantees 32 KiB of local memory); 2^27 takes four
/// passes (9 rounds on contiguous data, then 6 on tiles of 8 columns).
pub(super) const MAX_ROUNDS_PER_PASS: u32 = 9;

/// The pass kernels by register rounds r (`fr_ntt_pass_r{r}`, groups of 2^(k-r) items for a
/// tile of 2^k elements).
const PASS_KERNELS: [&str; 2] = ["fr_ntt_pass_r1", "fr_ntt_pass_r2"];

/// Work groups per compute unit a pass keeps before its groups take several tiles each
/// (sharing one twiddle table): enough to fill the device several times over.
const GROUPS_PER_UNIT: usize = 32;

/// How [`passes_with`] lays out the passes of one transform.
#[derive(Clone, Copy, Debug)]
pub(super) struct PassConfig {
    /// Rounds per register stage (1-2), at most the pass's rounds.
    pub(super) radix_log: u32,
    /// Most elements (log2) per tile.
    pub(super) max_rounds: u32,
    /// Most adjacent columns (log2) per tile.
    pub(super) max_cols_log: u32,
    /// Most tiles (log2) per work group.
    pub(super) max_tiles_log: u32,
    /// Work groups a pass keeps at least when its groups take several tiles.
    pub(super) min_groups: usize,
}

impl PassConfig {
    fn for_device(ctx: &DeviceCtx, tuning: &NttTuning) -> Self {
        PassConfig {
            radix_log: tuning.radix_log,
            max_rounds: MAX_ROUNDS_PER_PASS,
            max_cols_log: tuning.columns_log,
            max_tiles_log: tuning.tiles_log,
            min_groups: GROUPS_PER_UNIT * ctx.info.compute_units.max(1) as usize,
        }
    }
}

/// The passes of one transform of 2^log_n: `(log_m0, deg, log_c)`, `deg` rounds from
/// half-size 2^log_m0 over tiles of 2^log_c adjacent columns, at most `max_log` (work items
/// per group, log2, plus the register rounds) elements per tile; in DIT order (DIF runs
/// them reversed).
pub(super) fn schedule(log_n: u32, max_log: u32, max_cols_log: u32) -> Vec<(u32, u32, u32)> {
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
pub(super) fn tiles_log(
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
pub(super) fn passes(
    ctx: &DeviceCtx,
    mem: &ocl::core::Mem,
    tw: &Twiddles,
    (log_n, count): (u32, usize),
    dif: bool,
    tuning: &NttTuning,
) -> Result<(), BackendError> {
    let config = PassConfig::for_device(ctx, tuning);
    passes_with(ctx, mem, tw, log_n, count, dif, &config)
}

pub(super) fn passes_with(
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
pub(super) fn bit_reverse(
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
