//! Multi-scalar multiplication on the device(s): bases resident and split across devices
//! ([`bases`]), or decoded there from parameter files' bytes ([`decode`]), scalars prepared on the device that uses them ([`scalars`]), launches
//! shaped by a cost model ([`plan`]) and queued phase by phase ([`launch`]), one per
//! (device, bases chunk, plan), their sums added on the host ([`finish`]).

mod bases;
mod curve;
mod decode;
#[cfg(test)]
mod decode_tests;
mod finish;
mod launch;
mod plan;
mod scalars;
#[cfg(test)]
mod tests;

use group::Group;
use sluice_backend::{BackendError, CurveGroup, Density, MemoryTracker};

pub use bases::{OpenClBases, OpenClG1Bases, OpenClG2Bases};
pub(crate) use curve::GpuCurve;
use finish::Pending;
use plan::{window_groups, LaunchBuffers, Plan, DIGIT_BITS};
pub(crate) use scalars::MsmScalars;
use scalars::{count_large, Batch, Source};

use crate::chunked::Chunked;
use crate::context::DeviceCtx;
use crate::repr::DeviceRepr;
use crate::tuning::MsmTuning;

/// The MSMs of a backend: its devices, the tracker their buffers count in, their tuning,
/// and whether bases get a shifted table.
pub(crate) struct Msm<'a> {
    pub(crate) devices: &'a [DeviceCtx],
    pub(crate) tracker: &'a MemoryTracker,
    pub(crate) tuning: &'a MsmTuning,
    pub(crate) shifted_bases: bool,
}

