//! The differential suite on the CPU backend, against the host references.

use sluice_backend::{
    BackendError, ComputeBackend, Density, Fr, G1Affine, G1Projective, G2Affine, G2Projective,
    MemoryInfo, MemoryTracker, NttOrder, Scalars, Transform,
};
use sluice_backend_cpu::{CpuBackend, CpuBases, CpuFrBuffer};
use sluice_tests::suite::{self, SuiteSizes};

#[test]
fn ntt_family() {
    suite::ntt_family(&CpuBackend::new(), &SuiteSizes::from_env(), 0x4e54_5401);
}

#[test]
fn segments() {
    suite::segments(&CpuBackend::new(), &SuiteSizes::from_env(), 0x5345_4701);
}

/// The trait's default (round-trip) segmented operations, through a backend that does not
/// override them, against the same references.
#[test]
fn segments_default_impls() {
    suite::segments(
        &DefaultImpls(CpuBackend::new()),
        &SuiteSizes::from_env(),
        0x5345_4702,
    );
}

/// Compact partitions, decoded into the CPU backend's buffers, prove byte for byte what raw
/// ones do.
#[test]
fn compact_proofs_match_raw_ones() {
    suite::compact_proof(
        &CpuBackend::new(),
        SuiteSizes::from_env().proof_log,
        0x5052_4f15,
    );
}

#[test]
fn pointwise() {
    suite::pointwise(&CpuBackend::new(), &SuiteSizes::from_env(), 0x504f_4901);
}

#[test]
fn pointwise_default_impls() {
    suite::pointwise(
        &DefaultImpls(CpuBackend::new()),
        &SuiteSizes::from_env(),
        0x504f_4902,
    );
}

#[test]
fn msm_g1_vartime() {
    suite::msm_g1_vartime(&CpuBackend::new(), &SuiteSizes::from_env(), 0x4731_0001);
}

#[test]
fn msm_g2_vartime() {
    suite::msm_g2_vartime(&CpuBackend::new(), &SuiteSizes::from_env(), 0x4732_0001);
}

/// The CPU backend with the trait's default `transform_segments`, `segment_powers` and
/// `copy_fr`.
struct DefaultImpls(CpuBackend);

impl ComputeBackend for DefaultImpls {
    type FrBuffer = CpuFrBuffer;
    type G1Bases = CpuBases<G1Affine>;
    type G2Bases = CpuBases<G2Affine>;
    fn name(&self) -> String {
        "cpu with the trait's default ops".into()
    }
    fn tracker(&self) -> &MemoryTracker {
        self.0.tracker()
    }
    fn memory_info(&self) -> Result<MemoryInfo, BackendError> {
        self.0.memory_info()
    }
    fn alloc_fr(&self, name: &str, len: usize) -> Result<CpuFrBuffer, BackendError> {
        self.0.alloc_fr(name, len)
    }
    fn upload_fr(&self, name: &str, data: &[Fr]) -> Result<CpuFrBuffer, BackendError> {
        self.0.upload_fr(name, data)
    }
    fn write_fr(&self, b: &mut CpuFrBuffer, o: usize, d: &[Fr]) -> Result<(), BackendError> {
        self.0.write_fr(b, o, d)
    }
    fn read_fr(&self, b: &CpuFrBuffer, o: usize, out: &mut [Fr]) -> Result<(), BackendError> {
        self.0.read_fr(b, o, out)
    }
    fn fr_len(&self, b: &CpuFrBuffer) -> usize {
        self.0.fr_len(b)
    }
    fn transform(
        &self,
        b: &mut CpuFrBuffer,
        t: Transform,
        o: NttOrder,
    ) -> Result<(), BackendError> {
        self.0.transform(b, t, o)
    }
    fn mul_assign(&self, a: &mut CpuFrBuffer, b: &CpuFrBuffer) -> Result<(), BackendError> {
        self.0.mul_assign(a, b)
    }
    fn sub_assign(&self, a: &mut CpuFrBuffer, b: &CpuFrBuffer) -> Result<(), BackendError> {
        self.0.sub_assign(a, b)
    }
    fn scale(&self, a: &mut CpuFrBuffer, s: Fr) -> Result<(), BackendError> {
        self.0.scale(a, s)
    }
    fn distribute_powers(&self, a: &mut CpuFrBuffer, g: Fr) -> Result<(), BackendError> {
        self.0.distribute_powers(a, g)
    }
    fn upload_g1_bases(&self, n: &str, b: &[G1Affine]) -> Result<Self::G1Bases, BackendError> {
        self.0.upload_g1_bases(n, b)
    }
    fn upload_g2_bases(&self, n: &str, b: &[G2Affine]) -> Result<Self::G2Bases, BackendError> {
        self.0.upload_g2_bases(n, b)
    }
    fn g1_len(&self, b: &Self::G1Bases) -> usize {
        self.0.g1_len(b)
    }
    fn g2_len(&self, b: &Self::G2Bases) -> usize {
        self.0.g2_len(b)
    }
    fn msm_g1_vartime(
        &self,
        _: &Self::G1Bases,
        _: usize,
        _: Scalars<'_, Self>,
        _: Option<&Density>,
    ) -> Result<G1Projective, BackendError> {
        Err(BackendError::Unsupported("not needed by this test".into()))
    }
    fn msm_g2_vartime(
        &self,
        _: &Self::G2Bases,
        _: usize,
        _: Scalars<'_, Self>,
        _: Option<&Density>,
    ) -> Result<G2Projective, BackendError> {
        Err(BackendError::Unsupported("not needed by this test".into()))
    }
}
