//! rust-fil-proofs' Window/Winning PoSt circuit (`FallbackPoStCircuit`, storage-proofs-post
//! 19.1) over small sectors (64 leaves, Poseidon arity-8 Merkle trees, as its own circuit
//! test uses): set up and proved by sluice, the proofs verified by storage-proofs' own
//! verifier (`FallbackPoStCompound::verify`, on bellperson 0.27); then again with the
//! circuit's constraint matrices recorded, written and read back.
//!
//! Why not the PoRep `StackedCircuit`: its smallest configuration in rust-fil-proofs' own
//! tests (8 base-tree nodes, 2 layers, 1 challenge) is about 1.2 million constraints
//! (`stacked_circuit.rs`: 1_199_620 for arity 8), a 2^21 domain whose setup and proof take
//! many minutes on a 2-core CI machine; rust-fil-proofs marks its own Groth16 test of it
//! `#[ignore]`. This circuit is 16_869 constraints for three sectors.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use bellperson::groth16;
use filecoin_hashers::{poseidon::PoseidonHasher, Domain, HashFunction, Hasher};
use generic_array::typenum::{U0, U8};
use rand::SeedableRng;
use rand_xorshift::XorShiftRng;
use storage_proofs_core::{
    api_version::ApiVersion,
    compound_proof::{self, CompoundProof},
    merkle::{generate_tree, get_base_tree_count, LCTree, MerkleTreeTrait},
    multi_proof::MultiProof,
    util::NODE_SIZE,
};
use storage_proofs_post::fallback::{
    ChallengeRequirements, FallbackPoStCompound, PrivateInputs, PrivateSector, PublicInputs,
    PublicSector, SetupParams,
};

type Tree = LCTree<PoseidonHasher, U8, U0, U0>;

#[test]
fn fallback_post_proves_with_sluice_and_verifies_with_storage_proofs() {
    let seed = [7u8; 16];
    let rng = &mut XorShiftRng::from_seed(seed);
    let (sector_count, challenge_count) = (3, 5);
    let leaves = 64 * get_base_tree_count::<Tree>();
    let setup_params = compound_proof::SetupParams {
        vanilla_params: SetupParams {
            sector_size: (leaves * NODE_SIZE) as u64,
            challenge_count,
            sector_count,
            api_version: ApiVersion::V1_1_0,
        },
        partitions: Some(1),
        priority: false,
    };
    let temp = tempfile::tempdir().unwrap();
    let trees: Vec<_> = (0..sector_count)
        .map(|_| generate_tree::<Tree, _>(rng, leaves, Some(temp.path().to_path_buf())).1)
        .collect();
    let mut pub_sectors = Vec::new();
    let mut priv_sectors = Vec::new();
    for (i, tree) in trees.iter().enumerate() {
        let comm_c = <PoseidonHasher as Hasher>::Domain::random(rng);
        let comm_r_last = tree.root();
        priv_sectors.push(PrivateSector {
            tree,
            comm_c,
            comm_r_last,
        });
        let comm_r = <PoseidonHasher as Hasher>::Function::hash2(&comm_c, &comm_r_last);
        pub_sectors.push(PublicSector {
            id: (i as u64).into(),
            comm_r,
        });
    }
    let pub_params = FallbackPoStCompound::<Tree>::setup(&setup_params).unwrap();
    let pub_inputs = PublicInputs {
        randomness: <PoseidonHasher as Hasher>::Domain::random(rng),
        prover_id: <PoseidonHasher as Hasher>::Domain::random(rng),
        sectors: pub_sectors,
        k: None,
    };
    let priv_inputs = PrivateInputs::<Tree> {
        sectors: &priv_sectors,
    };

    // sluice's setup on storage-proofs' blank circuit, and its proofs of the real ones.
    let blank = FallbackPoStCompound::<Tree>::blank_circuit(&pub_params.vanilla_params);
    let params = sluice::for_blstrs::generate_random_parameters(blank, rng).unwrap();
    let backend = sluice::CpuBackend::new();
    let circuits =
        FallbackPoStCompound::circuit_for_test_all(&pub_params, &pub_inputs, &priv_inputs).unwrap();
    let mut proofs = Vec::new();
    for (circuit, inputs) in circuits {
        let proof =
            sluice::for_blstrs::create_random_proof(circuit, &params, rng, &backend).unwrap();
        // sluice's own verifier agrees, on the inputs storage-proofs derives.
        let pvk = sluice::prepare_verifying_key(&params.vk);
        use sluice::FrCompatible;
        assert!(sluice::verify_proof(&pvk, &proof, blstrs::Scalar::as_fr_slice(&inputs)).unwrap());
        proofs.push(groth16::Proof::<blstrs::Bls12>::read(&proof.to_bytes()[..]).unwrap());
    }

    // storage-proofs' verifier, with the key read from sluice's bytes.
    let mut vk_bytes = Vec::new();
    params.vk.write(&mut vk_bytes).unwrap();
    let vk = groth16::VerifyingKey::<blstrs::Bls12>::read(&vk_bytes[..]).unwrap();
    let pvk = groth16::prepare_verifying_key(&vk);
    let requirements = ChallengeRequirements {
        minimum_challenge_count: sector_count * challenge_count,
    };
    let verify = |proofs: Vec<groth16::Proof<blstrs::Bls12>>| {
        FallbackPoStCompound::verify(
            &pub_params,
            &pub_inputs,
            &MultiProof::new(proofs, &pvk),
            &requirements,
        )
        .unwrap()
    };
    assert!(
        verify(proofs.clone()),
        "storage-proofs rejects sluice's proof"
    );

    // The same circuits through recorded constraint matrices (the witness alone, a, b and c
    // from the matrices), read back from the bytes a prover keeps beside its parameters.
    let blank = FallbackPoStCompound::<Tree>::blank_circuit(&pub_params.vanilla_params);
    let mut bytes = Vec::new();
    sluice::ConstraintMatrices::record(blank)
        .unwrap()
        .write(&mut bytes)
        .unwrap();
    let options = sluice::SynthesisOptions {
        matrices: Some(std::sync::Arc::new(
            sluice::ConstraintMatrices::read(&bytes[..]).unwrap(),
        )),
        ..sluice::SynthesisOptions::default()
    };
    let mut with_matrices = Vec::new();
    for (circuit, inputs) in
        FallbackPoStCompound::circuit_for_test_all(&pub_params, &pub_inputs, &priv_inputs).unwrap()
    {
        use ff::Field;
        let (r, s) = (sluice::Fr::random(&mut *rng), sluice::Fr::random(&mut *rng));
        let cs = sluice::ProvingAssignment::synthesize_with(circuit, &options).unwrap();
        let (proof, _) =
            sluice::prove_assignment(cs, &params, r, s, &backend, &Default::default()).unwrap();
        let pvk = sluice::prepare_verifying_key(&params.vk);
        use sluice::FrCompatible;
        assert!(sluice::verify_proof(&pvk, &proof, blstrs::Scalar::as_fr_slice(&inputs)).unwrap());
        with_matrices.push(groth16::Proof::<blstrs::Bls12>::read(&proof.to_bytes()[..]).unwrap());
    }
    assert!(
        verify(with_matrices),
        "storage-proofs rejects sluice's proof with read matrices"
    );
    // A proof of other randomness is not this PoSt's.
    let mut tampered = proofs;
    tampered[0].c = tampered[0].a;
    assert!(!verify(tampered));
}
