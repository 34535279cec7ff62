//! Evaluation domains: the multiplicative subgroup `H` of order `2^k`, its coset `g H`, and the
//! twiddle table the CPU kernels use.

use alloc::vec::Vec;
use core::fmt;

use ff::PrimeField;
use sluice_field::{DomainError, RootOfUnity};

use crate::par::{chunk_len_for, for_each_chunk};
use crate::NttError;

#[cfg(feature = "std")]
type TwiddleCell<F> = std::sync::OnceLock<Vec<F>>;
#[cfg(not(feature = "std"))]
type TwiddleCell<F> = core::cell::OnceCell<Vec<F>>;

/// The subgroup `H = {omega^i : 0 <= i < n}` of `n = 2^log_size` roots of unity, with the
/// constants NTTs over it and its coset `g H` need (`g` = the field's multiplicative generator).
///
/// The twiddle table (`n/2` elements) is built on the first transform that needs it and then
/// reused, so a `Domain` is cheap to create (a device backend can take `omega` from one without
/// ever building host twiddles) and repeated transforms of one size pay for the table once.
/// With the `std` feature the table sits in a `OnceLock`, so a `Domain` can be shared across
/// threads; without it, a `OnceCell` (the type is then not `Sync`).
#[derive(Clone)]
pub struct Domain<F: PrimeField> {
    log_size: u32,
    omega: F,
    omega_inv: F,
    size_inv: F,
    coset_shift: F,
    coset_shift_inv: F,
    twiddles: TwiddleCell<F>,
}

impl<F: PrimeField> Domain<F> {
    /// The largest supported `log_size`: the field's 2-adicity `S` (32 for BLS12-381's Fr),
    /// capped so that `2^log_size` fits in a `usize`.
    pub const MAX_LOG_SIZE: u32 = sluice_field::max_domain_log_size::<F>();

    /// The domain of `2^log_size` points. Cheap: no table is built here.
    ///
    /// Returns [`NttError::DomainTooLarge`] when `log_size > MAX_LOG_SIZE`.
    pub fn new(log_size: u32) -> Result<Self, NttError> {
        if log_size > Self::MAX_LOG_SIZE {
            return Err(NttError::DomainTooLarge {
                log_size,
                max: Self::MAX_LOG_SIZE,
            });
        }
        let RootOfUnity { omega, omega_inv } =
            sluice_field::root_of_unity::<F>(log_size).map_err(too_large)?;
        let mut size_inv = F::ONE;
        for _ in 0..log_size {
            size_inv *= F::TWO_INV;
        }
        let coset_shift = F::MULTIPLICATIVE_GENERATOR;
        let coset_shift_inv = coset_shift
            .invert()
            .expect("a multiplicative generator is nonzero");
        Ok(Self {
            log_size,
            omega,
            omega_inv,
            size_inv,
            coset_shift,
            coset_shift_inv,
            twiddles: TwiddleCell::new(),
        })
    }

    /// The smallest domain with at least `n` points (`n >= 1`).
    ///
    /// Returns [`NttError::EmptyDomain`] for `n = 0` and [`NttError::DomainTooLarge`] when the
    /// next power of two exceeds `2^MAX_LOG_SIZE`.
    pub fn for_size(n: usize) -> Result<Self, NttError> {
        if n == 0 {
            return Err(NttError::EmptyDomain);
        }
        let (log_size, _) = sluice_field::domain_for::<F>(n).map_err(too_large)?;
        Self::new(log_size)
    }

    /// The number of points `n = 2^log_size`.
    pub fn size(&self) -> usize {
        1 << self.log_size
    }

    /// `log2` of the number of points.
    pub fn log_size(&self) -> u32 {
        self.log_size
    }

    /// The generator `omega` of `H`, a primitive `n`-th root of unity
    /// (`F::ROOT_OF_UNITY^(2^(S - log_size))`).
    pub fn omega(&self) -> F {
        self.omega
    }

    /// `omega^-1`.
    pub fn omega_inv(&self) -> F {
        self.omega_inv
    }

    /// `n^-1`, the inverse NTT's scaling factor.
    pub fn size_inv(&self) -> F {
        self.size_inv
    }

