//! The MSMs over host scalars: in batches (each with its own bases where the parameters are
//! on the host), compact scalars decoded a batch at a time.

use std::borrow::Cow;
use std::ops::Range;

use ff::Field;
use sluice_backend::{BackendError, CompactVec, ComputeBackend, Density, Scalars};
use sluice_field::{Fr, G2Affine, G2Projective};

use crate::error::Groth16Error;
use crate::params::source::Bases;
use crate::synthesis::assignment::ProvingAssignment;

/// Most compact scalars decoded on the host for one MSM: the host's transient when an MSM
/// reads a compact vector from the host (32 MiB), which planners count.
pub const DECODE_BATCH: usize = 1 << 20;

/// Scalars an MSM reads from the host: a slice, or a compact vector decoded a batch at a
/// time (so no full-size vector is made for it).
#[derive(Clone, Copy)]
pub(crate) enum HostScalars<'a> {
    Slice(&'a [Fr]),
    Compact(&'a CompactVec),
}

impl HostScalars<'_> {
    fn len(&self) -> usize {
        match self {
            HostScalars::Slice(s) => s.len(),
            HostScalars::Compact(c) => c.len(),
        }
    }

    /// The scalars `range`, borrowed where they are stored as elements.
    fn range(&self, range: Range<usize>) -> Cow<'_, [Fr]> {
        match self {
            HostScalars::Slice(s) => Cow::Borrowed(&s[range]),
            HostScalars::Compact(c) => match c.as_raw() {
                Some(raw) => Cow::Borrowed(&raw[range]),
                None => {
                    let mut out = vec![Fr::ZERO; range.len()];
                    c.decode_into(range.start, &mut out);
                    Cow::Owned(out)
                }
            },
        }
    }

    /// The most scalars per MSM: `asked`, and at most [`DECODE_BATCH`] of codes.
    fn batch(&self, asked: Option<usize>) -> Option<usize> {
        match self {
            HostScalars::Compact(c) if !c.is_raw() => {
                Some(asked.map_or(DECODE_BATCH, |b| b.min(DECODE_BATCH)))
            }
            _ => asked,
        }
    }
}

/// `sum_i scalars[i] · base` over the scalars `density` keeps (all without one), paired in
/// order with a query's bases from `skip`, in MSMs of at most `batch` scalars (one MSM
/// without; compact scalars in batches of at most [`DECODE_BATCH`]). `bases_for(range)`
/// gives bases holding points `range` of the query and where `range.start` lies in them;
/// `msm` is the backend's MSM of the group.
///
/// # Security
/// Variable time, as [`ComputeBackend::msm_vartime`].
pub(crate) fn msm_batched_vartime<'p, T: 'p, G: group::Group>(
    scalars: HostScalars<'_>,
    density: Option<&Density>,
    skip: usize,
    batch: Option<usize>,
    mut bases_for: impl FnMut(Range<usize>) -> Result<(Bases<'p, T>, usize), Groth16Error>,
    mut msm: impl FnMut(&T, usize, &[Fr], Option<&Density>) -> Result<G, BackendError>,
) -> Result<G, Groth16Error> {
    let n = scalars.len();
    if let Some(d) = density {
        sluice_backend::check_len("msm scalars (density length)", d.len(), n)?;
    }
    let len = scalars.batch(batch).unwrap_or(n).max(1);
    let mut acc = G::identity();
    let mut base = skip;
    let mut s0 = 0;
    while s0 < n {
        let s1 = (s0 + len).min(n);
        let sub: Option<Cow<'_, Density>> = density.map(|d| match (s0, s1) {
            (0, end) if end == n => Cow::Borrowed(d),
            _ => Cow::Owned(d.slice(s0..s1)),
        });
        let used = sub.as_deref().map_or(s1 - s0, Density::count_ones);
        if used > 0 {
            let (bases, at) = bases_for(base..base + used)?;
            acc += msm(&bases, at, &scalars.range(s0..s1), sub.as_deref())?;
            base += used;
        }
        s0 = s1;
    }
    Ok(acc)
}

/// The b_g2 MSM of a synthesized circuit over `bases` resident in `backend`: how a caller
/// computes it elsewhere (e.g. on the CPU while the device works) and hands it to
/// [`prove_assignment_with_b_g2`](crate::phases::prove_assignment_with_b_g2).
pub fn b_g2_msm<B: ComputeBackend>(
    cs: &ProvingAssignment,
    backend: &B,
    bases: &B::Bases<G2Affine>,
) -> Result<G2Projective, Groth16Error> {
    b_g2_msm_batched(cs, backend, None, |range| {
        Ok((Bases::Resident(bases), range.start))
    })
}

