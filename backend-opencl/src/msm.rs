//! Multi-scalar multiplication on the device(s): bases resident and split across devices,
//! scalars prepared on the device that uses them, one Pippenger launch per (device, bases
//! chunk), partial sums added on the host.

use std::marker::PhantomData;

use sluice_backend::{Allocation, BackendError, Density, Scalars};
use sluice_field::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

use crate::context::{Chunked, DeviceCtx};
use crate::repr::{as_words, as_words_mut, DeviceRepr};
use crate::source::ProgramKind;
use crate::OpenClBackend;

/// Bits of a scalar the windows cover (Fr::NUM_BITS).
const SCALAR_BITS: usize = 255;

/// Bases resident on the backend's devices: device `d` holds `parts[d]`, the bases
/// `starts[d]..starts[d] + parts[d].len`, so an MSM runs on every device at once.
pub struct OpenClBases<A> {
    pub(crate) parts: Vec<Chunked>,
    pub(crate) starts: Vec<usize>,
    pub(crate) len: usize,
    _affine: PhantomData<fn() -> A>,
}

/// G1 bases resident in an [`OpenClBackend`].
pub type OpenClG1Bases = OpenClBases<G1Affine>;
/// G2 bases resident in an [`OpenClBackend`].
pub type OpenClG2Bases = OpenClBases<G2Affine>;

/// What the MSM needs of a group, on the host and on the device.
pub(crate) trait GpuCurve: DeviceRepr {
    type Proj: DeviceRepr;
    const PROGRAM: ProgramKind;
    const KERNEL: &'static str;
    fn identity() -> Self::Proj;
    fn add(a: &Self::Proj, b: &Self::Proj) -> Self::Proj;
    fn double(a: &Self::Proj) -> Self::Proj;
}

macro_rules! gpu_curve {
    ($affine:ty, $proj:ty, $program:expr, $kernel:literal) => {
        impl GpuCurve for $affine {
            type Proj = $proj;
            const PROGRAM: ProgramKind = $program;
            const KERNEL: &'static str = $kernel;
            fn identity() -> $proj {
                <$proj>::identity()
            }
            fn add(a: &$proj, b: &$proj) -> $proj {
                a.add_vartime(b)
            }
            fn double(a: &$proj) -> $proj {
                a.double()
            }
        }
    };
}

gpu_curve!(G1Affine, G1Projective, ProgramKind::G1Msm, "G1_msm_partial");
gpu_curve!(G2Affine, G2Projective, ProgramKind::G2Msm, "G2_msm_partial");

/// Window width and work split of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plan {
    window_bits: usize,
    windows: usize,
    groups: usize,
}

impl Plan {
    /// Minimises the launch's time estimate: work items run in `ceil(items / target)` waves,
    /// each item adds `n / groups` bases and reduces `2^c` buckets (twice).
    fn new(n: usize, ctx: &DeviceCtx, proj_bytes: usize) -> Plan {
        let per_cu = if ctx.info.is_gpu { 128 } else { 8 };
        let target = (ctx.info.compute_units.max(1) as usize) * per_cu;
        let bucket_budget = (ctx.info.max_alloc_bytes / 2) as usize;
        let mut best = (
            usize::MAX,
            Plan {
                window_bits: 1,
                windows: SCALAR_BITS,
                groups: 1,
            },
        );
        for c in 1..=16usize {
            let windows = SCALAR_BITS.div_ceil(c);
            let mut groups = (target / windows).clamp(1, n.max(1));
            while groups > 1 && groups * windows * ((1 << c) - 1) * proj_bytes > bucket_budget {
                groups /= 2;
            }
            if windows * ((1 << c) - 1) * proj_bytes > bucket_budget {
                break;
            }
            let waves = (windows * groups).div_ceil(target);
            let cost = waves * (n.div_ceil(groups) + (2 << c));
            if cost < best.0 {
                best = (
                    cost,
                    Plan {
                        window_bits: c,
                        windows,
                        groups,
                    },
                );
            }
        }
        best.1
    }
}

