//! Random bases for tests and benchmarks: many distinct points, cheaply.

#[cfg(not(feature = "parallel"))]
use alloc::vec;
use alloc::vec::Vec;

use ff::Field;
use group::Curve;
use rand_core::RngCore;
use sluice_field::Fr;

use crate::batch::{batch_add, Pt};
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
    G: MsmCurve + Curve<AffineRepr = <G as MsmCurve>::Affine, Scalar = Fr>,
    G::Affine: Default,
{
    // Each chain's start and step from nonzero scalars drawn in order (as `G::random`
    // draws them, so a seed gives the points it always gave); the scalar multiplications
    // run in parallel below: at 2^27 points there are 8192 chains.
    let nonzero = |rng: &mut dyn RngCore| loop {
        let s = Fr::random(&mut *rng);
        if !bool::from(s.is_zero()) {
            break s;
        }
    };
    let scalars: Vec<(Fr, Fr)> = (0..n.div_ceil(CHAIN))
        .map(|_| (nonzero(&mut *rng), nonzero(&mut *rng)))
        .collect();
    let start = |&(a, b): &(Fr, Fr)| (G::generator() * a, (G::generator() * b).to_affine());
    // One chain's points, through `chain`, scratch each thread reuses.
    let fill = |chain: &mut Scratch<G>, out: &mut [G::Affine], (start, step): (G, G::Affine)| {
        if !fill_by_lanes(chain, out, start, &step) {
            fill_jacobian(&mut chain.jacobian, out, start, &step);
        }
    };
    #[cfg(feature = "parallel")]
    let out = {
        use rayon::prelude::*;
        // The placeholders are written in parallel too: written by `vec!` on one thread,
        // with a fresh vector's page faults, they were minutes of 2^27 benchmark
        // parameters on a 16-core host.
        let mut out = Vec::with_capacity(n);
        out.par_extend(rayon::iter::repeat_n(G::Affine::default(), n));
        out.par_chunks_mut(CHAIN)
            .zip(scalars.par_iter())
            .for_each_init(Scratch::default, |chain, (out, s)| {
                fill(chain, out, start(s))
            });
        out
    };
    #[cfg(not(feature = "parallel"))]
    let out = {
        let mut out = vec![G::Affine::default(); n];
        let mut chain = Scratch::default();
        for (out, s) in out.chunks_mut(CHAIN).zip(&scalars) {
            fill(&mut chain, out, start(s));
        }
        out
    };
    out
}

/// Lanes of a chain filled in step: lane j holds points j, j + LANES, j + 2 LANES, ...
const LANES: usize = 256;

/// What filling a chain reuses between chains.
struct Scratch<G: MsmCurve> {
    jacobian: Vec<G>,
    lanes: Vec<Pt<G::Base>>,
    next: Vec<Pt<G::Base>>,
    steps: Vec<Pt<G::Base>>,
    prefix: Vec<G::Base>,
}

impl<G: MsmCurve> Default for Scratch<G> {
    fn default() -> Self {
        Scratch {
            jacobian: Vec::new(),
            lanes: Vec::new(),
            next: Vec::new(),
            steps: Vec::new(),
            prefix: Vec::new(),
        }
    }
}

/// `out[i] = start + i step` by one mixed Jacobian addition a point and one normalisation.
fn fill_jacobian<G>(chain: &mut Vec<G>, out: &mut [G::Affine], start: G, step: &G::Affine)
where
    G: MsmCurve + Curve<AffineRepr = <G as MsmCurve>::Affine>,
{
    let mut p = start;
    chain.clear();
    chain.extend((0..out.len()).map(|_| {
        let q = p;
        p = p.add_mixed_vartime(step);
        q
    }));
    G::batch_normalize(chain, out);
}

