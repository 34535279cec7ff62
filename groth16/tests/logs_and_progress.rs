//! What a proof logs at info (synthesis, H, each MSM, the total, the device) and what setup,
//! checked parameter reads and the prover report to the progress hook. One test: the
//! logger and the hook are process-wide.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

mod common;

use std::sync::{Arc, Mutex};

use common::Chain;
use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend_cpu::CpuBackend;
use sluice_field::Fr;
use sluice_groth16::progress::{set_progress, Progress, ProgressEvent, Task};
use sluice_groth16::*;

/// Every record at info or above.
struct Capture(Mutex<Vec<String>>);

impl log::Log for Capture {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= log::Level::Info
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            self.0.lock().unwrap().push(r.args().to_string());
        }
    }
    fn flush(&self) {}
}

/// Every progress report, as (task, what, done, total).
#[derive(Default)]
struct Reports(Mutex<Vec<(Task, String, u64, u64)>>);

impl Progress for Reports {
    fn report(&self, e: &ProgressEvent<'_>) {
        self.0
            .lock()
            .unwrap()
            .push((e.task, e.what.to_owned(), e.done, e.total));
    }
}

static LOGS: Capture = Capture(Mutex::new(Vec::new()));

#[test]
fn a_proof_logs_its_phases_and_long_work_reports_progress() {
    log::set_logger(&LOGS).unwrap();
    log::set_max_level(log::LevelFilter::Info);
    let reports = Arc::new(Reports::default());
    set_progress(reports.clone());

    let seed = 249;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let params = generate_random_parameters(Chain::<Fr>::new(None, 40), &mut rng).unwrap();
    let x = Fr::random(&mut rng);
    let proof = create_random_proof(
        Chain::new(Some(x), 40),
        &params,
        &mut rng,
        &CpuBackend::new(),
    )
    .unwrap();
    // A second proof in the same process, with recorded matrices: its synthesis reports its
    // own start and end, not the first one's.
    let matrices = Arc::new(ConstraintMatrices::record(Chain::<Fr>::new(None, 40)).unwrap());
    let options = SynthesisOptions {
        matrices: Some(matrices.clone()),
        ..SynthesisOptions::default()
    };
    let second = ProvingAssignment::synthesize_with(Chain::new(Some(x), 40), &options).unwrap();
    assert_eq!(second.num_constraints(), matrices.num_constraints());
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    let read = Parameters::read(&bytes[..], true).unwrap();
    let pvk = prepare_verifying_key(&read.vk);
    assert!(verify_proof(&pvk, &proof, &Chain::public_inputs(x, 40)).unwrap());

    let logs = LOGS.0.lock().unwrap().clone();
    for wanted in [
        "setup: 3 inputs",
        "setup: done in",
        "synthesis: 85 constraints",
        "proof 2^7 on cpu",
        "proof 2^7: H in",
        "proof 2^7: L MSM in",
        "proof 2^7: A MSM in",
        "proof 2^7: B MSM in G1 in",
        "proof 2^7: B MSM in G2 in",
        "proof 2^7: done in",
    ] {
        assert!(
            logs.iter().any(|l| l.starts_with(wanted)),
            "no info record starting `{wanted}` in {logs:#?}"
        );
    }

    let reports = reports.0.lock().unwrap().clone();
    let of = |task| -> Vec<(String, u64, u64)> {
        reports
            .iter()
            .filter(|r| r.0 == task)
            .map(|r| (r.1.clone(), r.2, r.3))
            .collect()
    };
    // The prover: a start, then H and the four MSMs, of 5.
    let proof_phases: Vec<u64> = of(Task::Proof).iter().map(|r| r.1).collect();
    assert_eq!(proof_phases, [0, 1, 2, 3, 4, 5]);
    assert!(of(Task::Proof).iter().all(|r| r.2 == 5));
    // Synthesis: each of the two reports its start (0) and ends at its constraint count,
    // 100% of it: unknown ahead (0) without matrices, the matrices' count with them.
    let synthesis = of(Task::Synthesis);
    let constraints = matrices.num_constraints() as u64;
    assert_eq!(
        synthesis,
        [
            (String::new(), 0, 0),
            (String::new(), constraints, constraints),
            (String::new(), 0, constraints),
            (String::new(), constraints, constraints),
        ],
        "seed {seed}"
    );
    // Setup: from 0 to every query point, counting up.
    let setup = of(Task::Setup);
    let total = setup[0].2;
    assert_eq!(setup[0].1, 0);
    assert!(setup.windows(2).all(|w| w[0].1 <= w[1].1), "{setup:?}");
    assert_eq!(setup.last().unwrap().1, total);
    let points = params.h.len() + params.l.len() + params.a.len() + params.vk.ic.len();
    assert_eq!(total as usize, points + 2 * params.b_g1.len());
    // The checked read: every section from 0 to its length.
    let read_reports = of(Task::ReadParameters);
    for (section, len) in [("h", params.h.len()), ("b_g2", params.b_g2.len())] {
        let ends: Vec<_> = read_reports.iter().filter(|r| r.0 == section).collect();
        assert_eq!(ends.first().map(|r| r.1), Some(0), "{section}");
        assert_eq!(
            ends.last().map(|r| (r.1, r.2)),
            Some((len as u64, len as u64))
        );
    }
}
