//! Command-line options of the bench runner.

use std::path::PathBuf;

/// An operation on the ladder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Forward NTT of 2^k scalars, in place, data resident in the backend.
    Ntt,
    /// G1 MSM of 2^k random scalars over resident random bases.
    MsmG1,
    /// G2 MSM of 2^k random scalars over resident random bases.
    MsmG2,
    /// A whole Groth16 proof (synthesis included) of the demo circuit filling a domain of
    /// 2^k, with benchmark parameters resident in the backend.
    Proof,
    /// One partition's prover work without synthesis (H and every MSM) on a boolean-heavy
    /// witness ([`BitDecomposition`](sluice_groth16::demo::BitDecomposition)) filling a
    /// domain of 2^k, benchmark parameters resident: issue 8's partition figure. Not in the
    /// default op list (`--ops partition`).
    Partition,
    /// A C2-shaped job through the partition pipeline: `--partitions` partitions per proof
    /// of a boolean-heavy circuit (`--circuit`) filling a domain of 2^k, `--proofs` proofs
    /// back to back; the row's times are the steady-state seconds per proof, with the
    /// pipeline's memory figures beside them. Not in the default op list (`--ops c2`).
    C2,
    /// Parameters for MiMC filling a domain of 2^k, memory-mapped from a file (read
    /// unchecked, as Filecoin's provers read theirs) and made resident: the backend's own
    /// decoder (rows `<backend>`) side by side with decoding on the host (rows
    /// `<backend>+host-decode`). Not in the default op list (`--ops params`).
    Params,
    /// Synthesis alone of a circuit (`--circuit`, default SHA-256) filling a domain of 2^k
    /// with `ProvingAssignment`, on one host thread. Not in the default op list
    /// (`--ops synthesis`).
    Synthesis,
    /// Verification of one proof with 2^k public inputs (a real setup), on the host.
    Verify,
    /// Batch verification of 2^k proofs with 4 public inputs each, on the host.
    VerifyBatch,
}

impl Op {
    /// Every operation, in the order they run.
    pub const ALL: [Op; 10] = [
        Op::Ntt,
        Op::MsmG1,
        Op::MsmG2,
        Op::Proof,
        Op::Partition,
        Op::C2,
        Op::Params,
        Op::Synthesis,
        Op::Verify,
        Op::VerifyBatch,
    ];

    /// The operations a run measures unless `--ops` says otherwise, as `--ops` lists them.
    pub const DEFAULT: &'static str = "ntt,msm-g1,msm-g2,proof,verify,verify-batch";

    /// Whether the op runs on the host whatever the backend (synthesis, verification):
    /// measured once per run, in the first backend's ladder.
    pub fn on_host(self) -> bool {
        matches!(self, Op::Synthesis | Op::Verify | Op::VerifyBatch)
    }

    /// The name used on the command line, in tables and in files.
    pub fn name(self) -> &'static str {
        match self {
            Op::Ntt => "ntt",
            Op::MsmG1 => "msm-g1",
            Op::MsmG2 => "msm-g2",
            Op::Proof => "proof",
            Op::Partition => "partition",
            Op::C2 => "c2",
            Op::Params => "params",
            Op::Synthesis => "synthesis",
            Op::Verify => "verify",
            Op::VerifyBatch => "verify-batch",
        }
    }

    /// The default ladder of log2 sizes: a few minutes in all on a 2-core machine.
    pub fn default_sizes(self) -> Vec<u32> {
        match self {
            Op::Ntt => vec![12, 14, 16, 18, 20],
            Op::MsmG1 => vec![10, 12, 14, 16],
            Op::MsmG2 => vec![10, 12, 14],
            Op::Proof => vec![10, 12, 14],
            Op::Partition => vec![10, 12, 14],
            Op::C2 => vec![12],
            Op::Params => vec![14, 16],
            Op::Synthesis => vec![16],
            Op::Verify => vec![1, 4, 8],
            Op::VerifyBatch => vec![2, 4, 6],
        }
    }

    fn parse(s: &str) -> Result<Op, String> {
        Op::ALL
            .into_iter()
            .find(|op| op.name() == s)
            .ok_or_else(|| format!("unknown op `{s}` (expected one of {})", names(&Op::ALL)))
    }
}

