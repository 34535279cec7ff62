//! Which Filecoin circuit a proof is of, and where filecoin-proofs keeps its files.

use std::fmt;
use std::path::PathBuf;

use blstrs::Scalar as Fr;
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::{with_shape, MerkleTreeTrait, PoStType, TreeRHasher};
use filecoin_proofs_api::{RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};
use rand_core::RngCore;
use sluice::pipeline::Priority;
use sluice::{Circuit, ConstraintMatrices, Parameters};
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_core::parameter_cache::{
    parameter_cache_metadata_path, parameter_cache_params_path, parameter_cache_verifying_key_path,
};
use storage_proofs_porep::stacked::StackedCompound;
use storage_proofs_post::fallback::FallbackPoStCompound;
use storage_proofs_update::EmptySectorUpdateCompound;

use crate::error::FilecoinError;

/// A Filecoin proof type: one circuit and one parameter file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProofKind {
    /// PoRep C2 (interactive, synthetic or non-interactive), by its registered seal proof.
    Seal(RegisteredSealProof),
    /// Window or Winning PoSt.
    Post(RegisteredPoStProof),
    /// The SnapDeals empty-sector-update proof.
    Update(RegisteredUpdateProof),
}

impl ProofKind {
    /// The sector size in bytes.
    pub fn sector_size(self) -> u64 {
        match self {
            ProofKind::Seal(p) => u64::from(p.sector_size()),
            ProofKind::Post(p) => u64::from(p.sector_size()),
            ProofKind::Update(p) => u64::from(p.sector_size()),
        }
    }

    /// filecoin-proofs' identifier of the circuit (`<prefix>-<sha256 of its parameters>`),
    /// from which the cache file names are made.
    pub fn circuit_identifier(self) -> Result<String, FilecoinError> {
        match self {
            ProofKind::Seal(p) => p.circuit_identifier(),
            ProofKind::Post(p) => p.circuit_identifier(),
            // filecoin-proofs-api 19.1 names the PoRep's file for an update proof; the
            // update's own parameters are named by its compound (as filecoin-proofs loads
            // them).
            ProofKind::Update(p) => {
                return Ok(with_shape!(
                    u64::from(p.sector_size()),
                    update_identifier,
                    p
                ))
            }
        }
        .map_err(FilecoinError::filecoin("naming the circuit's parameters"))
    }

    /// The parameter file's path in the cache (`FIL_PROOFS_PARAMETER_CACHE`, default
    /// `/var/tmp/filecoin-proof-parameters`).
    pub fn params_path(self) -> Result<PathBuf, FilecoinError> {
        Ok(parameter_cache_params_path(&self.circuit_identifier()?))
    }

    /// The verifying key's path in the cache.
    pub fn verifying_key_path(self) -> Result<PathBuf, FilecoinError> {
        Ok(parameter_cache_verifying_key_path(
            &self.circuit_identifier()?,
        ))
    }

    /// The metadata file's path in the cache.
    pub fn metadata_path(self) -> Result<PathBuf, FilecoinError> {
        Ok(parameter_cache_metadata_path(&self.circuit_identifier()?))
    }

    /// Where this kind's partitions stand on shared devices: PoSt before C2 and updates,
    /// since a WinningPoSt must finish inside its epoch.
    pub fn priority(self) -> Priority {
        match self {
            ProofKind::Post(_) => Priority::High,
            ProofKind::Seal(_) | ProofKind::Update(_) => Priority::Normal,
        }
    }

    /// Runs a single-party setup of this kind's circuit (test parameters: whoever runs it
    /// can forge proofs).
    ///
    /// # Security
    ///
    /// The setup runs in variable time in the toxic waste (about 4x faster): these are test
    /// parameters whoever runs the setup can forge proofs for anyway.
    pub(crate) fn generate_parameters(
        self,
        rng: &mut dyn RngCore,
    ) -> Result<Parameters, FilecoinError> {
        match self.with_blank_circuit(Blank::Setup(rng))? {
            FromBlank::Parameters(params) => Ok(*params),
            FromBlank::Matrices(_) => Err(self.blank_mismatch()),
        }
    }

    /// Records the constraint matrices of this kind's circuit (from its blank circuit: the
    /// shape is the same for every proof of the kind).
    pub(crate) fn record_matrices(self) -> Result<ConstraintMatrices, FilecoinError> {
        match self.with_blank_circuit(Blank::RecordMatrices)? {
            FromBlank::Matrices(matrices) => Ok(*matrices),
            FromBlank::Parameters(_) => Err(self.blank_mismatch()),
        }
    }