/// Where the MSM's scalars come from, after density compaction: the k-th used scalar is
/// `host[k]`, or element `index[k]` of the device buffer.
enum Source<'a> {
    Host(std::borrow::Cow<'a, [Fr]>),
    Buffer { buf: &'a Chunked, index: Vec<u32> },
}

impl OpenClBackend {
    pub(crate) fn upload_bases<A: GpuCurve>(
        &self,
        name: &str,
        bases: &[A],
    ) -> Result<OpenClBases<A>, BackendError> {
        let d = self.devices.len();
        let mut parts = Vec::with_capacity(d);
        let mut starts = Vec::with_capacity(d);
        for (i, ctx) in self.devices.iter().enumerate() {
            let (start, end) = (bases.len() * i / d, bases.len() * (i + 1) / d);
            let part = Chunked::alloc(ctx, i, &self.tracker, name, end - start, A::WORDS)?;
            part.write(ctx, 0, as_words(&bases[start..end]))?;
            parts.push(part);
            starts.push(start);
        }
        Ok(OpenClBases {
            parts,
            starts,
            len: bases.len(),
            _affine: PhantomData,
        })
    }

    pub(crate) fn msm<A: GpuCurve>(
        &self,
        bases: &OpenClBases<A>,
        skip: usize,
        scalars: Scalars<'_, Self>,
        density: Option<&Density>,
    ) -> Result<A::Proj, BackendError> {
        let scalars_len = match &scalars {
            Scalars::Host(s) => s.len(),
            Scalars::Buffer(b) => b.data.len,
        };
        if let Some(d) = density {
            if d.len() != scalars_len {
                return Err(BackendError::LengthMismatch {
                    what: "msm scalars (density length)",
                    expected: d.len(),
                    got: scalars_len,
                });
            }
        }
        let used = density.map_or(scalars_len, Density::count_ones);
        let available = bases.len.saturating_sub(skip);
        if used > available {
            return Err(BackendError::LengthMismatch {
                what: "msm bases (after skip)",
                expected: used,
                got: available,
            });
        }
        let used_positions = || -> Box<dyn Iterator<Item = usize> + '_> {
            match density {
                Some(d) => Box::new((0..d.len()).filter(|&i| d.get(i))),
                None => Box::new(0..scalars_len),
            }
        };
        let source = match scalars {
            Scalars::Host(s) => Source::Host(match density {
                Some(_) => used_positions().map(|i| s[i]).collect::<Vec<_>>().into(),
                None => s.into(),
            }),
            Scalars::Buffer(b) => {
                if scalars_len > u32::MAX as usize {
                    return Err(BackendError::Unsupported(
                        "an MSM over a scalar buffer of 2^32 or more elements".into(),
                    ));
                }
                Source::Buffer {
                    buf: &b.data,
                    index: used_positions().map(|i| i as u32).collect(),
                }
            }
        };

        // Batches: the used range [skip, skip + used) cut along parts and chunks. Devices
        // other than the scalars' are prepared first, so reading scalars back for them never
        // waits behind an MSM already queued there.
        let mut batches = Vec::new();
        for (d, part) in bases.parts.iter().enumerate().rev() {
            for c in 0..part.chunks.len() {
                let chunk_start = bases.starts[d] + c * part.chunk_len;
                let lo = chunk_start.max(skip);
                let hi = (chunk_start + part.chunk_elems(c)).min(skip + used);
                if lo < hi {
                    batches.push((d, c, lo - chunk_start, lo - skip, hi - lo));
                }
            }
        }
        let mut pending = Vec::with_capacity(batches.len());
        for (d, c, base_offset, k0, count) in batches {
            let scalars = self.prepare_scalars(d, &source, k0, count)?;
            pending.push(self.launch::<A>(
                d,
                &bases.parts[d].chunks[c],
                base_offset,
                &scalars.0,
                count,
            )?);
        }
        let mut total = A::identity();
        for p in pending {
            total = A::add(&total, &p.finish()?);
        }
        Ok(total)
    }

    /// The canonical (non-Montgomery) scalars `k0..k0 + count` of `source`, on device `d`.
    fn prepare_scalars(
        &self,
        d: usize,
        source: &Source<'_>,
        k0: usize,
        count: usize,
    ) -> Result<(ocl::core::Mem, Allocation), BackendError> {
        let ctx = &self.devices[d];
        let out = ctx.temp(&self.tracker, "msm scalars", count * 8)?;
        let out_mem = &out.0;
        let host_scalars: std::borrow::Cow<'_, [Fr]> = match source {
            Source::Host(s) => s[k0..k0 + count].into(),
            Source::Buffer { buf, index } if buf.device == d => {
                let idx = &index[k0..k0 + count];
                let (idx_mem, _tracked) = ctx.temp(&self.tracker, "msm scalar indices", count)?;
                ctx.write(&idx_mem, 0, idx)?;
                for (i, chunk) in buf.chunks.iter().enumerate() {
                    ctx.kernel(ProgramKind::Fr, "fr_gather_from_mont")?
                        .mem(out_mem)?
                        .mem(chunk)?
                        .mem(&idx_mem)?
                        .u32(count as u32)?
                        .u32((i * buf.chunk_len) as u32)?
                        .u32(buf.chunk_elems(i) as u32)?
                        .run(count, None)?;
                }
                return Ok(out);
            }
            Source::Buffer { buf, index } => {
                // Another device holds the scalars: read the span they cover, pick the used.
                let idx = &index[k0..k0 + count];
                let (first, last) = (idx[0] as usize, idx[count - 1] as usize);
                let mut span = vec![<Fr as ff::Field>::ZERO; last + 1 - first];
                buf.read(&self.devices[buf.device], first, as_words_mut(&mut span))?;
                idx.iter()
                    .map(|&i| span[i as usize - first])
                    .collect::<Vec<_>>()
                    .into()
            }
        };
        ctx.write(out_mem, 0, as_words(&host_scalars))?;
        ctx.kernel(ProgramKind::Fr, "fr_from_mont")?
            .mem(out_mem)?
            .mem(out_mem)?
            .u32(count as u32)?
            .run(count, None)?;
        Ok(out)
    }

    /// Enqueues one Pippenger launch over `count` bases from `base_offset` of `bases`.
    fn launch<A: GpuCurve>(
        &self,
        d: usize,
        bases: &ocl::core::Mem,
        base_offset: usize,
        scalars: &ocl::core::Mem,
        count: usize,
    ) -> Result<Pending<'_, A>, BackendError> {
        let ctx = &self.devices[d];
        let proj_bytes = A::Proj::WORDS * 4;
        let plan = Plan::new(count, ctx, proj_bytes);
        let items = plan.windows * plan.groups;
        let bucket_words = items * ((1 << plan.window_bits) - 1) * A::Proj::WORDS;
        let buckets = ctx.temp(&self.tracker, "msm buckets", bucket_words)?;
        let results = ctx.temp(&self.tracker, "msm results", items * A::Proj::WORDS)?;
        ctx.kernel(A::PROGRAM, A::KERNEL)?
            .mem(bases)?
            .mem(scalars)?
            .mem(&buckets.0)?
            .mem(&results.0)?
            .u32(base_offset as u32)?
            .u32(count as u32)?
            .u32(plan.groups as u32)?
            .u32(plan.windows as u32)?
            .u32(plan.window_bits as u32)?
            .run(items, None)?;
        // Dropping the buckets now is safe: OpenCL frees them once the kernel is done.
        drop(buckets);
        Ok(Pending {
            ctx,
            results,
            plan,
            _curve: PhantomData,
        })
    }
}

