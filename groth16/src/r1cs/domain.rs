//! The evaluation domain of a circuit: its size and the root of unity that generates it,
//! both from `sluice-field`'s one definition (as the NTTs on every backend use).

use sluice_field::{domain_for, root_of_unity, Fr};

use crate::error::Groth16Error;

/// `log2` of the evaluation domain for `constraints` constraints and its size.
pub(crate) fn domain_size(constraints: usize) -> Result<(u32, usize), Groth16Error> {
    domain_for::<Fr>(constraints).map_err(|_| Groth16Error::CircuitTooLarge { constraints })
}

/// The generator of the subgroup of order `2^log` of Fr*, for a domain of
/// [`domain_size`] (whose log is at most Fr's 2-adicity).
pub(crate) fn omega(log: u32) -> Result<Fr, Groth16Error> {
    root_of_unity::<Fr>(log)
        .map(|root| root.omega)
        .map_err(|_| Groth16Error::CircuitTooLarge {
            constraints: 1usize.checked_shl(log).unwrap_or(usize::MAX),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::{Field, PrimeField};

    #[test]
    fn domain_sizes() {
        assert_eq!(domain_size(0).unwrap(), (0, 1));
        assert_eq!(domain_size(1).unwrap(), (0, 1));
        assert_eq!(domain_size(5).unwrap(), (3, 8));
        assert_eq!(domain_size(1 << 20).unwrap(), (20, 1 << 20));
        assert!(matches!(
            domain_size((1 << Fr::S) + 1),
            Err(Groth16Error::CircuitTooLarge { .. })
        ));
    }

    #[test]
    fn omega_has_the_domain_order() {
        let w = omega(3).unwrap();
        assert_eq!(w.pow_vartime([8u64]), Fr::ONE);
        assert_ne!(w.pow_vartime([4u64]), Fr::ONE);
        assert!(omega(Fr::S + 1).is_err());
    }
}
