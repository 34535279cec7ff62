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

    /// The operations a run measures unless `--ops` says otherwise.
    pub const DEFAULT: [Op; 6] = [
        Op::Ntt,
        Op::MsmG1,
        Op::MsmG2,
        Op::Proof,
        Op::Verify,
        Op::VerifyBatch,
    ];

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
}

impl CircuitKind {
    /// The name on the command line and in the rows' labels.
    pub fn name(self) -> &'static str {
        match self {
            CircuitKind::Mimc => "mimc",
            CircuitKind::Bits => "bits",
            CircuitKind::Sha256 => "sha256",
        }
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
        [CircuitKind::Mimc, CircuitKind::Bits, CircuitKind::Sha256]
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| format!("unknown circuit `{s}` (expected mimc, bits or sha256)"))
    }
}

/// What a c2 row runs (see [`Op::C2`]).
#[derive(Clone, Debug, PartialEq)]
pub struct C2Options {
    /// Partitions per proof.
    pub partitions: usize,
    /// Proofs submitted back to back.
    pub proofs: usize,
    /// Partition workers asked for; `None`: one per core.
    pub workers: Option<usize>,
    /// The host budget in GiB; `None`: the machine's available memory less headroom.
    pub host_budget_gib: Option<f64>,
}

impl Default for C2Options {
    fn default() -> Self {
        C2Options {
            partitions: 10,
            proofs: 2,
            workers: None,
            host_budget_gib: None,
        }
    }
}

fn names(ops: &[Op]) -> String {
    ops.iter().map(|o| o.name()).collect::<Vec<_>>().join(", ")
}

/// Everything the runner was asked to do.
#[derive(Clone, Debug)]
pub struct Options {
    /// Operations to measure.
    pub ops: Vec<Op>,
    /// log2 sizes for every op, replacing each op's default ladder.
    pub sizes: Option<Vec<u32>>,
    /// log2 sizes for one op (`--sizes op=LIST`), taking precedence over `sizes`.
    pub op_sizes: Vec<(Op, Vec<u32>)>,
    /// Backends to run (`cpu`, `opencl`).
    pub backends: Vec<String>,
    /// OpenCL device selection: an index, a name substring, or `all`.
    pub devices: Option<String>,
    /// Timed repetitions per row (after one warm-up).
    pub reps: usize,
    /// Where results.json and the plots go.
    pub out_dir: PathBuf,
    /// Seed of every random input.
    pub seed: u64,
    /// Also measure every row with its inputs moved in (and NTT results out) per run.
    pub uploads: bool,
    /// Also time the proof and synthesis rows with the circuit's constraint matrices
    /// recorded once, before the clock (rows `<label>+matrices`), the proof rows also
    /// streamed (`+streamed`), and the synthesis rows' circuit code alone
    /// (`circuit-alone`, the floor of its synthesis).
    pub matrices: bool,
    /// log2 domain size of the demo proof (setup, prove, verify) run first; `None` skips it.
    pub demo_log: Option<u32>,
    /// Also measure the peers (arkworks, blst, bellperson) after the sluice rows.
    pub compare: bool,
    /// Only these peers, by name (`--peers`); `None` runs every peer of an op.
    pub peers: Option<Vec<String>>,
    /// The circuits of the proof and c2 rows (`--circuit`); `None`: MiMC for proof rows,
    /// the bit decomposition for c2.
    pub circuits: Option<Vec<CircuitKind>>,
    /// The c2 job's shape.
    pub c2: C2Options,
}

/// The OpenCL backends `--backends` names: plain, and with shifted MSM bases.
pub const OPENCL_BACKENDS: [&str; 2] = ["opencl", "opencl-shifted"];