    /// Does `work` with this kind's blank circuit (no witness), built as filecoin-proofs
    /// builds it for its setup.
    fn with_blank_circuit(self, work: Blank<'_>) -> Result<FromBlank, FilecoinError> {
        match self {
            ProofKind::Seal(p) => with_shape!(u64::from(p.sector_size()), seal_blank, p, work),
            ProofKind::Post(p) => with_shape!(u64::from(p.sector_size()), post_blank, p, work),
            ProofKind::Update(p) => {
                with_shape!(u64::from(p.sector_size()), update_blank, p, work)
            }
        }
        .map_err(|source| match source {
            Generated::Setup(e) => e,
            Generated::Groth16(source) => FilecoinError::Generating {
                kind: self.to_string(),
                source,
            },
        })
    }

    fn blank_mismatch(self) -> FilecoinError {
        FilecoinError::Input(format!(
            "{self}: the blank circuit's work returned another result"
        ))
    }
}

impl fmt::Display for ProofKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProofKind::Seal(p) => write!(f, "PoRep {p:?}"),
            ProofKind::Post(p) => match p.typ() {
                PoStType::Window => write!(f, "Window PoSt {p:?}"),
                PoStType::Winning => write!(f, "Winning PoSt {p:?}"),
            },
            ProofKind::Update(p) => write!(f, "SnapDeals update {p:?}"),
        }
    }
}

/// What is done with a kind's blank circuit.
enum Blank<'a> {
    /// A single-party setup (variable time: test parameters).
    Setup(&'a mut dyn RngCore),
    /// Recording the constraint matrices.
    RecordMatrices,
}

/// What [`Blank`] work gives.
enum FromBlank {
    Parameters(Box<Parameters>),
    Matrices(Box<ConstraintMatrices>),
}

/// A failure with the blank circuit: building it, or the work itself.
enum Generated {
    Setup(FilecoinError),
    Groth16(sluice::Groth16Error),
}

/// Does `work` with `blank`.
fn from_blank<C: Circuit<Fr>>(blank: C, work: Blank<'_>) -> Result<FromBlank, Generated> {
    match work {
        Blank::Setup(mut rng) => {
            sluice::for_blstrs::generate_random_parameters_vartime(blank, &mut rng)
                .map(|p| FromBlank::Parameters(Box::new(p)))
        }
        Blank::RecordMatrices => {
            ConstraintMatrices::record::<Fr, _>(blank).map(|m| FromBlank::Matrices(Box::new(m)))
        }
    }
    .map_err(Generated::Groth16)
}

fn seal_blank<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredSealProof,
    work: Blank<'_>,
) -> Result<FromBlank, Generated> {
    let public_params =
        filecoin_proofs::parameters::public_params::<Tree>(&proof.as_v1_config())
            .map_err(|e| Generated::Setup(FilecoinError::filecoin("PoRep public parameters")(e)))?;
    let blank = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<_, _>>::blank_circuit(
        &public_params,
    );
    from_blank(blank, work)
}

fn post_blank<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredPoStProof,
    work: Blank<'_>,
) -> Result<FromBlank, Generated> {
    let config = proof.as_v1_config();
    let public_params = match proof.typ() {
        PoStType::Window => filecoin_proofs::parameters::window_post_public_params::<Tree>(&config),
        PoStType::Winning => {
            filecoin_proofs::parameters::winning_post_public_params::<Tree>(&config)
        }
    }
    .map_err(|e| Generated::Setup(FilecoinError::filecoin("PoSt public parameters")(e)))?;
    let blank = <FallbackPoStCompound<Tree> as CompoundProof<_, _>>::blank_circuit(&public_params);
    from_blank(blank, work)
}

fn update_identifier<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    proof: RegisteredUpdateProof,
) -> String {
    let public_params =
        storage_proofs_update::PublicParams::from_sector_size(u64::from(proof.sector_size()));
    <EmptySectorUpdateCompound<Tree> as CacheableParameters<_, _>>::cache_identifier(&public_params)
}

fn update_blank<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    proof: RegisteredUpdateProof,
    work: Blank<'_>,
) -> Result<FromBlank, Generated> {
    let public_params =
        storage_proofs_update::PublicParams::from_sector_size(u64::from(proof.sector_size()));
    let blank =
        <EmptySectorUpdateCompound<Tree> as CompoundProof<_, _>>::blank_circuit(&public_params);
    from_blank(blank, work)
}
