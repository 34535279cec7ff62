//! Recorded matrices against full synthesis: the same assignment, wrong witnesses and
//! wrong matrices caught.

use super::*;
use crate::synthesis::assignment::tests::same_assignment;
use crate::synthesis::matrices::rows::BLOCK_ROWS;
use bellpepper_core::{Circuit, ConstraintSystem, Index, SynthesisError, Variable};
use ff::Field;
use sluice_field::Fr;

use crate::demo::{BitDecomposition, MimcLike, Sha256Preimage};
use crate::error::Groth16Error;
use crate::synthesis::matrices::rows::{Rows, Term, LONG_ROW};
use crate::{ProvingAssignment, Storage, SynthesisOptions, UNNAMED};
use sluice_backend::CompactVec;
use std::sync::Arc;

fn with_matrices(matrices: &Arc<ConstraintMatrices>, storage: Storage) -> SynthesisOptions {
    SynthesisOptions {
        storage,
        matrices: Some(matrices.clone()),
        ..SynthesisOptions::default()
    }
}

/// With recorded matrices, synthesis gives the assignment a full synthesis gives, in
/// every storage, on a dense circuit, a boolean one and bellpepper's SHA-256 gadget
/// (rows of hundreds of terms, and more constraints than one evaluation block).
#[test]
fn matrices_give_the_full_synthesis_assignment() {
    /// Returns the matrices it recorded.
    fn check<C: Circuit<Fr> + Clone>(name: &str, circuit: C) -> Arc<ConstraintMatrices> {
        let matrices = Arc::new(ConstraintMatrices::record(circuit.clone()).unwrap());
        assert!(matrices.num_constraints() > BLOCK_ROWS, "{name}");
        for storage in [Storage::Auto, Storage::Compact, Storage::Raw] {
            let plain = ProvingAssignment::synthesize_with(
                circuit.clone(),
                &SynthesisOptions {
                    storage,
                    ..SynthesisOptions::default()
                },
            )
            .unwrap();
            let options = with_matrices(&matrices, storage);
            let fast = ProvingAssignment::synthesize_with(circuit.clone(), &options).unwrap();
            same_assignment(&fast, &plain, &format!("{name}, {storage:?}"));
            assert_eq!(matrices.num_constraints(), plain.num_constraints());
            assert_eq!(matrices.num_aux(), plain.aux_assignment().len());
        }
        matrices
    }
    check(
        "mimc",
        MimcLike::<Fr>::filling_domain(13, Some(Fr::from(5u64))),
    );
    check("bits", BitDecomposition::<Fr>::filling_domain(13, Some(9)));
    // Several pages of witness: rows evaluated while synthesis runs.
    let pages = BitDecomposition::<Fr>::filling_domain(18, Some(5));
    let m = check("bits, several pages", pages);
    assert!(m.num_aux() > 2 * sluice_backend::compact::PAGE_LEN);
    let m = check("sha256", Sha256Preimage::<Fr>::new(1, Some(3)));
    assert!(!m.rows.iter().all(|r| r.long_lens.is_empty()), "long rows");
}

/// A circuit over `blstrs::Scalar` records and synthesizes as its `Fr` twin does.
#[test]
fn matrices_of_a_blstrs_circuit() {
    let circuit = BitDecomposition::<blstrs::Scalar>::filling_domain(12, Some(4));
    let matrices = Arc::new(ConstraintMatrices::record(circuit.clone()).unwrap());
    let options = with_matrices(&matrices, Storage::Auto);
    let fast = ProvingAssignment::synthesize_with(circuit, &options).unwrap();
    let plain =
        ProvingAssignment::synthesize(BitDecomposition::<Fr>::filling_domain(12, Some(4))).unwrap();
    same_assignment(&fast, &plain, "blstrs");
}

/// x (aux 0) * y (aux 1) = z (aux 2), then z * 1 = the input; `swap` enforces
/// x * z = y instead (the same counts, another circuit).
#[derive(Clone)]
struct Product {
    x: u64,
    y: u64,
    z: u64,
    swap: bool,
}