/// The circuit of the proof and c2 rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CircuitKind {
    /// [`MimcLike`](sluice_groth16::demo::MimcLike): dense values.
    Mimc,
    /// [`BitDecomposition`](sluice_groth16::demo::BitDecomposition): 64 bits a word.
    Bits,
    /// [`Sha256Preimage`](sluice_groth16::demo::Sha256Preimage), from `bellpepper`'s gadgets.
    Sha256,
    /// A real Filecoin PoRep partition (rust-fil-proofs' `StackedCircuit`) of as many
    /// challenges as fit the domain (1 at 2^21, 13 at 2^24); feature `filecoin`.
    Porep,
    /// A real Window PoSt partition (rust-fil-proofs' `FallbackPoStCircuit`) of as many
    /// sectors of 10 challenges as fit the domain; feature `filecoin`.
    Post,
}

impl CircuitKind {
    /// The name on the command line and in the rows' labels.
    pub fn name(self) -> &'static str {
        match self {
            CircuitKind::Mimc => "mimc",
            CircuitKind::Bits => "bits",
            CircuitKind::Sha256 => "sha256",
            CircuitKind::Porep => "porep",
            CircuitKind::Post => "post",
        }
    }

    /// Whether the circuit is one of Filecoin's (built by `sluice-filecoin`, feature
    /// `filecoin`).
    pub fn is_filecoin(self) -> bool {
        matches!(self, CircuitKind::Porep | CircuitKind::Post)
    }

    /// The circuit `op` runs without `--circuit`: the bit decomposition for c2 (its job is
    /// boolean-heavy), SHA-256 for synthesis (the real gadget circuit), MiMC for the rest.
    pub fn default_for(op: Op) -> Self {
        match op {
            Op::C2 => CircuitKind::Bits,
            Op::Synthesis => CircuitKind::Sha256,
            _ => CircuitKind::Mimc,
        }
    }

    /// A row's op name: the op's own for its default circuit, `<op>-<circuit>` otherwise
    /// (`proof-sha256`, `c2-mimc`), so earlier results keep their names.
    pub fn row_name(self, op: Op) -> String {
        match self == Self::default_for(op) {
            true => op.name().to_owned(),
            false => format!("{}-{}", op.name(), self.name()),
        }
    }

    fn parse(s: &str) -> Result<Self, String> {
        [
            CircuitKind::Mimc,
            CircuitKind::Bits,
            CircuitKind::Sha256,
            CircuitKind::Porep,
            CircuitKind::Post,
        ]
        .into_iter()
        .find(|c| c.name() == s)
        .ok_or_else(|| {
            format!("unknown circuit `{s}` (expected mimc, bits, sha256, porep or post)")
        })
    }
}

/// What a c2 row runs (see [`Op::C2`]).
#[derive(Clone, Debug, PartialEq, clap::Args)]
#[command(next_help_heading = "The c2 job (--ops c2)")]
pub struct C2Options {
    /// Partitions per proof.
    #[arg(long, value_name = "P", default_value = "10", value_parser = positive)]
    pub partitions: usize,
    /// Proofs submitted back to back; the row's time is the steady state.
    #[arg(long, value_name = "Q", default_value = "2", value_parser = positive)]
    pub proofs: usize,
    /// Partition workers asked for [default: one per core].
    #[arg(long, value_name = "N", value_parser = positive)]
    pub workers: Option<usize>,
    /// The host budget in GiB [default: the machine's available memory less 10%].
    #[arg(long, value_name = "G", value_parser = positive_gib)]
    pub host_budget_gib: Option<f64>,
    /// Device budgets in GiB, to emulate smaller cards on a large one: a row each on the
    /// same parameters (labelled `<backend>@<G>GiB`), `full` for the device's memory less
    /// 10%. Parameters that do not fit stream (the pipeline's residency and passes;
    /// `SLUICE_PIPELINE_RESIDENCY` and friends override the plan).
    #[arg(long, value_name = "LIST", default_value = "full", value_parser = device_budgets)]
    pub device_budget_gib: std::vec::Vec<Option<f64>>,
}

fn names(ops: &[Op]) -> String {
    ops.iter().map(|o| o.name()).collect::<Vec<_>>().join(", ")
}

/// `--sizes`: log2 sizes for every op, or for one op (`OP=LIST`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sizes {
    /// `--sizes LIST`: every op's sizes, replacing its default ladder.
    All(Vec<u32>),
    /// `--sizes OP=LIST`: one op's sizes, winning over `All`.
    Op(Op, Vec<u32>),
}

