//! A PoRep partition: storage-proofs-porep's `StackedCircuit` over a small sector replicated
//! on the spot, with as many challenges as asked.

use std::sync::Arc;

use filecoin_hashers::poseidon::PoseidonHasher;
use filecoin_hashers::sha256::Sha256Hasher;
use filecoin_hashers::{Domain, Hasher};
use rand_core::RngCore;
use storage_proofs_core::api_version::ApiVersion;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::data::Data;
use storage_proofs_core::drgraph::BASE_DEGREE;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_core::test_helper::setup_replica;
use storage_proofs_porep::stacked::{
    Challenges, PrivateInputs, PublicInputs, PublicParams, SetupParams, StackedCircuit,
    StackedCompound, StackedDrg, TemporaryAuxCache, EXP_DEGREE,
};

use super::count;
use super::scratch::Scratch;
use super::Instance;
use crate::error::FilecoinError;
use crate::fork::PorepFork;

/// The sector's Merkle tree (tree R and tree C): Poseidon, arity 8, one base tree, as
/// Filecoin's 2 KiB and 512 MiB sectors have (filecoin-proofs' `SectorShapeBase`).
pub type PorepTree = filecoin_proofs::SectorShapeBase;

/// A PoRep partition's circuit (tree D is SHA-256, as in every Filecoin sector).
pub type PorepCircuit = StackedCircuit<PorepTree, Sha256Hasher>;

/// A PoRep partition's circuit as a fork: a part per challenge.
pub type PorepForkCircuit = PorepFork<PorepTree, Sha256Hasher>;

/// Nodes (32 bytes each) of the replicated sector: 8, as in rust-fil-proofs' own circuit
/// test. A challenge's cost is its labels' SHA-256 over 37 parents per layer, which does
/// not depend on the sector's size; only the Merkle paths (3 levels of tree D here, 30 in
/// a 32 GiB sector) do, by a few percent.
pub const POREP_NODES: usize = 8;

/// Layers of the replication: 2, as in rust-fil-proofs' circuit test and Filecoin's 2 KiB
/// sectors (a 32 GiB sector has 11: more constraints per challenge, the same kind).
pub const POREP_LAYERS: usize = 2;

/// The PoRep id the graph is derived from: any value makes a valid graph of the same shape
/// (rust-fil-proofs' test uses one as arbitrary).
const POREP_ID: [u8; 32] = [44; 32];

/// Constraints of a partition of one challenge, sluice's count (the circuit's 1_199_620, as
/// rust-fil-proofs' `stacked_circuit.rs` expects for arity 8, and its 22 input
/// constraints, the constant one included).
const FIRST_CHALLENGE: usize = 1_199_642;

/// Constraints each further challenge adds. A challenge is a sub-circuit of its own (its
/// labelling and encoding proofs and its Merkle paths, with their public inputs) beside the
/// part every partition has once (replica id, comm_d, comm_r = H(comm_c, comm_r_last)), so
/// the count is linear in the challenges; these two figures are that line, measured by
/// counting blank circuits of 1 and 2 challenges (the test
/// `the_linear_count_is_the_circuits` counts them again, so a rust-fil-proofs whose
/// circuit changes fails it rather than mis-sizing benchmarks).
const PER_CHALLENGE: usize = 1_199_067;

/// storage-proofs' public parameters of a partition of `challenges` challenges over the
/// [`POREP_NODES`]-node, [`POREP_LAYERS`]-layer sector: what the blank circuit (and so a
/// setup) is made from.
pub fn porep_public_params(challenges: usize) -> Result<PublicParams<PorepTree>, FilecoinError> {
    if challenges == 0 {
        return Err(FilecoinError::Input(
            "a PoRep partition needs at least one challenge".into(),
        ));
    }
    let setup = SetupParams {
        nodes: POREP_NODES,
        degree: BASE_DEGREE,
        expansion_degree: EXP_DEGREE,
        porep_id: POREP_ID,
        challenges: Challenges::new_interactive(challenges),
        num_layers: POREP_LAYERS,
        api_version: ApiVersion::V1_1_0,
        api_features: vec![],
    };
    StackedDrg::<PorepTree, Sha256Hasher>::setup(&setup)
        .map_err(FilecoinError::filecoin("PoRep public parameters"))
}

/// The blank circuit (no witness) of a partition of `challenges` challenges, for a setup.
pub fn porep_blank(challenges: usize) -> Result<PorepCircuit, FilecoinError> {
    let public_params = porep_public_params(challenges)?;
    Ok(
        <StackedCompound<PorepTree, Sha256Hasher> as CompoundProof<
            StackedDrg<'_, PorepTree, Sha256Hasher>,
            _,
        >>::blank_circuit(&public_params),
    )
}

/// A PoRep partition of `challenges` challenges with its witness: a random sector of
/// [`POREP_NODES`] nodes is replicated (`replicate_phase1` and `replicate_phase2`, in a
/// temporary directory removed before returning), its vanilla proofs made for a random
/// seed (`prove_all_partitions`, one partition) and turned into the circuit
/// (`StackedCompound::circuit`), as rust-fil-proofs' own circuit test does.
pub fn porep<R: RngCore>(challenges: usize, rng: &mut R) -> Result<PorepCircuit, FilecoinError> {
    porep_with_inputs(challenges, rng).map(|instance| instance.circuit)
}

/// [`porep`] with the public inputs its proof verifies against.
pub fn porep_with_inputs<R: RngCore>(
    challenges: usize,
    rng: &mut R,
) -> Result<Instance<PorepCircuit>, FilecoinError> {
    let Instance { circuit, inputs } = porep_fork_with_inputs(challenges, rng)?;
    Ok(Instance {
        circuit: circuit.circuit()?,
        inputs,
    })
}

