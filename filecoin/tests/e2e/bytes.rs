//! The same proof bytes as bellperson (filecoin-proofs' prover) for the same r and s, on
//! rust-fil-proofs' PoSt circuit. filecoin-proofs' calls draw r and s inside, so the
//! comparison is one level down, at bellperson's `create_proof`.

use ff::{Field, PrimeField};
use sluice::CpuBackend;
use sluice_filecoin::circuits;

use crate::support;

#[test]
fn sluice_and_bellperson_make_the_same_post_proof_for_the_same_r_and_s() {
    let mut rng = support::rng("bytes");
    let (sectors, challenges) = (2, 10);
    let blank = circuits::post_blank(sectors, challenges).unwrap();
    let params = sluice::for_blstrs::generate_random_parameters_vartime(blank, &mut rng).unwrap();
    let mut file = Vec::new();
    params.write(&mut file).unwrap();
    let theirs = bellperson::groth16::Parameters::<blstrs::Bls12>::read(&file[..], false).unwrap();
    let circuit = circuits::post(sectors, challenges, &mut rng).unwrap();
    let (r, s) = (sluice::Fr::random(&mut rng), sluice::Fr::random(&mut rng));
    let scalar = |x: sluice::Fr| blstrs::Scalar::from_repr_vartime(x.to_repr()).unwrap();

    let ours = sluice::for_blstrs::create_proof(circuit.clone(), &params, r, s, &CpuBackend::new())
        .unwrap();
    let reference =
        bellperson::groth16::create_proof(circuit, &theirs, scalar(r), scalar(s)).unwrap();
    let mut reference_bytes = Vec::new();
    reference.write(&mut reference_bytes).unwrap();
    assert_eq!(ours.to_bytes().to_vec(), reference_bytes);
}
