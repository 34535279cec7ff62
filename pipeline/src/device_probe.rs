//! What the planner needs to know of a device: the bytes of a base there, each query's
//! resident bytes, the largest MSM's scratch, and whether its memory is the host's.

use sluice_backend::{ComputeBackend, MemoryKind};
use sluice_field::{G1Affine, G2Affine};
use sluice_groth16::{G1Query, HostParameters, QueryLengths};

use crate::PipelineError;

/// Device bytes of one base of each group (G1, G2) on `backend`, measured on an upload of
/// the first few points of the h and b_g2 queries (the file encodings' sizes where a query
/// is empty).
pub(crate) fn point_device_bytes<B: ComputeBackend, H: HostParameters + ?Sized>(
    backend: &B,
    params: &H,
) -> Result<[u64; 2], PipelineError> {
    const PROBE: usize = 4096;
    let lengths = params.query_lengths();
    let tracker = backend.tracker();
    // The tracker's growth while `upload` holds its bases, per point; freed before the
    // next probe (a backend that frees at its queue's drain frees at the synchronize).
    let per_point = |count: usize, upload: &dyn Fn() -> Result<(), PipelineError>| {
        let before = tracker.current(MemoryKind::Device);
        upload()?;
        let bytes = tracker.peak(MemoryKind::Device).max(before) - before;
        backend.synchronize()?;
        Ok::<u64, PipelineError>((bytes / count as u64).max(1))
    };
    tracker.reset_peaks();
    let g1 = match lengths.h.min(PROBE) {
        0 => 96,
        m => per_point(m, &|| {
            let points = params.g1_points_range(G1Query::H, 0..m)?;
            drop(backend.upload_bases("probe", &points)?);
            Ok(())
        })?,
    };
    tracker.reset_peaks();
    let g2 = match lengths.b_g2.min(PROBE) {
        0 => 192,
        m => per_point(m, &|| {
            let points = params.b_g2_points_range(0..m)?;
            drop(backend.upload_bases("probe", &points)?);
            Ok(())
        })?,
    };
    Ok([g1, g2])
}

/// Each query's device bytes when resident (h, l, a, b_g1, b_g2), from the bytes of a base.
pub(crate) fn query_device_bytes(q: &QueryLengths, [g1, g2]: [u64; 2]) -> [u64; 5] {
    let g1 = |n: usize| n as u64 * g1;
    [g1(q.h), g1(q.l), g1(q.a), g1(q.b_g1), q.b_g2 as u64 * g2]
}

/// Whether `backend` computes in host memory (the CPU backend, a CPU OpenCL device, a GPU
/// sharing the host's memory), so that its "device" budget is host memory too.
pub(crate) fn device_memory_is_host<B: ComputeBackend>(backend: &B) -> bool {
    backend.info().host_memory_shared
}

/// The scratch of a partition's largest MSM on `backend` (b_g2's too when it runs there).
pub(crate) fn msm_scratch_bytes<B: ComputeBackend>(
    backend: &B,
    q: &QueryLengths,
    b_g2_here: bool,
) -> u64 {
    let g1 = [q.h + 1, q.l, q.a, q.b_g1]
        .into_iter()
        .map(|n| backend.msm_scratch_bytes::<G1Affine>(n))
        .max()
        .unwrap_or(0);
    let g2 = match b_g2_here {
        true => backend.msm_scratch_bytes::<G2Affine>(q.b_g2),
        false => 0,
    };
    g1.max(g2)
}
