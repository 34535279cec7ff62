use super::*;
use bellpepper_core::Index;

use crate::r1cs::satisfy::product_is_vartime;
use crate::synthesis::combination::MINUS_ONE;
use crate::synthesis::options::PROGRESS_STEP;

/// x (aux 0), y (aux 1), z (aux 2, never in A or B), input 1.
fn tiny(cs: &mut ProvingAssignment, y_val: u64) {
    let one = ProvingAssignment::one();
    let inp = cs.alloc_input(|| "in", || Ok(Fr::from(6u64))).unwrap();
    let x = cs.alloc(|| "x", || Ok(Fr::from(2u64))).unwrap();
    let y = cs.alloc(|| "y", || Ok(Fr::from(y_val))).unwrap();
    let z = cs.alloc(|| "z", || Ok(Fr::from(6u64))).unwrap();
    {
        let mut outer = cs.namespace(|| "outer");
        let mut ns = outer.namespace(|| "inner");
        // x * y = z, with a zero-coefficient term of the input in B that must not count.
        ns.enforce(
            || "mul",
            |lc| lc + x,
            |lc| lc + y + (Fr::ZERO, inp),
            |lc| lc + z,
        );
    }
    // z * 1 = input
    cs.enforce(
        || "eq",
        |lc: LinearCombination<Fr>| lc + z,
        |lc| lc + one,
        |lc| lc + inp,
    );
}

fn bits(d: &Density) -> Vec<bool> {
    (0..d.len()).map(|i| d.get(i)).collect()
}

#[test]
fn records_a_b_and_bellperson_density() {
    let mut cs = ProvingAssignment::new();
    cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    tiny(&mut cs, 3);
    assert!(cs.first_unsatisfied().is_none());
    assert_eq!(cs.a(), &[Fr::from(2u64), Fr::from(6u64)]);
    assert_eq!(cs.b(), &[Fr::from(3u64), Fr::ONE]);
    assert_eq!(bits(cs.a_aux_density()), [true, false, true]);
    assert_eq!(bits(cs.b_aux_density()), [false, true, false]);
    // The one is used in B; the input only with a zero coefficient, so not.
    assert_eq!(bits(cs.b_input_density()), [true, false]);
    assert!(cs.check().is_ok());
}

#[test]
fn names_the_first_failing_constraint_with_its_namespace() {
    let mut cs = ProvingAssignment::new();
    cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    tiny(&mut cs, 4);
    assert_eq!(
        cs.first_unsatisfied(),
        Some(&Unsatisfied {
            index: 0,
            name: "outer/inner/mul".into()
        })
    );
    assert!(matches!(cs.check(), Err(SynthesisError::Unsatisfiable)));
    // Both constraints are still recorded: synthesis goes on.
    assert_eq!(cs.num_constraints(), 2);
}

/// The shortcut check agrees with the product on every mix of 0, 1, -1, small and
/// full values, satisfied or not.
#[test]
fn the_shortcut_check_agrees_with_the_product() {
    let values = [
        Fr::ZERO,
        Fr::ONE,
        -Fr::ONE,
        Fr::from(5u64),
        Fr::from(0x9e37_79b9_7f4a_7c15u64).square(),
    ];
    for a in values {
        for b in values {
            for c in values.iter().copied().chain([a * b]) {
                assert_eq!(
                    product_is_vartime(&a, &b, &c),
                    a * b == c,
                    "{a:?} * {b:?} = {c:?}"
                );
            }
        }
    }
}

#[test]
fn foreign_variables_are_reported_not_panicked_on() {
    let mut cs = ProvingAssignment::new();
    cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    cs.enforce(
        || "bad",
        |lc: LinearCombination<Fr>| lc + Variable(Index::Aux(7)),
        |lc| lc,
        |lc| lc,
    );
    let u = cs.first_unsatisfied().unwrap();
    assert!(u.name.starts_with("bad"), "{}", u.name);
}

/// A capacity no allocator can give is ignored, not a crash.
#[test]
fn an_impossible_capacity_is_ignored() {
    let circuit = crate::demo::MimcLike::<Fr>::filling_domain(13, Some(Fr::from(5u64)));
    let huge = Capacity {
        constraints: usize::MAX / 2,
        aux: usize::MAX / 2,
    };
    let cs = ProvingAssignment::synthesize_with_capacity(circuit.clone(), huge).unwrap();
    let plain = ProvingAssignment::synthesize(circuit).unwrap();
    same_assignment(&cs, &plain, "impossible capacity");
}

