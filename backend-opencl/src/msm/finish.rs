//! The host's share of an MSM: each launch's last window sums read back, added per set and
//! the sets combined.

use std::marker::PhantomData;

use group::Group;
use sluice_backend::{BackendError, CurveGroup};

use super::curve::GpuCurve;
use super::plan::Plan;
use crate::context::DeviceCtx;
use crate::release::DeviceTemp;
use crate::repr::as_words_mut;

/// A launched MSM batch whose window sums are still on the device.
pub(super) struct Pending<'a, A: GpuCurve> {
    ctx: &'a DeviceCtx,
    /// `per_window` points per window, window by window, that add up to its sum.
    results: DeviceTemp,
    per_window: usize,
    plan: Plan,
    _curve: PhantomData<A>,
}

impl<'a, A: GpuCurve> Pending<'a, A> {
    /// The launch of `plan` on `ctx` whose sums are `results`, `per_window` per set.
    pub(super) fn new(
        ctx: &'a DeviceCtx,
        results: DeviceTemp,
        per_window: usize,
        plan: Plan,
    ) -> Self {
        Pending {
            ctx,
            results,
            per_window,
            plan,
            _curve: PhantomData,
        }
    }

    /// Reads what is left of the bucket sets' sums, adds each set's points, and combines
    /// the sets: sum_w 2^(c w) S_w, or the one sum of a folded plan (its shifted bases did
    /// the doublings).
    pub(super) fn finish(self) -> Result<A::Group, BackendError> {
        let Plan { c, windows, .. } = self.plan;
        let mut points = vec![A::Group::identity(); windows * self.per_window];
        self.ctx.read(&self.results, 0, as_words_mut(&mut points))?;
        let mut acc = A::Group::identity();
        for window in points.chunks(self.per_window).rev() {
            for _ in 0..c {
                acc = acc.double();
            }
            acc = window.iter().fold(acc, |a, p| a.add_vartime(p));
        }
        Ok(acc)
    }
}
