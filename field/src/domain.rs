//! The roots of unity and domain sizes every crate's NTTs share: the setup, the CPU
//! transforms and the device twiddles must agree on `omega` bit for bit, so it is computed
//! in one place.

use core::fmt;

use ff::PrimeField;

/// Why no domain (or root of unity) of the size asked for exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DomainError {
    /// No `2^log_size`-th root of unity: `log_size` exceeds the field's 2-adicity `S`.
    NoRootOfUnity {
        /// log2 of the order asked for.
        log_size: u32,
        /// The field's 2-adicity (32 for BLS12-381's Fr).
        two_adicity: u32,
    },
    /// `count` points need a domain of `2^log_size`, more than the largest,
    /// `2^max_log_size` ([`max_domain_log_size`]).
    TooManyPoints {
        /// The number of points (constraints) asked for.
        count: usize,
        /// log2 of the smallest power of two `>= count`; `usize::BITS` when that power does
        /// not fit in a `usize`.
        log_size: u32,
        /// log2 of the largest domain.
        max_log_size: u32,
    },
}

impl fmt::Display for DomainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoRootOfUnity {
                log_size,
                two_adicity,
            } => write!(
                f,
                "no root of unity of order 2^{log_size}: the field's 2-adicity is {two_adicity}"
            ),
            Self::TooManyPoints {
                count,
                log_size,
                max_log_size,
            } => write!(
                f,
                "{count} points need a domain of 2^{log_size}; the largest is 2^{max_log_size}"
            ),
        }
    }
}

impl DomainError {
    /// log2 of the domain (or root's order) asked for.
    pub fn log_size(&self) -> u32 {
        match *self {
            Self::NoRootOfUnity { log_size, .. } | Self::TooManyPoints { log_size, .. } => log_size,
        }
    }

    /// log2 of the largest domain (or root's order) there is.
    pub fn max_log_size(&self) -> u32 {
        match *self {
            Self::NoRootOfUnity { two_adicity, .. } => two_adicity,
            Self::TooManyPoints { max_log_size, .. } => max_log_size,
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for DomainError {}

/// A primitive `2^log_size`-th root of unity and its inverse ([`root_of_unity`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RootOfUnity<F> {
    /// `omega = F::ROOT_OF_UNITY^(2^(S - log_size))`, of order exactly `2^log_size`.
    pub omega: F,
    /// `omega^-1`.
    pub omega_inv: F,
}

/// The primitive `2^log_size`-th root of unity of `F` and its inverse, the generator of the
/// subgroup of order `2^log_size` every domain of that size uses.
///
/// `F::ROOT_OF_UNITY` has order `2^S`; squaring it `S - log_size` times leaves order
/// `2^log_size` (and likewise for the inverse), so the work is at most `2 S` squarings.
///
/// # Errors
/// [`DomainError::NoRootOfUnity`] when `log_size > F::S`.
pub fn root_of_unity<F: PrimeField>(log_size: u32) -> Result<RootOfUnity<F>, DomainError> {
    if log_size > F::S {
        return Err(DomainError::NoRootOfUnity {
            log_size,
            two_adicity: F::S,
        });
    }
    let mut omega = F::ROOT_OF_UNITY;
    let mut omega_inv = F::ROOT_OF_UNITY_INV;
    for _ in log_size..F::S {
        omega = omega.square();
        omega_inv = omega_inv.square();
    }
    Ok(RootOfUnity { omega, omega_inv })
}

/// log2 of the largest domain over `F`: the 2-adicity `S`, capped so that `2^log_size` fits
/// in a `usize`.
pub const fn max_domain_log_size<F: PrimeField>() -> u32 {
    if F::S < usize::BITS - 1 {
        F::S
    } else {
        usize::BITS - 1
    }
}

/// The domain `count` points (a circuit's constraints) need: `(log_size, size)` with `size =
/// 2^log_size` the smallest power of two `>= count`. Zero points take the one-point domain
/// `(0, 1)`, as a circuit with no constraints still has one.
///
/// # Errors
/// [`DomainError::TooManyPoints`] when that power of two exceeds `2^max_domain_log_size::<F>()`.
pub fn domain_for<F: PrimeField>(count: usize) -> Result<(u32, usize), DomainError> {
    let log_size = count
        .max(1)
        .checked_next_power_of_two()
        .map_or(usize::BITS, usize::trailing_zeros);
    let max_log_size = max_domain_log_size::<F>();
    if log_size > max_log_size {
        return Err(DomainError::TooManyPoints {
            count,
            log_size,
            max_log_size,
        });
    }
    Ok((log_size, 1 << log_size))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Fr;
    use ff::Field;

    /// The generator of the order-`2^k` subgroup by exponentiation, independent of the
    /// squaring loop under test.
    fn by_pow(k: u32) -> Fr {
        Fr::ROOT_OF_UNITY.pow_vartime([1u64 << (Fr::S - k)])
    }

    #[test]
    fn roots_match_exponentiation_and_have_order_exactly_two_to_the_k() {
        for k in 0..=Fr::S {
            let r = root_of_unity::<Fr>(k).unwrap();
            assert_eq!(r.omega, by_pow(k), "k {k}");
            assert_eq!(r.omega * r.omega_inv, Fr::ONE, "k {k}");
            // Order exactly 2^k: omega^(2^k) = 1, and for k > 0, omega^(2^(k-1)) = -1 != 1.
            let mut x = r.omega;
            for _ in 0..k.saturating_sub(1) {
                x = x.square();
            }
            if k == 0 {
                assert_eq!(r.omega, Fr::ONE);
            } else {
                assert_eq!(x, -Fr::ONE, "k {k}");
                assert_eq!(x.square(), Fr::ONE, "k {k}");
            }
        }
        let top = root_of_unity::<Fr>(Fr::S).unwrap();
        assert_eq!(top.omega, Fr::ROOT_OF_UNITY);
        assert_eq!(top.omega_inv, Fr::ROOT_OF_UNITY_INV);
    }

    #[test]
    fn no_root_past_the_two_adicity() {
        for k in [Fr::S + 1, 64, u32::MAX] {
            assert_eq!(
                root_of_unity::<Fr>(k),
                Err(DomainError::NoRootOfUnity {
                    log_size: k,
                    two_adicity: 32
                })
            );
            let e = root_of_unity::<Fr>(k).unwrap_err();
            assert_eq!((e.log_size(), e.max_log_size()), (k, 32));
        }
    }

    #[test]
    fn domains_round_up_to_a_power_of_two() {
        for (count, log_size) in [
            (0usize, 0u32),
            (1, 0),
            (2, 1),
            (3, 2),
            (5, 3),
            (1 << 20, 20),
            ((1 << 20) + 1, 21),
            (1 << 32, 32),
        ] {
            assert_eq!(
                domain_for::<Fr>(count),
                Ok((log_size, 1 << log_size)),
                "{count}"
            );
        }
    }

    #[test]
    fn domains_past_the_largest_are_errors() {
        assert_eq!(max_domain_log_size::<Fr>(), 32);
        for (count, log_size) in [((1usize << 32) + 1, 33), (usize::MAX, 64)] {
            assert_eq!(
                domain_for::<Fr>(count),
                Err(DomainError::TooManyPoints {
                    count,
                    log_size,
                    max_log_size: 32
                })
            );
            let e = domain_for::<Fr>(count).unwrap_err();
            assert_eq!((e.log_size(), e.max_log_size()), (log_size, 32));
        }
    }
}