impl Circuit<Fr> for Product {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let inp = cs.alloc_input(|| "in", || Ok(Fr::from(self.z)))?;
        let x = cs.alloc(|| "x", || Ok(Fr::from(self.x)))?;
        let y = cs.alloc(|| "y", || Ok(Fr::from(self.y)))?;
        let z = cs.alloc(|| "z", || Ok(Fr::from(self.z)))?;
        let (b, c) = if self.swap { (z, y) } else { (y, z) };
        cs.enforce(|| "mul", |lc| lc + x, |lc| lc + b, |lc| lc + c);
        cs.enforce(|| "eq", |lc| lc + z, |lc| lc + CS::one(), |lc| lc + inp);
        Ok(())
    }
}

fn error(result: Result<ProvingAssignment, Groth16Error>) -> Groth16Error {
    match result {
        Ok(_) => panic!("synthesis passed"),
        Err(e) => e,
    }
}

/// A failing witness names the index a full synthesis names; matrices of another
/// circuit of the same counts fail the check; other counts are refused.
#[test]
fn wrong_witnesses_and_wrong_matrices_are_caught() {
    let good = Product {
        x: 2,
        y: 3,
        z: 6,
        swap: false,
    };
    let matrices = Arc::new(ConstraintMatrices::record(good.clone()).unwrap());
    let options = with_matrices(&matrices, Storage::Auto);
    assert!(ProvingAssignment::synthesize_with(good.clone(), &options).is_ok());
    let bad = Product {
        y: 4,
        ..good.clone()
    };
    let full = error(ProvingAssignment::synthesize(bad.clone()));
    assert!(
        matches!(full, Groth16Error::Unsatisfied { index: 0, .. }),
        "{full}"
    );
    match ProvingAssignment::synthesize_with(bad, &options) {
        Err(Groth16Error::Unsatisfied { index: 0, name }) => assert_eq!(name, UNNAMED),
        other => panic!("{:?}", other.map(|_| ())),
    }
    let swapped = Product {
        swap: true,
        ..good.clone()
    };
    assert!(ProvingAssignment::synthesize(swapped.clone()).is_err());
    let other = Arc::new(ConstraintMatrices::record(swapped).unwrap());
    let err = error(ProvingAssignment::synthesize_with(
        good,
        &with_matrices(&other, Storage::Raw),
    ));
    assert!(
        matches!(err, Groth16Error::Unsatisfied { index: 0, .. }),
        "{err}"
    );
    let mimc = MimcLike::<Fr>::filling_domain(8, Some(Fr::from(5u64)));
    let err = error(ProvingAssignment::synthesize_with(mimc, &options));
    assert!(
        matches!(err, Groth16Error::MatricesMismatch { .. }),
        "{err}"
    );
}

/// A constraint naming a variable never allocated is refused when recording.
#[test]
fn foreign_variables_are_refused() {
    struct Foreign;
    impl Circuit<Fr> for Foreign {
        fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            cs.enforce(
                || "bad",
                |lc| lc + Variable(Index::Aux(3)),
                |lc| lc,
                |lc| lc,
            );
            Ok(())
        }
    }
    assert!(matches!(
        ConstraintMatrices::record(Foreign),
        Err(Groth16Error::Synthesis(SynthesisError::AssignmentMissing))
    ));
}

/// Rows of any length (short, exactly [`LONG_ROW`], longer) across block boundaries
/// come back as they were pushed.
#[test]
fn rows_come_back_as_pushed() {
    let mut rows = Rows::default();
    let row = |r: usize| -> Vec<Term> {
        let len = match r % 7 {
            0 => LONG_ROW as usize,
            1 => 300 + r % 5,
            2 => 0,
            _ => r % 254,
        };
        (0..len)
            .map(|j| Term {
                var: (r + j) as u32,
                coeff: (r % 3) as u32,
            })
            .collect()
    };
    let n = 2 * BLOCK_ROWS + 17;
    for r in 0..n {
        rows.push_row(&row(r));
    }
    let mut r = 0;
    for k in 0..n.div_ceil(BLOCK_ROWS) {
        for got in rows.block(k) {
            assert_eq!(got, row(r).as_slice(), "row {r}");
            r += 1;
        }
    }
    assert_eq!(r, n);
}