/// The benchmark ladder behind `cargo xtask bench`: every available sluice backend (and,
/// with --compare, its peers) over a ladder of log2 sizes.
///
/// Prints a table with median, minimum, throughput and residency, and writes results.json
/// and SVG plots to --out. `cargo xtask bench [OPTIONS]` builds and runs it, with OpenCL
/// where a loader exists and with the peers under --compare. List values are
/// comma-separated; an option given twice keeps its last value, except --sizes, which adds
/// one op's sizes each time.
// Fields typed `std::vec::Vec` or `std::option::Option` take their value whole, parsed by
// their `value_parser`, rather than one clap value per item or an optional value: clap's
// derive treats only the bare `Vec` and `Option` specially.
#[derive(Clone, Debug, clap::Parser)]
#[command(
    name = "sluice-bench",
    args_override_self = true,
    allow_negative_numbers = true,
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true
)]
pub struct Options {
    /// Operations to measure, comma-separated: ntt, msm-g1, msm-g2, proof, partition, c2,
    /// params, synthesis, verify, verify-batch.
    ///
    /// ntt, msm-g1, msm-g2: a forward NTT / MSM of 2^k random inputs, resident in the
    /// backend. proof: a whole Groth16 proof (synthesis included) of a circuit filling a
    /// domain of 2^k. verify: one proof with 2^k public inputs; verify-batch: 2^k proofs
    /// with 4 inputs each. Synthesis and verification run once, on the host.
    ///
    /// Not in the default ops: partition (one partition's prover work without synthesis on
    /// a boolean-heavy witness); c2 (a C2-shaped job through the partition pipeline, see
    /// the c2 options); params (parameters memory-mapped from a file and made resident,
    /// decoded by the backend, rows <backend>, beside decoding on the host, rows
    /// <backend>+host-decode, alternated run by run); synthesis (synthesis alone on one
    /// host thread; with --compare beside bellperson's own, from its log, one CPU proof a
    /// run).
    #[arg(
        long,
        value_name = "LIST",
        default_value = Op::DEFAULT,
        value_parser = parse_ops
    )]
    pub ops: std::vec::Vec<Op>,
    /// log2 sizes: LIST for every op (e.g. 10,12,14 or 10..16, each in 1..=30), or OP=LIST
    /// for one op (e.g. ntt=20..27; repeatable, wins over LIST) [default: each op's ladder].
    #[arg(long, value_name = "[OP=]LIST", value_parser = parse_sizes_arg)]
    pub sizes: Vec<Sizes>,
    /// Backends to run: cpu, opencl, opencl-shifted (OpenCL with shifted MSM bases, each
    /// base's table of 2^(c k) P made at upload) [default: cpu, plus opencl when a platform
    /// exists].
    #[arg(
        long,
        value_name = "LIST",
        default_value = "",
        hide_default_value = true,
        value_parser = parse_backends
    )]
    pub backends: std::vec::Vec<String>,
    /// OpenCL devices: indices (0,1), gpus, gpuN (the Nth GPU), a name substring, or all
    /// [default: every GPU].
    #[arg(long, value_name = "SEL")]
    pub devices: Option<String>,
    /// Timed repetitions per row, after one warm-up.
    #[arg(long, value_name = "N", default_value = "5", value_parser = positive)]
    pub reps: usize,
    /// Output directory of results.json and the plots.
    #[arg(
        long = "out",
        value_name = "DIR",
        default_value = "target/sluice-bench"
    )]
    pub out_dir: PathBuf,
    /// Seed of every random input.
    #[arg(long, value_name = "N", default_value = "1")]
    pub seed: u64,
    /// Also time each row with its inputs uploaded (and NTT results read back) per run
    /// (rows `<backend>+upload`).
    #[arg(long)]
    pub uploads: bool,
    /// Also time the proof and synthesis rows with the circuit's constraint matrices
    /// recorded once, before the clock (rows `<label>+matrices`; proofs also `+streamed`;
    /// synthesis also `circuit-alone`, the floor of its synthesis).
    #[arg(long)]
    pub matrices: bool,
    /// Synthesis threads of the forked rows of Filecoin's circuits (`--circuit porep|post`:
    /// rows `host+forked/<N>t`, a challenge or sector per task), one row per count
    /// [default: every core].
    #[arg(long, value_name = "N,..", value_delimiter = ',', value_parser = positive)]
    pub threads: Vec<usize>,
    /// log2 domain size of the demo proof run first (setup, prove, verify), or `off`.
    #[arg(
        long = "demo",
        value_name = "K|off",
        default_value = "10",
        value_parser = parse_demo
    )]
    pub demo_log: std::option::Option<u32>,
    /// Also measure the peers after the sluice rows: arkworks, blst, bellperson (needs the
    /// runner's `compare` feature, which `cargo xtask bench --compare` turns on).
    #[arg(long)]
    pub compare: bool,
    /// With --compare, only these peers, e.g. bellperson-gpu [default: every peer of an
    /// op].
    #[arg(long, value_name = "LIST", value_parser = parse_names)]
    pub peers: Option<std::vec::Vec<String>>,
    /// Circuits of the proof, synthesis and c2 rows: mimc, bits, sha256 (bellpepper's
    /// SHA-256 gadget), porep and post (Filecoin's own PoRep and Window PoSt partitions,
    /// as many challenges or sectors as fill the domain, parameters from a setup; needs the
    /// `filecoin` feature, which `cargo xtask bench` turns on for them) [default: mimc for
    /// proof, sha256 for synthesis, bits for c2].
    #[arg(long = "circuit", value_name = "LIST", value_parser = parse_circuits)]
    pub circuits: Option<std::vec::Vec<CircuitKind>>,
    /// The c2 job's shape.
    #[command(flatten)]
    pub c2: C2Options,
    /// `record`, instead of a run.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// What the runner does instead of a run.
