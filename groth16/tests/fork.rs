//! Forked synthesis (`Fork`, `Forked`, `ProvingAssignment::synthesize_forked`) makes exactly
//! what the sequential circuit makes: the same assignment, matrices and proof bytes for
//! given r and s, with and without recorded matrices; a part that does not fit the others is
//! refused naming it, and a failing constraint keeps its sequential index.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

use std::sync::Arc;

use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend_cpu::CpuBackend;
use sluice_field::Fr;
use sluice_groth16::{
    self as sl, Circuit, ConstraintMatrices, ConstraintSystem, Fork, Forked, Groth16Error,
    ProverConfig, ProvingAssignment, SynthesisError, SynthesisOptions,
};

/// Shared: `x` (a variable), `X = x` public and `p = x^5`. Then per part `k`: the bits of
/// `k` (booleans: the compact storage), `t_0 = x + k`, `t_{j+1} = t_j^2 + p` for `rounds`
/// rounds, and `y_k = t_rounds` public. Parts use the shared `x` and `p`.
#[derive(Clone)]
struct Chains {
    x: Option<Fr>,
    ks: Vec<u64>,
    rounds: usize,
    /// A part whose witness is wrong at its last round (the circuit fails there).
    broken: Option<u64>,
    /// A part that skips the shared prefix (a fork that does not fit).
    skips_prefix: Option<u64>,
}

impl Chains {
    fn new(x: Option<Fr>, parts: u64, rounds: usize) -> Self {
        Chains {
            x,
            ks: (1..=parts).map(|k| k * 7 + 3).collect(),
            rounds,
            broken: None,
            skips_prefix: None,
        }
    }
}

impl Circuit<Fr> for Chains {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let missing = || SynthesisError::AssignmentMissing;
        let skip = self.ks.len() == 1 && self.skips_prefix == Some(self.ks[0]);
        let (x, p, px) = if skip {
            (CS::one(), CS::one(), Some(Fr::ONE))
        } else {
            let x = cs.alloc(|| "x", || self.x.ok_or_else(missing))?;
            let big_x = cs.alloc_input(|| "X", || self.x.ok_or_else(missing))?;
            cs.enforce(
                || "X = x",
                |lc| lc + x,
                |lc| lc + CS::one(),
                |lc| lc + big_x,
            );
            let x2v = self.x.map(|x| x.square());
            let x4v = x2v.map(|v| v.square());
            let pv = x4v.zip(self.x).map(|(a, b)| a * b);
            let x2 = cs.alloc(|| "x2", || x2v.ok_or_else(missing))?;
            let x4 = cs.alloc(|| "x4", || x4v.ok_or_else(missing))?;
            let p = cs.alloc(|| "p", || pv.ok_or_else(missing))?;
            cs.enforce(|| "x2", |lc| lc + x, |lc| lc + x, |lc| lc + x2);
            cs.enforce(|| "x4", |lc| lc + x2, |lc| lc + x2, |lc| lc + x4);
            cs.enforce(|| "p", |lc| lc + x4, |lc| lc + x, |lc| lc + p);
            (x, p, pv)
        };
        for k in self.ks {
            let mut cs = cs.namespace(|| format!("part {k}"));
            for bit in 0..8 {
                let value = (k >> bit) & 1 == 1;
                let b = cs.alloc(|| format!("bit {bit}"), || Ok(Fr::from(value as u64)))?;
                cs.enforce(
                    || format!("bit {bit} boolean"),
                    |lc| lc + b,
                    |lc| lc + CS::one() - b,
                    |lc| lc,
                );
            }
            let kf = Fr::from(k);
            let mut tv = self.x.map(|x| x + kf);
            let mut t = cs.alloc(|| "t0", || tv.ok_or_else(missing))?;
            cs.enforce(
                || "t0",
                |lc| lc + x + (kf, CS::one()),
                |lc| lc + CS::one(),
                |lc| lc + t,
            );
            for j in 0..self.rounds {
                let mut next = tv.zip(px).map(|(t, p)| t.square() + p);
                if self.broken == Some(k) && j + 1 == self.rounds {
                    next = next.map(|v| v + Fr::ONE);
                }
                let n = cs.alloc(|| format!("t{}", j + 1), || next.ok_or_else(missing))?;
                cs.enforce(
                    || format!("round {j}"),
                    |lc| lc + t,
                    |lc| lc + t,
                    |lc| lc + n - p,
                );
                t = n;
                tv = next;
            }
            let y = cs.alloc_input(|| "y", || tv.ok_or_else(missing))?;
            cs.enforce(|| "y", |lc| lc + t, |lc| lc + CS::one(), |lc| lc + y);
        }
        Ok(())
    }
}

