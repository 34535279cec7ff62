//! Evaluating a linear combination at the assignment, `<lc, z>`, as the prover's synthesis
//! does per constraint, marking the variables it uses.

use bellpepper_core::LinearCombination;
use ff::Field;
use sluice_backend::compact::Entry;
use sluice_backend::CompactVec;
use sluice_field::{Fr, FrCompatible};
use sluice_msm::Density;

/// The Montgomery limbs of -1: p - R (R = 2^256 mod p being one's), so that `eval_lc`
/// need not negate per call.
pub(crate) const MINUS_ONE: [u64; 4] = {
    let (p, r) = (Fr::MODULUS_LIMBS, Fr::ONE.mont_limbs());
    let (mut out, mut borrow, mut i) = ([0u64; 4], false, 0);
    while i < 4 {
        let (d, b1) = p[i].overflowing_sub(r[i]);
        let (d, b2) = d.overflowing_sub(borrow as u64);
        out[i] = d;
        borrow = b1 | b2;
        i += 1;
    }
    out
};

/// `<lc, z>`, marking used variables in the densities given. `None` if the combination
/// names a variable this system never allocated.
pub(crate) fn eval_lc<S: FrCompatible>(
    lc: &LinearCombination<S>,
    inputs: &[Fr],
    aux: &CompactVec,
    mut input_density: Option<&mut Density>,
    mut aux_density: Option<&mut Density>,
) -> Option<Fr> {
    let mut acc = Fr::ZERO;
    // Coefficients are circuit structure, public: they are compared in variable time (their
    // Montgomery limbs). Skipping zeros is what defines density in bellperson (a zero
    // coefficient does not use the variable); a coefficient of one or minus one needs no
    // product. Inputs are public too, so an input of one (the constant every circuit uses
    // for its constants) needs no product either. An auxiliary value stored as a small
    // code needs no product when it is 0, 1 or -1 (most of a gadget circuit's witness):
    // variable time in the witness, as compact storage is (sluice_backend::compact);
    // raw storage gives full elements, whose arithmetic does not depend on the value.
    #[inline(always)]
    fn coefficient_used(coeff: &Fr) -> bool {
        const ZERO: [u64; 4] = Fr::ZERO.mont_limbs();
        coeff.mont_limbs() != ZERO
    }
    // Adds coeff * value to acc (coeff nonzero); inlined (as a closure it was a call per
    // term, with acc on the stack).
    #[inline(always)]
    fn add_product(acc: &mut Fr, value: Fr, coeff: &Fr) {
        const ONE: [u64; 4] = Fr::ONE.mont_limbs();
        match coeff.mont_limbs() {
            ONE => *acc += value,
            MINUS_ONE => *acc -= value,
            _ => *acc += value * coeff,
        }
    }
    #[inline(always)]
    fn mark(density: Option<&mut Density>, i: usize) -> Option<()> {
        match density {
            Some(d) => d.set(i, true).ok(),
            None => Some(()),
        }
    }
    for (&i, coeff) in lc.iter_inputs() {
        let coeff = coeff.as_fr();
        if !coefficient_used(coeff) {
            continue;
        }
        let value = *inputs.get(i)?;
        match value.mont_limbs() == Fr::ONE.mont_limbs() {
            true => acc += *coeff,
            false => add_product(&mut acc, value, coeff),
        }
        mark(input_density.as_deref_mut(), i)?;
    }
    for (&i, coeff) in lc.iter_aux() {
        let coeff = coeff.as_fr();
        if !coefficient_used(coeff) {
            continue;
        }
        match aux.entry_vartime(i)? {
            Entry::Small(0) => {}
            Entry::Small(1) => acc += *coeff,
            Entry::Small(-1) => acc -= *coeff,
            entry => add_product(&mut acc, entry.to_fr(), coeff),
        }
        mark(aux_density.as_deref_mut(), i)?;
    }
    Some(acc)
}