#[derive(Clone, Debug, clap::Subcommand)]
pub enum Command {
    /// Prints a run's results.json as BENCHMARKS.md table rows (`cargo xtask record FILE`).
    Record(crate::record::Record),
}

/// The OpenCL backends `--backends` names: plain, and with shifted MSM bases.
pub const OPENCL_BACKENDS: [&str; 2] = ["opencl", "opencl-shifted"];

impl Options {
    /// The circuits `op`'s rows run: `--circuit` for proof and c2 rows, else the op's
    /// default (one row; other ops have no circuit).
    pub fn circuits_for(&self, op: Op) -> Vec<CircuitKind> {
        match (op, &self.circuits) {
            (Op::Proof | Op::C2 | Op::Synthesis, Some(circuits)) => circuits.clone(),
            _ => vec![CircuitKind::default_for(op)],
        }
    }

    /// The log2 sizes to run `op` at: its last `--sizes OP=LIST`, else the last
    /// `--sizes LIST`, else its default ladder.
    pub fn sizes_for(&self, op: Op) -> Vec<u32> {
        let last =
            |pick: &dyn Fn(&Sizes) -> Option<&Vec<u32>>| self.sizes.iter().rev().find_map(pick);
        let own = last(&|s| match s {
            Sizes::Op(o, sizes) if *o == op => Some(sizes),
            _ => None,
        });
        let every = last(&|s| match s {
            Sizes::All(sizes) => Some(sizes),
            Sizes::Op(..) => None,
        });
        own.or(every).cloned().unwrap_or_else(|| op.default_sizes())
    }
}

/// A positive integer.
fn positive(v: &str) -> Result<usize, String> {
    v.parse()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| "expected a positive integer".to_owned())
}

/// A positive number of GiB.
fn positive_gib(v: &str) -> Result<f64, String> {
    v.parse()
        .ok()
        .filter(|g: &f64| g.is_finite() && *g > 0.0)
        .ok_or_else(|| "expected a positive number".to_owned())
}

/// `--device-budget-gib`: positive GiB figures or `full`, comma-separated.
fn device_budgets(v: &str) -> Result<Vec<Option<f64>>, String> {
    v.split(',')
        .map(|g| match g.trim() {
            "full" => Ok(None),
            g => positive_gib(g).map(Some),
        })
        .collect()
}

/// `--demo`: a log2 size in 2..=24, or `off`.
fn parse_demo(v: &str) -> Result<Option<u32>, String> {
    match v {
        "off" => Ok(None),
        v => v
            .parse()
            .ok()
            .filter(|k| (2..=24).contains(k))
            .map(Some)
            .ok_or_else(|| "expected a log2 size in 2..=24 or `off`".to_owned()),
    }
}

