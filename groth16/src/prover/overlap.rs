//! The witness MSMs two at a time: on a backend that queues work, with the witness on the
//! device and every query resident, one thread runs L and A while the caller's runs the B
//! MSMs. Each MSM's host work (the density's ranks, its uploads, planning, reading its sums)
//! then overlaps the other's kernels, where one after the other the device idled about
//! 12 ms at each start (BENCHMARKS.md#partition).

use std::time::{Duration, Instant};

use sluice_backend::{ComputeBackend, MemoryKind, Scalars};
use sluice_field::{G1Affine, G2Affine, G2Projective};

use super::WitnessMsms;
use crate::assignment::ProvingAssignment;
use crate::Groth16Error;

/// The resident bases of the witness MSMs.
pub(super) struct WitnessBases<'p, B: ComputeBackend> {
    pub(super) l: &'p B::Bases<G1Affine>,
    pub(super) a: &'p B::Bases<G1Affine>,
    pub(super) b_g1: &'p B::Bases<G1Affine>,
    pub(super) b_g2: BG2<'p, B>,
}

/// The B MSM in G2: its sum computed elsewhere, or its bases.
#[allow(clippy::large_enum_variant)] // one short-lived value per proof
pub(super) enum BG2<'p, B: ComputeBackend> {
    Given(G2Projective),
    Here(&'p B::Bases<G2Affine>),
}

/// Whether two witness MSMs over `aux_len` scalars fit on the device beside what it holds
/// now: a G1 MSM's scratch and the larger of a G1 and (with `g2`) a G2 MSM's, within the
/// tracker's device limit where it has one, else within the device's free bytes, else
/// within its total less what the tracker counts and a tenth kept back (allocations the
/// tracker does not see). Where nothing is known, no: one at a time never needs more than
/// before.
pub(super) fn two_fit<B: ComputeBackend>(backend: &B, aux_len: usize, g2: bool) -> bool {
    let g1 = backend.msm_scratch_bytes::<G1Affine>(aux_len);
    let second = match g2 {
        true => g1.max(backend.msm_scratch_bytes::<G2Affine>(aux_len)),
        false => g1,
    };
    let tracker = backend.tracker();
    let held = tracker.current(MemoryKind::Device);
    let free = match tracker.limit(MemoryKind::Device) {
        Some(limit) => Some(limit.saturating_sub(held)),
        None => backend.memory_info().ok().map(|m| {
            m.free_bytes
                .unwrap_or_else(|| (m.total_bytes - m.total_bytes / 10).saturating_sub(held))
        }),
    };
    free.is_some_and(|free| free >= g1.saturating_add(second))
}

/// The witness MSMs, L and A on a thread of their own, B here; with each MSM's own time
/// (from the start to its sum: the two threads' times overlap), in the order L, A, B in G1,
/// B in G2 (zero when its sum is given).
///
/// # Security
/// Variable time, as [`ComputeBackend::msm_vartime`]: the scalars are the witness, which
/// the proof's r and s blind, as in every Groth16 prover's MSMs.
pub(super) fn witness_msms_overlapped<B: ComputeBackend>(
    backend: &B,
    cs: &ProvingAssignment,
    aux: &B::FrBuffer,
    bases: WitnessBases<'_, B>,
) -> Result<(WitnessMsms, [Duration; 4]), Groth16Error> {
    let inputs = cs.input_assignment();
    let b_inputs_used = cs.b_input_density().count_ones();
    let l_and_a = || -> Result<_, Groth16Error> {
        let started = Instant::now();
        let l = backend.msm_vartime(bases.l, 0, Scalars::Buffer(aux), None)?;
        let l_took = started.elapsed();
        // Inputs are all used in A (the input constraints).
        let a = backend.msm_vartime(bases.a, 0, Scalars::Host(inputs), None)?
            + backend.msm_vartime(
                bases.a,
                inputs.len(),
                Scalars::Buffer(aux),
                Some(cs.a_aux_density()),
            )?;
        Ok(((l, l_took), (a, started.elapsed() - l_took)))
    };
    let b_both = || -> Result<_, Groth16Error> {
        let started = Instant::now();
        let b_input_density = Some(cs.b_input_density());
        let b_aux_density = Some(cs.b_aux_density());
        let b_g1 = backend.msm_vartime(bases.b_g1, 0, Scalars::Host(inputs), b_input_density)?
            + backend.msm_vartime(
                bases.b_g1,
                b_inputs_used,
                Scalars::Buffer(aux),
                b_aux_density,
            )?;
        let g1_took = started.elapsed();
        let (b_g2, g2_took) = match bases.b_g2 {
            BG2::Given(given) => (given, Duration::ZERO),
            BG2::Here(g2) => {
                let sum = backend.msm_vartime(g2, 0, Scalars::Host(inputs), b_input_density)?
                    + backend.msm_vartime(
                        g2,
                        b_inputs_used,
                        Scalars::Buffer(aux),
                        b_aux_density,
                    )?;
                (sum, started.elapsed() - g1_took)
            }
        };
        Ok(((b_g1, g1_took), (b_g2, g2_took)))
    };
    let (first, second) = std::thread::scope(|scope| {
        let first = scope.spawn(l_and_a);
        let second = b_both();
        let first = first
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (first, second)
    });
    let ((l, l_took), (a, a_took)) = first?;
    let ((b_g1, b_g1_took), (b_g2, b_g2_took)) = second?;
    Ok((
        WitnessMsms { l, a, b_g1, b_g2 },
        [l_took, a_took, b_g1_took, b_g2_took],
    ))
}
