//! The variable-time setup (`generate_parameters_vartime`, for test parameters) makes exactly
//! the parameters the constant-time one makes from the same generators and toxic waste, over
//! both scalar types, and proofs made with them verify.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use ff::Field;
use group::Group;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend_cpu::CpuBackend;
use sluice_field::{Fr, G1Projective, G2Projective};
use sluice_groth16::demo::MimcLike;
use sluice_groth16::{self as sl, Parameters, ToxicWaste};

fn bytes(p: &Parameters) -> Vec<u8> {
    let mut v = Vec::new();
    p.write(&mut v).unwrap();
    v
}

fn secrets(seed: u64) -> (G1Projective, G2Projective, ToxicWaste) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let g1 = G1Projective::random(&mut rng);
    let g2 = G2Projective::random(&mut rng);
    (g1, g2, ToxicWaste::random(&mut rng))
}

/// The same bytes from both setups for a dense (MiMC-like) circuit, and a proof with the
/// variable-time parameters verifies (and fails on a wrong input).
#[test]
fn vartime_setup_matches_constant_time_and_proves() {
    let seed = 71;
    let (g1, g2, toxic) = secrets(seed);
    let log_n = 10;
    let ct = sl::generate_parameters(MimcLike::<Fr>::filling_domain(log_n, None), g1, g2, &toxic)
        .unwrap();
    let vt = sl::generate_parameters_vartime(
        MimcLike::<Fr>::filling_domain(log_n, None),
        g1,
        g2,
        &toxic,
    )
    .unwrap();
    assert_eq!(bytes(&ct), bytes(&vt), "seed {seed}");

    let mut rng = ChaCha20Rng::seed_from_u64(seed + 1);
    let x = Fr::random(&mut rng);
    let circuit = MimcLike::filling_domain(log_n, Some(x));
    let inputs = MimcLike::public_inputs(x, circuit.rounds);
    let proof = sl::create_random_proof(circuit, &vt, &mut rng, &CpuBackend::new()).unwrap();
    let pvk = sl::prepare_verifying_key(&vt.vk);
    assert!(
        sl::verify_proof(&pvk, &proof, &inputs).unwrap(),
        "seed {seed}"
    );
    let mut wrong = inputs;
    wrong[1] += Fr::ONE;
    assert!(
        !sl::verify_proof(&pvk, &proof, &wrong).unwrap(),
        "seed {seed}"
    );
}

/// A circuit whose B matrix leaves variables out (bit decomposition: the words occur only
/// in C), over `blstrs::Scalar`: the same bytes from both setups.
#[cfg(feature = "blstrs")]
#[test]
fn vartime_setup_matches_constant_time_over_blstrs() {
    let seed = 72;
    let (g1, g2, toxic) = secrets(seed);
    let circuit = || sl::demo::BitDecomposition::<blstrs::Scalar>::filling_domain(9, None);
    let ct = sl::for_blstrs::generate_parameters(circuit(), g1, g2, &toxic).unwrap();
    let vt = sl::for_blstrs::generate_parameters_vartime(circuit(), g1, g2, &toxic).unwrap();
    assert!(
        vt.b_g2.len() < vt.l.len() + vt.vk.ic.len(),
        "B leaves variables out"
    );
    assert_eq!(bytes(&ct), bytes(&vt), "seed {seed}");
}

/// The random setups draw the same generators and waste from the same seed.
#[test]
fn random_vartime_setup_matches_constant_time() {
    let seed = 73;
    let circuit = || MimcLike::<Fr>::filling_domain(6, None);
    let ct =
        sl::generate_random_parameters(circuit(), &mut ChaCha20Rng::seed_from_u64(seed)).unwrap();
    let vt =
        sl::generate_random_parameters_vartime(circuit(), &mut ChaCha20Rng::seed_from_u64(seed))
            .unwrap();
    assert_eq!(bytes(&ct), bytes(&vt), "seed {seed}");
    #[cfg(feature = "blstrs")]
    {
        let via_blstrs = sl::for_blstrs::generate_random_parameters_vartime(
            MimcLike::<blstrs::Scalar>::filling_domain(6, None),
            &mut ChaCha20Rng::seed_from_u64(seed),
        )
        .unwrap();
        assert_eq!(bytes(&ct), bytes(&via_blstrs), "seed {seed}");
    }
}
