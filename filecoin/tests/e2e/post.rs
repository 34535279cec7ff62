//! Window and Winning PoSt end to end on a 2 KiB sector: sealed by filecoin-proofs, vanilla
//! proofs from filecoin-proofs, proved by sluice, verified by filecoin-proofs; bad requests
//! refused with errors.

use crate::support;
use crate::with_prover;

use std::collections::BTreeMap;

use filecoin_proofs_api::post::{
    generate_fallback_sector_challenges, generate_single_vanilla_proof, verify_window_post,
    verify_winning_post,
};
use filecoin_proofs_api::{
    PrivateReplicaInfo, PublicReplicaInfo, RegisteredPoStProof, RegisteredSealProof,
};
use sluice::ComputeBackend;
use sluice_filecoin::{FilecoinError, Prover};

const SEAL: RegisteredSealProof = RegisteredSealProof::StackedDrg2KiBV1_1;
const WINNING: RegisteredPoStProof = RegisteredPoStProof::StackedDrgWinning2KiBV1;
const WINDOW: RegisteredPoStProof = RegisteredPoStProof::StackedDrgWindow2KiBV1_2;

#[test]
fn window_and_winning_post_verify_with_filecoin_proofs() {
    support::init();
    let mut rng = support::rng("post");
    let sealed = support::seal(SEAL, support::Data::Random, &mut rng);
    with_prover!(&support::prover(), |p| post_case(p, &sealed, &mut rng));
}

fn post_case<B: ComputeBackend + 'static>(
    prover: &Prover<B>,
    sealed: &support::Sealed,
    rng: &mut rand_chacha::ChaCha20Rng,
) {
    let randomness = support::fr_bytes(rng);

    for post in [WINNING, WINDOW] {
        let vanilla = |randomness: &[u8; 32]| {
            let challenges = generate_fallback_sector_challenges(
                post,
                randomness,
                &[sealed.sector_id],
                sealed.prover_id,
            )
            .unwrap();
            let replica = PrivateReplicaInfo::new(
                post,
                sealed.comm_r,
                sealed.cache.clone(),
                sealed.sealed.clone(),
            );
            vec![generate_single_vanilla_proof(
                post,
                sealed.sector_id,
                &replica,
                &challenges[&sealed.sector_id],
            )
            .unwrap()]
        };
        let vanilla_proofs = vanilla(&randomness);
        let prove = |vanilla_proofs: &[Vec<u8>], randomness: &[u8; 32]| match post.typ() {
            filecoin_proofs_api::PoStType::Winning => prover.generate_winning_post_with_vanilla(
                post,
                randomness,
                sealed.prover_id,
                vanilla_proofs,
            ),
            filecoin_proofs_api::PoStType::Window => prover.generate_window_post_with_vanilla(
                post,
                randomness,
                sealed.prover_id,
                vanilla_proofs,
            ),
        };
        let proofs = prove(&vanilla_proofs, &randomness).unwrap();
        assert_eq!(proofs.len(), 1);
        assert_eq!(proofs[0].0, post);
        let replicas: BTreeMap<_, _> = [(
            sealed.sector_id,
            PublicReplicaInfo::new(post, sealed.comm_r),
        )]
        .into();
        let valid = match post.typ() {
            filecoin_proofs_api::PoStType::Winning => {
                verify_winning_post(&randomness, &proofs[0].1, &replicas, sealed.prover_id)
            }
            filecoin_proofs_api::PoStType::Window => verify_window_post(
                &randomness,
                &[(post, &proofs[0].1[..])],
                &replicas,
                sealed.prover_id,
            ),
        }
        .unwrap();
        assert!(valid, "{post:?}");

        // Vanilla proofs of other randomness do not prove this one: refused before proving.
        let other = support::fr_bytes(rng);
        let err = prove(&vanilla(&other), &randomness).unwrap_err();
        assert!(
            matches!(err, FilecoinError::Filecoin { .. }),
            "{post:?}: {err}"
        );
        // Bytes that are no vanilla proof are an input error naming the proof.
        let err = prove(&[vec![1, 2, 3]], &randomness).unwrap_err();
        assert!(
            err.to_string().contains("vanilla proof 0"),
            "{post:?}: {err}"
        );
        // The other PoSt type's registered proof is refused by name.
        let wrong: RegisteredPoStProof = match post.typ() {
            filecoin_proofs_api::PoStType::Winning => WINDOW,
            filecoin_proofs_api::PoStType::Window => WINNING,
        };
        let err = match post.typ() {
            filecoin_proofs_api::PoStType::Winning => prover.generate_winning_post_with_vanilla(
                wrong,
                &randomness,
                sealed.prover_id,
                &vanilla_proofs,
            ),
            filecoin_proofs_api::PoStType::Window => prover.generate_window_post_with_vanilla(
                wrong,
                &randomness,
                sealed.prover_id,
                &vanilla_proofs,
            ),
        }
        .unwrap_err();
        assert!(matches!(err, FilecoinError::Input(_)), "{err}");
    }
}
