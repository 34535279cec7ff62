//! What a bellperson 0.27 user's crate does to move to sluice: its circuit, written against
//! bellpepper-core and `blstrs::Scalar`, stays as it is; the dependency becomes `sluice`
//! (feature `blstrs`) and the prover calls become sluice's.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use ff::Field;

/// The user's circuit, untouched: knowledge of a cube root, `x^3 + x + 5 = out`.
struct CubeRoot {
    x: Option<Scalar>,
}

impl Circuit<Scalar> for CubeRoot {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let missing = || SynthesisError::AssignmentMissing;
        let x = cs.alloc(|| "x", || self.x.ok_or_else(missing))?;
        let x2_val = self.x.map(|x| x.square());
        let x2 = cs.alloc(|| "x^2", || x2_val.ok_or_else(missing))?;
        cs.enforce(|| "x * x", |lc| lc + x, |lc| lc + x, |lc| lc + x2);
        let x3_val = x2_val.zip(self.x).map(|(x2, x)| x2 * x);
        let x3 = cs.alloc(|| "x^3", || x3_val.ok_or_else(missing))?;
        cs.enforce(|| "x^2 * x", |lc| lc + x2, |lc| lc + x, |lc| lc + x3);
        let out_val = x3_val
            .zip(self.x)
            .map(|(x3, x)| x3 + x + Scalar::from(5u64));
        let out = cs.alloc_input(|| "out", || out_val.ok_or_else(missing))?;
        cs.enforce(
            || "out",
            |lc| lc + x3 + x + (Scalar::from(5u64), CS::one()),
            |lc| lc + CS::one(),
            |lc| lc + out,
        );
        Ok(())
    }
}

#[test]
fn a_blstrs_circuit_proves_through_the_facade() {
    use sluice::rand_core::OsRng;
    use sluice::FrCompatible;
    let params =
        sluice::for_blstrs::generate_random_parameters(CubeRoot { x: None }, &mut OsRng).unwrap();
    let x = Scalar::from(7u64);
    let proof = sluice::for_blstrs::create_random_proof(
        CubeRoot { x: Some(x) },
        &params,
        &mut OsRng,
        &sluice::CpuBackend::new(),
    )
    .unwrap();
    let pvk = sluice::prepare_verifying_key(&params.vk);
    let out = [x * x * x + x + Scalar::from(5u64)];
    assert!(sluice::verify_proof(&pvk, &proof, Scalar::as_fr_slice(&out)).unwrap());
    let wrong = [out[0] + Scalar::ONE];
    assert!(!sluice::verify_proof(&pvk, &proof, Scalar::as_fr_slice(&wrong)).unwrap());
    // Points cross to blstrs at no cost, e.g. for a verifier that takes blstrs' types.
    let a: blstrs::G1Affine = proof.a.into();
    assert_eq!(sluice::G1Affine::from(a), proof.a);
}
