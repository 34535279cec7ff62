//! Random bases for tests and benchmarks: many distinct points, cheaply.

use alloc::vec;
use alloc::vec::Vec;

use group::Curve;
use rand_core::RngCore;

use crate::MsmCurve;

/// Points per chain: each chain starts at a random point and adds a random step, so
/// every point costs one addition instead of a scalar multiplication.
const CHAIN: usize = 1 << 14;

/// `n` random, distinct (with overwhelming probability) points of the prime-order group
/// `G`: chains `start + i·step` with random starts and steps (one variable-time mixed
/// addition per point), normalised to affine in batches; chains run in parallel under the
/// `parallel` feature. 2^24 G1 points take seconds, not the minutes of one scalar
/// multiplication per point.
///
/// The points are uniformly distributed only chain by chain: fine for tests, benchmarks
/// and benchmark parameters, not a source of independent random group elements for
/// cryptographic use.
///
/// # Security
/// Variable time; the points are public test data derived from no secret.
pub fn random_points<G>(n: usize, rng: &mut impl RngCore) -> Vec<G::Affine>
where
    G: MsmCurve + Curve<AffineRepr = <G as MsmCurve>::Affine>,
    G::Affine: Default,
{
    let starts: Vec<(G, G::Affine)> = (0..n.div_ceil(CHAIN))
        .map(|_| (G::random(&mut *rng), G::random(&mut *rng).to_affine()))
        .collect();
    let mut out = vec![G::Affine::default(); n];
    let fill = |(out, (start, step)): (&mut [G::Affine], &(G, G::Affine))| {
        let mut p = *start;
        let chain: Vec<G> = (0..out.len())
            .map(|_| {
                let q = p;
                p = p.add_mixed_vartime(step);
                q
            })
            .collect();
        G::batch_normalize(&chain, out);
    };
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        out.par_chunks_mut(CHAIN)
            .zip(starts.par_iter())
            .for_each(fill);
    }
    #[cfg(not(feature = "parallel"))]
    out.chunks_mut(CHAIN).zip(starts.iter()).for_each(fill);
    out
}
