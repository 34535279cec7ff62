//! sluice's project commands, run as `cargo xtask <command>`.
//!
//! - `cargo xtask test`: the whole test suite (installs the OpenCL loader and PoCL first
//!   where it runs as root; otherwise names the one command to run).
//! - `cargo xtask bench`: the main job — see `cargo xtask bench --help`.
//! - `cargo xtask check-layout`: the source layout's rules (see `layout.rs`).
//! - `cargo xtask package`: `cargo package` over the crates.io crates (see `package.rs`).

mod bundle;
mod layout;
mod opencl_setup;
mod package;

use std::process::{Command, ExitCode};

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  bench    the main job: benchmark ladder on every available backend (see `bench --help`)
  test     run the whole test suite (release mode), OpenCL tests on the platform found
  bundle   build release binaries and a run script for the GPU machine into target/device/
  record   print a bench run's results.json as BENCHMARKS.md rows (see `record --help`)
  check-layout [DIR]
           check the source layout: library crates' files of at most 800 lines and no import
           loops, the environment read only in `from_env` functions, BENCHMARKS.md < 40 KB
  package [cargo package args]
           `cargo package` the crates published to crates.io (sluice-prover and its
           sluice-* dependencies), verified unless `--no-verify` is passed
  help     print this message
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => run_tests(&args[1..]),
        Some("bench") => run_bench(&args[1..]),
        Some("bundle") => bundle::bundle().map(drop),
        Some("check-layout") => layout::run(&args[1..]),
        Some("package") => {
            workspace_root().and_then(|root| package::run(&root, &cargo(), &args[1..]))
        }
        Some("record") => run(Command::new(cargo())
            .args(["run", "--quiet", "--release", "-p", "sluice-bench", "--"])
            .args(&args)),
        Some("help") | Some("--help") | Some("-h") => {
            print!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command `{other}`\n\n{USAGE}")),
        None => Err(USAGE.to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `cargo xtask test [extra cargo test args]`.
fn run_tests(extra: &[String]) -> Result<(), String> {
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    opencl_setup::ensure_opencl_runtime()?;
    let mut cmd = Command::new(cargo());
    // Optional features with tests of their own: serde encodings, blst conversions, the
    // facade's blstrs circuits and OpenCL re-exports, and sluice-filecoin's OpenCL command.
    cmd.args(["test", "--workspace", "--release"])
        .args([
            "--features",
            "sluice-field/serde,sluice-field/blst,sluice-prover/blstrs,sluice-prover/opencl,\
             sluice-filecoin/opencl",
        ])
        .args(extra);
    if in_ci {
        // In CI a missing OpenCL platform fails the OpenCL tests instead of skipping them.
        cmd.env("SLUICE_REQUIRE_OPENCL", "1");
        // No debug info in CI's clean build: it is a sixth of the build's time on 2 cores,
        // and CI's panics still name their file and line.
        if std::env::var_os("CARGO_PROFILE_RELEASE_DEBUG").is_none() {
            cmd.env("CARGO_PROFILE_RELEASE_DEBUG", "0");
        }
    }
    if std::env::var_os("RUST_TEST_THREADS").is_none() {
        // One test at a time: PoCL 3.1 (Debian 12's) aborts when tests in two threads first
        // launch their kernels at once (`pocl_release_dlhandle_cache: Assertion
        // found->ref_count > 0`, "Final linking of kernel ... failed"). With its kernel cache
        // off (POCL_KERNEL_CACHE=0), as on a fresh CI machine's first run, the differential
        // suite aborted 3 times in 3 with two test threads and passed 5 in 5 with one; the
        // whole suite takes 54 s against 42 s here (builds warm).
        cmd.env("RUST_TEST_THREADS", "1");
    }
    run(&mut cmd)
}

/// `cargo xtask bench [options]`: builds and runs the `sluice-bench` runner, with the
/// OpenCL backend compiled in only where an OpenCL loader exists (it links against it).
fn run_bench(args: &[String]) -> Result<(), String> {
    let mut cmd = Command::new(cargo());
    cmd.args(["run", "--quiet", "--release", "-p", "sluice-bench"]);
    let mut features = Vec::new();
    if args.iter().any(|a| a == "--compare") {
        // The peers (arkworks, blst, bellperson) compile only when asked for.
        features.push("compare");
    }
    // Filecoin's circuits (rust-fil-proofs, heavy to compile) too: `--circuit LIST` or
    // `--circuit=LIST` naming porep or post.
    let circuits = args
        .iter()
        .zip(args.iter().skip(1))
        .filter(|(flag, _)| *flag == "--circuit")
        .map(|(_, list)| list.as_str())
        .chain(args.iter().filter_map(|a| a.strip_prefix("--circuit=")));
    if circuits
        .flat_map(|list| list.split(','))
        .any(|c| matches!(c.trim(), "porep" | "post"))
    {
        features.push("filecoin");
    }
    // As root a missing runtime is installed, as for the tests; otherwise, or if that
    // fails, the CPU backend is benchmarked alone and the message says how to add OpenCL.
    match opencl_setup::ensure_opencl_runtime() {
        Ok(()) => features.push("opencl"),
        Err(message) => eprintln!(
            "xtask: {message}\n\
             xtask: benchmarking the CPU backend only (for GPUs, install your vendor's \
             OpenCL driver too)."
        ),
    }
    if !features.is_empty() {
        cmd.args(["--features", &features.join(",")]);
    }
    cmd.arg("--").args(args);
    run(&mut cmd)
}

/// The workspace's root: xtask's parent directory.
fn workspace_root() -> Result<std::path::PathBuf, String> {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(std::path::Path::to_owned)
        .ok_or_else(|| "xtask has no parent directory".to_owned())
}

/// The cargo that invoked us, so toolchain overrides carry through.
fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let status = cmd
        .status()
        .map_err(|e| format!("could not start {cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed with {status}"))
    }
}
