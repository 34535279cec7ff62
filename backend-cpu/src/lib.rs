//! `ComputeBackend` on the CPU.
//!
//! The reference every other backend is compared with, and a real CPU prover engine: NTTs
//! come from `sluice-ntt`, MSMs from `sluice-msm`, pointwise work is split across rayon's
//! threads. "Device" memory here is host RAM, tracked as [`MemoryKind::Device`] so that what
//! the backend holds stays distinguishable from what its caller holds.

mod host;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ff::Field;
use rayon::prelude::*;
use sluice_backend::huge_pages::empty_for;
use sluice_backend::{
    check_len, check_msm_bases, check_pow2_segment, check_range, check_segment, decode_base,
    encoded_len, Allocation, BackendError, BackendInfo, Buffer, ComputeBackend, CurveAffine,
    Density, Fr, LowestIndexed, MemoryInfo, MemoryKind, MemoryTracker, NttOrder, Scalars,
    Transform,
};
use sluice_ntt::Domain;

pub use host::transform_on_host;
use host::{msm_error, ntt_error};

/// Elements per rayon task in pointwise loops: large enough to amortise scheduling.
const POINTWISE_CHUNK: usize = 1 << 12;

/// The fewest bases a rayon task decodes (about a millisecond of G1 work).
const DECODE_MIN_LEN: usize = 1 << 12;

/// The CPU backend. Cheap to clone handles are not needed: share it by reference or `Arc`.
#[derive(Debug)]
pub struct CpuBackend {
    info: BackendInfo,
    tracker: MemoryTracker,
    /// Domains (with their twiddle tables) by log2 size, built once and reused across proofs.
    domains: Mutex<HashMap<u32, Arc<Domain<Fr>>>>,
}

/// A buffer of scalars in RAM, tracked while it lives.
#[derive(Debug)]
pub struct CpuFrBuffer {
    data: Vec<Fr>,
    _allocation: Allocation,
}

impl CpuFrBuffer {
    /// The scalars, for callers that hold a CPU buffer and want to read it in place.
    pub fn as_slice(&self) -> &[Fr] {
        &self.data
    }
}

impl Buffer for CpuFrBuffer {
    fn len(&self) -> usize {
        self.data.len()
    }
}

/// Resident bases in RAM, tracked while they live.
#[derive(Debug)]
pub struct CpuBases<A> {
    bases: Vec<A>,
    _allocation: Allocation,
}

impl<A> CpuBases<A> {
    /// The bases.
    pub fn as_slice(&self) -> &[A] {
        &self.bases
    }
}

impl<A> Buffer for CpuBases<A> {
    fn len(&self) -> usize {
        self.bases.len()
    }
}

impl Default for CpuBackend {
    fn default() -> Self {
        Self::with_tracker(MemoryTracker::default())
    }
}

impl CpuBackend {
    /// A backend with unlimited memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// A backend whose allocations are counted by `tracker` (which may carry limits).
    pub fn with_tracker(tracker: MemoryTracker) -> Self {
        CpuBackend {
            info: BackendInfo {
                name: format!("cpu ({} threads)", rayon::current_num_threads()),
                accelerator: false,
                host_memory_shared: true,
            },
            tracker,
            domains: Mutex::default(),
        }
    }

    /// The domain of `len` points (a power of two), cached.
    fn domain(&self, len: usize) -> Result<Arc<Domain<Fr>>, BackendError> {
        if !len.is_power_of_two() {
            return Err(BackendError::Unsupported(format!(
                "NTT of {len} elements: the length must be a power of two"
            )));
        }
        let log = len.trailing_zeros();
        let mut cache = self
            .domains
            .lock()
            .map_err(|_| BackendError::Unsupported("domain cache poisoned".into()))?;
        if let Some(d) = cache.get(&log) {
            return Ok(Arc::clone(d));
        }
        let d = Arc::new(Domain::new(log).map_err(ntt_error)?);
        cache.insert(log, Arc::clone(&d));
        Ok(d)
    }