/// The usage text.
pub const USAGE: &str = "\
usage: cargo xtask bench [options]

  --ops LIST        operations, comma-separated: ntt, msm-g1, msm-g2, proof, partition,
                    c2, params, synthesis, verify (one proof with 2^k public inputs),
                    verify-batch (2^k proofs with 4 inputs each); synthesis and
                    verification run once, on the host (default: all but partition, c2,
                    params and synthesis)
  --sizes LIST      log2 sizes for every op, e.g. 10,12,14 or 10..16 (default: per-op ladder)
  --sizes OP=LIST   log2 sizes for one op, e.g. --sizes ntt=20..27 (repeatable; wins over LIST)
  --backends LIST   cpu, opencl, opencl-shifted (OpenCL with shifted MSM bases, each
                    base's table of 2^(c k) P made at upload; default: cpu, plus
                    opencl when a platform exists)
  --devices SEL     OpenCL devices: indices (0,1), gpus, gpuN (the Nth GPU), a name
                    substring, or all (default: every GPU)
  --reps N          timed repetitions per row, after one warm-up (default: 5)
  --out DIR         output directory (default: target/sluice-bench)
  --seed N          seed of the random inputs (default: 1)
  --uploads         also time each row with its inputs uploaded per run (rows `<backend>+upload`)
  --matrices        also time the proof and synthesis rows with the circuit's constraint
                    matrices recorded once, before the clock (rows `<label>+matrices`;
                    proofs also `+streamed`; synthesis also `circuit-alone`, its floor)
  --demo K|off      log2 size of the demo proof run first: setup, prove, verify (default: 10)
  --compare         also measure the peers: arkworks, blst, bellperson (needs the runner's
                    `compare` feature)
  --peers LIST      with --compare, only these peers, e.g. bellperson-gpu (default: all)
  --circuit LIST    circuits of the proof, synthesis and c2 rows: mimc, bits, sha256
                    (bellpepper's SHA-256 gadget) (default: mimc for proof, sha256 for
                    synthesis, bits for c2)
  --ops synthesis   synthesis alone on one host thread (not in the default ops); with
                    --compare beside bellperson's own (from its log, one CPU proof a run)
  --ops params      parameters memory-mapped from a file and made resident, decoded by the
                    backend (rows <backend>) beside decoding on the host (rows
                    <backend>+host-decode), alternated run by run (not in the default ops)
  --ops c2          a C2-shaped job through the partition pipeline (not in the default ops):
    --partitions P  partitions per proof (default: 10)
    --proofs Q      proofs back to back; the row's time is the steady state (default: 2)
    --workers N     partition workers asked for (default: one per core)
    --host-budget-gib G  host budget (default: available memory less 10%)
  -h, --help        this message
";

