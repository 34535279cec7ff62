//! A Window PoSt partition: storage-proofs-post's `FallbackPoStCircuit` over small sectors
//! generated on the spot, with as many sectors as asked.

use filecoin_hashers::poseidon::PoseidonHasher;
use filecoin_hashers::{Domain, HashFunction, Hasher};
use rand_core::RngCore;
use storage_proofs_core::api_version::ApiVersion;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::merkle::{generate_tree, MerkleTreeTrait};
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_core::util::NODE_SIZE;
use storage_proofs_post::fallback::{
    FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound, PrivateInputs, PrivateSector,
    PublicInputs, PublicParams, PublicSector, SetupParams,
};

use sluice::{count_constraints, Counts};

use super::count;
use super::scratch::Scratch;
use super::Instance;
use crate::error::FilecoinError;

/// The sectors' Merkle tree (tree R): Poseidon, arity 8, one base tree, as in Filecoin's
/// 2 KiB sectors (filecoin-proofs' `SectorShapeBase`).
pub type PostTree = filecoin_proofs::SectorShapeBase;

/// A PoSt partition's circuit.
pub type PostCircuit = FallbackPoStCircuit<PostTree>;

/// Leaves of each sector's tree R: 64 (a 2 KiB sector), as the PoSt test of
/// `tests/ecosystem` and rust-fil-proofs' own use. A challenge is a Merkle path in it (2
/// levels of arity 8; a 32 GiB sector's has 10): a real sector costs more per challenge,
/// with the same gadgets.
pub const POST_LEAVES: usize = 64;

/// Challenges per sector of a Window PoSt (filecoin-proofs'
/// `WINDOW_POST_CHALLENGE_COUNT`); a Winning PoSt has 66 of one sector.
pub const WINDOW_POST_CHALLENGES: usize = filecoin_proofs::constants::WINDOW_POST_CHALLENGE_COUNT;

/// Trees generated for a circuit at most: further sectors reuse them (with their own
/// comm_c, so comm_r, and their own id, so challenges). The circuit's shape and work are
/// the same whichever tree a sector's paths come from, and a 2^24 circuit has over a
/// thousand sectors, each tree a few files.
const DISTINCT_TREES: usize = 8;

/// storage-proofs' public parameters of a partition of `sectors` sectors of
/// `challenges_per_sector` challenges each, over sectors of [`POST_LEAVES`] leaves.
pub fn post_public_params(
    sectors: usize,
    challenges_per_sector: usize,
) -> Result<PublicParams, FilecoinError> {
    if sectors == 0 || challenges_per_sector == 0 {
        return Err(FilecoinError::Input(format!(
            "a PoSt partition needs at least one sector and one challenge \
             ({sectors} sector(s) of {challenges_per_sector} challenge(s) asked)"
        )));
    }
    let setup = SetupParams {
        sector_size: (POST_LEAVES * NODE_SIZE) as u64,
        challenge_count: challenges_per_sector,
        sector_count: sectors,
        api_version: ApiVersion::V1_1_0,
    };
    FallbackPoSt::<PostTree>::setup(&setup)
        .map_err(FilecoinError::filecoin("PoSt public parameters"))
}

/// The blank circuit (no witness) of a partition, for a setup.
pub fn post_blank(
    sectors: usize,
    challenges_per_sector: usize,
) -> Result<PostCircuit, FilecoinError> {
    let public_params = post_public_params(sectors, challenges_per_sector)?;
    Ok(<FallbackPoStCompound<PostTree> as CompoundProof<_, _>>::blank_circuit(&public_params))
}

/// A PoSt partition of `sectors` sectors of `challenges_per_sector` challenges each, with
/// its witness: random trees are generated (in a temporary directory removed before
/// returning), vanilla proofs made for random randomness (`prove_all_partitions`, one
/// partition) and turned into the circuit (`FallbackPoStCompound::circuit`).
pub fn post<R: RngCore>(
    sectors: usize,
    challenges_per_sector: usize,
    rng: &mut R,
) -> Result<PostCircuit, FilecoinError> {
    post_with_inputs(sectors, challenges_per_sector, rng).map(|instance| instance.circuit)
}