impl Fork<Fr> for Chains {
    type Part = Chains;

    fn parts(&self) -> usize {
        self.ks.len()
    }

    fn prefix(&self) -> Result<Chains, SynthesisError> {
        Ok(Chains {
            ks: vec![],
            ..self.clone()
        })
    }

    fn part(&self, index: usize) -> Result<Chains, SynthesisError> {
        Ok(Chains {
            ks: vec![self.ks[index]],
            ..self.clone()
        })
    }
}

/// A fork whose part 2 is built from another x (its prefix disagrees with part 0's).
struct OtherX(Chains);

impl Fork<Fr> for OtherX {
    type Part = Chains;
    fn parts(&self) -> usize {
        self.0.parts()
    }
    fn prefix(&self) -> Result<Chains, SynthesisError> {
        self.0.prefix()
    }
    fn part(&self, index: usize) -> Result<Chains, SynthesisError> {
        let mut part = self.0.part(index)?;
        if index == 2 {
            part.x = part.x.map(|x| x + Fr::ONE);
        }
        Ok(part)
    }
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

fn assert_same(forked: &ProvingAssignment, sequential: &ProvingAssignment, what: &str) {
    assert_eq!(
        forked.num_constraints(),
        sequential.num_constraints(),
        "{what}: constraints"
    );
    assert_eq!(
        forked.input_assignment(),
        sequential.input_assignment(),
        "{what}: inputs"
    );
    assert_eq!(
        forked.aux_assignment(),
        sequential.aux_assignment(),
        "{what}: witness"
    );
    assert_eq!(forked.a(), sequential.a(), "{what}: a");
    assert_eq!(forked.b(), sequential.b(), "{what}: b");
    assert_eq!(
        forked.a_aux_density(),
        sequential.a_aux_density(),
        "{what}: A density"
    );
    assert_eq!(
        forked.b_input_density(),
        sequential.b_input_density(),
        "{what}: B inputs"
    );
    assert_eq!(
        forked.b_aux_density(),
        sequential.b_aux_density(),
        "{what}: B density"
    );
}

fn x_for(seed: u64) -> Fr {
    Fr::random(ChaCha20Rng::seed_from_u64(seed))
}

/// Full synthesis and synthesis with matrices: the forked assignment is the sequential one,
/// for one part, several, and more parts than threads; the matrices recorded from
/// `Forked` are the sequential circuit's.
#[test]
fn forked_assignment_and_matrices_equal_the_sequential_ones() {
    let seed = 4601;
    for parts in [1, 2, 7] {
        let circuit = Chains::new(Some(x_for(seed)), parts, 40);
        let what = format!("seed {seed}, {parts} parts");
        let sequential = ProvingAssignment::synthesize(circuit.clone()).unwrap();
        let forked = pool(3)
            .install(|| ProvingAssignment::synthesize_forked(circuit.clone(), &Default::default()))
            .unwrap();
        assert_same(&forked, &sequential, &what);

        let matrices = ConstraintMatrices::record(Chains::new(None, parts, 40)).unwrap();
        let of_forked = ConstraintMatrices::record(Forked(Chains::new(None, parts, 40))).unwrap();
        assert_eq!(of_forked, matrices, "{what}: matrices of Forked");
        let options = SynthesisOptions {
            matrices: Some(Arc::new(matrices)),
            ..SynthesisOptions::default()
        };
        let with_matrices =
            pool(3).install(|| ProvingAssignment::synthesize_forked(circuit.clone(), &options));
        assert_same(
            &with_matrices.unwrap(),
            &sequential,
            &format!("{what}, matrices"),
        );
        let through_forked = ProvingAssignment::synthesize(Forked(circuit)).unwrap();
        assert_same(&through_forked, &sequential, &format!("{what}, Forked"));
    }
}

/// Parameters made from `Forked`, a proof of the forked assignment: the bytes of the
/// sequential circuit's proof for the same r and s, and it verifies.
#[test]
fn forked_proof_is_byte_identical_and_verifies() {
    let seed = 4602;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let params =
        sl::generate_random_parameters_vartime(Forked(Chains::new(None, 5, 30)), &mut rng).unwrap();
    let x = Fr::random(&mut rng);
    let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
    let backend = CpuBackend::new();
    let circuit = Chains::new(Some(x), 5, 30);
    let sequential = sl::create_proof(circuit.clone(), &params, r, s, &backend).unwrap();
    let assignment = pool(2)
        .install(|| ProvingAssignment::synthesize_forked(circuit, &Default::default()))
        .unwrap();
    let inputs = assignment.input_assignment()[1..].to_vec();
    let (forked, _) = sl::prove_assignment(
        assignment,
        &params,
        r,
        s,
        &backend,
        &ProverConfig::default(),
    )
    .unwrap();
    assert_eq!(forked, sequential, "seed {seed}");
    let pvk = sl::prepare_verifying_key(&params.vk);
    assert!(
        sl::verify_proof(&pvk, &forked, &inputs).unwrap(),
        "seed {seed}"
    );
}

/// A part built from other shared values, or one that does not repeat the prefix, is
/// refused naming the part (forked) or fails synthesis (`Forked`); a failing constraint in
/// a part keeps the index it has in the sequential circuit.
#[test]
fn parts_that_do_not_fit_are_refused_and_failures_keep_their_index() {
    let seed = 4603;
    let x = Some(x_for(seed));
    let other = OtherX(Chains::new(x, 4, 10));
    match ProvingAssignment::synthesize_forked(other, &Default::default()) {
        Err(Groth16Error::Fork { part: 2, .. }) => {}
        other => panic!(
            "seed {seed}: expected part 2 refused, got {:?}",
            other.err()
        ),
    }
    let err = ProvingAssignment::synthesize(Forked(OtherX(Chains::new(x, 4, 10)))).err();
    assert!(
        matches!(
            err,
            Some(Groth16Error::Synthesis(SynthesisError::Unsatisfiable))
        ),
        "{err:?}"
    );

    let mut skipping = Chains::new(x, 4, 10);
    skipping.skips_prefix = Some(skipping.ks[1]);
    match ProvingAssignment::synthesize_forked(skipping.clone(), &Default::default()) {
        Err(Groth16Error::Fork { part: 1, reason }) => {
            assert!(reason.contains("prefix"), "{reason}")
        }
        other => panic!(
            "seed {seed}: expected part 1 refused, got {:?}",
            other.err()
        ),
    }
    assert!(ProvingAssignment::synthesize(Forked(skipping)).is_err());

    let mut broken = Chains::new(x, 4, 10);
    broken.broken = Some(broken.ks[2]);
    let sequential = ProvingAssignment::synthesize(broken.clone()).err();
    let forked =
        pool(2).install(|| ProvingAssignment::synthesize_forked(broken, &Default::default()));
    match (sequential, forked.err()) {
        (
            Some(Groth16Error::Unsatisfied { index: i, .. }),
            Some(Groth16Error::Unsatisfied { index: j, name }),
        ) => {
            assert_eq!(i, j, "seed {seed}: {name}");
            assert!(name.starts_with("part 2"), "{name}");
        }
        other => panic!("seed {seed}: expected both unsatisfied, got {other:?}"),
    }
}
