//! The rows of Filecoin's own circuits (`--circuit porep`, `--circuit post`; feature
//! `filecoin`): a PoRep partition (rust-fil-proofs' `StackedCircuit`) of as many challenges
//! as fit the row's domain of 2^k (1 at 2^21, 13 at 2^24), or a Window PoSt partition
//! (`FallbackPoStCircuit`) of as many sectors of 10 challenges, both made by
//! `sluice-filecoin`'s `circuits` from small sectors replicated or generated before the
//! clock (a prover receives its partitions' vanilla proofs made).
//!
//! Unlike the demo circuits' rows, the parameters come from sluice's setup of the blank
//! circuit (the variable-time one: test parameters, made several times faster), made once
//! per circuit and size and shared by that size's rows (proof, bellperson's proof and
//! synthesis); so a proof row's last proof is verified against storage-proofs' own public
//! inputs. The setup's time is printed, untimed: minutes for a 2^24 PoRep on a few cores.
//! The c2 job proves without verifying, as the demo circuits' does, on benchmark
//! parameters of the circuit's own shape (query lengths and densities from one synthesized
//! partition): seconds where a setup at 2^27 takes longer than a device call.

use crate::options::CircuitKind;

/// Whether this build runs `kind` (a Filecoin circuit): an error naming the feature where
/// it was built without `filecoin`.
pub fn available(kind: CircuitKind) -> Result<(), String> {
    match cfg!(feature = "filecoin") {
        true => Ok(()),
        false => Err(format!(
            "--circuit {} needs sluice-bench built with its `filecoin` feature (`cargo run -p \
             sluice-bench --features filecoin`; `cargo xtask bench` turns it on for --circuit \
             porep and post)",
            kind.name()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without the feature, asking for a Filecoin circuit fails before any row, naming
    /// the feature.
    #[test]
    fn filecoin_circuits_need_the_feature() {
        for kind in [CircuitKind::Porep, CircuitKind::Post] {
            let with_feature = cfg!(feature = "filecoin");
            match available(kind) {
                Ok(()) => assert!(
                    with_feature,
                    "{} available without the feature",
                    kind.name()
                ),
                Err(e) => {
                    assert!(!with_feature, "{e}");
                    assert!(e.contains("`filecoin` feature"), "{e}");
                    assert!(e.contains(&format!("--circuit {}", kind.name())), "{e}");
                }
            }
        }
        #[cfg(not(feature = "filecoin"))]
        {
            use clap::Parser;
            let opts = crate::options::Options::try_parse_from([
                "sluice-bench",
                "--ops",
                "proof",
                "--circuit",
                "mimc,porep",
                "--demo",
                "off",
                "--out",
                "/nonexistent/never-written",
            ])
            .unwrap_or_else(|e| panic!("{e}"));
            let e = crate::run(&opts).unwrap_err();
            assert!(e.contains("`filecoin` feature"), "{e}");
        }
    }
}

#[cfg(feature = "filecoin")]
pub use real::*;
#[cfg(not(feature = "filecoin"))]
pub use stub::*;

/// Without the feature: every row fails with [`available`]'s message (`run` refuses such
/// runs before any row; these keep the rest of the runner free of `cfg`s).
#[cfg(not(feature = "filecoin"))]
mod stub {
    use std::time::Duration;

    use rand_chacha::ChaCha20Rng;
    use sluice_backend::ComputeBackend;

    use crate::options::{CircuitKind, Options};
    use crate::profiled::Profiled;
    use crate::report::{ProofPhases, Row};
    use crate::ProofMode;

    /// See the feature's [`proof_row`](super::real::proof_row).
    pub fn proof_row<B: Profiled>(
        _: &B,
        kind: CircuitKind,
        _: u32,
        _: (bool, ProofMode),
        _: &Options,
        _: &mut ChaCha20Rng,
    ) -> Result<(Vec<Duration>, u64, ProofPhases), String> {
        super::available(kind).and(Err("unreachable".into()))
    }

    /// See the feature's `synthesis`.
    pub fn synthesis(
        kind: CircuitKind,
        _: u32,
        _: u64,
        _: usize,
        _: bool,
    ) -> Result<Vec<Duration>, String> {
        super::available(kind).and(Err("unreachable".into()))
    }

    /// See the feature's `circuit_alone`.
    pub fn circuit_alone(
        kind: CircuitKind,
        _: u32,
        _: u64,
        _: usize,
    ) -> Result<Vec<Duration>, String> {
        super::available(kind).and(Err("unreachable".into()))
    }

    pub fn synthesis_forked(
        kind: CircuitKind,
        _: u32,
        _: u64,
        _: usize,
        _: usize,
        _: bool,
    ) -> Result<Vec<Duration>, String> {
        super::available(kind).and(Err("unreachable".into()))
    }

    /// See the feature's `c2`.
    pub fn c2<B: ComputeBackend + 'static>(
        _: &dyn Fn() -> Result<B, String>,
        _: &str,
        _: u32,
        kind: CircuitKind,
        _: &Options,
    ) -> Result<Vec<Row>, String> {
        super::available(kind).and(Err("unreachable".into()))
    }
}

#[cfg(feature = "filecoin")]
mod real {
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;
    use sluice_backend::ComputeBackend;
    use sluice_field::FrCompatible;
    use sluice_filecoin::circuits::{self, Instance, PorepCircuit, PorepForkCircuit, PostCircuit};
    use sluice_filecoin::fork::PostFork;
    use sluice_groth16::{Circuit, Parameters, ProvingAssignment, SynthesisOptions};

    use crate::bar;
    use crate::c2::OnEveryCore;
    use crate::options::{CircuitKind, Options};
    use crate::profiled::Profiled;
    use crate::report::{ProofPhases, Row};
    use crate::ProofMode;

    /// Challenges per sector of the PoSt rows: a Window PoSt's.
    const POST_CHALLENGES: usize = circuits::WINDOW_POST_CHALLENGES;

    /// What the row's circuit holds at 2^log: PoRep challenges or PoSt sectors, the most
    /// that fit; an error where not even one does.
    pub fn units(kind: CircuitKind, log: u32) -> Result<usize, String> {
        let count = match kind {
            CircuitKind::Porep => circuits::porep_challenges_for_domain(log),
            CircuitKind::Post => circuits::post_sectors_for_domain(log, POST_CHALLENGES)
                .map_err(|e| e.to_string())?,
            other => return Err(format!("{} is not a Filecoin circuit", other.name())),
        };
        if count > 0 {
            return Ok(count);
        }
        let (smallest, constraints) = match kind {
            CircuitKind::Porep => ("one challenge".to_owned(), circuits::porep_constraints(1)),
            _ => (
                format!("one sector of {POST_CHALLENGES} challenges"),
                circuits::post_constraints(1, POST_CHALLENGES)
                    .map_err(|e| e.to_string())?
                    .constraints,
            ),
        };
        let fits = constraints.next_power_of_two().trailing_zeros();
        Err(format!(
            "2^{log} is too small for a {} partition: the smallest, {smallest}, is {constraints} \
             constraints (2^{fits})",
            kind.name()
        ))
    }

    /// The row's circuit words: `PoRep partition, 13 challenges`.
    fn describe(kind: CircuitKind, log: u32) -> Result<String, String> {
        let count = units(kind, log)?;
        Ok(match kind {
            CircuitKind::Porep => format!("PoRep partition, {count} challenge(s)"),
            _ => format!("PoSt partition, {count} sector(s) of {POST_CHALLENGES} challenges"),
        })
    }

    /// The stream a circuit of the row is made from: the same for the same row and seed,
    /// so sluice's rows and bellperson's prove the same partition.
    fn circuit_rng(kind: CircuitKind, log: u32, seed: u64) -> ChaCha20Rng {
        let salt = match kind {
            CircuitKind::Porep => 0x9043,
            _ => 0x9057,
        };
        ChaCha20Rng::seed_from_u64(seed ^ salt ^ (u64::from(log) << 32))
    }

    /// The PoRep partition filling 2^log, with its public inputs.
    pub fn porep_instance(log: u32, seed: u64) -> Result<Instance<PorepCircuit>, String> {
        let challenges = units(CircuitKind::Porep, log)?;
        let mut rng = circuit_rng(CircuitKind::Porep, log, seed);
        circuits::porep_with_inputs(challenges, &mut rng).map_err(|e| e.to_string())
    }

    /// [`porep_instance`] as a fork (the same partition: the same stream makes it).
    pub fn porep_fork_instance(log: u32, seed: u64) -> Result<Instance<PorepForkCircuit>, String> {
        let challenges = units(CircuitKind::Porep, log)?;
        let mut rng = circuit_rng(CircuitKind::Porep, log, seed);
        circuits::porep_fork_with_inputs(challenges, &mut rng).map_err(|e| e.to_string())
    }

    /// The PoSt partition filling 2^log, with its public inputs.
    pub fn post_instance(log: u32, seed: u64) -> Result<Instance<PostCircuit>, String> {
        let sectors = units(CircuitKind::Post, log)?;
        let mut rng = circuit_rng(CircuitKind::Post, log, seed);
        circuits::post_with_inputs(sectors, POST_CHALLENGES, &mut rng).map_err(|e| e.to_string())
    }

    /// The parameters last made, kept for the next rows of the same circuit and size.
    struct Made {
        key: (CircuitKind, u32, u64),
        params: Arc<Parameters>,
    }

    static MADE: Mutex<Option<Made>> = Mutex::new(None);

    fn made() -> std::sync::MutexGuard<'static, Option<Made>> {
        // A panicking row left either the last parameters or none: both consistent.
        MADE.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Parameters of the `kind` partition filling 2^log from sluice's (variable-time)
    /// setup of its blank circuit: made on the first row of that circuit and size, then
    /// shared (the previous size's are dropped first).
    pub fn parameters(kind: CircuitKind, log: u32, seed: u64) -> Result<Arc<Parameters>, String> {
        let key = (kind, log, seed);
        let mut made = made();
        if let Some(m) = made.as_ref().filter(|m| m.key == key) {
            return Ok(Arc::clone(&m.params));
        }
        *made = None;
        let count = units(kind, log)?;
        let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0x5e7 ^ (u64::from(log) << 32));
        let e = |e: sluice_filecoin::FilecoinError| e.to_string();
        let start = Instant::now();
        let params = match kind {
            CircuitKind::Porep => setup(circuits::porep_blank(count).map_err(e)?, &mut rng),
            _ => setup(
                circuits::post_blank(count, POST_CHALLENGES).map_err(e)?,
                &mut rng,
            ),
        }?;
        bar::note(format!(
            "({}: setup {:.1} s, untimed) ",
            describe(kind, log)?,
            start.elapsed().as_secs_f64()
        ));
        let params = Arc::new(params);
        *made = Some(Made {
            key,
            params: Arc::clone(&params),
        });
        Ok(params)
    }

    /// Drops the kept parameters (their holders keep theirs).
    pub fn forget_parameters() {
        *made() = None;
    }

    fn setup<C: Circuit<blstrs::Scalar>>(
        blank: C,
        rng: &mut ChaCha20Rng,
    ) -> Result<Parameters, String> {
        sluice_groth16::for_blstrs::generate_random_parameters_vartime(blank, rng)
            .map_err(|e| format!("setup: {e}"))
    }

    /// The proof row of `kind` at 2^log: the partition proved with its setup's parameters
    /// (see `proof_row_with`), the last proof verified.
    pub fn proof_row<B: Profiled>(
        backend: &B,
        kind: CircuitKind,
        log: u32,
        how: (bool, ProofMode),
        opts: &Options,
        rng: &mut ChaCha20Rng,
    ) -> Result<(Vec<Duration>, u64, ProofPhases), String> {
        let params = parameters(kind, log, opts.seed)?;
        let forked = how.1 == ProofMode::Forked;
        match kind {
            CircuitKind::Porep if forked => {
                let Instance {
                    circuit: fork,
                    inputs,
                } = porep_fork_instance(log, opts.seed)?;
                let inputs = blstrs::Scalar::as_fr_slice(&inputs);
                let whole = fork.circuit().map_err(|e| e.to_string())?;
                let synthesize =
                    |o: &SynthesisOptions| ProvingAssignment::synthesize_forked(&fork, o);
                let row = Some(&synthesize as &crate::ForkedSynthesis<'_>);
                crate::proof_row_with(backend, whole, params, Some(inputs), how, opts, rng, row)
            }
            CircuitKind::Porep => {
                let Instance { circuit, inputs } = porep_instance(log, opts.seed)?;
                let inputs = blstrs::Scalar::as_fr_slice(&inputs);
                crate::proof_row_with(backend, circuit, params, Some(inputs), how, opts, rng, None)
            }
            _ => {
                let Instance { circuit, inputs } = post_instance(log, opts.seed)?;
                let inputs = blstrs::Scalar::as_fr_slice(&inputs);
                let fork = PostFork(circuit.clone());
                let synthesize =
                    |o: &SynthesisOptions| ProvingAssignment::synthesize_forked(&fork, o);
                let row = forked.then_some(&synthesize as &crate::ForkedSynthesis<'_>);
                crate::proof_row_with(backend, circuit, params, Some(inputs), how, opts, rng, row)
            }
        }
    }

    /// The synthesis row of `kind` at 2^log (`synthesis::timed`).
    pub fn synthesis(
        kind: CircuitKind,
        log: u32,
        seed: u64,
        reps: usize,
        matrices: bool,
    ) -> Result<Vec<Duration>, String> {
        bar::note(format!("({}) ", describe(kind, log)?));
        match kind {
            CircuitKind::Porep => {
                crate::synthesis::timed(reps, porep_instance(log, seed)?.circuit, matrices)
            }
            _ => crate::synthesis::timed(reps, post_instance(log, seed)?.circuit, matrices),
        }
    }

    /// The forked synthesis row of `kind` at 2^log on `threads` threads
    /// (`synthesis::timed_forked`).
    pub fn synthesis_forked(
        kind: CircuitKind,
        log: u32,
        seed: u64,
        reps: usize,
        threads: usize,
        matrices: bool,
    ) -> Result<Vec<Duration>, String> {
        bar::note(format!("({}) ", describe(kind, log)?));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| e.to_string())?;
        match kind {
            CircuitKind::Porep => {
                let fork = porep_fork_instance(log, seed)?.circuit;
                crate::synthesis::timed_forked(reps, &fork, matrices, &pool)
            }
            _ => {
                let fork = PostFork(post_instance(log, seed)?.circuit);
                crate::synthesis::timed_forked(reps, &fork, matrices, &pool)
            }
        }
    }

    /// The `circuit-alone` row of `kind` at 2^log (`synthesis::timed_alone`).
    pub fn circuit_alone(
        kind: CircuitKind,
        log: u32,
        seed: u64,
        reps: usize,
    ) -> Result<Vec<Duration>, String> {
        match kind {
            CircuitKind::Porep => {
                crate::synthesis::timed_alone(reps, porep_instance(log, seed)?.circuit)
            }
            _ => crate::synthesis::timed_alone(reps, post_instance(log, seed)?.circuit),
        }
    }

    /// The c2 job of `kind` at 2^log: every partition a partition of its own sector (made
    /// from the partition's seed) synthesized forked, a challenge or sector per task, on
    /// benchmark parameters of its shape, which the job holds alone (dropped from the host
    /// once resident, as the demo circuits' are).
    pub fn c2<B: ComputeBackend + 'static>(
        make: &dyn Fn() -> Result<B, String>,
        label: &str,
        log: u32,
        kind: CircuitKind,
        opts: &Options,
    ) -> Result<Vec<Row>, String> {
        // A setup kept for earlier rows is not the job's: the host gets it back.
        forget_parameters();
        // Forked, on every core, as sluice-filecoin proves them by default.
        match kind {
            CircuitKind::Porep => crate::c2::on_shape(make, label, log, kind, opts, |seed| {
                porep_fork_instance(log, seed).map(|i| OnEveryCore(i.circuit))
            }),
            _ => crate::c2::on_shape(make, label, log, kind, opts, |seed| {
                post_instance(log, seed).map(|i| OnEveryCore(PostFork(i.circuit)))
            }),
        }
    }

    #[cfg(test)]
    mod tests {
        #![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

        use super::*;
        use clap::Parser;
        use sluice_backend_cpu::CpuBackend;

        fn opts(args: &[&str]) -> Options {
            Options::try_parse_from(std::iter::once("sluice-bench").chain(args.iter().copied()))
                .unwrap()
        }

        /// A PoSt partition filling 2^14 (one sector) proves on the CPU in every mode,
        /// each row's last proof verified against storage-proofs' inputs; its synthesis
        /// rows and a small c2 job run too.
        #[test]
        fn post_rows_prove_and_verify() {
            let o = opts(&["--reps", "1", "--partitions", "2", "--proofs", "2"]);
            assert_eq!(units(CircuitKind::Post, 14).unwrap(), 1);
            let backend = CpuBackend::new();
            let mut rng = ChaCha20Rng::seed_from_u64(3);
            for mode in [ProofMode::Plain, ProofMode::Matrices, ProofMode::Streamed] {
                let (times, _, _) =
                    proof_row(&backend, CircuitKind::Post, 14, (false, mode), &o, &mut rng)
                        .unwrap();
                assert_eq!(times.len(), 1, "{mode:?}");
            }
            for matrices in [false, true] {
                assert_eq!(
                    synthesis(CircuitKind::Post, 14, 1, 1, matrices)
                        .unwrap()
                        .len(),
                    1
                );
            }
            assert_eq!(circuit_alone(CircuitKind::Post, 14, 1, 1).unwrap().len(), 1);
            // The c2 job forked, with matrices recorded from the fork too (a second row).
            let make = || Ok(CpuBackend::new());
            let o = opts(&["--partitions", "2", "--proofs", "2", "--matrices"]);
            let rows = c2(&make, "cpu", 14, CircuitKind::Post, &o).unwrap();
            let labels: Vec<&str> = rows.iter().map(|r| r.implementation.as_str()).collect();
            assert_eq!(labels, ["cpu", "cpu+matrices"]);
            assert!(rows.iter().all(|r| r.op == "c2-post"));
        }

        /// Sizes that hold no partition are refused with the smallest size named.
        #[test]
        fn too_small_domains_are_refused() {
            let e = units(CircuitKind::Porep, 20).unwrap_err();
            assert!(e.contains("2^21"), "{e}");
            assert_eq!(units(CircuitKind::Porep, 24).unwrap(), 13);
            let e = units(CircuitKind::Post, 12).unwrap_err();
            assert!(e.contains("2^14"), "{e}");
            assert!(units(CircuitKind::Mimc, 20).is_err());
        }
    }
}
