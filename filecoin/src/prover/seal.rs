//! PoRep C2: a C1 output's vanilla proofs in, the sector's partition proofs out.

use std::sync::Arc;

use bellperson::groth16::aggregate::AggregateVersion;
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::constants::{DefaultPieceDomain, DefaultPieceHasher};
use filecoin_proofs::{as_safe_commitment, with_shape, MerkleTreeTrait, SealCommitOutput};
use filecoin_proofs_api::seal::{SealCommitPhase1Output, SealCommitPhase2Output};
use filecoin_proofs_api::ApiFeature;
use filecoin_proofs_api::{ProverId, SectorId};
use sluice::ComputeBackend;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_porep::stacked::{self, generate_replica_id, StackedCompound, StackedDrg};

use crate::error::FilecoinError;
use crate::fork::PorepFork;
use crate::kind::ProofKind;
use crate::prover::engine::{proof_bytes, Prover};

impl<B: ComputeBackend + 'static> Prover<B> {
    /// PoRep C2 (`filecoin_proofs_api::seal::seal_commit_phase2`): proves every partition
    /// of the C1 output's vanilla proofs with sluice and returns the bytes filecoin-proofs
    /// returns: the partition proofs in order (interactive and synthetic PoRep), or their
    /// SnarkPack aggregate (non-interactive PoRep; needs the aggregation SRS in the cache).
    ///
    /// As in filecoin-proofs, the result is checked with `verify_seal` before it is
    /// returned: a proof that does not verify (a wrong `sector_id` or `prover_id`, a
    /// damaged C1 output) is [`FilecoinError::Rejected`], never returned.
    pub fn seal_commit_phase2(
        &self,
        phase1_output: SealCommitPhase1Output,
        prover_id: ProverId,
        sector_id: SectorId,
    ) -> Result<SealCommitPhase2Output, FilecoinError> {
        let registered = phase1_output.registered_proof;
        if registered.major_version() != 1 {
            return Err(FilecoinError::Input(format!(
                "{registered:?}: unsupported proof version"
            )));
        }
        with_shape!(
            u64::from(registered.sector_size()),
            seal_commit_phase2_shaped,
            self,
            phase1_output,
            prover_id,
            sector_id,
        )
    }
}

fn seal_commit_phase2_shaped<Tree: 'static + MerkleTreeTrait>(
    prover: &Prover<impl ComputeBackend + 'static>,
    phase1_output: SealCommitPhase1Output,
    prover_id: ProverId,
    sector_id: SectorId,
) -> Result<SealCommitPhase2Output, FilecoinError> {
    let SealCommitPhase1Output {
        registered_proof,
        vanilla_proofs,
        comm_r,
        comm_d,
        replica_id,
        seed,
        ticket,
    } = phase1_output;
    let kind = ProofKind::Seal(registered_proof);
    let config = registered_proof.as_v1_config();
    let vanilla_proofs: Vec<Vec<_>> = vanilla_proofs.try_into().map_err(|e: anyhow::Error| {
        FilecoinError::Input(format!(
            "the C1 output's vanilla proofs are not of {registered_proof:?}'s sector shape: {e}"
        ))
    })?;
    check_commitments(&comm_r, &comm_d, &seed)?;
    let partitions = usize::from(config.partitions);
    if vanilla_proofs.len() != partitions {
        return Err(FilecoinError::Input(format!(
            "the C1 output holds {} partitions of vanilla proofs; {registered_proof:?} has {partitions}",
            vanilla_proofs.len()
        )));
    }
    if let Some(k) = vanilla_proofs.iter().position(Vec::is_empty) {
        return Err(FilecoinError::Input(format!(
            "the C1 output's partition {k} holds no vanilla proofs"
        )));
    }
    let comm_r_safe =
        as_safe_commitment(&comm_r, "comm_r").map_err(FilecoinError::filecoin("reading comm_r"))?;
    let comm_d_safe = DefaultPieceDomain::try_from_bytes(&comm_d)
        .map_err(FilecoinError::filecoin("reading comm_d"))?;
    // The C1 output's replica id is Poseidon's domain; every sector shape hashes with it.
    let replica_id: blstrs::Scalar = replica_id.into();
    let replica_id: <Tree::Hasher as Hasher>::Domain = replica_id.into();
    // A request for another sector or prover is refused before any partition is proved
    // (the proof could only fail verification).
    let expected = generate_replica_id::<Tree::Hasher, _>(
        &prover_id,
        sector_id.into(),
        &ticket,
        comm_d,
        &config.porep_id,
    );
    if expected != replica_id {
        return Err(FilecoinError::Input(format!(
            "the C1 output was not made for sector {sector_id:?} of prover {}: its replica id \
             differs from the one they give",
            hex::encode(prover_id)
        )));
    }
    let public_inputs = stacked::PublicInputs {
        replica_id,
        tau: Some(stacked::Tau {
            comm_d: comm_d_safe,
            comm_r: comm_r_safe,
        }),
        k: None,
        seed: Some(seed),
    };
    let setup = compound_proof::SetupParams {
        vanilla_params: filecoin_proofs::parameters::setup_params(&config)
            .map_err(FilecoinError::filecoin("PoRep setup parameters"))?,
        partitions: Some(partitions),
        priority: false,
    };
    let public_params = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::setup(&setup)
    .map_err(FilecoinError::filecoin("PoRep public parameters"))?;
    let public_params = Arc::new(public_params.vanilla_params);
    let forks = vanilla_proofs
        .into_iter()
        .enumerate()
        .map(|(k, proofs)| {
            PorepFork::new(
                public_inputs.clone(),
                proofs,
                Arc::clone(&public_params),
                Some(k),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let proofs = prover.prove_forked(kind, forks)?;
    let mut proof = proof_bytes(&proofs);
    if config.feature_enabled(ApiFeature::NonInteractivePoRep) {
        proof = filecoin_proofs::aggregate_seal_commit_proofs::<Tree>(
            &config,
            &[comm_r],
            &[seed],
            &[SealCommitOutput { proof }],
            AggregateVersion::V2,
        )
        .map_err(FilecoinError::filecoin(
            "aggregating the non-interactive PoRep partitions (SnarkPack)",
        ))?;
    }
    let valid = filecoin_proofs::verify_seal::<Tree>(
        &config, comm_r, comm_d, prover_id, sector_id, ticket, seed, &proof,
    )
    .map_err(FilecoinError::filecoin("verifying the C2 proof"))?;
    if !valid {
        return Err(FilecoinError::Rejected {
            kind: kind.to_string(),
        });
    }
    Ok(SealCommitPhase2Output { proof })
}

fn check_commitments(
    comm_r: &[u8; 32],
    comm_d: &[u8; 32],
    seed: &[u8; 32],
) -> Result<(), FilecoinError> {
    for (name, value) in [("comm_r", comm_r), ("comm_d", comm_d), ("seed", seed)] {
        if value == &[0; 32] {
            return Err(FilecoinError::Input(format!(
                "the C1 output's {name} is all zeros"
            )));
        }
    }
    Ok(())
}