/// A launched MSM batch whose window sums are still on the device.
struct Pending<'a, A: GpuCurve> {
    ctx: &'a DeviceCtx,
    results: (ocl::core::Mem, Allocation),
    plan: Plan,
    _curve: PhantomData<A>,
}

impl<A: GpuCurve> Pending<'_, A> {
    /// Reads the (group, window) sums and combines them: sum_w 2^(c w) sum_g result[g][w].
    fn finish(self) -> Result<A::Proj, BackendError> {
        let Plan {
            window_bits,
            windows,
            groups,
        } = self.plan;
        let mut sums = vec![A::identity(); windows * groups];
        self.ctx.read(&self.results.0, 0, as_words_mut(&mut sums))?;
        let mut acc = A::identity();
        for w in (0..windows).rev() {
            for _ in 0..window_bits {
                acc = A::double(&acc);
            }
            for g in 0..groups {
                acc = A::add(&acc, &sums[g * windows + w]);
            }
        }
        Ok(acc)
    }
}

#[cfg(test)]
mod tests {
    use ff::Field;
    use group::{Curve, Group};
    use sluice_backend::{BackendError, ComputeBackend, Density, Scalars};
    use sluice_field::{Fr, G1Projective, G2Projective};

    use super::Plan;
    use crate::testing::{backend, rng, split_backend};
    use crate::OpenClBackend;

    /// `n` distinct bases (a seeded random start plus multiples of a random step), with the
    /// identity at a few positions.
    fn bases<G: Group + Curve>(n: usize, seed: u64) -> Vec<G::AffineRepr>
    where
        G::AffineRepr: Default + Copy,
    {
        let mut r = rng(seed);
        let step = G::random(&mut r);
        let mut p = G::random(&mut r);
        let mut v: Vec<G> = (0..n)
            .map(|i| {
                p += step;
                if i % 97 == 5 {
                    G::identity()
                } else {
                    p
                }
            })
            .collect();
        if let Some(last) = v.last_mut() {
            *last = G::identity();
        }
        let mut out = vec![G::AffineRepr::default(); n];
        G::batch_normalize(&v, &mut out);
        v.clear();
        out
    }

    /// Random scalars with 0, 1 and -1 sprinkled in.
    fn scalars(n: usize, seed: u64) -> Vec<Fr> {
        let mut r = rng(seed);
        (0..n)
            .map(|i| match i % 11 {
                3 => Fr::ZERO,
                4 => Fr::ONE,
                5 => -Fr::ONE,
                _ => Fr::random(&mut r),
            })
            .collect()
    }

