//! [`ComputeBackend`] for `Arc<B>`: one device's backend shared by several owners.
//!
//! A process may run several proving pipelines on one device at once, as a Filecoin prover
//! runs its PoSt and C2 (commit phase 2) pipelines side by side. They must share one backend
//! rather than open one each: a backend owns its device's queues, and its
//! [`MemoryTracker`] is what a pipeline's budget is checked against, so two backends on one
//! device would each believe the whole device memory theirs. With this impl a pipeline that
//! takes its backend by value (`P: ComputeBackend`) takes an `Arc<B>` as well, and every
//! clone of the `Arc` is the same backend, with the same tracker.
//!
//! Every method, the provided ones included, forwards to the inner backend, so the
//! backend's overrides (fused kernels, its own decoder, its host allocator, its H
//! ordering) are the ones that run; the buffers and bases are the inner backend's own.

use std::sync::Arc;

use sluice_field::{CurveAffine, Density, Fr, NttOrder};

use crate::compact::CompactVec;
use crate::compute_backend::{BackendInfo, ComputeBackend, Scalars, Transform};
use crate::error::BackendError;
use crate::host_vec::HostAllocator;
use crate::memory::{MemoryInfo, MemoryTracker};

/// A shared backend is the backend it points to: every method runs on `B`, and the buffers
/// and resident bases are `B`'s, so a buffer made through one clone of the `Arc` can be
/// used through another, or through `B` itself.
///
/// `B` must be sized: [`ComputeBackend::h_device_work`] is callable only on sized
/// backends (and the trait's generic methods leave no unsized implementor anyway).
impl<B: ComputeBackend> ComputeBackend for Arc<B> {
    type FrBuffer = B::FrBuffer;
    type Bases<A: CurveAffine> = B::Bases<A>;

    #[inline]
    fn info(&self) -> &BackendInfo {
        (**self).info()
    }

    #[inline]
    fn tracker(&self) -> &MemoryTracker {
        (**self).tracker()
    }

    #[inline]
    fn memory_info(&self) -> Result<MemoryInfo, BackendError> {
        (**self).memory_info()
    }

    #[inline]
    fn msm_scratch_bytes<A: CurveAffine>(&self, scalars: usize) -> u64 {
        (**self).msm_scratch_bytes::<A>(scalars)
    }

    #[inline]
    fn host_allocator(&self) -> Option<Arc<dyn HostAllocator>> {
        (**self).host_allocator()
    }

    #[inline]
    fn synchronize(&self) -> Result<(), BackendError> {
        (**self).synchronize()
    }

    #[inline]
    fn upload_fr(
        &self,
        name: &str,
        data: &[Fr],
        len: usize,
    ) -> Result<Self::FrBuffer, BackendError> {
        (**self).upload_fr(name, data, len)
    }

    #[inline]
    fn upload_compact(
        &self,
        name: &str,
        data: &CompactVec,
        len: usize,
    ) -> Result<Self::FrBuffer, BackendError> {
        (**self).upload_compact(name, data, len)
    }

    #[inline]
    fn upload_compact_range(
        &self,
        name: &str,
        data: &CompactVec,
        range: std::ops::Range<usize>,
    ) -> Result<Self::FrBuffer, BackendError> {
        (**self).upload_compact_range(name, data, range)
    }

    #[inline]
    fn alloc_fr(&self, name: &str, len: usize) -> Result<Self::FrBuffer, BackendError> {
        (**self).alloc_fr(name, len)
    }

    #[inline]
    fn copy_fr(&self, name: &str, src: &Self::FrBuffer) -> Result<Self::FrBuffer, BackendError> {
        (**self).copy_fr(name, src)
    }

    #[inline]
    fn write_fr(
        &self,
        buf: &mut Self::FrBuffer,
        offset: usize,
        data: &[Fr],
    ) -> Result<(), BackendError> {
        (**self).write_fr(buf, offset, data)
    }

