//! The 6-limb (Fq) Montgomery product in x86-64 assembly with `mulx`, `adcx` and `adox`:
//! two independent carry chains per row, which the portable code cannot express (LLVM
//! emits one `adc` chain), for about 1.3x its speed (BENCHMARKS.md#field-and-curve). Fr's
//! 4-limb product gained 7% this way and nothing measurable in the NTT, the proof or
//! synthesis, so it stays portable.
//!
//! Same algorithm as [`crate::arith::mont_mul`] (CIOS with the no-carry shortcut, so each
//! row's top word fits one limb), same result. Used only where the CPU has BMI2 and ADX:
//! checked at run time with `std`, at compile time without it.

use core::arch::asm;

/// Row i >= 1 of the product (`$off` = 8 i): t += a * b[i], the top word in `hi`.
macro_rules! row {
    ($off:literal) => {
        concat!(
            "xor eax, eax\n",
            "mov rdx, qword ptr [{b} + ",
            $off,
            "]\n",
            "mulx {hi}, rax, qword ptr [{a}]\n",
            "adox {t0}, rax\n",
            "adcx {t1}, {hi}\n",
            "mulx {hi}, rax, qword ptr [{a} + 8]\n",
            "adox {t1}, rax\n",
            "adcx {t2}, {hi}\n",
            "mulx {hi}, rax, qword ptr [{a} + 16]\n",
            "adox {t2}, rax\n",
            "adcx {t3}, {hi}\n",
            "mulx {hi}, rax, qword ptr [{a} + 24]\n",
            "adox {t3}, rax\n",
            "adcx {t4}, {hi}\n",
            "mulx {hi}, rax, qword ptr [{a} + 32]\n",
            "adox {t4}, rax\n",
            "adcx {t5}, {hi}\n",
            "mulx {hi}, rax, qword ptr [{a} + 40]\n",
            "adox {t5}, rax\n",
            "mov eax, 0\n",
            "adcx {hi}, rax\n",
            "adox {hi}, rax\n",
        )
    };
}

/// One reduction step: k = t0 * inv, t = (t + k m) / 2^64 with `hi` added on top.
macro_rules! reduce {
    () => {
        concat!(
            "mov rdx, {t0}\n",
            "imul rdx, qword ptr [{q} + 48]\n",
            "xor eax, eax\n",
            // The low word: t0 + lo(k m0) = 0 mod 2^64; only its carry is kept.
            "mulx {tmp}, rax, qword ptr [{q}]\n",
            "adcx rax, {t0}\n",
            "mov {t0}, {tmp}\n",
            "adcx {t0}, {t1}\n",
            "mulx {t1}, rax, qword ptr [{q} + 8]\n",
            "adox {t0}, rax\n",
            "adcx {t1}, {t2}\n",
            "mulx {t2}, rax, qword ptr [{q} + 16]\n",
            "adox {t1}, rax\n",
            "adcx {t2}, {t3}\n",
            "mulx {t3}, rax, qword ptr [{q} + 24]\n",
            "adox {t2}, rax\n",
            "adcx {t3}, {t4}\n",
            "mulx {t4}, rax, qword ptr [{q} + 32]\n",
            "adox {t3}, rax\n",
            "adcx {t4}, {t5}\n",
            "mulx {t5}, rax, qword ptr [{q} + 40]\n",
            "adox {t4}, rax\n",
            "mov eax, 0\n",
            "adcx {t5}, rax\n",
            "adox {t5}, {hi}\n",
        )
    };
}

/// Set by the tests to run the portable product on a CPU with ADX too (both give the same
/// results, so other tests running meanwhile are unaffected).
#[cfg(test)]
static PORTABLE: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// [`mont_mul_6`] where this CPU has it and `m`, `inv` are Fq's (constants wherever the
/// crate calls it, so the comparison folds away once inlined); `None` otherwise.
#[inline(always)]
pub(crate) fn fq_mont_mul(a: &[u64; 6], b: &[u64; 6], m: &[u64; 6], inv: u64) -> Option<[u64; 6]> {
    if *m == crate::fq_modulus::MODULUS && inv == crate::fq_modulus::INV && available() {
        // SAFETY: the CPU has BMI2 and ADX.
        return Some(unsafe { mont_mul_6(a, b) });
    }
    None
}