    fn density(n: usize, seed: u64) -> Density {
        let mut r = rng(seed);
        (0..n).map(|_| r.next_u32() % 3 != 0).collect()
    }

    use rand_core::RngCore;

    /// Every way of calling msm_g1 / msm_g2 against sluice-msm on the same inputs.
    macro_rules! check_msm {
        ($b:expr, $n:expr, $seed:expr, $proj:ty, $upload:ident, $msm:ident, $cpu:path) => {{
            let (b, n, seed): (&OpenClBackend, usize, u64) = ($b, $n, $seed);
            let skip = 3;
            let all = bases::<$proj>(n + skip, seed);
            let resident = b.$upload("bases", &all).unwrap();
            let s = scalars(n, seed + 1);
            let want = $cpu(&all[skip..], &s, None).unwrap();
            let got = b.$msm(&resident, skip, Scalars::Host(&s), None).unwrap();
            assert!(got == want, "host scalars, n {n}, seed {seed}");
            let sbuf = b.upload_fr("scalars", &s).unwrap();
            let got = b
                .$msm(&resident, skip, Scalars::Buffer(&sbuf), None)
                .unwrap();
            assert!(got == want, "buffer scalars, n {n}, seed {seed}");

            // Density: the bases are dense over the used variables.
            let d = density(n, seed + 2);
            let used = d.count_ones();
            let want = $cpu(&all[skip..skip + used], &s, Some(&d)).unwrap();
            let got = b
                .$msm(&resident, skip, Scalars::Host(&s), Some(&d))
                .unwrap();
            assert!(got == want, "host scalars with density, n {n}, seed {seed}");
            let got = b
                .$msm(&resident, skip, Scalars::Buffer(&sbuf), Some(&d))
                .unwrap();
            assert!(
                got == want,
                "buffer scalars with density, n {n}, seed {seed}"
            );

            // Fewer scalars than bases uses a prefix; more is an error.
            let got = b
                .$msm(&resident, 0, Scalars::Host(&s[..n / 2]), None)
                .unwrap();
            let want = $cpu(&all[..n / 2], &s[..n / 2], None).unwrap();
            assert!(got == want, "prefix, n {n}, seed {seed}");
            let too_many = vec![Fr::ONE; n + skip + 1];
            assert!(matches!(
                b.$msm(&resident, 0, Scalars::Host(&too_many), None),
                Err(BackendError::LengthMismatch { .. })
            ));
            let empty = b.$msm(&resident, 0, Scalars::Host(&[]), None).unwrap();
            assert!(bool::from(empty.is_identity()), "empty msm, seed {seed}");
        }};
    }

    #[test]
    fn g1_msm_matches_sluice_msm() {
        let Some(b) = backend() else { return };
        for (i, n) in [1usize, 2, 100, 1 << 12].into_iter().enumerate() {
            check_msm!(
                b,
                n,
                1000 + i as u64,
                G1Projective,
                upload_g1_bases,
                msm_g1,
                sluice_msm::msm_g1
            );
        }
    }

    #[test]
    fn g2_msm_matches_sluice_msm() {
        let Some(b) = backend() else { return };
        for (i, n) in [1usize, 37, 1 << 10].into_iter().enumerate() {
            check_msm!(
                b,
                n,
                2000 + i as u64,
                G2Projective,
                upload_g2_bases,
                msm_g2,
                sluice_msm::msm_g2
            );
        }
    }

    /// Two contexts (two "devices") and chunks of 42 G1 / 21 G2 bases: bases split across
    /// devices and chunks, scalars read back across devices.
    #[test]
    fn msm_across_two_contexts_and_split_buffers() {
        let Some(b) = split_backend() else { return };
        assert_eq!(b.device_infos().len(), 2);
        check_msm!(
            b,
            500,
            3000,
            G1Projective,
            upload_g1_bases,
            msm_g1,
            sluice_msm::msm_g1
        );
        check_msm!(
            b,
            130,
            3001,
            G2Projective,
            upload_g2_bases,
            msm_g2,
            sluice_msm::msm_g2
        );
    }

    #[test]
    fn plans_fit_their_bucket_budget() {
        let Some(b) = backend() else { return };
        let ctx = &b.devices[0];
        for n in [1usize, 10, 1000, 1 << 20] {
            let p = Plan::new(n, ctx, 288);
            assert!(
                p.windows * p.window_bits >= 255 && p.groups >= 1,
                "{p:?} for {n}"
            );
            assert!(
                (p.windows * p.groups * ((1 << p.window_bits) - 1) * 288) as u64
                    <= ctx.max_chunk_bytes / 2,
                "{p:?} for {n}"
            );
        }
    }
}