/// `--ops`: at least one op.
fn parse_ops(s: &str) -> Result<Vec<Op>, String> {
    let ops = list(s).map(Op::parse).collect::<Result<Vec<_>, _>>()?;
    match ops.is_empty() {
        true => Err("expected at least one operation".into()),
        false => Ok(ops),
    }
}

fn parse_backends(s: &str) -> Result<Vec<String>, String> {
    let backends = parse_names(s)?;
    match backends
        .iter()
        .find(|b| b.as_str() != "cpu" && !OPENCL_BACKENDS.contains(&b.as_str()))
    {
        Some(b) => Err(format!(
            "unknown backend `{b}` (expected cpu, {})",
            OPENCL_BACKENDS.join(", ")
        )),
        None => Ok(backends),
    }
}

fn parse_names(s: &str) -> Result<Vec<String>, String> {
    Ok(list(s).map(str::to_owned).collect())
}

fn parse_circuits(s: &str) -> Result<Vec<CircuitKind>, String> {
    list(s).map(CircuitKind::parse).collect()
}

fn list(s: &str) -> impl Iterator<Item = &str> {
    s.split(',').map(str::trim).filter(|s| !s.is_empty())
}

/// `--sizes`: `LIST` or `OP=LIST`.
fn parse_sizes_arg(s: &str) -> Result<Sizes, String> {
    match s.split_once('=') {
        Some((op, list)) => Ok(Sizes::Op(Op::parse(op.trim())?, parse_sizes(list)?)),
        None => parse_sizes(s).map(Sizes::All),
    }
}