    /// The coset shift `g = F::MULTIPLICATIVE_GENERATOR` (7 for BLS12-381's Fr): the coset
    /// transforms evaluate on `g H`, which is disjoint from `H`.
    pub fn coset_shift(&self) -> F {
        self.coset_shift
    }

    /// `g^-1`.
    pub fn coset_shift_inv(&self) -> F {
        self.coset_shift_inv
    }

    /// The vanishing polynomial of `H`, `Z(X) = X^n - 1`, on the coset: `Z(g omega^i) = g^n - 1`
    /// for every `i` (because `omega^(i n) = 1`). Nonzero, since `g` is not in `H`.
    pub fn vanishing_on_coset(&self) -> F {
        self.coset_shift.pow_vartime([self.size() as u64]) - F::ONE
    }

    /// The `i`-th point `omega^i` of `H` (`i` taken modulo `n`).
    ///
    /// # Security
    /// Variable time in `i` (square-and-multiply over its bits); indices are public.
    pub fn element(&self, i: usize) -> F {
        self.omega.pow_vartime([(i & (self.size() - 1)) as u64])
    }

    /// The forward twiddle table, built on first use: `n/2` elements (empty for `n = 1`) in
    /// bit-reversed order, `T[k] = omega^bitrev(k)` where `bitrev` reverses `log_size - 1` bits.
    ///
    /// In that order the butterfly block with index `k` of every radix-2 stage uses `T[k]` (a
    /// contiguous, prefix-shared access pattern); the inverse transforms reuse the same table.
    pub fn twiddles(&self) -> &[F] {
        self.twiddles
            .get_or_init(|| bit_reversed_powers(self.omega, self.log_size))
    }

    /// Whether the twiddle table has been built yet.
    pub fn has_twiddles(&self) -> bool {
        self.twiddles.get().is_some()
    }

    /// `Ok(())` if `len` is this domain's size, else [`NttError::LengthMismatch`].
    pub(crate) fn check_len(&self, len: usize) -> Result<(), NttError> {
        if len == self.size() {
            Ok(())
        } else {
            Err(NttError::LengthMismatch {
                expected: self.size(),
                got: len,
            })
        }
    }
}

impl<F: PrimeField> fmt::Debug for Domain<F> {
    // Not derived: the derived form would print the whole twiddle table.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Domain")
            .field("log_size", &self.log_size)
            .field("omega", &self.omega)
            .field("coset_shift", &self.coset_shift)
            .field("has_twiddles", &self.has_twiddles())
            .finish()
    }
}

/// [`NttError::DomainTooLarge`] for a domain `sluice_field` refuses.
fn too_large(e: DomainError) -> NttError {
    NttError::DomainTooLarge {
        log_size: e.log_size(),
        max: e.max_log_size(),
    }
}