    fn track<T>(&self, what: &str, len: usize) -> Result<Allocation, BackendError> {
        let bytes = (len as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        self.tracker.allocate(MemoryKind::Device, what, bytes)
    }

    fn pointwise(
        a: &mut CpuFrBuffer,
        b: &CpuFrBuffer,
        what: &'static str,
        op: impl Fn(&mut Fr, &Fr) + Sync,
    ) -> Result<(), BackendError> {
        check_len(what, a.data.len(), b.data.len())?;
        a.data
            .par_chunks_mut(POINTWISE_CHUNK)
            .zip(b.data.par_chunks(POINTWISE_CHUNK))
            .for_each(|(x, y)| x.iter_mut().zip(y).for_each(|(x, y)| op(x, y)));
        Ok(())
    }
}

impl ComputeBackend for CpuBackend {
    type FrBuffer = CpuFrBuffer;
    type Bases<A: CurveAffine> = CpuBases<A>;

    fn info(&self) -> &BackendInfo {
        &self.info
    }

    fn tracker(&self) -> &MemoryTracker {
        &self.tracker
    }

    fn memory_info(&self) -> Result<MemoryInfo, BackendError> {
        let total = sluice_backend::host_memory_bytes().ok_or_else(|| {
            BackendError::Unsupported("cannot read the machine's memory size".into())
        })?;
        Ok(MemoryInfo {
            total_bytes: total.0,
            free_bytes: Some(total.1),
            max_alloc_bytes: total.0,
        })
    }

    fn upload_fr(&self, name: &str, data: &[Fr], len: usize) -> Result<CpuFrBuffer, BackendError> {
        check_range("upload_fr", len, 0, data.len())?;
        let allocation = self.track::<Fr>(name, len)?;
        let mut copy = empty_for(&allocation, name, len)?;
        copy.par_extend(
            data.par_iter()
                .copied()
                .chain(rayon::iter::repeat_n(Fr::ZERO, len - data.len())),
        );
        Ok(CpuFrBuffer {
            data: copy,
            _allocation: allocation,
        })
    }

    fn copy_fr(&self, name: &str, src: &CpuFrBuffer) -> Result<CpuFrBuffer, BackendError> {
        self.upload_fr(name, &src.data, src.data.len())
    }

    fn write_fr(
        &self,
        buf: &mut CpuFrBuffer,
        offset: usize,
        data: &[Fr],
    ) -> Result<(), BackendError> {
        check_range("write_fr", buf.data.len(), offset, data.len())?;
        buf.data[offset..offset + data.len()].copy_from_slice(data);
        Ok(())
    }

    fn read_fr(
        &self,
        buf: &CpuFrBuffer,
        offset: usize,
        out: &mut [Fr],
    ) -> Result<(), BackendError> {
        check_range("read_fr", buf.data.len(), offset, out.len())?;
        out.copy_from_slice(&buf.data[offset..offset + out.len()]);
        Ok(())
    }

    fn transform(
        &self,
        buf: &mut CpuFrBuffer,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        let domain = self.domain(buf.data.len())?;
        transform_on_host(&domain, &mut buf.data, transform, order).map_err(ntt_error)
    }

    fn transform_segments(
        &self,
        buf: &mut CpuFrBuffer,
        segment: usize,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        check_pow2_segment("transform_segments", buf.data.len(), segment)?;
        let domain = self.domain(segment)?;
        let run = |data: &mut [Fr]| transform_on_host(&domain, data, transform, order);
        buf.data
            .par_chunks_mut(segment)
            .try_for_each(run)
            .map_err(ntt_error)
    }

    fn mul_assign(&self, a: &mut CpuFrBuffer, b: &CpuFrBuffer) -> Result<(), BackendError> {
        Self::pointwise(a, b, "mul_assign", |x, y| *x *= y)
    }

    fn sub_assign(&self, a: &mut CpuFrBuffer, b: &CpuFrBuffer) -> Result<(), BackendError> {
        Self::pointwise(a, b, "sub_assign", |x, y| *x -= y)
    }

