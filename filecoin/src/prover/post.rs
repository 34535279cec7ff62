//! Window and Winning PoSt from vanilla proofs.

use std::collections::BTreeMap;

use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::{
    as_safe_commitment, partition_vanilla_proofs, with_shape, FallbackPoStSectorProof,
    MerkleTreeTrait, PoStConfig, PoStType, PublicReplicaInfo,
};
use filecoin_proofs_api::{ChallengeSeed, ProverId, RegisteredPoStProof, SnarkProof};
use sluice::ComputeBackend;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_post::fallback::{self, FallbackPoStCompound, PublicSector};

use crate::error::FilecoinError;
use crate::fork::PostFork;
use crate::kind::ProofKind;
use crate::prover::engine::{proof_bytes, Prover};

/// One sector's vanilla proof, as filecoin-proofs-api passes it (bincode).
pub type VanillaProofBytes = Vec<u8>;

impl<B: ComputeBackend + 'static> Prover<B> {
    /// Window PoSt from the sectors' vanilla proofs
    /// (`filecoin_proofs_api::post::generate_window_post_with_vanilla`): the partitions'
    /// proofs in order, as filecoin-proofs returns them. Its partitions go to the devices
    /// before waiting C2 partitions.
    pub fn generate_window_post_with_vanilla(
        &self,
        registered_proof: RegisteredPoStProof,
        randomness: &ChallengeSeed,
        prover_id: ProverId,
        vanilla_proofs: &[VanillaProofBytes],
    ) -> Result<Vec<(RegisteredPoStProof, SnarkProof)>, FilecoinError> {
        self.post(
            registered_proof,
            PoStType::Window,
            randomness,
            prover_id,
            vanilla_proofs,
        )
    }

    /// Winning PoSt from the sector's vanilla proof
    /// (`filecoin_proofs_api::post::generate_winning_post_with_vanilla`). Its partition goes
    /// to the devices before waiting C2 partitions.
    pub fn generate_winning_post_with_vanilla(
        &self,
        registered_proof: RegisteredPoStProof,
        randomness: &ChallengeSeed,
        prover_id: ProverId,
        vanilla_proofs: &[VanillaProofBytes],
    ) -> Result<Vec<(RegisteredPoStProof, SnarkProof)>, FilecoinError> {
        self.post(
            registered_proof,
            PoStType::Winning,
            randomness,
            prover_id,
            vanilla_proofs,
        )
    }

    fn post(
        &self,
        registered_proof: RegisteredPoStProof,
        typ: PoStType,
        randomness: &ChallengeSeed,
        prover_id: ProverId,
        vanilla_proofs: &[VanillaProofBytes],
    ) -> Result<Vec<(RegisteredPoStProof, SnarkProof)>, FilecoinError> {
        if registered_proof.typ() != typ {
            return Err(FilecoinError::Input(format!(
                "{registered_proof:?} is not a {typ:?} PoSt proof type"
            )));
        }
        if registered_proof.major_version() != 1 {
            return Err(FilecoinError::Input(format!(
                "{registered_proof:?}: unsupported proof version"
            )));
        }
        if vanilla_proofs.is_empty() {
            return Err(FilecoinError::Input("no vanilla proofs".into()));
        }
        let proof = with_shape!(
            u64::from(registered_proof.sector_size()),
            post_shaped,
            self,
            registered_proof,
            randomness,
            prover_id,
            vanilla_proofs,
        )?;
        Ok(vec![(registered_proof, proof)])
    }
}

