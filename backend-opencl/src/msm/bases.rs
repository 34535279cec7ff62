//! MSM bases resident on the devices: split evenly across them, and where the backend asks
//! for it the shifted-bases table, 2^(c k) P for every window k.

use std::marker::PhantomData;

use sluice_backend::{Allocation, BackendError, Buffer, MemoryTracker};
use sluice_field::{G1Affine, G2Affine};

use super::curve::GpuCurve;
use super::plan::{table_window, window_groups, DIGIT_BITS};
use crate::chunked::Chunked;
use crate::context::DeviceCtx;
use crate::repr::{as_words, DeviceRepr};
use crate::tuning::MsmTuning;

/// Bases resident on the backend's devices: device `d` holds `parts[d]`, the bases
/// `starts[d]..starts[d] + parts[d].len`, so an MSM runs on every device at once.
pub struct OpenClBases<A> {
    pub(super) parts: Vec<Chunked>,
    pub(super) starts: Vec<usize>,
    pub(super) len: usize,
    /// The shifted-bases table, when the backend precomputes one
    /// ([`crate::OpenClConfig::shifted_bases`]).
    pub(super) shifted: Option<ShiftedTable>,
    _affine: PhantomData<fn() -> A>,
}

impl<A> Buffer for OpenClBases<A> {
    fn len(&self) -> usize {
        self.len
    }
}

/// Precomputed shifted bases: `groups[d][ch][g]` holds windows `[g per_group, ..)` of
/// 2^(c k) P for the bases of chunk `ch` of device part `d`, window k's at element
/// `(k - g per_group) chunk_elems(ch)` (the stride the scatter writes into its entries).
pub(super) struct ShiftedTable {
    /// Window bits of the table: the digits' c whenever an MSM uses it.
    pub(super) c: usize,
    /// Each buffer's digit windows `(w0, wn)`: ceil(256 / c) windows in groups of
    /// `per_group`.
    pub(super) spans: Vec<(usize, usize)>,
    /// Windows per buffer (a group).
    pub(super) per_group: usize,
    pub(super) groups: Vec<Vec<Vec<ocl::core::Mem>>>,
    _tracked: Vec<Allocation>,
}

/// G1 bases resident in an [`OpenClBackend`](crate::OpenClBackend).
pub type OpenClG1Bases = OpenClBases<G1Affine>;
/// G2 bases resident in an [`OpenClBackend`](crate::OpenClBackend).
pub type OpenClG2Bases = OpenClBases<G2Affine>;

/// Uploads `bases` split evenly across `devices`, with the shifted table where `shifted`
/// (the tuning its windows follow).
pub(super) fn upload<A: GpuCurve>(
    devices: &[DeviceCtx],
    tracker: &MemoryTracker,
    shifted: Option<&MsmTuning>,
    name: &str,
    bases: &[A],
) -> Result<OpenClBases<A>, BackendError> {
    let parts = write_parts::<A>(devices, tracker, name, as_words(bases))?;
    finish_upload(devices, tracker, shifted, name, parts)
}

/// `words` (whole points of `A::WORDS` words) split evenly across `devices`, each part
/// written to a buffer of its device; with each part, the index of its first point.
pub(super) fn write_parts<A: GpuCurve>(
    devices: &[DeviceCtx],
    tracker: &MemoryTracker,
    name: &str,
    words: &[u32],
) -> Result<Vec<(Chunked, usize)>, BackendError> {
    let (d, len) = (devices.len(), words.len() / A::WORDS);
    let mut parts = Vec::with_capacity(d);
    for (i, ctx) in devices.iter().enumerate() {
        let (start, end) = (len * i / d, len * (i + 1) / d);
        let part = Chunked::alloc(ctx, i, tracker, name, end - start, A::WORDS)?;
        // Fresh buffers: a pass streaming bases sends the next batch while the MSMs over
        // the last one run, not behind them on the kernels' queue.
        part.write_fresh(ctx, 0, &words[start * A::WORDS..end * A::WORDS])?;
        parts.push((part, start));
    }
    Ok(parts)
}

