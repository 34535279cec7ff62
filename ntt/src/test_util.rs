//! Independent references and helpers for the tests.

use alloc::vec::Vec;

use ff::{Field, PrimeField};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_field::Fr;

/// The seeded generator every randomised test uses (the seed goes into assertion messages).
pub(crate) fn seeded(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// `len` uniformly random field elements.
pub(crate) fn random_vec(rng: &mut ChaCha20Rng, len: usize) -> Vec<Fr> {
    (0..len).map(|_| Fr::random(&mut *rng)).collect()
}

/// Bit reversal of `i` over `bits` bits, one bit at a time.
pub(crate) fn naive_bit_reverse(i: usize, bits: u32) -> usize {
    (0..bits).fold(0, |acc, b| (acc << 1) | ((i >> b) & 1))
}

/// A primitive `2^log_n`-th root of unity computed from the field constants alone:
/// `ROOT_OF_UNITY^(2^(S - log_n))` by exponentiation (the domain squares instead).
pub(crate) fn reference_root(log_n: u32) -> Fr {
    let exp = 1u64 << (Fr::S - log_n);
    Fr::ROOT_OF_UNITY.pow_vartime([exp])
}

/// The O(n^2) DFT: `out[k] = sum_j x[j] * root^(j k)`.
pub(crate) fn naive_dft(x: &[Fr], root: Fr) -> Vec<Fr> {
    let mut out = Vec::with_capacity(x.len());
    let mut root_k = Fr::ONE; // root^k
    for _ in 0..x.len() {
        let mut acc = Fr::ZERO;
        let mut power = Fr::ONE; // root^(j k)
        for xj in x {
            acc += *xj * power;
            power *= root_k;
        }
        out.push(acc);
        root_k *= root;
    }
    out
}

/// `v` permuted by the naive bit reversal (`out[p] = v[bitrev(p)]`).
pub(crate) fn permuted(v: &[Fr]) -> Vec<Fr> {
    let bits = v.len().trailing_zeros();
    (0..v.len())
        .map(|p| v[naive_bit_reverse(p, bits)])
        .collect()
}