/// [`post`] with the public inputs its proof verifies against.
pub fn post_with_inputs<R: RngCore>(
    sectors: usize,
    challenges_per_sector: usize,
    rng: &mut R,
) -> Result<Instance<PostCircuit>, FilecoinError> {
    type PoseidonDomain = <PoseidonHasher as Hasher>::Domain;
    let public_params = post_public_params(sectors, challenges_per_sector)?;
    let scratch = Scratch::new("post")?;
    let trees: Vec<_> = (0..sectors.min(DISTINCT_TREES))
        .map(|_| {
            generate_tree::<PostTree, _>(&mut *rng, POST_LEAVES, Some(scratch.path().to_path_buf()))
                .1
        })
        .collect();
    let mut private_sectors = Vec::with_capacity(sectors);
    let mut public_sectors = Vec::with_capacity(sectors);
    for (i, tree) in trees.iter().cycle().take(sectors).enumerate() {
        let comm_c = PoseidonDomain::random(rng);
        let comm_r_last = tree.root();
        private_sectors.push(PrivateSector {
            tree,
            comm_c,
            comm_r_last,
        });
        public_sectors.push(PublicSector {
            id: (i as u64).into(),
            comm_r: <PoseidonHasher as Hasher>::Function::hash2(&comm_c, &comm_r_last),
        });
    }
    let public_inputs = PublicInputs {
        randomness: PoseidonDomain::random(rng),
        prover_id: PoseidonDomain::random(rng),
        sectors: public_sectors,
        k: None,
    };
    let private_inputs = PrivateInputs::<PostTree> {
        sectors: &private_sectors,
    };
    let failed = FilecoinError::filecoin;
    let proofs = FallbackPoSt::<PostTree>::prove_all_partitions(
        &public_params,
        &public_inputs,
        &private_inputs,
        1,
    )
    .map_err(failed("PoSt vanilla proofs"))?;
    let proof = proofs
        .first()
        .ok_or_else(|| FilecoinError::Input("no PoSt partition was proved".into()))?;
    let circuit = FallbackPoStCompound::<PostTree>::circuit(
        &public_inputs,
        Default::default(),
        proof,
        &public_params,
        Some(0),
    )
    .map_err(failed("building the PoSt circuit"))?;
    let inputs = FallbackPoStCompound::<PostTree>::generate_public_inputs(
        &public_inputs,
        &public_params,
        Some(0),
    )
    .map_err(failed("the PoSt circuit's public inputs"))?;
    drop(private_sectors);
    drop(trees);
    drop(scratch);
    Ok(Instance { circuit, inputs })
}

/// Counts a blank partition (sluice's count, input constraints included).
pub fn post_constraints(
    sectors: usize,
    challenges_per_sector: usize,
) -> Result<Counts, FilecoinError> {
    count_constraints(post_blank(sectors, challenges_per_sector)?).map_err(|e| {
        FilecoinError::Filecoin {
            what: "counting the PoSt circuit",
            source: e.into(),
        }
    })
}

/// The most sectors of `challenges_per_sector` challenges a PoSt partition can have and
/// still fit a domain of 2^`log2` (0 where not even one fits). Each sector is a sub-circuit
/// of its own (comm_r = H(comm_c, comm_r_last) and one Merkle path per challenge, with their
/// inputs), so the count is linear in the sectors: the line is measured by counting blank
/// circuits of 1 and 2 sectors (milliseconds).
pub fn post_sectors_for_domain(
    log2: u32,
    challenges_per_sector: usize,
) -> Result<usize, FilecoinError> {
    let one = post_constraints(1, challenges_per_sector)?.constraints;
    let two = post_constraints(2, challenges_per_sector)?.constraints;
    let per_sector = two - one;
    Ok(count::units_for_domain(log2, one - per_sector, per_sector))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;
    use sluice::FrCompatible;

    /// The partition of the PoSt test of `tests/ecosystem` counts as it says (its figure is
    /// the circuit's own, without sluice's input constraints).
    #[test]
    fn the_ecosystem_tests_partition_counts_as_it_says() {
        let counts = post_constraints(3, 5).unwrap();
        assert_eq!(counts.constraints - counts.inputs, 16_869, "{counts:?}");
    }

    /// The sectors chosen for a domain fill it: one more would not fit.
    #[test]
    fn sectors_fill_the_domain() {
        for log2 in [14, 16, 18] {
            let sectors = post_sectors_for_domain(log2, WINDOW_POST_CHALLENGES).unwrap();
            assert!(sectors > 0, "2^{log2}");
            let fits = post_constraints(sectors, WINDOW_POST_CHALLENGES).unwrap();
            let over = post_constraints(sectors + 1, WINDOW_POST_CHALLENGES).unwrap();
            assert_eq!(fits.domain_log2(), log2, "{sectors} sectors: {fits:?}");
            assert!(over.constraints > 1 << log2, "{over:?}");
        }
        assert_eq!(
            post_sectors_for_domain(10, WINDOW_POST_CHALLENGES).unwrap(),
            0
        );
    }

    /// A real partition (more sectors than distinct trees) is satisfied with
    /// storage-proofs' public inputs, and counts as its blank circuit.
    #[test]
    fn a_partition_is_satisfied() {
        let mut rng = ChaCha20Rng::seed_from_u64(16);
        let sectors = DISTINCT_TREES + 2;
        let Instance { circuit, inputs } = post_with_inputs(sectors, 3, &mut rng).unwrap();
        let cs = sluice::ProvingAssignment::synthesize(circuit).unwrap();
        assert_eq!(
            cs.num_constraints(),
            post_constraints(sectors, 3).unwrap().constraints
        );
        assert_eq!(
            &cs.input_assignment()[1..],
            blstrs::Scalar::as_fr_slice(&inputs)
        );
        assert!(post(0, 3, &mut rng).is_err());
        assert!(post(1, 0, &mut rng).is_err());
    }
}