/// `T[k] = omega^bitrev_{log_n - 1}(k)` for `k < 2^(log_n - 1)`, built by doubling:
/// setting bit `t` of `k` adds `2^(log_n - 2 - t)` to the exponent, so
/// `T[2^t + k] = T[k] * omega^(2^(log_n - 2 - t))` for `k < 2^t` (each doubling is parallel).
fn bit_reversed_powers<F: PrimeField>(omega: F, log_n: u32) -> Vec<F> {
    if log_n == 0 {
        return Vec::new();
    }
    // squares[i] = omega^(2^i)
    let squares: Vec<F> = core::iter::successors(Some(omega), |w| Some(w.square()))
        .take(log_n as usize - 1)
        .collect();
    let half = 1usize << (log_n - 1);
    let mut table = Vec::with_capacity(half);
    table.push(F::ONE);
    for step in squares.iter().rev() {
        let len = table.len();
        table.resize(2 * len, F::ZERO);
        let (lo, hi) = table.split_at_mut(len);
        let chunk = chunk_len_for(len);
        let lo = &*lo;
        for_each_chunk(hi, chunk, |t, part| {
            for (x, y) in part.iter_mut().zip(&lo[t * chunk..]) {
                *x = *y * step;
            }
        });
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{naive_bit_reverse, reference_root};
    use ff::Field;
    use sluice_field::Fr;

    #[test]
    fn constants_are_correct() {
        for log_n in 0..=32u32 {
            let d = Domain::<Fr>::new(log_n).unwrap();
            let n = 1u64 << log_n;
            assert_eq!(d.size() as u64, n);
            assert_eq!(d.log_size(), log_n);
            assert_eq!(d.omega(), reference_root(log_n), "log_n {log_n}");
            assert_eq!(d.omega().pow_vartime([n]), Fr::ONE, "log_n {log_n}");
            if log_n > 0 {
                // Primitive: omega^(n/2) = -1, not 1.
                assert_eq!(d.omega().pow_vartime([n / 2]), -Fr::ONE, "log_n {log_n}");
            }
            assert_eq!(d.omega() * d.omega_inv(), Fr::ONE, "log_n {log_n}");
            assert_eq!(d.size_inv() * Fr::from(n), Fr::ONE, "log_n {log_n}");
            assert_eq!(d.coset_shift(), Fr::from(7));
            assert_eq!(d.coset_shift() * d.coset_shift_inv(), Fr::ONE);
            assert!(
                !d.has_twiddles(),
                "constructing a domain must not build the table"
            );
        }
    }

    #[test]
    fn too_large_and_empty_domains_are_errors() {
        for log_n in [33u32, 34, 64, u32::MAX] {
            assert_eq!(
                Domain::<Fr>::new(log_n).unwrap_err(),
                NttError::DomainTooLarge {
                    log_size: log_n,
                    max: 32
                }
            );
        }
        assert_eq!(
            Domain::<Fr>::for_size((1 << 32) + 1).unwrap_err(),
            NttError::DomainTooLarge {
                log_size: 33,
                max: 32
            }
        );
        assert_eq!(
            Domain::<Fr>::for_size(usize::MAX).unwrap_err(),
            NttError::DomainTooLarge {
                log_size: 64,
                max: 32
            }
        );
        assert_eq!(
            Domain::<Fr>::for_size(0).unwrap_err(),
            NttError::EmptyDomain
        );
    }

    #[test]
    fn for_size_rounds_up_to_a_power_of_two() {
        for (n, log_n) in [
            (1usize, 0u32),
            (2, 1),
            (3, 2),
            (4, 2),
            (1023, 10),
            (1024, 10),
            (1025, 11),
            (1 << 32, 32),
        ] {
            let d = Domain::<Fr>::for_size(n).unwrap();
            assert_eq!(d.log_size(), log_n, "n {n}");
            assert_eq!(d.size(), 1 << log_n, "n {n}");
        }
    }

    #[test]
    fn vanishing_on_coset_is_z_at_every_coset_point() {
        for log_n in [0u32, 1, 4, 10, 32] {
            let d = Domain::<Fr>::new(log_n).unwrap();
            let n = 1u64 << log_n;
            let g = Fr::from(7);
            for i in [0u64, 1, 5, n / 2, n - 1] {
                let x = g * reference_root(log_n).pow_vartime([i]);
                assert_eq!(
                    d.vanishing_on_coset(),
                    x.pow_vartime([n]) - Fr::ONE,
                    "log_n {log_n}"
                );
            }
            assert!(!bool::from(d.vanishing_on_coset().is_zero()));
        }
    }

    #[test]
    fn elements_are_powers_of_omega() {
        let d = Domain::<Fr>::new(10).unwrap();
        let root = reference_root(10);
        for i in [0usize, 1, 2, 511, 1023, 1024, 1025, usize::MAX] {
            assert_eq!(d.element(i), root.pow_vartime([(i % 1024) as u64]), "i {i}");
        }
    }

    #[test]
    fn twiddles_are_bit_reversed_powers() {
        for log_n in 0..=12u32 {
            let d = Domain::<Fr>::new(log_n).unwrap();
            let tw = d.twiddles();
            assert_eq!(tw.len(), (1usize << log_n) / 2);
            let root = reference_root(log_n);
            for (k, t) in tw.iter().enumerate() {
                let e = naive_bit_reverse(k, log_n.saturating_sub(1)) as u64;
                assert_eq!(*t, root.pow_vartime([e]), "log_n {log_n}, k {k}");
            }
            assert!(d.has_twiddles());
        }
    }
}
