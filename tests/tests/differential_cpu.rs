//! The differential suite on the CPU backend, against the host references.

use sluice_backend::{
    BackendError, BackendInfo, ComputeBackend, CurveAffine, Density, Fr, MemoryInfo, MemoryTracker,
    NttOrder, Scalars, Transform,
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
    suite::segments(&DefaultImpls::new(), &SuiteSizes::from_env(), 0x5345_4702);
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
    suite::pointwise(&DefaultImpls::new(), &SuiteSizes::from_env(), 0x504f_4902);
}

#[test]
fn msm_g1_vartime() {
    suite::msm_g1_vartime(&CpuBackend::new(), &SuiteSizes::from_env(), 0x4731_0001);
}

#[test]
fn msm_g2_vartime() {
    suite::msm_g2_vartime(&CpuBackend::new(), &SuiteSizes::from_env(), 0x4732_0001);
}

/// Mapped parameters decoded by the CPU backend's own decoder (the trait's default, the
/// host's decoding, runs under `differential_opencl`'s default backend on PoCL).
#[test]
fn mapped_parameters_decoded_by_the_cpu_backend() {
    suite::mapped_parameters(&CpuBackend::new(), 8, 0x4d41_5000);
}

/// The CPU backend with the trait's default `copy_fr` and `transform_segments`, which the
/// CPU backend overrides (it runs the other defaults itself).
struct DefaultImpls(CpuBackend, BackendInfo);

impl DefaultImpls {
    fn new() -> Self {
        let info = BackendInfo {
            name: "cpu with the trait's default ops".into(),
            ..BackendInfo::default()
        };
        DefaultImpls(CpuBackend::new(), info)
    }
}

impl ComputeBackend for DefaultImpls {
    type FrBuffer = CpuFrBuffer;
    type Bases<A: CurveAffine> = CpuBases<A>;
    fn info(&self) -> &BackendInfo {
        &self.1
    }
    fn tracker(&self) -> &MemoryTracker {
        self.0.tracker()
    }
    fn memory_info(&self) -> Result<MemoryInfo, BackendError> {
        self.0.memory_info()
    }
    fn upload_fr(&self, name: &str, data: &[Fr], len: usize) -> Result<CpuFrBuffer, BackendError> {
        self.0.upload_fr(name, data, len)
    }
    fn write_fr(&self, b: &mut CpuFrBuffer, o: usize, d: &[Fr]) -> Result<(), BackendError> {
        self.0.write_fr(b, o, d)
    }
    fn read_fr(&self, b: &CpuFrBuffer, o: usize, out: &mut [Fr]) -> Result<(), BackendError> {
        self.0.read_fr(b, o, out)
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
    fn segment_powers(
        &self,
        b: &mut CpuFrBuffer,
        segment: usize,
        base: Fr,
        ratio: Fr,
    ) -> Result<(), BackendError> {
        self.0.segment_powers(b, segment, base, ratio)
    }
    fn upload_bases<A: CurveAffine>(&self, n: &str, b: &[A]) -> Result<CpuBases<A>, BackendError> {
        self.0.upload_bases(n, b)
    }
    fn msm_vartime<A: CurveAffine>(
        &self,
        _: &CpuBases<A>,
        _: usize,
        _: Scalars<'_, Self>,
        _: Option<&Density>,
    ) -> Result<A::Group, BackendError> {
        Err(BackendError::Unsupported("not needed by this test".into()))
    }
}
