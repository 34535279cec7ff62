//! The differential suite on the CPU backend, against the host references.

use sluice_backend_cpu::CpuBackend;
use sluice_tests::suite::{self, SuiteSizes};

#[test]
fn ntt_family() {
    suite::ntt_family(&CpuBackend::new(), &SuiteSizes::from_env(), 0x4e54_5401);
}

#[test]
fn pointwise() {
    suite::pointwise(&CpuBackend::new(), &SuiteSizes::from_env(), 0x504f_4901);
}

#[test]
fn msm_g1() {
    suite::msm_g1(&CpuBackend::new(), &SuiteSizes::from_env(), 0x4731_0001);
}

#[test]
fn msm_g2() {
    suite::msm_g2(&CpuBackend::new(), &SuiteSizes::from_env(), 0x4732_0001);
}
