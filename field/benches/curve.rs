//! Curve arithmetic: sluice vs blst on the same random inputs (same run, compare ratios).
//! Needs the `blst` feature for the point conversions:
//! `cargo bench -p sluice-field --features blst --bench curve`.

// criterion_group!/criterion_main! generate undocumented items.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use group::Group;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use sluice_field::{G1Affine, G1Projective, G2Affine, G2Projective};

const SEED: u64 = 0xbe7c;

/// Registers "sluice" and "blst" in `$group`: `$ours(&acc, &p)` against blst's `$theirs` on
/// the same Jacobian `acc` (random Z) and affine `p`, both random multiples of the generator.
macro_rules! bench_pair {
    ($c:expr, $group:literal, $proj:ty, $bp:ty, $ba:ty, |$acc:ident, $p:ident| $ours:expr, $theirs:path) => {{
        let mut rng = ChaCha20Rng::seed_from_u64(SEED);
        let acc = <$proj>::random(&mut rng).double();
        let p = <$proj>::random(&mut rng).to_affine();
        let mut g = $c.benchmark_group($group);
        g.bench_function("sluice", |b| {
            b.iter(|| {
                let ($acc, $p) = (black_box(&acc), black_box(&p));
                $ours
            })
        });
        let (bacc, bpt) = (<$bp>::from(acc), <$ba>::from(p));
        g.bench_function("blst", |b| {
            b.iter(|| {
                let mut out = <$bp>::default();
                unsafe { $theirs(&mut out, black_box(&bacc), black_box(&bpt)) };
                out
            })
        });
        g.finish();
    }};
}

fn curve(c: &mut Criterion) {
    use blst::*;
    bench_pair!(
        c,
        "g1_add_mixed",
        G1Projective,
        blst_p1,
        blst_p1_affine,
        |a, p| a.add_mixed_vartime(p),
        blst_p1_add_or_double_affine
    );
    bench_pair!(
        c,
        "g2_add_mixed",
        G2Projective,
        blst_p2,
        blst_p2_affine,
        |a, p| a.add_mixed_vartime(p),
        blst_p2_add_or_double_affine
    );
    bench_pair!(
        c,
        "g1_add_mixed_ct",
        G1Projective,
        blst_p1,
        blst_p1_affine,
        |a, p| a + p,
        blst_p1_add_or_double_affine
    );
    // Doubling: blst's takes one input, so its second argument here is the point itself.
    bench_pair!(
        c,
        "g1_double",
        G1Projective,
        blst_p1,
        blst_p1_affine,
        |a, _p| a.double(),
        double_p1
    );
    bench_pair!(
        c,
        "g2_double",
        G2Projective,
        blst_p2,
        blst_p2_affine,
        |a, _p| a.double(),
        double_p2
    );
    decode(c);
}

/// A parameter file's point decoded as its bases are (flags, canonical coordinates, the
/// curve equation, no subgroup check) against blst's deserialization, which checks as much.
fn decode(c: &mut Criterion) {
    use blst::*;
    let mut rng = ChaCha20Rng::seed_from_u64(SEED);
    let g1 = G1Projective::random(&mut rng).to_affine().to_uncompressed();
    bench_decode(
        c,
        "g1_decode_uncompressed",
        g1.as_ref(),
        G1Affine::decode_uncompressed_on_curve,
        |b| {
            let mut out = blst_p1_affine::default();
            (unsafe { blst_p1_deserialize(&mut out, b.as_ptr()) }, out)
        },
    );
    let g2 = G2Projective::random(&mut rng).to_affine().to_uncompressed();
    bench_decode(
        c,
        "g2_decode_uncompressed",
        g2.as_ref(),
        G2Affine::decode_uncompressed_on_curve,
        |b| {
            let mut out = blst_p2_affine::default();
            (unsafe { blst_p2_deserialize(&mut out, b.as_ptr()) }, out)
        },
    );
}

/// Registers "sluice" and "blst" in `group`, each decoding `bytes`.
fn bench_decode<O, T>(
    c: &mut Criterion,
    group: &str,
    bytes: &[u8],
    ours: impl Fn(&[u8]) -> O,
    theirs: impl Fn(&[u8]) -> T,
) {
    let mut g = c.benchmark_group(group);
    g.bench_function("sluice", |b| b.iter(|| ours(black_box(bytes))));
    g.bench_function("blst", |b| b.iter(|| theirs(black_box(bytes))));
    g.finish();
}

/// `blst_p1_double` in the three-argument shape of the macro (the affine input is unused).
unsafe fn double_p1(
    out: *mut blst::blst_p1,
    a: *const blst::blst_p1,
    _: *const blst::blst_p1_affine,
) {
    unsafe { blst::blst_p1_double(out, a) }
}

/// `blst_p2_double` in the three-argument shape of the macro (the affine input is unused).
unsafe fn double_p2(
    out: *mut blst::blst_p2,
    a: *const blst::blst_p2,
    _: *const blst::blst_p2_affine,
) {
    unsafe { blst::blst_p2_double(out, a) }
}

criterion_group!(benches, curve);
criterion_main!(benches);
