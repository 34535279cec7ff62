//! rust-fil-proofs' PoRep and PoSt circuits as forks (a part per challenge, per sector):
//! joined, the parts are exactly the partition's circuit — the same constraint matrices and
//! the same assignment as the circuit's own synthesis.

use blstrs::Scalar as Fr;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice::{ConstraintMatrices, Forked, ProvingAssignment};
use sluice_filecoin::circuits;
use sluice_filecoin::fork::PostFork;

fn assert_same(forked: &ProvingAssignment, sequential: &ProvingAssignment, what: &str) {
    assert_eq!(
        forked.num_constraints(),
        sequential.num_constraints(),
        "{what}"
    );
    assert_eq!(
        forked.input_assignment(),
        sequential.input_assignment(),
        "{what}"
    );
    assert_eq!(
        forked.aux_assignment(),
        sequential.aux_assignment(),
        "{what}"
    );
    assert_eq!(forked.a(), sequential.a(), "{what}");
    assert_eq!(forked.b(), sequential.b(), "{what}");
    assert_eq!(forked.a_aux_density(), sequential.a_aux_density(), "{what}");
    assert_eq!(
        forked.b_input_density(),
        sequential.b_input_density(),
        "{what}"
    );
    assert_eq!(forked.b_aux_density(), sequential.b_aux_density(), "{what}");
}

fn pool() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap()
}

#[test]
fn porep_fork_is_the_partition_circuit() {
    let seed = 4606;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let instance = circuits::porep_fork_with_inputs(2, &mut rng).unwrap();
    let fork = &instance.circuit;
    let what = format!("seed {seed}, PoRep of 2 challenges");
    let whole = ConstraintMatrices::record::<Fr, _>(fork.circuit().unwrap()).unwrap();
    let joined = ConstraintMatrices::record::<Fr, _>(Forked(fork)).unwrap();
    assert!(joined == whole, "{what}: matrices");
    let sequential = ProvingAssignment::synthesize::<Fr, _>(fork.circuit().unwrap()).unwrap();
    let forked = pool()
        .install(|| ProvingAssignment::synthesize_forked::<Fr, _>(fork, &Default::default()))
        .unwrap();
    assert_same(&forked, &sequential, &what);
    let public: Vec<sluice::Fr> = instance.inputs.iter().map(|&x| x.into()).collect();
    assert_eq!(
        &forked.input_assignment()[1..],
        &public[..],
        "{what}: public inputs"
    );
}

#[test]
fn post_fork_is_the_partition_circuit() {
    let seed = 4607;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let circuit = circuits::post(3, 2, &mut rng).unwrap();
    let what = format!("seed {seed}, PoSt of 3 sectors");
    let whole = ConstraintMatrices::record::<Fr, _>(circuit.clone()).unwrap();
    let fork = PostFork(circuit.clone());
    let joined = ConstraintMatrices::record::<Fr, _>(Forked(&fork)).unwrap();
    assert!(joined == whole, "{what}: matrices");
    let sequential = ProvingAssignment::synthesize::<Fr, _>(circuit).unwrap();
    let forked = pool()
        .install(|| ProvingAssignment::synthesize_forked::<Fr, _>(&fork, &Default::default()))
        .unwrap();
    assert_same(&forked, &sequential, &what);
}
