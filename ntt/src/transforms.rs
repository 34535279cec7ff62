//! The NTT-family transforms on a whole domain: [`ntt`], [`intt`], their coset forms and
//! [`transform`], each checking the slice's length, then running the radix-2 passes in the
//! order asked for.

use ff::PrimeField;

use crate::ops::{
    bit_reverse_unchecked, distribute_powers_bit_reversed, distribute_powers_from, negate_indices,
    scale,
};
use crate::radix2::{bit_reversed_to_natural, natural_to_bit_reversed};
use crate::{Domain, NttError, NttOrder};

/// Which way a transform goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttDirection {
    /// Coefficients to evaluations: `X_k = sum_j x_j omega^(j k)`.
    Forward,
    /// Evaluations to coefficients: `x_j = n^-1 sum_k X_k omega^(-j k)`.
    Inverse,
}

/// Forward NTT in place: coefficients `x` to evaluations `X_k = x(omega^k)`, `k < n`.
///
/// Returns [`NttError::LengthMismatch`] unless `data.len() == domain.size()`.
pub fn ntt<F: PrimeField>(
    domain: &Domain<F>,
    data: &mut [F],
    order: NttOrder,
) -> Result<(), NttError> {
    domain.check_len(data.len())?;
    forward(domain, data, order);
    Ok(())
}

/// Inverse NTT in place, including the `1/n` scaling: evaluations on `H` to coefficients.
///
/// Returns [`NttError::LengthMismatch`] unless `data.len() == domain.size()`.
pub fn intt<F: PrimeField>(
    domain: &Domain<F>,
    data: &mut [F],
    order: NttOrder,
) -> Result<(), NttError> {
    domain.check_len(data.len())?;
    inverse_unscaled(domain, data, order);
    scale(data, domain.size_inv());
    Ok(())
}

/// [`ntt`] or [`intt`], chosen by `direction`.
pub fn transform<F: PrimeField>(
    domain: &Domain<F>,
    data: &mut [F],
    order: NttOrder,
    direction: NttDirection,
) -> Result<(), NttError> {
    match direction {
        NttDirection::Forward => ntt(domain, data, order),
        NttDirection::Inverse => intt(domain, data, order),
    }
}

/// Coset NTT in place: coefficients to evaluations on `g H`, `X_k = x(g omega^k)`. Multiplies
/// coefficient `i` by `g^i` (on the bit-reversed positions for `BitReversedToNatural`), then
/// runs [`ntt`].
///
/// Returns [`NttError::LengthMismatch`] unless `data.len() == domain.size()`.
pub fn coset_ntt<F: PrimeField>(
    domain: &Domain<F>,
    data: &mut [F],
    order: NttOrder,
) -> Result<(), NttError> {
    domain.check_len(data.len())?;
    let g = domain.coset_shift();
    if order.input_bit_reversed() {
        distribute_powers_bit_reversed(data, g, F::ONE);
    } else {
        distribute_powers_from(data, g, F::ONE);
    }
    forward(domain, data, order);
    Ok(())
}

/// Inverse coset NTT in place: evaluations on `g H` to coefficients. Runs the inverse NTT, then
/// multiplies coefficient `i` by `n^-1 g^-i` (one pass for both factors).
///
/// Returns [`NttError::LengthMismatch`] unless `data.len() == domain.size()`.
pub fn coset_intt<F: PrimeField>(
    domain: &Domain<F>,
    data: &mut [F],
    order: NttOrder,
) -> Result<(), NttError> {
    domain.check_len(data.len())?;
    inverse_unscaled(domain, data, order);
    let (g_inv, n_inv) = (domain.coset_shift_inv(), domain.size_inv());
    if order.output_bit_reversed() {
        distribute_powers_bit_reversed(data, g_inv, n_inv);
    } else {
        distribute_powers_from(data, g_inv, n_inv);
    }
    Ok(())
}

/// The forward transform on a slice of the right length.
fn forward<F: PrimeField>(domain: &Domain<F>, data: &mut [F], order: NttOrder) {
    let tw = domain.twiddles();
    match order {
        NttOrder::NaturalToNatural => {
            natural_to_bit_reversed(data, tw);
            bit_reverse_unchecked(data);
        }
        NttOrder::NaturalToBitReversed => natural_to_bit_reversed(data, tw),
        NttOrder::BitReversedToNatural => bit_reversed_to_natural(data, tw),
    }
}

