//! The commands, on the backend the options choose.

use std::error::Error;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use serde::de::DeserializeOwned;
use sluice::ComputeBackend;
use sluice_filecoin::filecoin_proofs_api::{
    PartitionProofBytes, RegisteredPoStProof, RegisteredUpdateProof, SectorId,
};
use sluice_filecoin::{FilecoinConfig, GenerateParameters, Prover};

use crate::args::{Args, Backend, Command, Generate, Output, Post, Proving};
use crate::bar;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// Runs the command on the chosen backend.
pub fn run(args: Args) -> Result<()> {
    let config = config(&args.proving)?;
    match args.proving.backend {
        Backend::Cpu => command(&Prover::cpu(config)?, args.command),
        Backend::Opencl | Backend::Auto => opencl(args, config),
    }
}

#[cfg(feature = "opencl")]
fn opencl(args: Args, config: FilecoinConfig) -> Result<()> {
    use sluice::{DeviceSelector, OpenClBackend, OpenClConfig};
    let mut cl = OpenClConfig::from_env()?;
    if let Some(devices) = &args.proving.devices {
        cl.devices = DeviceSelector::parse(devices);
    }
    match OpenClBackend::new(cl) {
        Ok(backend) => {
            eprintln!("proving on OpenCL: {}", backend.info().name);
            command(&Prover::new(vec![backend], config)?, args.command)
        }
        Err(e) if args.proving.backend == Backend::Auto => {
            eprintln!("no OpenCL device ({e}): proving on the CPU");
            command(&Prover::cpu(config)?, args.command)
        }
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(feature = "opencl"))]
fn opencl(args: Args, config: FilecoinConfig) -> Result<()> {
    if args.proving.backend == Backend::Opencl {
        return Err("this build has no OpenCL backend: build with `--features opencl`".into());
    }
    eprintln!("this build has no OpenCL backend (feature `opencl`): proving on the CPU");
    command(&Prover::cpu(config)?, args.command)
}

fn config(p: &Proving) -> Result<FilecoinConfig> {
    let mut c = FilecoinConfig::default().with_env_overrides()?;
    let gib = |x: f64, name: &str| -> Result<u64> {
        if x.is_finite() && x > 0.0 {
            Ok((x * (1u64 << 30) as f64) as u64)
        } else {
            Err(format!("--{name} must be a positive number of GiB, not {x}").into())
        }
    };
    if let Some(w) = p.workers {
        if w == 0 {
            return Err("--workers must be at least 1".into());
        }
        c.pipeline.workers = w;
    }
    if let Some(x) = p.host_budget_gib {
        c.pipeline.host_budget_bytes = Some(gib(x, "host-budget-gib")?);
    }
    if let Some(x) = p.device_budget_gib {
        c.pipeline.device_budget_bytes = Some(gib(x, "device-budget-gib")?);
    }
    c.generate = match p.generate_params {
        Generate::Never => GenerateParameters::Never,
        Generate::TestSizes => GenerateParameters::TestSizes,
        Generate::Always => GenerateParameters::Always,
    };
    c.verify = c.verify || p.verify;
    c.forked_synthesis = c.forked_synthesis && !p.sequential_synthesis;
    c.matrices = c.matrices && !p.no_matrices;
    Ok(c)
}