/// Whether this CPU runs [`mont_mul_6`].
#[inline(always)]
pub(crate) fn available() -> bool {
    #[cfg(test)]
    if PORTABLE.load(core::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    cpu_has_adx()
}

/// Whether the CPU has BMI2 and ADX.
#[inline(always)]
fn cpu_has_adx() -> bool {
    #[cfg(feature = "std")]
    {
        std::is_x86_feature_detected!("bmi2") && std::is_x86_feature_detected!("adx")
    }
    #[cfg(not(feature = "std"))]
    {
        cfg!(all(target_feature = "bmi2", target_feature = "adx"))
    }
}

/// Fq's modulus and `-p^-1 mod 2^64`, as the product reads them.
static FQ_Q: [u64; 7] = {
    let m = crate::fq_modulus::MODULUS;
    [m[0], m[1], m[2], m[3], m[4], m[5], crate::fq_modulus::INV]
};

/// Fq's product `a * b / 2^384 mod p` for `a` below `2^383` (reduced or not) and a reduced
/// `b` (p's top limb is below `2^63 - 1`, which the no-carry rows need); the output is below
/// `2p` (the caller subtracts p once where needed).
///
/// # Safety
/// The CPU must have BMI2 and ADX ([`available`]).
#[target_feature(enable = "bmi2,adx")]
pub(crate) unsafe fn mont_mul_6(a: &[u64; 6], b: &[u64; 6]) -> [u64; 6] {
    // The modulus and `inv` side by side, from a static: the asm has no register left for
    // another pointer, and building them per call cost 14 memory operations.
    let q = &FQ_Q;
    let (t0, t1, t2, t3, t4, t5): (u64, u64, u64, u64, u64, u64);
    // Row i: t += a * b[i] (lows on the OF chain, highs on the CF chain, the top word in
    // `hi`); then t = (t + k m) / 2^64 with k = t0 * inv, the top word folded into t5.
    // `xor eax, eax` clears both flags; `mov eax, 0` keeps them.
    unsafe {
        asm!(
            // Row 0: t = a * b[0].
            "xor eax, eax",
            "mov rdx, qword ptr [{b}]",
            "mulx {t1}, {t0}, qword ptr [{a}]",
            "mulx {t2}, rax, qword ptr [{a} + 8]",
            "adox {t1}, rax",
            "mulx {t3}, rax, qword ptr [{a} + 16]",
            "adox {t2}, rax",
            "mulx {t4}, rax, qword ptr [{a} + 24]",
            "adox {t3}, rax",
            "mulx {t5}, rax, qword ptr [{a} + 32]",
            "adox {t4}, rax",
            "mulx {hi}, rax, qword ptr [{a} + 40]",
            "adox {t5}, rax",
            "mov eax, 0",
            "adox {hi}, rax",
            reduce!(),
            row!(8),
            reduce!(),
            row!(16),
            reduce!(),
            row!(24),
            reduce!(),
            row!(32),
            reduce!(),
            row!(40),
            reduce!(),
            a = in(reg) a.as_ptr(),
            b = in(reg) b.as_ptr(),
            q = in(reg) q.as_ptr(),
            t0 = out(reg) t0,
            t1 = out(reg) t1,
            t2 = out(reg) t2,
            t3 = out(reg) t3,
            t4 = out(reg) t4,
            t5 = out(reg) t5,
            hi = out(reg) _,
            tmp = out(reg) _,
            out("rax") _,
            out("rdx") _,
            options(pure, readonly, nostack),
        );
    }
    [t0, t1, t2, t3, t4, t5]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.
    extern crate std;
    use super::*;
    use crate::arith::sub_if_ge;
    use crate::Fq;
    use ff::Field;
    use rand_chacha::rand_core::{RngCore, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::vec::Vec;

    /// `a * b / 2^(64N) mod m` by a schoolbook product and a word-by-word reduction with a
    /// spare word for the carries: independent of the crate's arithmetic.
    fn reference<const N: usize>(a: &[u64; N], b: &[u64; N], m: &[u64; N], inv: u64) -> [u64; N] {
        let mut r = std::vec![0u64; 2 * N + 1];
        for i in 0..N {
            let mut carry = 0u128;
            for j in 0..N {
                let t = u128::from(r[i + j]) + u128::from(a[i]) * u128::from(b[j]) + carry;
                r[i + j] = t as u64;
                carry = t >> 64;
            }
            r[i + N] = carry as u64;
        }
        for i in 0..N {
            let k = r[i].wrapping_mul(inv);
            let mut carry = 0u128;
            for j in 0..N {
                let s = u128::from(r[i + j]) + u128::from(k) * u128::from(m[j]) + carry;
                r[i + j] = s as u64;
                carry = s >> 64;
            }
            for word in r.iter_mut().skip(i + N) {
                let s = u128::from(*word) + carry;
                *word = s as u64;
                carry = s >> 64;
            }
        }
        assert_eq!(r[2 * N], 0, "the reduced value exceeds 2^(64N)");
        let mut out = [0u64; N];
        out.copy_from_slice(&r[N..2 * N]);
        sub_if_ge(out, m)
    }

    /// Reduced values that stress the carries (0, 1, m - 1, m - 2, m / 2, all-ones limbs
    /// below the top, powers of two) and `random` seeded ones.
    fn values<const N: usize>(
        m: &[u64; N],
        random: impl Iterator<Item = [u64; N]>,
    ) -> Vec<[u64; N]> {
        let mut one = [0u64; N];
        one[0] = 1;
        let minus = |k: u64| {
            let mut x = *m;
            x[0] -= k; // m's low limb is above every k used here
            x
        };
        let mut v = std::vec![[0; N], one, minus(1), minus(2), minus(0xffff)];
        let mut ones = [u64::MAX; N];
        ones[N - 1] = m[N - 1] - 1;
        v.push(ones);
        let mut half = [0u64; N];
        for i in 0..N {
            half[i] = (m[i] >> 1) | if i + 1 < N { m[i + 1] << 63 } else { 0 };
        }
        v.push(half);
        for bit in (0..64 * N - 4).step_by(37) {
            let mut x = [0u64; N];
            x[bit / 64] = 1 << (bit % 64);
            v.push(x);
        }
        v.extend(random);
        v
    }

    /// Every pair of `values` (the first factor also up to 2m - 1, as the Fq2 square
    /// passes it), then a chain of 10,000 products fed back.
    fn check<const N: usize>(
        name: &str,
        seed: u64,
        m: &[u64; N],
        inv: u64,
        values: &[[u64; N]],
        product: impl Fn(&[u64; N], &[u64; N]) -> [u64; N],
    ) {
        let mut firsts = values.to_vec();
        firsts.extend(values.iter().map(|v| crate::arith::add_raw(v, m).0));
        for (i, a) in firsts.iter().enumerate() {
            for (j, b) in values.iter().enumerate() {
                let got = sub_if_ge(product(a, b), m);
                let want = reference(a, b, m, inv);
                assert_eq!(
                    got, want,
                    "{name}: a = firsts[{i}], b = values[{j}], seed {seed:#x}"
                );
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut x, mut y) = (values[values.len() - 1], values[values.len() - 1]);
        for step in 0..10_000 {
            let s = values[rng.next_u64() as usize % values.len()];
            x = sub_if_ge(product(&x, &s), m);
            y = reference(&y, &s, m, inv);
            assert_eq!(x, y, "{name}: step {step}, seed {seed:#x}");
        }
    }

    #[test]
    fn the_portable_product_matches_the_reference_arithmetic() {
        // Fq's product, square and Fq2's square as a CPU without ADX runs them.
        PORTABLE.store(true, core::sync::atomic::Ordering::Relaxed);
        let seed = 0xad_0002;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (m, inv) = (Fq::MODULUS_LIMBS, Fq::INV);
        let fq = values(&m, (0..60).map(|_| Fq::random(&mut rng).mont_limbs()));
        check("portable Fq", seed, &m, inv, &fq, |a, b| {
            crate::arith::mont_mul(a, b, &m, inv)
        });
        for (i, a) in fq.iter().enumerate() {
            let sq = crate::arith::mont_sqr(a, &m, inv);
            assert_eq!(
                sq,
                reference(a, a, &m, inv),
                "square of values[{i}], seed {seed:#x}"
            );
            let x = crate::Fq2 {
                c0: Fq::from_mont_limbs_unchecked(*a),
                c1: Fq::from_mont_limbs_unchecked(fq[(i * 7 + 3) % fq.len()]),
            };
            assert_eq!(
                x.square(),
                x * x,
                "Fq2 square of values[{i}], seed {seed:#x}"
            );
        }
        PORTABLE.store(false, core::sync::atomic::Ordering::Relaxed);
    }

    #[test]
    fn the_assembly_product_matches_the_reference_arithmetic() {
        if !cpu_has_adx() {
            std::eprintln!("skipped: this CPU has no BMI2 / ADX");
            return;
        }
        let seed = 0xad_0001;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (m, inv) = (Fq::MODULUS_LIMBS, Fq::INV);
        let fq = values(&m, (0..150).map(|_| Fq::random(&mut rng).mont_limbs()));
        // SAFETY: checked above.
        check("Fq", seed, &m, inv, &fq, |a, b| unsafe { mont_mul_6(a, b) });
    }
}
