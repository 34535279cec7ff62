//! The SnapDeals update proof end to end on a 2 KiB committed-capacity sector: encoded and
//! its vanilla partition proofs made by filecoin-proofs, proved by sluice, verified by
//! filecoin-proofs.

use crate::support;
use crate::with_prover;

use filecoin_proofs_api::update::{
    empty_sector_update_encode_into, generate_partition_proofs, verify_empty_sector_update_proof,
};
use filecoin_proofs_api::{PaddedBytesAmount, RegisteredSealProof, RegisteredUpdateProof};
use sluice::ComputeBackend;
use sluice_filecoin::Prover;

const SEAL: RegisteredSealProof = RegisteredSealProof::StackedDrg2KiBV1_1;
const UPDATE: RegisteredUpdateProof = RegisteredUpdateProof::StackedDrg2KiBV1;

#[test]
fn update_proof_verifies_with_filecoin_proofs() {
    support::init();
    let mut rng = support::rng("update");
    let key = support::seal(SEAL, support::Data::Zeros, &mut rng);
    let dir = tempfile::tempdir().unwrap();
    let (staged, replica, cache) = (
        dir.path().join("staged"),
        dir.path().join("replica"),
        dir.path().join("cache"),
    );
    std::fs::create_dir_all(&cache).unwrap();
    let size = u64::from(filecoin_proofs_api::UnpaddedBytesAmount::from(
        PaddedBytesAmount(u64::from(SEAL.sector_size())),
    ));
    let piece = support::stage(
        SEAL,
        &staged,
        &support::piece_data(size, support::Data::Random, &mut rng),
    );
    std::fs::write(&replica, vec![0u8; u64::from(SEAL.sector_size()) as usize]).unwrap();
    let encoded = empty_sector_update_encode_into(
        UPDATE,
        &replica,
        &cache,
        &key.sealed,
        &key.cache,
        &staged,
        &[piece],
    )
    .unwrap();
    let (comm_r_new, comm_d_new) = (encoded.comm_r_new, encoded.comm_d_new);
    let vanilla = generate_partition_proofs(
        UPDATE,
        key.comm_r,
        comm_r_new,
        comm_d_new,
        &key.sealed,
        &key.cache,
        &replica,
        &cache,
    )
    .unwrap();

    with_prover!(&support::prover(), |p| update_case(
        p,
        &key,
        [comm_r_new, comm_d_new],
        vanilla
    ));
}

fn update_case<B: ComputeBackend + 'static>(
    prover: &Prover<B>,
    key: &support::Sealed,
    [comm_r_new, comm_d_new]: [[u8; 32]; 2],
    vanilla: Vec<filecoin_proofs_api::PartitionProofBytes>,
) {
    let proof = prover
        .generate_empty_sector_update_proof_with_vanilla(
            UPDATE,
            vanilla.clone(),
            key.comm_r,
            comm_r_new,
            comm_d_new,
        )
        .unwrap();
    assert!(
        verify_empty_sector_update_proof(UPDATE, &proof.0, key.comm_r, comm_r_new, comm_d_new)
            .unwrap()
    );

    // Too few partition proofs: an input error naming the counts.
    let err = prover
        .generate_empty_sector_update_proof_with_vanilla(
            UPDATE,
            Vec::new(),
            key.comm_r,
            comm_r_new,
            comm_d_new,
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("0 vanilla partition proofs"),
        "{err}"
    );
}