/// `n` times the inverse transform. `sum_k X_k omega^(-jk)` is the forward transform evaluated
/// at index `-j mod n`, so negate the indices on the natural-order side of a forward transform.
fn inverse_unscaled<F: PrimeField>(domain: &Domain<F>, data: &mut [F], order: NttOrder) {
    if order.output_bit_reversed() {
        // Natural-order input: x'_j = x_{-j} makes the forward transform's output X_{-k}.
        negate_indices(data);
        forward(domain, data, order);
    } else {
        forward(domain, data, order);
        negate_indices(data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distribute_powers;
    use crate::test_util::{naive_dft, permuted, random_vec, reference_root, seeded};
    use alloc::vec;
    use alloc::vec::Vec;
    use ff::{Field, PrimeField};
    use sluice_field::Fr;

    type Kernel = fn(&Domain<Fr>, &mut [Fr], NttOrder) -> Result<(), NttError>;

    /// The naive transform each kernel must match, in natural order (input, then output).
    fn expected(name: &str, x: &[Fr], log_n: u32) -> Vec<Fr> {
        let n = x.len();
        let n_inv = Fr::from(n as u64).invert().unwrap();
        let root = reference_root(log_n);
        let root_inv = root.invert().unwrap();
        let g = Fr::from(7);
        let g_inv = g.invert().unwrap();
        match name {
            "ntt" => naive_dft(x, root),
            "intt" => naive_dft(x, root_inv)
                .into_iter()
                .map(|v| v * n_inv)
                .collect(),
            "coset_ntt" => {
                let shifted: Vec<Fr> = (0..n).map(|i| x[i] * g.pow_vartime([i as u64])).collect();
                naive_dft(&shifted, root)
            }
            "coset_intt" => naive_dft(x, root_inv)
                .into_iter()
                .enumerate()
                .map(|(i, v)| v * n_inv * g_inv.pow_vartime([i as u64]))
                .collect(),
            _ => unreachable!(),
        }
    }

    const KERNELS: [(&str, Kernel); 4] = [
        ("ntt", ntt),
        ("intt", intt),
        ("coset_ntt", coset_ntt),
        ("coset_intt", coset_intt),
    ];

    /// Runs `kernel` on natural-order `x` in `order` and returns its output in natural order.
    fn run_natural(kernel: Kernel, domain: &Domain<Fr>, x: &[Fr], order: NttOrder) -> Vec<Fr> {
        let mut data = if order.input_bit_reversed() {
            permuted(x)
        } else {
            x.to_vec()
        };
        kernel(domain, &mut data, order).unwrap();
        if order.output_bit_reversed() {
            permuted(&data)
        } else {
            data
        }
    }

    #[test]
    fn kernels_match_naive_dft_for_every_size_and_order() {
        let seed = 1;
        let mut rng = seeded(seed);
        for log_n in 0..=10u32 {
            let domain = Domain::<Fr>::new(log_n).unwrap();
            let x = random_vec(&mut rng, 1 << log_n);
            for (name, kernel) in KERNELS {
                let want = expected(name, &x, log_n);
                for order in NttOrder::ALL {
                    let got = run_natural(kernel, &domain, &x, order);
                    assert_eq!(got, want, "seed {seed}, {name}, log_n {log_n}, {order:?}");
                }
            }
        }
    }

    #[test]
    fn large_sizes_round_trip_and_match_naive_on_samples() {
        // Sizes above the kernels' in-cache block and parallel thresholds (radix-4 passes,
        // split loops), where a naive full DFT is too slow: check sampled outputs instead.
        let seed = 2;
        let mut rng = seeded(seed);
        for log_n in [11u32, 12, 13, 15, 17] {
            let n = 1usize << log_n;
            let domain = Domain::<Fr>::new(log_n).unwrap();
            let x = random_vec(&mut rng, n);
            let root = reference_root(log_n);
            for order in NttOrder::ALL {
                let mut data = if order.input_bit_reversed() {
                    permuted(&x)
                } else {
                    x.clone()
                };
                ntt(&domain, &mut data, order).unwrap();
                let evals = if order.output_bit_reversed() {
                    permuted(&data)
                } else {
                    data.clone()
                };
                for k in [
                    0usize,
                    1,
                    2,
                    3,
                    n / 2 - 1,
                    n / 2,
                    n / 2 + 1,
                    n - 1,
                    12345 % n,
                ] {
                    let point = root.pow_vartime([k as u64]);
                    let value = x.iter().rev().fold(Fr::ZERO, |acc, c| acc * point + c);
                    assert_eq!(
                        evals[k], value,
                        "seed {seed}, log_n {log_n}, {order:?}, k {k}"
                    );
                }
                intt(&domain, &mut data, reverse_order(order)).unwrap();
                let coeffs = if order.input_bit_reversed() {
                    permuted(&data)
                } else {
                    data
                };
                assert!(
                    coeffs == x,
                    "seed {seed}, log_n {log_n}, {order:?}: intt(ntt(x)) != x"
                );
            }
        }
    }

    /// The order that undoes `order`'s permutation: its output order is `order`'s input order.
    fn reverse_order(order: NttOrder) -> NttOrder {
        match order {
            NttOrder::NaturalToBitReversed => NttOrder::BitReversedToNatural,
            NttOrder::BitReversedToNatural => NttOrder::NaturalToBitReversed,
            NttOrder::NaturalToNatural => NttOrder::NaturalToNatural,
        }
    }

    #[test]
    fn inverse_undoes_forward() {
        let seed = 3;
        let mut rng = seeded(seed);
        for log_n in 0..=12u32 {
            let domain = Domain::<Fr>::new(log_n).unwrap();
            let x = random_vec(&mut rng, 1 << log_n);
            for order in NttOrder::ALL {
                let back = reverse_order(order);
                let mut data = x.clone();
                ntt(&domain, &mut data, order).unwrap();
                intt(&domain, &mut data, back).unwrap();
                assert!(
                    data == x,
                    "seed {seed}, log_n {log_n}, {order:?}: intt(ntt(x))"
                );
                coset_ntt(&domain, &mut data, order).unwrap();
                coset_intt(&domain, &mut data, back).unwrap();
                assert!(
                    data == x,
                    "seed {seed}, log_n {log_n}, {order:?}: coset round trip"
                );
                let mut via_transform = x.clone();
                transform(&domain, &mut via_transform, order, NttDirection::Inverse).unwrap();
                let mut via_intt = x.clone();
                intt(&domain, &mut via_intt, order).unwrap();
                assert!(
                    via_transform == via_intt,
                    "seed {seed}, log_n {log_n}, {order:?}"
                );
            }
        }
    }

    #[test]
    fn coset_ntt_is_distribute_then_ntt() {
        let seed = 4;
        let mut rng = seeded(seed);
        for log_n in [0u32, 1, 5, 11, 14] {
            let domain = Domain::<Fr>::new(log_n).unwrap();
            let x = random_vec(&mut rng, 1 << log_n);
            let mut want = x.clone();
            distribute_powers(&mut want, Fr::from(7));
            ntt(&domain, &mut want, NttOrder::NaturalToNatural).unwrap();
            for order in NttOrder::ALL {
                let got = run_natural(coset_ntt, &domain, &x, order);
                assert!(got == want, "seed {seed}, log_n {log_n}, {order:?}");
            }
        }
    }

    #[test]
    fn constant_vectors() {
        for log_n in [0u32, 3, 11] {
            let n = 1usize << log_n;
            let domain = Domain::<Fr>::new(log_n).unwrap();
            for order in NttOrder::ALL {
                let mut zeros = vec![Fr::ZERO; n];
                ntt(&domain, &mut zeros, order).unwrap();
                assert!(
                    zeros.iter().all(|v| bool::from(v.is_zero())),
                    "log_n {log_n}"
                );
                intt(&domain, &mut zeros, order).unwrap();
                assert!(
                    zeros.iter().all(|v| bool::from(v.is_zero())),
                    "log_n {log_n}"
                );
                // The constant polynomial 1 evaluates to 1 everywhere, and back.
                let mut one = vec![Fr::ZERO; n];
                one[0] = Fr::ONE;
                ntt(&domain, &mut one, order).unwrap();
                assert!(
                    one.iter().all(|v| *v == Fr::ONE),
                    "log_n {log_n}, {order:?}"
                );
                intt(&domain, &mut one, order).unwrap();
                assert!(one[0] == Fr::ONE && one[1..].iter().all(|v| bool::from(v.is_zero())));
                // All ones: sum_j omega^(jk) is n at k = 0 and 0 elsewhere (either order).
                let mut ones = vec![Fr::ONE; n];
                ntt(&domain, &mut ones, order).unwrap();
                assert!(ones[0] == Fr::from(n as u64), "log_n {log_n}, {order:?}");
                assert!(
                    ones[1..].iter().all(|v| bool::from(v.is_zero())),
                    "log_n {log_n}"
                );
            }
        }
    }

    #[test]
    fn length_mismatch_is_an_error() {
        for log_n in [0u32, 1, 2, 4, 10] {
            let n = 1usize << log_n;
            let domain = Domain::<Fr>::new(log_n).unwrap();
            let mut lens = vec![0usize, 3, n - 1, n + 1, 2 * n];
            lens.retain(|&l| l != n);
            for len in lens {
                for (name, kernel) in KERNELS {
                    for order in NttOrder::ALL {
                        let mut data = vec![Fr::ONE; len];
                        let got = kernel(&domain, &mut data, order);
                        let want = Err(NttError::LengthMismatch {
                            expected: n,
                            got: len,
                        });
                        assert_eq!(got, want, "{name}, log_n {log_n}, len {len}");
                        assert!(
                            data.iter().all(|v| *v == Fr::ONE),
                            "{name} touched the data"
                        );
                    }
                }
            }
        }
    }

    /// sluice's Fr to arkworks' through canonical little-endian bytes.
    fn to_ark(x: &Fr) -> ark_bls12_381::Fr {
        use ark_ff::PrimeField as _;
        ark_bls12_381::Fr::from_le_bytes_mod_order(&x.to_repr())
    }

    /// arkworks' Fr to sluice's through canonical little-endian bytes.
    fn from_ark(x: &ark_bls12_381::Fr) -> Fr {
        use ark_ff::{BigInteger as _, PrimeField as _};
        let bytes: [u8; 32] = x.into_bigint().to_bytes_le().try_into().unwrap();
        Fr::from_repr(bytes).unwrap()
    }

    #[test]
    fn matches_arkworks_radix2_domain() {
        use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
        let seed = 5;
        let mut rng = seeded(seed);
        let log_n = 16u32;
        let n = 1usize << log_n;
        let domain = Domain::<Fr>::new(log_n).unwrap();
        let ark_domain = Radix2EvaluationDomain::<ark_bls12_381::Fr>::new(n).unwrap();
        assert_eq!(from_ark(&ark_domain.group_gen()), domain.omega());
        let x = random_vec(&mut rng, n);
        let ark_x: Vec<ark_bls12_381::Fr> = x.iter().map(to_ark).collect();

        let mut ours = x.clone();
        ntt(&domain, &mut ours, NttOrder::NaturalToNatural).unwrap();
        let mut theirs = ark_x.clone();
        ark_domain.fft_in_place(&mut theirs);
        let theirs: Vec<Fr> = theirs.iter().map(from_ark).collect();
        assert!(ours == theirs, "seed {seed}: ntt differs from ark fft");

        let mut ours = x.clone();
        intt(&domain, &mut ours, NttOrder::NaturalToNatural).unwrap();
        let mut theirs = ark_x.clone();
        ark_domain.ifft_in_place(&mut theirs);
        let theirs: Vec<Fr> = theirs.iter().map(from_ark).collect();
        assert!(ours == theirs, "seed {seed}: intt differs from ark ifft");

        // arkworks' coset domain with offset 7 is sluice's coset.
        let ark_coset = ark_domain.get_coset(to_ark(&Fr::from(7))).unwrap();
        let mut ours = x.clone();
        coset_ntt(&domain, &mut ours, NttOrder::NaturalToNatural).unwrap();
        let mut theirs = ark_x;
        ark_coset.fft_in_place(&mut theirs);
        let theirs: Vec<Fr> = theirs.iter().map(from_ark).collect();
        assert!(
            ours == theirs,
            "seed {seed}: coset_ntt differs from ark coset fft"
        );
        let mut back = ours;
        coset_intt(&domain, &mut back, NttOrder::NaturalToNatural).unwrap();
        assert!(back == x, "seed {seed}: coset_intt(coset_ntt(x)) != x");
    }
}
