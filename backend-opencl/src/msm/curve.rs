//! What the MSM kernels need of a group: its program, kernel names, work-group size and
//! the size of its points on the device, chosen by the group's kind.

use sluice_backend::{CurveAffine, GroupKind};

use crate::repr::DeviceRepr;
use crate::source::ProgramKind;
use crate::tuning::WorkGroup;

/// Work-group size of the point kernels on CPU devices (see [`GpuCurve::point_group`]).
const CPU_POINT_GROUP: usize = 64;

/// A group's MSM kernels on the device, for every [`CurveAffine`].
pub(crate) trait GpuCurve: CurveAffine {
    /// The program holding the group's kernels.
    const PROGRAM: ProgramKind;
    /// The kernels' name prefix (`G1_msm_count`, ...).
    const PREFIX: &'static str;
    /// Work-group size of the point kernels (accumulate, reduce, sum_groups) on GPUs;
    /// `None` leaves it to the driver. They use no local memory, so the size only sets how
    /// many groups fit an SM: on an H200 the G1 kernels (about 140 registers per item) fit
    /// seven groups of 64 where one of 256 fits, and ran faster so; the G2 kernels, at the
    /// register cap either way, ran slower with 64 than with the driver's choice
    /// (BENCHMARKS.md#msm-gpu).
    const GPU_POINT_GROUP: Option<usize>;

    /// The point kernels' work-group size on a device: `tuned` where set, else
    /// [`Self::GPU_POINT_GROUP`] on a GPU. A CPU driver runs a group's items on one thread,
    /// each item's private memory at once: PoCL's own choice (4096) overflowed that for G2
    /// and crashed in the reduce from 2^15 scalars on.
    fn point_group(tuned: Option<WorkGroup>, is_gpu: bool) -> Option<usize> {
        match tuned {
            Some(WorkGroup::Driver) => None,
            Some(WorkGroup::Items(g)) => Some(g),
            None if is_gpu => Self::GPU_POINT_GROUP,
            None => Some(CPU_POINT_GROUP),
        }
    }

    /// 32-bit words of a projective point.
    fn point_words() -> usize {
        <Self::Group as DeviceRepr>::WORDS
    }

    /// 32-bit words of a partial sum in XYZZ coordinates (`POINT_xyzz`: four coordinates
    /// where the projective point has three).
    fn xyzz_words() -> usize {
        Self::point_words() / 3 * 4
    }
}

impl<A: CurveAffine> GpuCurve for A {
    const PROGRAM: ProgramKind = match A::KIND {
        GroupKind::G1 => ProgramKind::G1Msm,
        GroupKind::G2 => ProgramKind::G2Msm,
    };
    const PREFIX: &'static str = match A::KIND {
        GroupKind::G1 => "G1",
        GroupKind::G2 => "G2",
    };
    const GPU_POINT_GROUP: Option<usize> = match A::KIND {
        GroupKind::G1 => Some(64),
        GroupKind::G2 => None,
    };
}