    #[inline]
    fn read_fr(
        &self,
        buf: &Self::FrBuffer,
        offset: usize,
        out: &mut [Fr],
    ) -> Result<(), BackendError> {
        (**self).read_fr(buf, offset, out)
    }

    #[inline]
    fn transform(
        &self,
        buf: &mut Self::FrBuffer,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        (**self).transform(buf, transform, order)
    }

    #[inline]
    fn transform_segments(
        &self,
        buf: &mut Self::FrBuffer,
        segment: usize,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        (**self).transform_segments(buf, segment, transform, order)
    }

    #[inline]
    fn domain_to_coset(&self, buf: &mut Self::FrBuffer) -> Result<(), BackendError> {
        (**self).domain_to_coset(buf)
    }

    #[inline]
    fn coset_intt_scaled(&self, buf: &mut Self::FrBuffer, factor: Fr) -> Result<(), BackendError> {
        (**self).coset_intt_scaled(buf, factor)
    }

    #[inline]
    fn h_device_work<E, Ha, Hb, T>(
        &self,
        upload_a: impl FnOnce() -> Result<(Self::FrBuffer, Ha), E>,
        upload_b: impl FnOnce() -> Result<(Self::FrBuffer, Hb), E>,
        quotient: impl FnOnce(&mut Self::FrBuffer) -> Result<(), E>,
        beside: impl FnOnce() -> Result<T, E>,
    ) -> Result<(Self::FrBuffer, Option<T>), E>
    where
        Self: Sized,
        E: From<BackendError>,
    {
        (**self).h_device_work(upload_a, upload_b, quotient, beside)
    }

    #[inline]
    fn mul_assign(&self, a: &mut Self::FrBuffer, b: &Self::FrBuffer) -> Result<(), BackendError> {
        (**self).mul_assign(a, b)
    }

    #[inline]
    fn sub_assign(&self, a: &mut Self::FrBuffer, b: &Self::FrBuffer) -> Result<(), BackendError> {
        (**self).sub_assign(a, b)
    }

    #[inline]
    fn scale(&self, a: &mut Self::FrBuffer, s: Fr) -> Result<(), BackendError> {
        (**self).scale(a, s)
    }

    #[inline]
    fn segment_powers(
        &self,
        buf: &mut Self::FrBuffer,
        segment: usize,
        base: Fr,
        ratio: Fr,
    ) -> Result<(), BackendError> {
        (**self).segment_powers(buf, segment, base, ratio)
    }

    #[inline]
    fn distribute_powers(&self, a: &mut Self::FrBuffer, g: Fr) -> Result<(), BackendError> {
        (**self).distribute_powers(a, g)
    }

    #[inline]
    fn upload_bases<A: CurveAffine>(
        &self,
        name: &str,
        bases: &[A],
    ) -> Result<Self::Bases<A>, BackendError> {
        (**self).upload_bases(name, bases)
    }

    #[inline]
    fn upload_bases_encoded<A: CurveAffine>(
        &self,
        name: &str,
        encoded: &[u8],
    ) -> Result<Option<Self::Bases<A>>, BackendError> {
        (**self).upload_bases_encoded::<A>(name, encoded)
    }

    #[inline]
    fn msm_vartime<A: CurveAffine>(
        &self,
        bases: &Self::Bases<A>,
        skip: usize,
        scalars: Scalars<'_, Self>,
        density: Option<&Density>,
    ) -> Result<A::Group, BackendError> {
        (**self).msm_vartime(bases, skip, inner_scalars(scalars), density)
    }
}

/// The same scalars, typed for the inner backend: its buffers are the `Arc`'s.
#[inline]
fn inner_scalars<B: ComputeBackend>(scalars: Scalars<'_, Arc<B>>) -> Scalars<'_, B> {
    match scalars {
        Scalars::Host(values) => Scalars::Host(values),
        Scalars::Buffer(buf) => Scalars::Buffer(buf),
        Scalars::Owned(buf) => Scalars::Owned(buf),
    }
}
