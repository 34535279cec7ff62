//! Field arithmetic: sluice vs blst on the same random inputs (same run, compare ratios).
//!
//! Curve benchmarks (g1_add_mixed, g2_add_mixed, ...) live in `benches/curve.rs`, owned by
//! the curves code, to keep the two files independent.

// criterion_group!/criterion_main! generate undocumented items.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion};
use ff::Field;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use sluice_field::{Fq, Fq2, Fr};

/// Registers one "sluice" and one "blst" function in `group`, over a pair of fixed random
/// inputs `(a, b)` converted to blst's types by limb copy.
macro_rules! bench_pair {
    ($c:expr, $group:literal, $a:expr, $b:expr, |$x:ident, $y:ident| $ours:expr, $to_b:expr, |$bx:ident, $by:ident, $out:ident| $theirs:expr) => {{
        let mut g = $c.benchmark_group($group);
        let (a, b) = ($a, $b);
        g.bench_function("sluice", |bench| {
            bench.iter(|| {
                let ($x, $y) = (black_box(&a), black_box(&b));
                $ours
            })
        });
        let (ba, bb) = ($to_b(&a), $to_b(&b));
        g.bench_function("blst", |bench| {
            bench.iter(|| {
                let ($bx, $by) = (black_box(&ba), black_box(&bb));
                let mut $out = Default::default();
                #[allow(unused_unsafe)]
                unsafe {
                    $theirs
                };
                $out
            })
        });
        g.finish();
    }};
}

fn fr_b(x: &Fr) -> blst::blst_fr {
    blst::blst_fr { l: x.mont_limbs() }
}
fn fq_b(x: &Fq) -> blst::blst_fp {
    blst::blst_fp { l: x.mont_limbs() }
}
fn fq2_b(x: &Fq2) -> blst::blst_fp2 {
    blst::blst_fp2 {
        fp: [fq_b(&x.c0), fq_b(&x.c1)],
    }
}

fn fields(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let (r1, r2) = (Fr::random(&mut rng), Fr::random(&mut rng));
    let (q1, q2) = (Fq::random(&mut rng), Fq::random(&mut rng));
    let (e1, e2) = (Fq2::random(&mut rng), Fq2::random(&mut rng));

    bench_pair!(c, "fr_mul", r1, r2, |x, y| x * y, fr_b, |x, y, o| {
        blst::blst_fr_mul(&mut o, x, y)
    });
    bench_pair!(
        c,
        "fr_square",
        r1,
        r2,
        |x, _y| x.square(),
        fr_b,
        |x, _y, o| blst::blst_fr_sqr(&mut o, x)
    );
    bench_pair!(c, "fr_add", r1, r2, |x, y| x + y, fr_b, |x, y, o| {
        blst::blst_fr_add(&mut o, x, y)
    });
    bench_pair!(
        c,
        "fr_invert",
        r1,
        r2,
        |x, _y| x.invert().unwrap(),
        fr_b,
        |x, _y, o| blst::blst_fr_inverse(&mut o, x)
    );

    bench_pair!(c, "fq_mul", q1, q2, |x, y| x * y, fq_b, |x, y, o| {
        blst::blst_fp_mul(&mut o, x, y)
    });
    bench_pair!(
        c,
        "fq_square",
        q1,
        q2,
        |x, _y| x.square(),
        fq_b,
        |x, _y, o| blst::blst_fp_sqr(&mut o, x)
    );
    bench_pair!(c, "fq_add", q1, q2, |x, y| x + y, fq_b, |x, y, o| {
        blst::blst_fp_add(&mut o, x, y)
    });
    bench_pair!(
        c,
        "fq_invert",
        q1,
        q2,
        |x, _y| x.invert().unwrap(),
        fq_b,
        |x, _y, o| blst::blst_fp_inverse(&mut o, x)
    );
    bench_pair!(
        c,
        "fq_sqrt",
        q1.square(),
        q2,
        |x, _y| x.sqrt().unwrap(),
        fq_b,
        |x, _y, o| blst::blst_fp_sqrt(&mut o, x)
    );

    bench_pair!(c, "fq2_mul", e1, e2, |x, y| x * y, fq2_b, |x, y, o| {
        blst::blst_fp2_mul(&mut o, x, y)
    });
    bench_pair!(
        c,
        "fq2_square",
        e1,
        e2,
        |x, _y| x.square(),
        fq2_b,
        |x, _y, o| blst::blst_fp2_sqr(&mut o, x)
    );
    bench_pair!(
        c,
        "fq2_invert",
        e1,
        e2,
        |x, _y| x.invert().unwrap(),
        fq2_b,
        |x, _y, o| blst::blst_fp2_inverse(&mut o, x)
    );
    bench_pair!(
        c,
        "fq2_sqrt",
        e1.square(),
        e2,
        |x, _y| x.sqrt().unwrap(),
        fq2_b,
        |x, _y, o| blst::blst_fp2_sqrt(&mut o, x)
    );

    // Batch inversion of 1024 elements (sluice only: blst has no batch API).
    let v: Vec<Fr> = (0..1024).map(|_| Fr::random(&mut rng)).collect();
    c.bench_function("fr_batch_invert_1024/sluice", |bench| {
        bench.iter_batched_ref(|| v.clone(), |v| Fr::batch_invert(v), BatchSize::SmallInput)
    });
}

criterion_group!(benches, fields);
criterion_main!(benches);