/// Asserts that two assignments hold the same values and densities.
pub(crate) fn same_assignment(cs: &ProvingAssignment, plain: &ProvingAssignment, what: &str) {
    assert_eq!(cs.a(), plain.a(), "{what}");
    assert_eq!(cs.b(), plain.b(), "{what}");
    assert_eq!(cs.input_assignment(), plain.input_assignment(), "{what}");
    assert_eq!(cs.aux_assignment(), plain.aux_assignment(), "{what}");
    for (d, e) in [
        (cs.a_aux_density(), plain.a_aux_density()),
        (cs.b_input_density(), plain.b_input_density()),
        (cs.b_aux_density(), plain.b_aux_density()),
    ] {
        assert_eq!(bits(d), bits(e), "{what}");
    }
}

/// The same values, recorded without compact storage: a plain reference.
fn raw_reference<C: Circuit<Fr>>(circuit: C) -> ProvingAssignment {
    let options = SynthesisOptions {
        storage: Storage::Raw,
        ..SynthesisOptions::default()
    };
    ProvingAssignment::synthesize_with(circuit, &options).unwrap()
}

/// Every storage, capacity and lender gives the same assignment, densities included,
/// on a dense and on a boolean-heavy circuit: compact where the values are small, raw
/// (lent where a lender lends, at the capacity made ahead) where they are not.
#[test]
fn storage_never_changes_the_assignment() {
    use crate::demo::{BitDecomposition, MimcLike};
    use sluice_backend::HeapLender;
    let dense = || MimcLike::<Fr>::filling_domain(14, Some(Fr::from(5u64)));
    let bits = || BitDecomposition::<Fr>::filling_domain(14, Some(9));
    for (name, plain, dense_values) in [
        ("mimc", raw_reference(dense()), true),
        ("bits", raw_reference(bits()), false),
    ] {
        let exact = Capacity {
            constraints: plain.num_constraints(),
            aux: plain.aux_assignment().len(),
        };
        let small = Capacity {
            constraints: 7,
            aux: 3,
        };
        for (capacity, storage, lend) in [
            (exact, Storage::Auto, true),
            (exact, Storage::Auto, false),
            (small, Storage::Auto, true),
            (Capacity::default(), Storage::Auto, false),
            (exact, Storage::Compact, false),
            (exact, Storage::Raw, true),
        ] {
            let lender = HeapLender::new(u64::MAX);
            let options = SynthesisOptions {
                capacity,
                storage,
                lender: lend.then(|| Arc::new(lender) as Arc<dyn HostAllocator>),
                ..SynthesisOptions::default()
            };
            let what = format!("{name}, {capacity:?}, {storage:?}, lent {lend}");
            let cs = match name {
                "mimc" => ProvingAssignment::synthesize_with(dense(), &options),
                _ => ProvingAssignment::synthesize_with(bits(), &options),
            }
            .unwrap();
            same_assignment(&cs, &plain, &what);
            let one_raw_vector = storage == Storage::Raw
                || (storage == Storage::Auto && dense_values && capacity == exact);
            assert_eq!(cs.a().is_raw(), one_raw_vector, "{what}");
            assert_eq!(
                cs.a().as_raw().is_some_and(|v| v.is_lent()),
                one_raw_vector && lend,
                "{what}"
            );
            assert_eq!(cs.in_lent_memory(), !one_raw_vector || lend, "{what}");
        }
    }
}

/// A boolean-heavy assignment holds a small fraction of its raw size, a dense one about
/// its raw size; a copy made for a lender is lent and equal.
#[test]
fn boolean_heavy_assignments_are_compact() {
    use crate::demo::{BitDecomposition, MimcLike};
    let log = 14;
    let vector = 32u64 << log;
    let cs = ProvingAssignment::synthesize(BitDecomposition::<Fr>::filling_domain(log, Some(3)))
        .unwrap();
    let share = cs.host_bytes() as f64 / vector as f64;
    assert!(share < 0.2, "{share} vectors");
    let dense = Capacity {
        constraints: 1 << log,
        aux: 1 << log,
    };
    let mimc = MimcLike::<Fr>::filling_domain(log, Some(Fr::from(2u64)));
    let cs = ProvingAssignment::synthesize_with_capacity(mimc, dense).unwrap();
    let share = cs.host_bytes() as f64 / vector as f64;
    assert!((2.9..3.1).contains(&share), "{share} vectors");
    let lender = sluice_backend::HeapLender::new(u64::MAX);
    let copy = cs.clone_into_lent(Some(&lender));
    assert!(copy.in_lent_memory() && !cs.in_lent_memory());
    same_assignment(&copy, &cs, "a copy into lent memory");
    drop(copy);
    assert_eq!(lender.lent_bytes(), 0);
}

/// A budget that records what is held.
#[derive(Default)]
struct Recorder(std::sync::atomic::AtomicU64);