impl Options {
    /// Parses the arguments after the program name.
    pub fn parse(args: &[String]) -> Result<Options, String> {
        let mut opts = Options {
            ops: Op::DEFAULT.to_vec(),
            sizes: None,
            op_sizes: Vec::new(),
            backends: Vec::new(),
            devices: None,
            reps: 5,
            out_dir: PathBuf::from("target/sluice-bench"),
            seed: 1,
            demo_log: Some(10),
            uploads: false,
            matrices: false,
            compare: false,
            peers: None,
            circuits: None,
            c2: C2Options::default(),
        };
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            if flag == "-h" || flag == "--help" {
                return Err(String::new());
            }
            if flag == "--compare" {
                opts.compare = true;
                continue;
            }
            let mut value = || {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{flag} needs a value"))
            };
            match flag.as_str() {
                "--ops" => opts.ops = list(&value()?).map(Op::parse).collect::<Result<_, _>>()?,
                "--sizes" => {
                    let v = value()?;
                    match v.split_once('=') {
                        Some((op, list)) => opts
                            .op_sizes
                            .push((Op::parse(op.trim())?, parse_sizes(list)?)),
                        None => opts.sizes = Some(parse_sizes(&v)?),
                    }
                }
                "--backends" => {
                    opts.backends = list(&value()?).map(str::to_owned).collect();
                    if let Some(b) = opts
                        .backends
                        .iter()
                        .find(|b| b.as_str() != "cpu" && !OPENCL_BACKENDS.contains(&b.as_str()))
                    {
                        return Err(format!(
                            "unknown backend `{b}` (expected cpu, {})",
                            OPENCL_BACKENDS.join(", ")
                        ));
                    }
                }
                "--devices" => opts.devices = Some(value()?),
                "--reps" => {
                    opts.reps = value()?
                        .parse()
                        .ok()
                        .filter(|&r| r > 0)
                        .ok_or("--reps needs a positive integer")?
                }
                "--out" => opts.out_dir = PathBuf::from(value()?),
                "--peers" => opts.peers = Some(list(&value()?).map(str::to_owned).collect()),
                "--uploads" => opts.uploads = true,
                "--matrices" => opts.matrices = true,
                "--circuit" => {
                    opts.circuits = Some(
                        list(&value()?)
                            .map(CircuitKind::parse)
                            .collect::<Result<_, _>>()?,
                    )
                }
                "--partitions" => opts.c2.partitions = positive(&value()?, flag)?,
                "--proofs" => opts.c2.proofs = positive(&value()?, flag)?,
                "--workers" => opts.c2.workers = Some(positive(&value()?, flag)?),
                "--host-budget-gib" => {
                    opts.c2.host_budget_gib = Some(
                        value()?
                            .parse()
                            .ok()
                            .filter(|g: &f64| g.is_finite() && *g > 0.0)
                            .ok_or("--host-budget-gib needs a positive number")?,
                    )
                }
                "--demo" => {
                    opts.demo_log = match value()?.as_str() {
                        "off" => None,
                        v => Some(
                            v.parse()
                                .ok()
                                .filter(|k| (2..=24).contains(k))
                                .ok_or("--demo needs a log2 size in 2..=24 or `off`")?,
                        ),
                    }
                }
                "--seed" => {
                    opts.seed = value()?
                        .parse()
                        .map_err(|_| "--seed needs an unsigned integer".to_owned())?
                }
                other => return Err(format!("unknown option `{other}`")),
            }
        }
        if opts.ops.is_empty() {
            return Err("--ops needs at least one operation".into());
        }
        Ok(opts)
    }

    /// The circuits `op`'s rows run: `--circuit` for proof and c2 rows, else the op's
    /// default (one row; other ops have no circuit).
    pub fn circuits_for(&self, op: Op) -> Vec<CircuitKind> {
        match (op, &self.circuits) {
            (Op::Proof | Op::C2 | Op::Synthesis, Some(circuits)) => circuits.clone(),
            _ => vec![CircuitKind::default_for(op)],
        }
    }

    /// The log2 sizes to run `op` at.
    pub fn sizes_for(&self, op: Op) -> Vec<u32> {
        self.op_sizes
            .iter()
            .rev()
            .find(|(o, _)| *o == op)
            .map(|(_, s)| s.clone())
            .or_else(|| self.sizes.clone())
            .unwrap_or_else(|| op.default_sizes())
    }
}

/// A positive integer for `flag`.
fn positive(v: &str, flag: &str) -> Result<usize, String> {
    v.parse()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("{flag} needs a positive integer"))
}

fn list(s: &str) -> impl Iterator<Item = &str> {
    s.split(',').map(str::trim).filter(|s| !s.is_empty())
}

/// `10,12,14` or `10..14` (inclusive), each between 1 and 30.
fn parse_sizes(s: &str) -> Result<Vec<u32>, String> {
    let bad = || format!("bad --sizes `{s}`: expected e.g. 10,12,14 or 10..16 (log2 sizes 1..=30)");
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

    fn parse(args: &[&str]) -> Result<Options, String> {
        Options::parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn defaults_and_flags() {
        let o = parse(&[]).unwrap();
        assert_eq!(o.ops, Op::DEFAULT.to_vec());
        assert_eq!(o.sizes_for(Op::Ntt), Op::Ntt.default_sizes());
        let o = parse(&["--ops", "msm-g1", "--sizes", "10..12", "--reps", "3"]).unwrap();
        assert_eq!(o.ops, vec![Op::MsmG1]);
        assert_eq!(o.sizes_for(Op::MsmG1), vec![10, 11, 12]);
        assert_eq!(o.reps, 3);
        assert_eq!(parse(&["--sizes", "8, 9"]).unwrap().sizes, Some(vec![8, 9]));
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
        let o = parse(&["--compare", "--peers", "bellperson-gpu, blst"]).unwrap();
        assert_eq!(o.peers, Some(vec!["bellperson-gpu".into(), "blst".into()]));
        assert_eq!(o.circuits_for(Op::Proof), vec![CircuitKind::Mimc]);
        assert_eq!(o.circuits_for(Op::C2), vec![CircuitKind::Bits]);
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
            }
        );
    }

    #[test]
    fn bad_flags_are_errors() {
        for bad in [
            &["--ops", "fft"][..],
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
            &["--host-budget-gib", "-1"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be refused");
        }
    }
}