fn command<B: ComputeBackend + 'static>(prover: &Prover<B>, command: Command) -> Result<()> {
    match command {
        Command::C2 {
            c1,
            sector_id,
            prover_id,
            repeat,
            output,
        } => {
            let file = fs::File::open(&c1).map_err(|e| format!("{}: {e}", c1.display()))?;
            let input = sluice_filecoin::c1::read_commit2_input(file)?;
            let sector_id = sector_id
                .map(SectorId::from)
                .or(input.sector_id)
                .ok_or("the C1 file gives no sector number: pass --sector-id")?;
            let prover_id = hex32("--prover-id", &prover_id)?;
            let registered = input.phase1_output.registered_proof;
            let mut proof = Vec::new();
            for run in 1..=repeat.max(1) {
                let start = Instant::now();
                bar::start(&format!(
                    "C2 {registered:?} sector {}",
                    u64::from(sector_id)
                ));
                let out =
                    prover.seal_commit_phase2(input.phase1_output.clone(), prover_id, sector_id)?;
                bar::finish();
                eprintln!(
                    "c2 {run}/{repeat}: {registered:?}, {} partition(s) proved and verified in {:.2} s",
                    registered.partitions(),
                    start.elapsed().as_secs_f64()
                );
                proof = out.proof;
            }
            write_proof(&output, &proof)
        }
        Command::WindowPost(post) | Command::WinningPost(post) => {
            let registered: RegisteredPoStProof = registered(&post.registered)?;
            let proofs = prove_post(prover, registered, &post)?;
            let bytes: Vec<u8> = proofs.into_iter().flat_map(|(_, p)| p).collect();
            write_proof(&post.output, &bytes)
        }
        Command::Update {
            registered: name,
            vanilla,
            comm_r_old,
            comm_r_new,
            comm_d_new,
            output,
        } => {
            let registered: RegisteredUpdateProof = registered(&name)?;
            let vanilla = vanilla
                .iter()
                .map(|p| read(p).map(PartitionProofBytes))
                .collect::<Result<Vec<_>>>()?;
            let start = Instant::now();
            bar::start(&format!("update {registered:?}"));
            let proof = prover.generate_empty_sector_update_proof_with_vanilla(
                registered,
                vanilla,
                hex32("--comm-r-old", &comm_r_old)?,
                hex32("--comm-r-new", &comm_r_new)?,
                hex32("--comm-d-new", &comm_d_new)?,
            )?;
            bar::finish();
            eprintln!(
                "update: {registered:?} proved in {:.2} s",
                start.elapsed().as_secs_f64()
            );
            write_proof(&output, &proof.0)
        }
    }
}

fn prove_post<B: ComputeBackend + 'static>(
    prover: &Prover<B>,
    registered: RegisteredPoStProof,
    post: &Post,
) -> Result<Vec<(RegisteredPoStProof, Vec<u8>)>> {
    let randomness = hex32("--randomness", &post.randomness)?;
    let prover_id = hex32("--prover-id", &post.prover_id)?;
    let vanilla = post
        .vanilla
        .iter()
        .map(|p| read(p))
        .collect::<Result<Vec<_>>>()?;
    let start = Instant::now();
    bar::start(&format!("{registered:?}, {} sector(s)", vanilla.len()));
    let proofs =
        match registered.typ() {
            sluice_filecoin::filecoin_proofs_api::PoStType::Window => prover
                .generate_window_post_with_vanilla(registered, &randomness, prover_id, &vanilla),
            sluice_filecoin::filecoin_proofs_api::PoStType::Winning => prover
                .generate_winning_post_with_vanilla(registered, &randomness, prover_id, &vanilla),
        }?;
    bar::finish();
    eprintln!(
        "{registered:?}: {} sector(s) proved in {:.2} s",
        vanilla.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(proofs)
}

/// A registered proof type by its name (`StackedDrg32GiBV1_1`, ...).
fn registered<T: DeserializeOwned>(name: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(name.to_string()))
        .map_err(|_| format!("{name:?} is not a registered proof type of this kind").into())
}

fn hex32(flag: &str, s: &str) -> Result<[u8; 32]> {
    let bytes = hex::decode(s.trim().trim_start_matches("0x"))
        .map_err(|e| format!("{flag}: not hex: {e}"))?;
    bytes
        .try_into()
        .map_err(|b: Vec<u8>| format!("{flag}: {} bytes, expected 32", b.len()).into())
}

fn read(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| format!("{}: {e}", path.display()).into())
}

fn write_proof(output: &Output, proof: &[u8]) -> Result<()> {
    match &output.out {
        Some(path) => fs::write(path, proof).map_err(|e| format!("{}: {e}", path.display()))?,
        None => writeln!(std::io::stdout(), "proof: {}", hex::encode(proof))?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked_and_errors_name_the_flag() {
        assert_eq!(hex32("--x", &"ab".repeat(32)).unwrap(), [0xab; 32]);
        assert!(hex32("--x", "0xzz")
            .unwrap_err()
            .to_string()
            .starts_with("--x: not hex"));
        assert!(hex32("--x", "abcd")
            .unwrap_err()
            .to_string()
            .contains("2 bytes"));
        let p: RegisteredPoStProof = registered("StackedDrgWindow2KiBV1_2").unwrap();
        assert_eq!(p, RegisteredPoStProof::StackedDrgWindow2KiBV1_2);
        assert!(registered::<RegisteredPoStProof>("Nope").is_err());
    }
}