impl HostBudget for Recorder {
    fn acquire(&self, bytes: u64) {
        self.0.fetch_add(bytes, std::sync::atomic::Ordering::SeqCst);
    }
    fn release(&self, bytes: u64) {
        self.0.fetch_sub(bytes, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The budget counts exactly what the assignment says it holds, inputs and bitmaps
/// included, and gets every byte back when it drops; progress comes every step.
#[test]
fn the_budget_counts_the_whole_assignment() {
    use crate::demo::{BitDecomposition, MimcLike};
    use std::sync::atomic::Ordering;
    use std::sync::Mutex;
    let log = 17;
    for dense in [false, true] {
        let budget = Arc::new(Recorder::default());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let progress: SynthesisProgress = {
            let seen = Arc::clone(&seen);
            Arc::new(move |done| seen.lock().unwrap().push(done))
        };
        let options = SynthesisOptions {
            capacity: Capacity {
                constraints: 1 << log,
                aux: 1 << log,
            },
            budget: Some(budget.clone()),
            progress: Some(progress),
            ..SynthesisOptions::default()
        };
        let cs = match dense {
            true => ProvingAssignment::synthesize_with(
                MimcLike::<Fr>::filling_domain(log, Some(Fr::from(2u64))),
                &options,
            ),
            false => ProvingAssignment::synthesize_with(
                BitDecomposition::<Fr>::filling_domain(log, Some(2)),
                &options,
            ),
        }
        .unwrap();
        assert_eq!(
            budget.0.load(Ordering::SeqCst),
            cs.host_bytes(),
            "dense {dense}"
        );
        let steps = cs.num_constraints() / PROGRESS_STEP;
        let expected: Vec<usize> = (1..=steps).map(|k| k * PROGRESS_STEP).collect();
        assert_eq!(*seen.lock().unwrap(), expected, "dense {dense}");
        drop(cs);
        assert_eq!(budget.0.load(Ordering::SeqCst), 0, "dense {dense}");
    }
}

/// Coefficients other than 0 and 1 multiply; a zero one ignores even a variable that
/// does not exist.
#[test]
fn general_coefficients_multiply_and_zero_ones_are_ignored() {
    let mut cs = ProvingAssignment::new();
    cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    let x = cs.alloc(|| "x", || Ok(Fr::from(5u64))).unwrap();
    let y = cs.alloc(|| "y", || Ok(Fr::from(30u64))).unwrap();
    // (3 x - 1 + 0 aux_9) * 2 = y - 2, with x = 5 and y = 30 (aux 9 does not exist).
    cs.enforce(
        || "affine",
        |lc| {
            lc + (Fr::from(3u64), x) - ProvingAssignment::one()
                + (Fr::ZERO, Variable(Index::Aux(9)))
        },
        |lc| lc + (Fr::from(2u64), ProvingAssignment::one()),
        |lc| lc + y - (Fr::from(2u64), ProvingAssignment::one()),
    );
    assert!(cs.first_unsatisfied().is_none());
    assert_eq!(cs.a(), &[Fr::from(14u64)]);
    assert_eq!(cs.b(), &[Fr::from(2u64)]);
}

#[test]
fn minus_one_limbs_are_those_of_minus_one() {
    assert_eq!(MINUS_ONE, (-Fr::ONE).mont_limbs());
}

/// Every shortcut of `eval_lc` against the plain sum of products: minus-one
/// coefficients on inputs and aux, a general coefficient on an input other than one.
#[test]
fn shortcuts_agree_with_products() {
    let mut cs = ProvingAssignment::new();
    cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    let seven = cs.alloc_input(|| "seven", || Ok(Fr::from(7u64))).unwrap();
    let x = cs.alloc(|| "x", || Ok(Fr::from(5u64))).unwrap();
    let y = cs.alloc(|| "y", || Ok(Fr::from(9u64))).unwrap();
    let minus = -Fr::ONE;
    // (4 * seven - x - 1) * (y - seven + 3) = 22 * 5 = 110, as 10 y + 20 one.
    cs.enforce(
        || "mixed",
        |lc| lc + (Fr::from(4u64), seven) + (minus, x) + (minus, ProvingAssignment::one()),
        |lc| lc + y + (minus, seven) + (Fr::from(3u64), ProvingAssignment::one()),
        |lc| lc + (Fr::from(10u64), y) + (Fr::from(20u64), ProvingAssignment::one()),
    );
    assert!(cs.first_unsatisfied().is_none());
    assert_eq!(cs.a(), &[Fr::from(22u64)]);
    assert_eq!(cs.b(), &[Fr::from(5u64)]);
}