/// `out[i] = start + i step` in affine coordinates: the first [`LANES`] points as in
/// [`fill_jacobian`], then every lane adds `LANES step` at once, one batch addition (one
/// shared inversion) a round: about 5M + 1S a point against the 11M + 7S of a mixed
/// addition and its normalisation. Returns false, having written nothing useful, where a
/// point is the identity (probability about 2^-250 for random starts and steps): the caller
/// then fills the chain the Jacobian way.
fn fill_by_lanes<G>(s: &mut Scratch<G>, out: &mut [G::Affine], start: G, step: &G::Affine) -> bool
where
    G: MsmCurve + Curve<AffineRepr = <G as MsmCurve>::Affine>,
{
    let lanes = LANES.min(out.len());
    fill_jacobian(&mut s.jacobian, &mut out[..lanes], start, step);
    if out.len() == lanes {
        return true;
    }
    let pt = |p: &G::Affine| {
        let (x, y) = G::affine_xy(p);
        Pt { x, y }
    };
    if out[..lanes].iter().any(G::affine_is_identity) {
        return false;
    }
    let stride = s.jacobian[lanes - 1].add_mixed_vartime(step) - s.jacobian[0];
    let stride = stride.to_affine();
    if G::affine_is_identity(&stride) {
        return false;
    }
    s.lanes.clear();
    s.lanes.extend(out[..lanes].iter().map(pt));
    s.steps.clear();
    s.steps.resize(lanes, pt(&stride));
    let mut at = lanes;
    while at < out.len() {
        let m = lanes.min(out.len() - at);
        let mut ok = true;
        s.next.clear();
        s.next.resize(m, Pt::default());
        let next = &mut s.next;
        batch_add(
            &s.lanes[..m],
            &s.steps[..m],
            &mut s.prefix,
            |i, sum| match sum {
                Some(p) => next[i] = p,
                None => ok = false,
            },
        );
        if !ok {
            return false;
        }
        for (o, p) in out[at..at + m].iter_mut().zip(s.next.iter()) {
            *o = G::affine_from_xy_unchecked(p.x, p.y);
        }
        core::mem::swap(&mut s.lanes, &mut s.next);
        at += m;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::Group;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;
    use sluice_field::{G1Projective, G2Projective};

    /// Point i of chain k is start_k + i step_k, with start_k and step_k what `G::random`
    /// draws from the same generator in order (so a seed keeps its points), across the
    /// lanes' rounds and in a partial chain.
    fn chains_follow_their_definition<G>(seed: u64)
    where
        G: MsmCurve + Curve<AffineRepr = <G as MsmCurve>::Affine, Scalar = Fr> + Group,
        G::Affine: Default + PartialEq + core::fmt::Debug,
    {
        // The second chain is partial: one round of lanes and 44 points more.
        let n = CHAIN + LANES + 44;
        let points = random_points::<G>(n, &mut ChaCha20Rng::seed_from_u64(seed));
        assert_eq!(points.len(), n);
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        for k in 0..2 {
            let (start, step) = (G::random(&mut rng), G::random(&mut rng));
            for i in [
                0usize,
                1,
                99,
                LANES - 1,
                LANES,
                LANES + 1,
                LANES + 43,
                777,
                CHAIN - 1,
            ] {
                let at = k * CHAIN + i;
                if at >= n {
                    continue;
                }
                let want = (start + step * Fr::from(i as u64)).to_affine();
                assert_eq!(points[at], want, "seed {seed}: chain {k}, point {i}");
            }
            // Every point, against the Jacobian way.
            let len = CHAIN.min(n - k * CHAIN);
            let mut want = alloc::vec![G::Affine::default(); len];
            fill_jacobian(&mut Vec::new(), &mut want, start, &step.to_affine());
            assert!(
                points[k * CHAIN..k * CHAIN + len] == want[..],
                "seed {seed}: chain {k}"
            );
        }
    }

    #[test]
    fn g1_chains_follow_their_definition() {
        chains_follow_their_definition::<G1Projective>(70);
    }

    #[test]
    fn g2_chains_follow_their_definition() {
        chains_follow_their_definition::<G2Projective>(71);
    }
}
