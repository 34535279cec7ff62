//! The SnapDeals empty-sector-update proof from vanilla partition proofs.

use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::constants::DefaultPieceDomain;
use filecoin_proofs::EmptySectorUpdateProof;
use filecoin_proofs::{
    with_shape, MerkleTreeTrait, PartitionProof, SectorUpdateConfig, TreeRHasher,
};
use filecoin_proofs_api::{Commitment, PartitionProofBytes, RegisteredUpdateProof};
use sluice::ComputeBackend;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_update::{EmptySectorUpdateCompound, PublicInputs, SetupParams};

use crate::error::FilecoinError;
use crate::kind::ProofKind;
use crate::prover::engine::{proof_bytes, Prover};

impl<B: ComputeBackend + 'static> Prover<B> {
    /// The SnapDeals update proof from its vanilla partition proofs
    /// (`filecoin_proofs_api::update::generate_empty_sector_update_proof_with_vanilla`):
    /// the partitions' proofs in order, as filecoin-proofs returns them.
    pub fn generate_empty_sector_update_proof_with_vanilla(
        &self,
        registered_proof: RegisteredUpdateProof,
        vanilla_proofs: Vec<PartitionProofBytes>,
        comm_r_old: Commitment,
        comm_r_new: Commitment,
        comm_d_new: Commitment,
    ) -> Result<EmptySectorUpdateProof, FilecoinError> {
        if registered_proof.major_version() != 1 {
            return Err(FilecoinError::Input(format!(
                "{registered_proof:?}: unsupported proof version"
            )));
        }
        with_shape!(
            u64::from(registered_proof.sector_size()),
            update_shaped,
            self,
            registered_proof,
            vanilla_proofs,
            [comm_r_old, comm_r_new, comm_d_new],
        )
    }
}

fn update_shaped<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    prover: &Prover<impl ComputeBackend + 'static>,
    registered_proof: RegisteredUpdateProof,
    vanilla_proofs: Vec<PartitionProofBytes>,
    [comm_r_old, comm_r_new, comm_d_new]: [Commitment; 3],
) -> Result<EmptySectorUpdateProof, FilecoinError> {
    let kind = ProofKind::Update(registered_proof);
    let porep_config = registered_proof.as_v1_config();
    let config = SectorUpdateConfig::from_porep_config(&porep_config);
    let partitions = usize::from(config.update_partitions);
    if vanilla_proofs.len() != partitions {
        return Err(FilecoinError::Input(format!(
            "{} vanilla partition proofs; {registered_proof:?} has {partitions} partitions",
            vanilla_proofs.len()
        )));
    }
    let vanilla_proofs = vanilla_proofs
        .iter()
        .enumerate()
        .map(|(k, bytes)| {
            bincode::deserialize::<PartitionProof<Tree>>(&bytes.0).map_err(|e| {
                FilecoinError::Input(format!(
                    "vanilla partition proof {k} is not a {registered_proof:?} proof: {e}"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let domain = |bytes: &Commitment, what: &'static str| {
        <TreeRHasher as Hasher>::Domain::try_from_bytes(bytes)
            .map_err(FilecoinError::filecoin(what))
    };
    let public_inputs = PublicInputs {
        k: partitions,
        comm_r_old: domain(&comm_r_old, "reading comm_r_old")?,
        comm_d_new: DefaultPieceDomain::try_from_bytes(&comm_d_new)
            .map_err(FilecoinError::filecoin("reading comm_d_new"))?,
        comm_r_new: domain(&comm_r_new, "reading comm_r_new")?,
        h: config.h,
    };
    let setup = compound_proof::SetupParams {
        vanilla_params: SetupParams {
            sector_bytes: u64::from(config.sector_size),
        },
        partitions: Some(partitions),
        priority: false,
    };
    let public_params = EmptySectorUpdateCompound::<Tree>::setup(&setup)
        .map_err(FilecoinError::filecoin("update public parameters"))?;
    let circuits = vanilla_proofs
        .iter()
        .enumerate()
        .map(|(k, proof)| {
            EmptySectorUpdateCompound::<Tree>::circuit(
                &public_inputs,
                (),
                proof,
                &public_params.vanilla_params,
                Some(k),
            )
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(FilecoinError::filecoin(
            "building the update partition circuits",
        ))?;
    let proof = proof_bytes(&prover.prove(kind, circuits)?);
    if prover.config().verify {
        let valid = filecoin_proofs::verify_empty_sector_update_proof::<Tree>(
            &porep_config,
            &proof,
            comm_r_old,
            comm_r_new,
            comm_d_new,
        )
        .map_err(FilecoinError::filecoin("verifying the update proof"))?;
        if !valid {
            return Err(FilecoinError::Rejected {
                kind: kind.to_string(),
            });
        }
    }
    Ok(EmptySectorUpdateProof(proof))
}