    fn scale(&self, a: &mut CpuFrBuffer, s: Fr) -> Result<(), BackendError> {
        a.data
            .par_chunks_mut(POINTWISE_CHUNK)
            .for_each(|c| c.iter_mut().for_each(|x| *x *= s));
        Ok(())
    }

    fn segment_powers(
        &self,
        buf: &mut CpuFrBuffer,
        segment: usize,
        base: Fr,
        ratio: Fr,
    ) -> Result<(), BackendError> {
        let len = buf.data.len();
        check_segment("segment_powers", len, segment)?;
        let gens: Vec<Fr> = std::iter::successors(Some(base), |g| Some(*g * ratio))
            .take(len / segment)
            .collect();
        buf.data
            .par_chunks_mut(segment)
            .zip(gens.par_iter())
            .for_each(|(seg, g)| sluice_ntt::distribute_powers(seg, *g));
        Ok(())
    }

    fn upload_bases<A: CurveAffine>(
        &self,
        name: &str,
        bases: &[A],
    ) -> Result<CpuBases<A>, BackendError> {
        let allocation = self.track::<A>(name, bases.len())?;
        let mut copy = empty_for(&allocation, name, bases.len())?;
        copy.par_extend(bases.par_iter().cloned());
        Ok(CpuBases {
            bases: copy,
            _allocation: allocation,
        })
    }

    /// Decoded on all cores straight into the bases' own vector: no decoded copy beside it,
    /// and no placeholders written first.
    fn upload_bases_encoded<A: CurveAffine>(
        &self,
        name: &str,
        encoded: &[u8],
    ) -> Result<Option<CpuBases<A>>, BackendError> {
        let len = encoded_len::<A>(name, encoded)?;
        let allocation = self.track::<A>(name, len)?;
        let mut bases = empty_for(&allocation, name, len)?;
        let first_bad = LowestIndexed::new();
        bases.par_extend(
            encoded
                .par_chunks_exact(A::UNCOMPRESSED_BYTES)
                .with_min_len(DECODE_MIN_LEN)
                .enumerate()
                .map(|(index, bytes)| {
                    decode_base::<A>(bytes).unwrap_or_else(|defect| {
                        first_bad.offer(index, defect);
                        A::default()
                    })
                }),
        );
        let first_bad = first_bad.into_inner();
        if let Some((index, defect)) = first_bad {
            return Err(BackendError::InvalidBase {
                what: name.to_owned(),
                index,
                defect,
            });
        }
        Ok(Some(CpuBases {
            bases,
            _allocation: allocation,
        }))
    }

