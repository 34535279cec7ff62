//! The counts a circuit and its parameters must agree on: query lengths, shape counts and
//! the check between them.

use crate::error::Groth16Error;

/// The number of points in each query, to check parameters against a circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueryLengths {
    /// Points in `h`.
    pub h: usize,
    /// Points in `l`.
    pub l: usize,
    /// Points in `a`.
    pub a: usize,
    /// Points in `b_g1`.
    pub b_g1: usize,
    /// Points in `b_g2`.
    pub b_g2: usize,
}

/// The counts of a circuit that its parameters' query lengths must match.
pub(crate) struct ShapeCounts {
    /// Public inputs, the constant one included.
    pub(crate) inputs: usize,
    /// Auxiliary variables.
    pub(crate) aux: usize,
    /// Auxiliary variables used in A.
    pub(crate) a_aux: usize,
    /// Inputs and auxiliary variables used in B.
    pub(crate) b: usize,
    /// The NTT domain's size.
    pub(crate) domain: usize,
}

/// Checks every query length of parameters (and their `ic` inputs) against a circuit's
/// counts; [`Groth16Error::ParameterMismatch`] names the first that differs.
pub(crate) fn check_shape(
    lens: &QueryLengths,
    ic: usize,
    c: &ShapeCounts,
) -> Result<(), Groth16Error> {
    let checks = [
        ("the number of public inputs (vk.ic)", ic, c.inputs),
        ("the h query (domain size - 1)", lens.h, c.domain - 1),
        ("the l query (auxiliary variables)", lens.l, c.aux),
        (
            "the a query (variables used in A)",
            lens.a,
            c.inputs + c.a_aux,
        ),
        ("the b_g1 query (variables used in B)", lens.b_g1, c.b),
        ("the b_g2 query (variables used in B)", lens.b_g2, c.b),
    ];
    for (what, params, circuit) in checks {
        if params != circuit {
            return Err(Groth16Error::ParameterMismatch {
                what,
                params,
                circuit,
            });
        }
    }
    Ok(())
}