/// Blocks are evaluated from the witness's full pages while it grows: the first page's
/// ready blocks give a and b's first values, the rest come from the complete witness,
/// and a failing constraint in an early block is the one reported.
#[test]
fn rows_are_evaluated_as_the_witness_pages_fill() {
    use sluice_backend::compact::PAGE_LEN;
    use std::sync::mpsc;

    let circuit = BitDecomposition::<Fr>::filling_domain(18, Some(11));
    let matrices = ConstraintMatrices::record(circuit.clone()).unwrap();
    assert!(matrices.num_aux() > 2 * PAGE_LEN);
    let options = SynthesisOptions {
        storage: Storage::Compact,
        ..SynthesisOptions::default()
    };
    let plain = ProvingAssignment::synthesize_with(circuit, &options).unwrap();
    let inputs = plain.input_assignment().to_vec();
    let early = |aux: &CompactVec, pages: usize| {
        let (tx, rx) = mpsc::channel();
        for k in 0..pages {
            tx.send((aux.sealed_page(k).unwrap(), inputs.clone()))
                .unwrap();
        }
        drop(tx);
        let fresh = Evaluation::new(options.vector(0), options.vector(0));
        evaluate_early(&matrices, rx, false, fresh, None)
    };

    let mut evaluation = early(plain.aux_assignment(), 1);
    let ready = matrices.ready_until(0, PAGE_LEN, inputs.len());
    assert!(ready > 0 && ready < matrices.block_needs.len(), "{ready}");
    assert_eq!(evaluation.a.len(), ready * BLOCK_ROWS);
    for i in (0..evaluation.a.len()).step_by(97) {
        assert_eq!(evaluation.a.get(i), plain.a().get(i), "a {i}");
        assert_eq!(evaluation.b.get(i), plain.b().get(i), "b {i}");
    }
    let failed = matrices
        .evaluate(
            &inputs,
            plain.aux_assignment(),
            false,
            &mut evaluation,
            None,
        )
        .unwrap();
    assert_eq!(failed, None);
    assert!(evaluation.a == *plain.a() && evaluation.b == *plain.b());

    // A wrong value in the first page: the early blocks find it, as a whole evaluation
    // after synthesis does.
    let mut wrong = plain.aux_assignment().to_vec();
    wrong[100] += Fr::ONE;
    let wrong = CompactVec::from(&wrong[..]);
    let mut evaluation = early(&wrong, 2);
    let failed = matrices.evaluate(&inputs, &wrong, false, &mut evaluation, None);
    let mut after = Evaluation::new(options.vector(0), options.vector(0));
    let expected = matrices.evaluate(&inputs, &wrong, false, &mut after, None);
    assert!(matches!(failed, Ok(Some(_))), "{failed:?}");
    assert_eq!(failed.unwrap(), expected.unwrap());
}

/// A circuit that panics after its first pages of witness (their rows evaluated on a
/// thread beside synthesis) returns its panic rather than waiting for that thread.
#[test]
fn a_circuit_that_panics_during_evaluation_returns_its_panic() {
    use sluice_backend::compact::PAGE_LEN;

    /// `n` bits; with `panics`, a panic after 3 pages of them.
    #[derive(Clone)]
    struct PanicsLate {
        n: usize,
        panics: bool,
    }
    impl Circuit<Fr> for PanicsLate {
        fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            for i in 0..self.n {
                let v = cs.alloc(|| "v", || Ok(Fr::from((i % 2) as u64)))?;
                cs.enforce(|| "v is v", |lc| lc + v, |lc| lc + CS::one(), |lc| lc + v);
                if self.panics && i == 3 * PAGE_LEN {
                    panic!("the circuit's own panic");
                }
            }
            Ok(())
        }
    }
    let n = 3 * PAGE_LEN + 100;
    let m = Arc::new(ConstraintMatrices::record(PanicsLate { n, panics: false }).unwrap());
    let options = with_matrices(&m, Storage::Auto);
    assert!(ProvingAssignment::synthesize_with(PanicsLate { n, panics: false }, &options).is_ok());
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ProvingAssignment::synthesize_with(PanicsLate { n, panics: true }, &options)
    }));
    assert!(caught.is_err(), "the panic came back");
}