    /// Slices the resident bases after `skip` to the count the scalars (and density) need,
    /// then runs sluice-msm's Pippenger.
    fn msm_vartime<A: CurveAffine>(
        &self,
        bases: &CpuBases<A>,
        skip: usize,
        scalars: Scalars<'_, Self>,
        density: Option<&Density>,
    ) -> Result<A::Group, BackendError> {
        let owned;
        let scalars = match scalars {
            Scalars::Host(s) => s,
            Scalars::Buffer(b) => b.as_slice(),
            Scalars::Owned(b) => {
                owned = b;
                owned.as_slice()
            }
        };
        let needed = check_msm_bases(
            bases.bases.len(),
            skip,
            scalars.len(),
            density,
            Density::count_ones,
        )?;
        sluice_msm::msm_vartime::<A::Group>(&bases.bases[skip..skip + needed], scalars, density)
            .map_err(msm_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;
    use sluice_backend::{G1Affine, G1Projective};

    const SEED: u64 = 0x5eed_c0de;

    fn random_fr(n: usize, rng: &mut ChaCha20Rng) -> Vec<Fr> {
        (0..n).map(|_| Fr::random(&mut *rng)).collect()
    }

    #[test]
    fn buffers_are_tracked_and_released() {
        let backend = CpuBackend::new();
        let a = backend.alloc_fr("a", 1024).unwrap();
        let b = backend.upload_fr("b", &[Fr::ONE; 512], 512).unwrap();
        let g = backend
            .upload_bases("g", &[G1Affine::generator(); 10])
            .unwrap();
        let t = backend.tracker();
        assert_eq!(t.current(MemoryKind::Device), 1536 * 32 + 10 * 96);
        drop((a, b, g));
        assert_eq!(t.current(MemoryKind::Device), 0);
        assert_eq!(t.peak(MemoryKind::Device), 1536 * 32 + 10 * 96);
        assert_eq!(t.current(MemoryKind::Host), 0);
    }

    #[test]
    fn budget_refuses_allocations_with_out_of_memory() {
        let backend = CpuBackend::with_tracker(MemoryTracker::new(None, Some(32 * 100)));
        let _a = backend.alloc_fr("a", 60).unwrap();
        assert!(matches!(
            backend.alloc_fr("b", 60),
            Err(BackendError::OutOfMemory {
                requested: 1920,
                available: 1280,
                ..
            })
        ));
    }

    #[test]
    fn bad_lengths_and_ranges_are_errors() {
        let backend = CpuBackend::new();
        let mut a = backend.alloc_fr("a", 8).unwrap();
        let b = backend.alloc_fr("b", 4).unwrap();
        assert!(matches!(
            backend.mul_assign(&mut a, &b),
            Err(BackendError::LengthMismatch {
                expected: 8,
                got: 4,
                ..
            })
        ));
        assert!(backend.write_fr(&mut a, 6, &[Fr::ONE; 3]).is_err());
        assert!(backend.write_fr(&mut a, usize::MAX, &[Fr::ONE]).is_err());
        assert!(backend.read_fr(&a, 9, &mut []).is_err());
        assert!(matches!(
            backend.upload_fr("long", &[Fr::ONE; 3], 2),
            Err(BackendError::LengthMismatch { .. })
        ));
        let padded = backend.upload_fr("padded", &[Fr::ONE; 3], 5).unwrap();
        assert_eq!(padded.data, [Fr::ONE, Fr::ONE, Fr::ONE, Fr::ZERO, Fr::ZERO]);
        let mut odd = backend.alloc_fr("odd", 6).unwrap();
        assert!(matches!(
            backend.transform(&mut odd, Transform::Ntt, NttOrder::NaturalToNatural),
            Err(BackendError::Unsupported(_))
        ));
        let g = backend
            .upload_bases("g", &[G1Affine::generator(); 4])
            .unwrap();
        assert!(matches!(
            backend.msm_vartime(&g, 2, Scalars::Host(&[Fr::ONE; 3]), None),
            Err(BackendError::LengthMismatch {
                expected: 3,
                got: 2,
                ..
            })
        ));
    }

    #[test]
    fn h_style_pipeline_matches_direct_field_arithmetic() {
        // iNTT then coset NTT of a and b, pointwise a*b - c, coset iNTT: compared with the
        // same computation done on plain vectors through sluice-ntt and field operators.
        let mut rng = ChaCha20Rng::seed_from_u64(SEED);
        let n = 256;
        let (a, b) = (random_fr(n, &mut rng), random_fr(n, &mut rng));
        let c: Vec<Fr> = a.iter().zip(&b).map(|(x, y)| *x * y).collect();
        let backend = CpuBackend::new();
        let order = NttOrder::NaturalToNatural;
        let mut bufs = [&a, &b, &c].map(|v| backend.upload_fr("v", v, n).unwrap());
        for buf in bufs.iter_mut() {
            backend.transform(buf, Transform::Intt, order).unwrap();
            backend.transform(buf, Transform::CosetNtt, order).unwrap();
        }
        let [mut ha, hb, hc] = bufs;
        backend.mul_assign(&mut ha, &hb).unwrap();
        backend.sub_assign(&mut ha, &hc).unwrap();
        let domain = Domain::<Fr>::new(8).unwrap();
        let z_inv = domain.vanishing_on_coset().invert().unwrap();
        backend.scale(&mut ha, z_inv).unwrap();
        backend
            .transform(&mut ha, Transform::CosetIntt, order)
            .unwrap();
        let mut h = vec![Fr::ZERO; n];
        backend.read_fr(&ha, 0, &mut h).unwrap();

        let mut expect = [a, b, c];
        for v in expect.iter_mut() {
            sluice_ntt::intt(&domain, v, order).unwrap();
            sluice_ntt::coset_ntt(&domain, v, order).unwrap();
        }
        let mut e: Vec<Fr> = (0..n)
            .map(|i| (expect[0][i] * expect[1][i] - expect[2][i]) * z_inv)
            .collect();
        sluice_ntt::coset_intt(&domain, &mut e, order).unwrap();
        assert_eq!(h, e, "seed {SEED:#x}");
        // a*b - c vanishes on H, so h has degree < n - 1: the top coefficient is zero.
        assert_eq!(h[n - 1], Fr::ZERO, "seed {SEED:#x}");
    }

    #[test]
    fn msm_with_skip_and_density_matches_naive_sum() {
        let mut rng = ChaCha20Rng::seed_from_u64(SEED + 1);
        let backend = CpuBackend::new();
        let points: Vec<G1Affine> = (0..20)
            .map(|_| (G1Projective::generator() * Fr::random(&mut rng)).to_affine())
            .collect();
        let bases = backend.upload_bases("bases", &points).unwrap();
        let scalars = random_fr(10, &mut rng);
        let mut density = Density::new(10);
        for i in [0, 3, 4, 9] {
            density.set(i, true).unwrap();
        }
        let got = backend
            .msm_vartime(&bases, 5, Scalars::Host(&scalars), Some(&density))
            .unwrap();
        let expect: G1Projective = [0, 3, 4, 9]
            .iter()
            .enumerate()
            .map(|(k, &var)| points[5 + k] * scalars[var])
            .sum();
        assert_eq!(got, expect, "seed {:#x}", SEED + 1);

        let buf = backend.upload_fr("s", &scalars, scalars.len()).unwrap();
        let from_buffer = backend
            .msm_vartime(&bases, 0, Scalars::Buffer(&buf), None)
            .unwrap();
        let expect: G1Projective = (0..10).map(|i| points[i] * scalars[i]).sum();
        assert_eq!(from_buffer, expect, "seed {:#x}", SEED + 1);
    }

    /// Encoded bases decode into the same bases as the host's decoding, on every thread;
    /// the lowest invalid one is named, with the reference's defect, whichever thread
    /// finds it first.
    #[test]
    fn encoded_bases_decode_on_all_threads_and_name_the_first_invalid() {
        let n = 4096 + 77;
        let g = G1Projective::generator();
        let mut acc = g;
        let points: Vec<G1Affine> = (0..n)
            .map(|_| {
                acc += g;
                acc.to_affine()
            })
            .collect();
        let mut encoded: Vec<u8> = points
            .iter()
            .flat_map(|p| p.to_uncompressed().as_ref().to_vec())
            .collect();
        let backend = CpuBackend::new();
        let bases = backend
            .upload_bases_encoded::<G1Affine>("b", &encoded)
            .unwrap()
            .expect("the CPU backend decodes");
        assert_eq!(bases.as_slice(), &points[..]);
        for at in [n - 1, 4096 + 3, 5] {
            encoded[at * 96 + 95] ^= 1;
            let want = decode_base::<G1Affine>(&encoded[at * 96..(at + 1) * 96]).unwrap_err();
            match backend.upload_bases_encoded::<G1Affine>("b", &encoded) {
                Err(BackendError::InvalidBase { index, defect, .. }) => {
                    assert_eq!((index, defect), (at, want))
                }
                other => panic!("base {at}: {:?}", other.map(|_| ())),
            }
        }
        assert!(backend
            .upload_bases_encoded::<G1Affine>("b", &encoded[1..])
            .is_err());
    }
}
