//! The command line.

use std::path::PathBuf;

use clap::{Args as ClapArgs, Parser, Subcommand, ValueEnum};

/// Filecoin's proofs proved with sluice: PoRep C2 from a C1 output, Window and Winning PoSt
/// and SnapDeals updates from vanilla proofs. Parameters come from filecoin-proofs' cache
/// (FIL_PROOFS_PARAMETER_CACHE); proofs are the bytes filecoin-proofs returns.
#[derive(Debug, Parser)]
#[command(name = "sluice-filecoin", version)]
pub struct Args {
    /// The proving options shared by every command.
    #[command(flatten)]
    pub proving: Proving,
    /// What to prove.
    #[command(subcommand)]
    pub command: Command,
}

/// Options of every command.
#[derive(Debug, ClapArgs)]
pub struct Proving {
    /// Where to prove: `auto` is OpenCL where a device is found (in a build with the
    /// `opencl` feature), else the CPU, saying so.
    #[arg(long, value_enum, default_value_t = Backend::Auto, global = true)]
    pub backend: Backend,
    /// OpenCL devices: an index, a list (`0,1`), `gpu0`, `gpus`, or part of a name.
    #[arg(long, global = true)]
    pub devices: Option<String>,
    /// Partitions synthesized and held at once (default: one per core).
    #[arg(long, global = true)]
    pub workers: Option<usize>,
    /// Host memory the partitions may hold, in GiB (default: what the machine has free,
    /// less 10%).
    #[arg(long, global = true)]
    pub host_budget_gib: Option<f64>,
    /// Device memory the parameters and a partition may hold, in GiB, per device
    /// (default: what the device has free, less 10%).
    #[arg(long, global = true)]
    pub device_budget_gib: Option<f64>,
    /// When missing parameters are generated (test parameters, never Filecoin's).
    #[arg(long, value_enum, default_value_t = Generate::TestSizes, global = true)]
    pub generate_params: Generate,
    /// Check PoSt and update proofs with filecoin-proofs' verifier before printing them
    /// (C2 proofs always are).
    #[arg(long, global = true)]
    pub verify: bool,
    /// Synthesize each partition on one thread, as filecoin-proofs does, rather than a
    /// challenge or sector per core (the same circuits and proofs either way).
    #[arg(long, global = true)]
    pub sequential_synthesis: bool,
    /// Synthesize full constraints rather than the witness alone with each kind's recorded
    /// constraint matrices (recorded once, kept in the parameter cache).
    #[arg(long, global = true)]
    pub no_matrices: bool,
}

/// Where to prove.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// OpenCL if a device is found, else the CPU.
    Auto,
    /// The CPU.
    Cpu,
    /// OpenCL (an error where there is none).
    Opencl,
}

/// When missing parameters are generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Generate {
    /// Never.
    Never,
    /// For test sector sizes only (2 KiB to 1 GiB).
    TestSizes,
    /// For every sector size.
    Always,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// PoRep C2: prove a sector's C1 output (lotus-bench's C1 JSON, or filecoin-proofs-api's).
    C2 {
        /// The C1 output file.
        #[arg(long)]
        c1: PathBuf,
        /// The sector number (default: the file's `SectorNum`).
        #[arg(long)]
        sector_id: Option<u64>,
        /// The prover id, 32 bytes in hex.
        #[arg(long)]
        prover_id: String,
        /// How many times to prove it (timing a steady state: the parameters stay resident).
        #[arg(long, default_value_t = 1)]
        repeat: usize,
        /// Where the proof goes.
        #[command(flatten)]
        output: Output,
    },
    /// Window PoSt from the sectors' vanilla proofs.
    WindowPost(Post),
    /// Winning PoSt from the sector's vanilla proof.
    WinningPost(Post),
    /// The SnapDeals update proof from its vanilla partition proofs.
    Update {
        /// The registered update proof, e.g. `StackedDrg32GiBV1`.
        #[arg(long = "type")]
        registered: String,
        /// One file per partition: its vanilla proof's bytes (bincode), in partition order.
        #[arg(long, required = true, num_args = 1..)]
        vanilla: Vec<PathBuf>,
        /// The sector key's comm_r, hex.
        #[arg(long)]
        comm_r_old: String,
        /// The updated replica's comm_r, hex.
        #[arg(long)]
        comm_r_new: String,
        /// The new data's comm_d, hex.
        #[arg(long)]
        comm_d_new: String,
        /// Where the proof goes.
        #[command(flatten)]
        output: Output,
    },
}

/// A PoSt request.
#[derive(Debug, ClapArgs)]
pub struct Post {
    /// The registered PoSt proof, e.g. `StackedDrgWindow32GiBV1_2`.
    #[arg(long = "type")]
    pub registered: String,
    /// The challenge randomness, 32 bytes in hex.
    #[arg(long)]
    pub randomness: String,
    /// The prover id, 32 bytes in hex.
    #[arg(long)]
    pub prover_id: String,
    /// One file per sector: its vanilla proof's bytes (bincode).
    #[arg(long, required = true, num_args = 1..)]
    pub vanilla: Vec<PathBuf>,
    /// Where the proof goes.
    #[command(flatten)]
    pub output: Output,
}

/// Where a proof goes.
#[derive(Debug, ClapArgs)]
pub struct Output {
    /// Write the proof's bytes to this file instead of printing `proof: <hex>` (as
    /// lotus-bench's `prove` does).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed_and_parses_each_command() {
        Args::command().debug_assert();
        let a = Args::try_parse_from([
            "sluice-filecoin",
            "c2",
            "--c1",
            "c1.json",
            "--prover-id",
            "00",
            "--workers",
            "4",
        ])
        .unwrap();
        assert_eq!(a.proving.workers, Some(4));
        assert!(matches!(a.command, Command::C2 { repeat: 1, .. }));
        let a = Args::try_parse_from([
            "sluice-filecoin",
            "--backend",
            "cpu",
            "window-post",
            "--type",
            "StackedDrgWindow2KiBV1_2",
            "--randomness",
            "01",
            "--prover-id",
            "02",
            "--vanilla",
            "a",
            "b",
        ])
        .unwrap();
        assert_eq!(a.proving.backend, Backend::Cpu);
        let Command::WindowPost(post) = a.command else {
            panic!("window-post parsed as another command");
        };
        assert_eq!(post.vanilla.len(), 2);
        assert!(Args::try_parse_from(["sluice-filecoin", "c2", "--c1", "x"]).is_err());
    }
}