/// `10,12,14` or `10..14` (inclusive), each between 1 and 30.
fn parse_sizes(s: &str) -> Result<Vec<u32>, String> {
    let bad = || format!("bad sizes `{s}`: expected e.g. 10,12,14 or 10..16 (log2 sizes 1..=30)");
    let sizes: Vec<u32> = if let Some((a, b)) = s.split_once("..") {
        let (a, b): (u32, u32) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if a > b {
            return Err(bad());
        }
        (a..=b).collect()
    } else {
        list(s)
            .map(|x| x.parse().map_err(|_| bad()))
            .collect::<Result<_, _>>()?
    };
    if sizes.is_empty() || sizes.iter().any(|&k| !(1..=30).contains(&k)) {
        return Err(bad());
    }
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    fn parse(args: &[&str]) -> Result<Options, clap::Error> {
        Options::try_parse_from(std::iter::once("sluice-bench").chain(args.iter().copied()))
    }

    #[test]
    fn the_command_is_well_formed() {
        Options::command().debug_assert();
    }

    #[test]
    fn defaults_and_flags() {
        let o = parse(&[]).unwrap();
        let default = [
            Op::Ntt,
            Op::MsmG1,
            Op::MsmG2,
            Op::Proof,
            Op::Verify,
            Op::VerifyBatch,
        ];
        assert_eq!(o.ops, default);
        assert_eq!(o.sizes_for(Op::Ntt), Op::Ntt.default_sizes());
        assert_eq!(o.backends, Vec::<String>::new());
        assert_eq!((o.reps, o.seed, o.demo_log), (5, 1, Some(10)));
        assert_eq!(o.out_dir, PathBuf::from("target/sluice-bench"));
        assert!(!o.uploads && !o.matrices && !o.compare && o.command.is_none());
        assert_eq!(
            o.c2,
            C2Options {
                partitions: 10,
                proofs: 2,
                workers: None,
                host_budget_gib: None,
                device_budget_gib: vec![None],
            }
        );
        let o = parse(&["--ops", "msm-g1", "--sizes", "10..12", "--reps", "3"]).unwrap();
        assert_eq!(o.ops, vec![Op::MsmG1]);
        assert_eq!(o.sizes_for(Op::MsmG1), vec![10, 11, 12]);
        assert_eq!(o.reps, 3);
        assert_eq!(
            parse(&["--sizes", "8, 9"]).unwrap().sizes_for(Op::Ntt),
            vec![8, 9]
        );
        let o = parse(&[
            "--sizes",
            "11",
            "--sizes",
            "ntt=20..21",
            "--sizes",
            "proof=9",
        ])
        .unwrap();
        assert_eq!(o.sizes_for(Op::Ntt), vec![20, 21]);
        assert_eq!(o.sizes_for(Op::Proof), vec![9]);
        assert_eq!(o.sizes_for(Op::MsmG1), vec![11]);
        assert_eq!(o.peers, None);
        // An op's own sizes win over every op's, whatever their order; the last of each wins.
        let o = parse(&[
            "--sizes", "ntt=20", "--sizes", "11", "--sizes", "12", "--sizes", "ntt=21",
        ])
        .unwrap();
        assert_eq!(o.sizes_for(Op::Ntt), vec![21]);
        assert_eq!(o.sizes_for(Op::MsmG1), vec![12]);
        // Other options given twice keep the last value, flags may repeat.
        let o = parse(&["--ops", "ntt", "--ops", "proof", "--uploads", "--uploads"]).unwrap();
        assert_eq!(o.ops, vec![Op::Proof]);
        assert!(o.uploads);
        let o = parse(&["--compare", "--peers", "bellperson-gpu, blst"]).unwrap();
        assert!(o.compare);
        assert_eq!(o.peers, Some(vec!["bellperson-gpu".into(), "blst".into()]));
        assert_eq!(o.circuits_for(Op::Proof), vec![CircuitKind::Mimc]);
        assert_eq!(o.circuits_for(Op::C2), vec![CircuitKind::Bits]);
        let o = parse(&[
            "--backends",
            "cpu,opencl-shifted",
            "--devices",
            "gpu0",
            "--demo",
            "off",
            "--seed",
            "7",
            "--out",
            "/tmp/x",
            "--matrices",
        ])
        .unwrap();
        assert_eq!(o.backends, vec!["cpu", "opencl-shifted"]);
        assert_eq!(o.devices.as_deref(), Some("gpu0"));
        assert_eq!((o.demo_log, o.seed), (None, 7));
        assert_eq!(o.out_dir, PathBuf::from("/tmp/x"));
        assert!(o.matrices);
        assert!(o.threads.is_empty());
        assert_eq!(
            parse(&["--threads", "1,8,16"]).unwrap().threads,
            vec![1, 8, 16]
        );
        assert!(parse(&["--threads", "0"]).is_err());
        assert_eq!(parse(&["--demo", "12"]).unwrap().demo_log, Some(12));
        let o = parse(&[
            "--ops",
            "c2",
            "--sizes",
            "c2=16",
            "--circuit",
            "bits,sha256",
            "--partitions",
            "3",
            "--proofs",
            "4",
            "--workers",
            "16",
            "--host-budget-gib",
            "24",
            "--device-budget-gib",
            "full,16",
        ])
        .unwrap();
        assert_eq!(o.ops, vec![Op::C2]);
        assert_eq!(o.sizes_for(Op::C2), vec![16]);
        assert_eq!(
            o.circuits_for(Op::C2),
            vec![CircuitKind::Bits, CircuitKind::Sha256]
        );
        // Only proof and c2 rows have circuits; names keep the default circuit's.
        assert_eq!(o.circuits_for(Op::Ntt), vec![CircuitKind::Mimc]);
        assert_eq!(o.circuits_for(Op::Proof), o.circuits_for(Op::C2));
        assert_eq!(CircuitKind::Bits.row_name(Op::C2), "c2");
        assert_eq!(CircuitKind::Mimc.row_name(Op::C2), "c2-mimc");
        assert_eq!(CircuitKind::Mimc.row_name(Op::Proof), "proof");
        assert_eq!(CircuitKind::Sha256.row_name(Op::Proof), "proof-sha256");
        assert_eq!(CircuitKind::Sha256.row_name(Op::Synthesis), "synthesis");
        assert_eq!(CircuitKind::Bits.row_name(Op::Synthesis), "synthesis-bits");
        assert!(Op::Synthesis.on_host());
        assert_eq!(
            o.c2,
            C2Options {
                partitions: 3,
                proofs: 4,
                workers: Some(16),
                host_budget_gib: Some(24.0),
                device_budget_gib: vec![None, Some(16.0)],
            }
        );
    }

    /// Filecoin's circuits parse whatever the build (a run without the `filecoin` feature
    /// refuses them); their rows are named `<op>-porep` and `<op>-post`.
    #[test]
    fn filecoin_circuits_parse() {
        let o = parse(&[
            "--ops",
            "proof,synthesis,c2",
            "--circuit",
            "porep, post",
            "--sizes",
            "proof=21",
        ])
        .unwrap();
        let both = vec![CircuitKind::Porep, CircuitKind::Post];
        assert_eq!(o.circuits_for(Op::Proof), both);
        assert_eq!(o.circuits_for(Op::Synthesis), both);
        assert_eq!(o.circuits_for(Op::Ntt), vec![CircuitKind::Mimc]);
        assert_eq!(o.sizes_for(Op::Proof), vec![21]);
        assert_eq!(CircuitKind::Porep.row_name(Op::Proof), "proof-porep");
        assert_eq!(CircuitKind::Post.row_name(Op::Synthesis), "synthesis-post");
        assert_eq!(CircuitKind::Porep.row_name(Op::C2), "c2-porep");
        assert!(CircuitKind::Porep.is_filecoin() && CircuitKind::Post.is_filecoin());
        assert!(!CircuitKind::Sha256.is_filecoin() && !CircuitKind::Bits.is_filecoin());
    }

    /// The GPU bundle's run script (`xtask/src/bundle.rs`) with its defaults filled in.
    #[test]
    fn the_bundle_invocations_parse() {
        for args in [
            "--uploads --ops ntt,msm-g1,msm-g2,proof --circuit bits --sizes ntt=20..27 \
             --sizes msm-g1=20,22,24,26 --sizes msm-g2=20,22,24 --sizes proof=20 --reps 3",
            "--ops msm-g1,msm-g2 --demo off --sizes msm-g1=22,24,26 --sizes msm-g2=22,24 \
             --reps 3 --devices gpus",
            "--compare --peers bellperson-gpu --uploads --demo off --ops msm-g1,msm-g2,proof \
             --sizes msm-g1=20,22,24 --sizes msm-g2=20,22 --sizes proof=20 --reps 3",
            "--ops partition --demo off --sizes 24,26,27 --reps 2",
            "--ops params --demo off --sizes 20,22,24 --reps 3",
            "--ops c2 --demo off --sizes c2=27 --circuit bits --partitions 10 --proofs 2 \
             --workers 8 --host-budget-gib 100 --matrices",
            "--ops c2 --demo off --sizes c2=27 --circuit bits --partitions 10 --proofs 4 \
             --workers 16 --device-budget-gib full,24,16",
            "--demo off --ops ntt,msm-g1,msm-g2 --sizes ntt=24 --sizes msm-g1=22 \
             --sizes msm-g2=20 --reps 1",
        ] {
            let all: Vec<&str> = "--backends opencl --devices gpu0 --out /w/b"
                .split_whitespace()
                .chain(args.split_whitespace())
                .collect();
            if let Err(e) = parse(&all) {
                panic!("{all:?}: {e}");
            }
        }
    }

    #[test]
    fn record_is_a_subcommand() {
        let o = parse(&["record", "r.json", "--machine", "h200"]).unwrap();
        let Some(Command::Record(r)) = o.command else {
            panic!("expected record, got {:?}", o.command);
        };
        assert_eq!(r.file, PathBuf::from("r.json"));
        assert_eq!(r.overrides.machine.as_deref(), Some("h200"));
        assert_eq!(r.overrides.commit, None);
        for bad in [
            &["record"][..],
            &["record", "--frobnicate", "x.json"],
            &["record", "x.json", "y.json"],
            &["record", "x.json", "--machine"],
            &["--reps", "3", "record", "x.json"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn bad_flags_are_errors() {
        for bad in [
            &["--ops", "fft"][..],
            &["--ops", ""],
            &["--sizes", "12..10"],
            &["--sizes", "0"],
            &["--sizes", "x"],
            &["--sizes", "fft=1..2"],
            &["--sizes", "ntt=9..1"],
            &["--reps", "0"],
            &["--backends", "cuda"],
            &["--frobnicate"],
            &["--reps"],
            &["--peers"],
            &["--circuit", "keccak"],
            &["--partitions", "0"],
            &["--workers", "0"],
            &["--host-budget-gib", "-1"],
            &["--host-budget-gib", "0"],
            &["--demo", "1"],
            &["--demo", "25"],
            &["--seed", "-3"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be refused");
        }
        let e = parse(&["--ops", "fft"]).unwrap_err().to_string();
        assert!(e.contains("unknown op `fft`"), "{e}");
    }
}