impl Msm<'_> {
    /// Makes `bases` resident, split evenly across the devices.
    pub(crate) fn upload_bases<A: GpuCurve>(
        &self,
        name: &str,
        bases: &[A],
    ) -> Result<OpenClBases<A>, BackendError> {
        let shifted = self.shifted_bases.then_some(self.tuning);
        bases::upload(self.devices, self.tracker, shifted, name, bases)
    }

    /// Makes bases resident from their uncompressed encodings, decoded on the devices (see
    /// [`ComputeBackend::upload_bases_encoded`](sluice_backend::ComputeBackend::upload_bases_encoded)).
    pub(crate) fn upload_bases_encoded<A: GpuCurve>(
        &self,
        name: &str,
        encoded: &[u8],
    ) -> Result<OpenClBases<A>, BackendError> {
        let shifted = self.shifted_bases.then_some(self.tuning);
        decode::upload_encoded(self.devices, self.tracker, shifted, name, encoded)
    }

    /// `sum_k scalars[var_k] * bases[skip + k]` (see
    /// [`ComputeBackend::msm_vartime`](sluice_backend::ComputeBackend::msm_vartime)): the
    /// used range of the bases cut into batches along the devices' parts and chunks, each
    /// device running its batches on a thread of its own.
    pub(crate) fn run<A: GpuCurve>(
        &self,
        bases: &OpenClBases<A>,
        skip: usize,
        scalars: MsmScalars<'_>,
        density: Option<&Density>,
    ) -> Result<A::Group, BackendError> {
        self.devices[0].mark("msm start");
        let used = sluice_backend::check_msm_bases(
            bases.len,
            skip,
            scalars.len(),
            density,
            scalars::count_used,
        )?;
        let source = Source::new(scalars, density)?;
        self.devices[0].mark("msm source");
        let work = self.batches(bases, skip, used, &source)?;
        let partials = self.on_each_device(work, |d, batches| {
            self.device_share(bases, &source, d, batches)
        });
        let mut total = A::Group::identity();
        for p in partials {
            total = total.add_vartime(&p?);
        }
        // The sums were read, so the queues have drained: what the MSM dropped (an owned
        // scalar buffer too) is freed now, not at some later drain.
        drop(source);
        self.devices.iter().for_each(|ctx| ctx.releases.drain());
        self.devices[0].mark("msm end");
        Ok(total)
    }

    /// The used range `[skip, skip + used)` cut along the devices' parts and chunks, by
    /// device. Scalars that another device holds are read back here, before any MSM is
    /// queued there (a read behind a queued MSM would wait for it).
    fn batches<A>(
        &self,
        bases: &OpenClBases<A>,
        skip: usize,
        used: usize,
        source: &Source<'_>,
    ) -> Result<Vec<Vec<Batch>>, BackendError> {
        let mut work: Vec<Vec<Batch>> = (0..bases.parts.len()).map(|_| Vec::new()).collect();
        for (d, part) in bases.parts.iter().enumerate().rev() {
            for c in 0..part.chunks.len() {
                let chunk_start = bases.starts[d] + c * part.chunk_len;
                let lo = chunk_start.max(skip);
                let hi = (chunk_start + part.chunk_elems(c)).min(skip + used);
                if lo >= hi {
                    continue;
                }
                let (k0, count) = (lo - skip, hi - lo);
                let early = match source.elsewhere_than(d) {
                    true => Some(source.prepare(self.devices, self.tracker, d, k0, count)?),
                    false => None,
                };
                work[d].push((c, lo - chunk_start, k0, count, early));
            }
        }
        Ok(work)
    }

    /// One host thread per device with work: each uploads its scalars, launches its
    /// batches and reads its sums, so the devices compute at once whatever the driver's
    /// submission policy (one thread queueing for both measured no overlap on two H200s).
    fn on_each_device<T: Send>(
        &self,
        work: Vec<Vec<Batch>>,
        share: impl Fn(usize, Vec<Batch>) -> Result<T, BackendError> + Sync,
    ) -> Vec<Result<T, BackendError>> {
        let work: Vec<(usize, Vec<Batch>)> = work
            .into_iter()
            .enumerate()
            .filter(|(_, w)| !w.is_empty())
            .collect();
        if work.len() <= 1 {
            return work.into_iter().map(|(d, w)| share(d, w)).collect();
        }
        std::thread::scope(|scope| {
            let share = &share;
            let handles: Vec<_> = work
                .into_iter()
                .map(|(d, w)| scope.spawn(move || share(d, w)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(BackendError::Driver {
                            code: 0,
                            message: "an MSM device thread panicked".into(),
                            build_log: None,
                        })
                    })
                })
                .collect()
        })
    }

    /// Device `d`'s batches: for each, its scalars prepared, its large ones counted, its
    /// plans launched (submitted at once, so the next batch's upload overlaps this one's
    /// compute); then every launch's sums read and added.
    fn device_share<A: GpuCurve>(
        &self,
        bases: &OpenClBases<A>,
        source: &Source<'_>,
        d: usize,
        batches: Vec<Batch>,
    ) -> Result<A::Group, BackendError> {
        let ctx = &self.devices[d];
        let table = bases.shifted.as_ref().map(|t| (t.c, t.spans.as_slice()));
        let mut pending: Vec<Pending<'_, A>> = Vec::with_capacity(batches.len());
        for (c, base_offset, k0, count, early) in batches {
            // One launch's buffers at a time, as `scratch_bytes` counts them: the last
            // launch's, dropped once queued, are idle (and spare) before the next batch's
            // scalars.
            if !pending.is_empty() {
                ctx.wait_and_drain()?;
            }
            ctx.mark("msm batch");
            let scalars = match early {
                Some(s) => s,
                None => source.prepare(self.devices, self.tracker, d, k0, count)?,
            };
            let large = count_large::<A>(ctx, self.tracker, &scalars, count)?;
            ctx.mark("msm counted");
            let piece = A::xyzz_words() * 4;
            let max_alloc = ctx.max_chunk_bytes;
            let launches = Plan::launches(count, large, table, max_alloc, piece, self.tuning);
            for (i, plan) in launches.into_iter().enumerate() {
                if i > 0 {
                    ctx.wait_and_drain()?;
                }
                log::debug!("{} MSM of {count} on device {d}: {plan:?}", A::PREFIX);
                // A folded plan reads its group's table buffer, window k's bases a chunk's
                // length apart.
                let (mem, stride) = match (bases.shifted.as_ref(), plan.fold) {
                    (Some(t), true) => (
                        &t.groups[d][c][plan.w0 / t.per_group],
                        bases.parts[d].chunk_elems(c),
                    ),
                    _ => (&bases.parts[d].chunks[c], 0),
                };
                let bases = (mem, base_offset, stride);
                let point_group = self.tuning.point_group;
                pending.push(launch::launch::<A>(
                    ctx,
                    self.tracker,
                    bases,
                    &scalars,
                    count,
                    plan,
                    point_group,
                )?);
            }
            ctx.flush()?;
        }
        let mut total = A::Group::identity();
        for p in pending {
            total = total.add_vartime(&p.finish()?);
        }
        Ok(total)
    }

    /// The most device bytes an MSM over `n` scalars allocates at once beyond its bases,
    /// summed over the devices (each runs one batch of its share at a time): its scalars
    /// and their density words, and the buffers of its launches as the plans that
    /// [`Msm::run`] would choose size them ([`Plan::buffers`]).
    pub(crate) fn scratch_bytes<A: GpuCurve>(&self, n: usize) -> u64 {
        let d = self.devices.len().max(1);
        // Each device's largest batch: its share of n, at most one chunk of bases.
        let batch = |ctx: &DeviceCtx| n.div_ceil(d).min(Chunked::chunk_len(ctx, A::WORDS));
        // With shifted bases, the folded plans of the table `upload_bases` makes for bases
        // split like these scalars: one shape for every device, from the longest chunk of
        // any.
        let table = self.shifted_bases.then(|| {
            let longest = self.devices.iter().map(batch).max().unwrap_or(1).max(1);
            let bytes = A::WORDS * 4;
            let (c, per) =
                bases::ShiftedTable::table_shape(self.devices, longest, bytes, self.tuning);
            (c, window_groups(DIGIT_BITS.div_ceil(c), per))
        });
        let table = table.as_ref().map(|(c, s)| (*c, s.as_slice()));
        let (piece, point) = (A::xyzz_words(), A::point_words());
        self.devices
            .iter()
            .map(|ctx| {
                let count = batch(ctx);
                // The plans depend on how many scalars are large: the fewest give the most
                // windows (entries), all of them the most buckets (pieces). Each buffer at
                // its largest over both bounds every plan in between.
                let sets: Vec<Vec<Plan>> = [0, count]
                    .iter()
                    .flat_map(|&large| {
                        let max_alloc = ctx.max_chunk_bytes;
                        let t = self.tuning;
                        [
                            Plan::launches(count, large, table, max_alloc, piece * 4, t),
                            vec![Plan::new(count, large, max_alloc, piece * 4, t)],
                        ]
                    })
                    .collect();
                // Entries at every window's full span: a plan for a count of large scalars
                // between the bounds sorts into fewer slots than that, but can sort into more
                // than either bound's plan.
                let buffers = sets
                    .iter()
                    .flatten()
                    .map(|p| LaunchBuffers {
                        entries: p.windows * p.span,
                        ..p.buffers(ctx.info, piece, point)
                    })
                    .fold(LaunchBuffers::default(), LaunchBuffers::max);
                // Launches after the first of a batch: the sums of those before are still
                // on the device.
                let earlier = sets.iter().map(Vec::len).max().unwrap_or(1) - 1;
                let count = count as u64;
                // Scalars, with 4 bytes more each for a density's words and ranks (12
                // bytes per 64 elements of the span: within that unless fewer than 3 in 64
                // are used); the large-scalar count; the launch's buffers.
                count * (32 + 4) + 4 + 4 * (buffers.words() + earlier * buffers.result) as u64
            })
            .sum()
    }
}