/// The bases of `parts`, with the shifted table where `shifted`.
pub(super) fn finish_upload<A: GpuCurve>(
    devices: &[DeviceCtx],
    tracker: &MemoryTracker,
    shifted: Option<&MsmTuning>,
    name: &str,
    parts: Vec<(Chunked, usize)>,
) -> Result<OpenClBases<A>, BackendError> {
    let len = parts.iter().map(|(p, _)| p.len).sum();
    let (parts, starts): (Vec<Chunked>, Vec<usize>) = parts.into_iter().unzip();
    let shifted = match shifted {
        Some(tuning) => Some(ShiftedTable::new::<A>(
            devices, tracker, tuning, name, &parts,
        )?),
        None => None,
    };
    Ok(OpenClBases {
        parts,
        starts,
        len,
        shifted,
        _affine: PhantomData,
    })
}

impl ShiftedTable {
    /// The shifted table's window bits and windows per buffer when the longest chunk of
    /// any part holds `chunk_len` bases of `bytes` each: one shape for every part, so its
    /// buffers fit the smallest allocation limit of any device.
    pub(super) fn table_shape(
        devices: &[DeviceCtx],
        chunk_len: usize,
        bytes: usize,
        tuning: &MsmTuning,
    ) -> (usize, usize) {
        let max_alloc = devices.iter().map(|c| c.max_chunk_bytes).min().unwrap_or(1);
        table_window(chunk_len, bytes, max_alloc, tuning)
    }

    /// The shifted-bases table of `parts` (see [`ShiftedTable`]): window 0 a copy of the
    /// bases, window k 2^c times window k - 1, computed on each part's device.
    fn new<A: GpuCurve>(
        devices: &[DeviceCtx],
        tracker: &MemoryTracker,
        tuning: &MsmTuning,
        name: &str,
        parts: &[Chunked],
    ) -> Result<ShiftedTable, BackendError> {
        let bytes = A::WORDS * 4;
        // One table shape for every part, sized for the longest chunk of any.
        let chunk_len = parts
            .iter()
            .map(|p| p.chunk_len.min(p.len))
            .max()
            .unwrap_or(1)
            .max(1);
        let (c, per_group) = Self::table_shape(devices, chunk_len, bytes, tuning);
        let windows = DIGIT_BITS.div_ceil(c);
        let spans = window_groups(windows, per_group);
        let what = format!("{name} (shifted)");
        let mut groups = Vec::with_capacity(parts.len());
        let mut tracked = Vec::with_capacity(parts.len());
        for part in parts {
            let ctx = &devices[part.device];
            let total = (windows * part.len * bytes) as u64;
            tracked.push(ctx.track(tracker, &what, total)?);
            let mut per_chunk = Vec::with_capacity(part.chunks.len());
            for (ch, src) in part.chunks.iter().enumerate() {
                let n = part.chunk_elems(ch);
                let bufs = spans
                    .iter()
                    .map(|&(_, wn)| ctx.raw_buffer(&what, wn * n * A::WORDS))
                    .collect::<Result<Vec<_>, _>>()?;
                for k in 0..windows {
                    // Window k from window k - 1 (from the bases for k = 0, unshifted).
                    let (from, from_off, shift) = match k {
                        0 => (src, 0, 0),
                        _ => (&bufs[(k - 1) / per_group], ((k - 1) % per_group) * n, c),
                    };
                    ctx.kernel(A::PROGRAM, &format!("{}_msm_shift", A::PREFIX))?
                        .mem(from)?
                        .mem(&bufs[k / per_group])?
                        .u32(from_off as u32)?
                        .u32(((k % per_group) * n) as u32)?
                        .u32(n as u32)?
                        .u32(shift as u32)?
                        .run(n.div_ceil(SHIFT_BATCH), None)?;
                }
                per_chunk.push(bufs);
            }
            groups.push(per_chunk);
            ctx.flush()?;
        }
        devices.iter().try_for_each(DeviceCtx::finish)?;
        Ok(ShiftedTable {
            c,
            spans,
            per_group,
            groups,
            _tracked: tracked,
        })
    }
}

/// Points per work item of the shift kernel (`POINT_SHIFT_BATCH` in `kernels/msm.cl`).
const SHIFT_BATCH: usize = 16;