/// [`porep_with_inputs`] as a [`PorepFork`]: a part per challenge, synthesized on every core
/// by [`ProvingAssignment::synthesize_forked`](sluice::ProvingAssignment::synthesize_forked).
pub fn porep_fork_with_inputs<R: RngCore>(
    challenges: usize,
    rng: &mut R,
) -> Result<Instance<PorepForkCircuit>, FilecoinError> {
    type Drg<'a> = StackedDrg<'a, PorepTree, Sha256Hasher>;
    type PoseidonDomain = <PoseidonHasher as Hasher>::Domain;
    let public_params = porep_public_params(challenges)?;
    let scratch = Scratch::new("porep")?;
    let replica_id = PoseidonDomain::random(rng);
    // Random field elements (any 32 bytes below the modulus are valid sector data).
    let data: Vec<u8> = (0..POREP_NODES)
        .flat_map(|_| PoseidonDomain::random(rng).into_bytes())
        .collect();
    let replica_path = scratch.path().join("replica");
    // The replica file, mapped (storage-proofs' helper, as its test: it panics where the
    // temporary directory cannot be written).
    let replica = setup_replica(&data, &replica_path);
    let failed = FilecoinError::filecoin;
    let (labels, _) = Drg::replicate_phase1(&public_params, &replica_id, scratch.path())
        .map_err(failed("PoRep labelling"))?;
    // Encodes the replica in place, in the mapped file (tree R's LCTree reads it back).
    let (tau, (p_aux, t_aux)) = Drg::replicate_phase2(
        &public_params,
        labels,
        Data::from((replica, replica_path.clone())),
        None,
        scratch.path().to_path_buf(),
        replica_path.clone(),
    )
    .map_err(failed("PoRep replication"))?;
    let mut seed = [0u8; 32];
    rng.fill_bytes(&mut seed);
    let public_inputs = PublicInputs {
        replica_id,
        seed: Some(seed),
        tau: Some(tau),
        k: None,
    };
    let t_aux = TemporaryAuxCache::new(&t_aux, replica_path, false)
        .map_err(failed("opening the replica's trees"))?;
    let private_inputs = PrivateInputs { p_aux, t_aux };
    let proofs = Drg::prove_all_partitions(&public_params, &public_inputs, &private_inputs, 1)
        .map_err(failed("PoRep vanilla proofs"))?;
    let proof = proofs
        .into_iter()
        .next()
        .ok_or_else(|| FilecoinError::Input("no PoRep partition was proved".into()))?;
    let fork = PorepFork::new(
        public_inputs.clone(),
        proof,
        Arc::new(public_params.clone()),
        None,
    )?;
    let inputs = <StackedCompound<PorepTree, Sha256Hasher> as CompoundProof<Drg<'_>, _>>::generate_public_inputs(
        &public_inputs,
        &public_params,
        None,
    )
    .map_err(failed("the PoRep circuit's public inputs"))?;
    // The trees' files are open until here; the circuit owns its witness.
    drop(private_inputs);
    drop(scratch);
    Ok(Instance {
        circuit: fork,
        inputs,
    })
}

/// The constraints (sluice's count, input constraints included) of a partition of
/// `challenges` challenges, from the linear count (no synthesis).
pub fn porep_constraints(challenges: usize) -> usize {
    FIRST_CHALLENGE + PER_CHALLENGE * challenges.saturating_sub(1)
}

/// The most challenges a PoRep partition can have and still fit a domain of 2^`log2`
/// (1 from 2^21, 13 at 2^24: 15.6M constraints); 0 below 2^21, where not even one fits.
pub fn porep_challenges_for_domain(log2: u32) -> usize {
    count::units_for_domain(log2, FIRST_CHALLENGE - PER_CHALLENGE, PER_CHALLENGE)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;
    use sluice::FrCompatible;
    use sluice::{count_constraints, Counts};

    /// Counts a blank partition of `challenges` challenges (its gadget code runs, about a
    /// second per million constraints).
    fn count_blank(challenges: usize) -> Counts {
        count_constraints(porep_blank(challenges).unwrap()).unwrap()
    }

    #[test]
    fn the_linear_count_is_the_circuits() {
        for challenges in [1, 2, 3] {
            let counts = count_blank(challenges);
            assert_eq!(
                counts.constraints,
                porep_constraints(challenges),
                "{challenges} challenge(s): {counts:?}"
            );
        }
        assert_eq!(porep_challenges_for_domain(20), 0);
        assert_eq!(porep_challenges_for_domain(21), 1);
        assert_eq!(porep_challenges_for_domain(24), 13);
        for log2 in 21..=27 {
            let k = porep_challenges_for_domain(log2);
            assert!(porep_constraints(k) <= 1 << log2, "2^{log2}: {k}");
            assert!(porep_constraints(k + 1) > 1 << log2, "2^{log2}: {k}");
        }
    }

    /// A real partition of one challenge is satisfied: sluice's synthesis checks a·b = c at
    /// every constraint and fails on the first that does not hold, and the public inputs it
    /// records are storage-proofs' own.
    #[test]
    fn a_one_challenge_partition_is_satisfied() {
        let mut rng = ChaCha20Rng::seed_from_u64(21);
        let Instance { circuit, inputs } = porep_with_inputs(1, &mut rng).unwrap();
        let cs = sluice::ProvingAssignment::synthesize(circuit).unwrap();
        assert_eq!(cs.num_constraints(), porep_constraints(1));
        assert_eq!(
            &cs.input_assignment()[1..],
            blstrs::Scalar::as_fr_slice(&inputs)
        );
        assert!(porep(0, &mut rng).is_err());
    }
}