/// The b_g2 MSM in batches (see [`ProverConfig::msm_batch_len`]), its bases from
/// `bases_for` (as [`ParameterSource::b_g2_bases_range`] gives them).
pub(crate) fn b_g2_msm_batched<'p, B: ComputeBackend + 'p>(
    cs: &ProvingAssignment,
    backend: &B,
    batch: Option<usize>,
    mut bases_for: impl FnMut(
        Range<usize>,
    ) -> Result<(Bases<'p, B::Bases<G2Affine>>, usize), Groth16Error>,
) -> Result<G2Projective, Groth16Error> {
    let msm = |bases: &B::Bases<G2Affine>, at, s: &[Fr], d: Option<&Density>| {
        backend.msm_vartime(bases, at, Scalars::Host(s), d)
    };
    let b_inputs_used = cs.b_input_density().count_ones();
    Ok(msm_batched_vartime(
        HostScalars::Slice(cs.input_assignment()),
        Some(cs.b_input_density()),
        0,
        batch,
        &mut bases_for,
        msm,
    )? + msm_batched_vartime(
        HostScalars::Compact(cs.aux_assignment()),
        Some(cs.b_aux_density()),
        b_inputs_used,
        batch,
        &mut bases_for,
        msm,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;
    use sluice_backend_cpu::{CpuBackend, CpuBases};
    use sluice_field::G1Projective;

    /// Batches of every size, with and without a density and a skip, and with the bases
    /// of each batch uploaded alone (from compact scalars), give the one-call sum.
    #[test]
    fn batched_msms_equal_the_naive_sum() {
        let seed = 74;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let backend = CpuBackend::new();
        let points: Vec<_> = (0..45)
            .map(|_| (G1Projective::generator() * Fr::random(&mut rng)).to_affine())
            .collect();
        let resident = backend.upload_bases("q", &points).unwrap();
        // Small values among them, so the compact copy has codes and exceptions.
        let scalars: Vec<Fr> = (0..37)
            .map(|i| match i % 3 {
                0 => Fr::random(&mut rng),
                _ => Fr::from(i as u64 % 5),
            })
            .collect();
        let compact = CompactVec::from(&scalars[..]);
        assert!(!compact.is_raw() && compact.exceptions() > 0);
        let density: Density = (0..37).map(|i| i % 3 != 1).collect();
        let skip = 4;
        for masked in [false, true] {
            let mut next = skip;
            let naive: G1Projective = scalars
                .iter()
                .enumerate()
                .filter(|(i, _)| !masked || density.get(*i))
                .map(|(_, s)| {
                    next += 1;
                    G1Projective::from(points[next - 1]) * s
                })
                .sum();
            let d = masked.then_some(&density);
            let msm = |bases: &CpuBases<_>, at, s: &[Fr], d: Option<&Density>| {
                backend.msm_vartime(bases, at, Scalars::Host(s), d)
            };
            for batch in [None, Some(1), Some(5), Some(16), Some(37), Some(64)] {
                let whole = msm_batched_vartime(
                    HostScalars::Slice(&scalars),
                    d,
                    skip,
                    batch,
                    |range| Ok((Bases::Resident(&resident), range.start)),
                    msm,
                )
                .unwrap();
                assert_eq!(
                    whole, naive,
                    "seed {seed}, batch {batch:?}, masked {masked}"
                );
                let per_batch = msm_batched_vartime(
                    HostScalars::Compact(&compact),
                    d,
                    skip,
                    batch,
                    |range| {
                        let b = backend.upload_bases("batch", &points[range]).unwrap();
                        Ok((Bases::Uploaded(b), 0))
                    },
                    msm,
                )
                .unwrap();
                assert_eq!(
                    per_batch, naive,
                    "seed {seed}, batch {batch:?}, masked {masked}"
                );
            }
        }
        let short: Density = (0..36).map(|_| true).collect();
        assert!(msm_batched_vartime(
            HostScalars::Slice(&scalars),
            Some(&short),
            0,
            None,
            |range| Ok((Bases::Resident(&resident), range.start)),
            |bases: &CpuBases<_>, at, s: &[Fr], d: Option<&Density>| {
                backend.msm_vartime(bases, at, Scalars::Host(s), d)
            },
        )
        .is_err());
    }
}