fn post_shaped<Tree: 'static + MerkleTreeTrait>(
    prover: &Prover<impl ComputeBackend + 'static>,
    registered_proof: RegisteredPoStProof,
    randomness: &ChallengeSeed,
    prover_id: ProverId,
    vanilla_proofs: &[VanillaProofBytes],
) -> Result<SnarkProof, FilecoinError> {
    let kind = ProofKind::Post(registered_proof);
    let config = registered_proof.as_v1_config();
    let vanilla_proofs = vanilla_proofs
        .iter()
        .enumerate()
        .map(|(i, bytes)| {
            bincode::deserialize::<FallbackPoStSectorProof<Tree>>(bytes).map_err(|e| {
                FilecoinError::Input(format!(
                    "vanilla proof {i} is not a {registered_proof:?} sector proof: {e}"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let randomness_safe = as_safe_commitment(randomness, "randomness")
        .map_err(FilecoinError::filecoin("reading the randomness"))?;
    let prover_id_safe = as_safe_commitment(&prover_id, "prover_id")
        .map_err(FilecoinError::filecoin("reading the prover id"))?;
    let (vanilla_params, partitions) = match config.typ {
        PoStType::Window => {
            let partitions = vanilla_proofs.len().div_ceil(config.sector_count);
            (
                filecoin_proofs::parameters::window_post_setup_params(&config),
                (partitions > 1).then_some(partitions),
            )
        }
        PoStType::Winning => {
            if vanilla_proofs.len() != config.sector_count {
                return Err(FilecoinError::Input(format!(
                    "{} vanilla proofs; {registered_proof:?} proves {}",
                    vanilla_proofs.len(),
                    config.sector_count
                )));
            }
            (
                filecoin_proofs::parameters::winning_post_setup_params(&config)
                    .map_err(FilecoinError::filecoin("Winning PoSt setup parameters"))?,
                None,
            )
        }
    };
    let setup = compound_proof::SetupParams {
        vanilla_params,
        partitions,
        priority: config.priority,
    };
    let public_params = FallbackPoStCompound::<Tree>::setup(&setup)
        .map_err(FilecoinError::filecoin("PoSt public parameters"))?;
    let public_inputs = fallback::PublicInputs {
        randomness: randomness_safe,
        prover_id: prover_id_safe,
        sectors: vanilla_proofs
            .iter()
            .map(|p| PublicSector {
                id: p.sector_id,
                comm_r: p.comm_r,
            })
            .collect(),
        k: None,
    };
    let partitioned = partition_vanilla_proofs(
        &config,
        &public_params.vanilla_params,
        &public_inputs,
        partitions.unwrap_or(1),
        &vanilla_proofs,
    )
    .map_err(FilecoinError::filecoin(
        "checking and partitioning the vanilla proofs",
    ))?;
    let circuits = partitioned
        .iter()
        .enumerate()
        .map(|(k, proof)| {
            FallbackPoStCompound::<Tree>::circuit(
                &public_inputs,
                Default::default(),
                proof,
                &public_params.vanilla_params,
                Some(k),
            )
            .map(PostFork)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(FilecoinError::filecoin(
            "building the PoSt partition circuits",
        ))?;
    let proof = proof_bytes(&prover.prove_forked(kind, circuits)?);
    if prover.config().verify {
        verify(
            &config,
            randomness,
            prover_id,
            &vanilla_proofs,
            &proof,
            kind,
        )?;
    }
    Ok(proof)
}

fn verify<Tree: 'static + MerkleTreeTrait>(
    config: &PoStConfig,
    randomness: &ChallengeSeed,
    prover_id: ProverId,
    vanilla_proofs: &[FallbackPoStSectorProof<Tree>],
    proof: &[u8],
    kind: ProofKind,
) -> Result<(), FilecoinError> {
    let replicas = vanilla_proofs
        .iter()
        .map(|p| {
            let comm_r = <Tree::Hasher as Hasher>::Domain::into_bytes(&p.comm_r);
            let comm_r: [u8; 32] = comm_r
                .try_into()
                .map_err(|_| FilecoinError::Input("a comm_r is not 32 bytes".into()))?;
            let info = PublicReplicaInfo::new(comm_r)
                .map_err(FilecoinError::filecoin("reading a sector's comm_r"))?;
            Ok((p.sector_id, info))
        })
        .collect::<Result<Vec<_>, FilecoinError>>()?;
    let valid = match config.typ {
        PoStType::Window => filecoin_proofs::verify_window_post::<Tree>(
            config,
            randomness,
            &replicas.into_iter().collect::<BTreeMap<_, _>>(),
            prover_id,
            proof,
        ),
        PoStType::Winning => filecoin_proofs::verify_winning_post::<Tree>(
            config, randomness, &replicas, prover_id, proof,
        ),
    }
    .map_err(FilecoinError::filecoin("verifying the PoSt proof"))?;
    if valid {
        Ok(())
    } else {
        Err(FilecoinError::Rejected {
            kind: kind.to_string(),
        })
    }
}
