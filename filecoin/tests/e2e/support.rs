//! Sectors sealed by filecoin-proofs for the end-to-end tests, and the parameter cache they
//! share (generated once under the build's temporary folder, then reused).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Once;

use filecoin_proofs_api::seal::{
    add_piece, seal_commit_phase1, seal_pre_commit_phase1, seal_pre_commit_phase2,
    SealCommitPhase1Output,
};
use filecoin_proofs_api::{
    Commitment, PieceInfo, ProverId, RegisteredSealProof, SectorId, Ticket, UnpaddedBytesAmount,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// Points filecoin-proofs' caches (parameters, DRG parents) at the build's temporary folder
/// before anything reads its settings, and starts logging (RUST_LOG) once.
pub fn init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("filecoin");
        // Set before any thread exists or filecoin-proofs reads its settings; a run that
        // names its own caches (the GPU bundle) keeps them.
        for (name, dir) in [
            ("FIL_PROOFS_PARAMETER_CACHE", "parameters"),
            ("FIL_PROOFS_PARENT_CACHE", "parents"),
        ] {
            if std::env::var_os(name).is_none() {
                std::env::set_var(name, base.join(dir));
            }
        }
        let _ = env_logger::builder().is_test(true).try_init();
    });
}

/// The sector sizes to test: `SLUICE_FILECOIN_TEST_SIZES` (`2KiB`, `8MiB`, `512MiB`,
/// comma-separated; the GPU bundle passes the bigger ones), 2 KiB by default.
pub fn seal_proofs() -> Vec<RegisteredSealProof> {
    let sizes = std::env::var("SLUICE_FILECOIN_TEST_SIZES").unwrap_or_else(|_| "2KiB".into());
    sizes
        .split(',')
        .map(|s| match s.trim() {
            "2KiB" => RegisteredSealProof::StackedDrg2KiBV1_1,
            "8MiB" => RegisteredSealProof::StackedDrg8MiBV1_1,
            "512MiB" => RegisteredSealProof::StackedDrg512MiBV1_1,
            other => panic!("SLUICE_FILECOIN_TEST_SIZES: unknown size {other:?}"),
        })
        .collect()
}

/// The sector size's short name (`2KiB`, ...).
pub fn size_name(proof: RegisteredSealProof) -> String {
    let bytes = u64::from(proof.sector_size());
    if bytes >= 1 << 20 {
        format!("{}MiB", bytes >> 20)
    } else {
        format!("{}KiB", bytes >> 10)
    }
}

/// A prover on the backend `SLUICE_FILECOIN_TEST_BACKEND` names (`cpu`, the default, or
/// `opencl` in a build with the feature, on `SLUICE_TEST_OPENCL_DEVICE`, default `gpu0`).
pub enum AnyProver {
    /// The CPU backend.
    Cpu(sluice_filecoin::Prover<sluice::CpuBackend>),
    /// The OpenCL backend.
    #[cfg(feature = "opencl")]
    OpenCl(sluice_filecoin::Prover<sluice::OpenClBackend>),
}

/// The prover the environment asks for, with the default configuration.
pub fn prover() -> AnyProver {
    let config = sluice_filecoin::FilecoinConfig::default();
    match std::env::var("SLUICE_FILECOIN_TEST_BACKEND").as_deref() {
        Ok("opencl") => {
            #[cfg(feature = "opencl")]
            {
                let mut cl = sluice::OpenClConfig::from_env().unwrap();
                let device =
                    std::env::var("SLUICE_TEST_OPENCL_DEVICE").unwrap_or_else(|_| "gpu0".into());
                cl.devices = sluice::DeviceSelector::parse(&device);
                let backend = sluice::OpenClBackend::new(cl).unwrap();
                eprintln!(
                    "proving on OpenCL: {}",
                    sluice::ComputeBackend::info(&backend).name
                );
                AnyProver::OpenCl(sluice_filecoin::Prover::new(vec![backend], config).unwrap())
            }
            #[cfg(not(feature = "opencl"))]
            panic!("SLUICE_FILECOIN_TEST_BACKEND=opencl needs the `opencl` feature")
        }
        Ok("cpu") | Err(_) => AnyProver::Cpu(sluice_filecoin::Prover::cpu(config).unwrap()),
        Ok(other) => panic!("SLUICE_FILECOIN_TEST_BACKEND: unknown backend {other:?}"),
    }
}

/// Runs `$body` with `$prover` bound to the [`AnyProver`]'s prover, whatever its backend.
#[macro_export]
macro_rules! with_prover {
    ($any:expr, |$prover:ident| $body:expr) => {
        match $any {
            $crate::support::AnyProver::Cpu($prover) => $body,
            #[cfg(feature = "opencl")]
            $crate::support::AnyProver::OpenCl($prover) => $body,
        }
    };
}

/// A seeded RNG; its seed is printed so a failure can be replayed.
pub fn rng(test: &str) -> ChaCha20Rng {
    let seed: u64 = std::env::var("SLUICE_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_f11e);
    eprintln!("{test}: seed {seed} (SLUICE_TEST_SEED replays it)");
    ChaCha20Rng::seed_from_u64(seed)
}

/// A sector sealed by filecoin-proofs: pre-commit 1 and 2, then commit 1.
pub struct Sealed {
    pub registered: RegisteredSealProof,
    pub prover_id: ProverId,
    pub sector_id: SectorId,
    pub ticket: Ticket,
    pub seed: Ticket,
    pub comm_r: Commitment,
    pub comm_d: Commitment,
    pub c1: SealCommitPhase1Output,
    pub sealed: PathBuf,
    pub cache: PathBuf,
    /// Owns the sector's files (removed on drop).
    _dir: tempfile::TempDir,
}

/// What a sealed sector holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Data {
    /// Random bytes (a deal sector).
    Random,
    /// Zeros (a committed-capacity sector, the key of a SnapDeals update).
    Zeros,
}

/// Random bytes for a piece of `len` unpadded bytes.
pub fn piece_data(len: u64, data: Data, rng: &mut ChaCha20Rng) -> Vec<u8> {
    match data {
        Data::Random => (0..len).map(|_| rng.gen()).collect(),
        Data::Zeros => vec![0; len as usize],
    }
}

/// Writes `data` as the one piece of a staged sector file at `path`.
pub fn stage(registered: RegisteredSealProof, path: &Path, data: &[u8]) -> PieceInfo {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .unwrap();
    let size = UnpaddedBytesAmount(data.len() as u64);
    let (piece, _) = add_piece(registered, data, &mut file, size, &[]).unwrap();
    file.flush().unwrap();
    piece
}

/// Seals a sector of `registered`'s size holding `data`.
pub fn seal(registered: RegisteredSealProof, data: Data, rng: &mut ChaCha20Rng) -> Sealed {
    let dir = tempfile::tempdir().unwrap();
    let sector_size = u64::from(registered.sector_size());
    let piece_size = UnpaddedBytesAmount::from(filecoin_proofs_api::PaddedBytesAmount(sector_size));
    let bytes = piece_data(u64::from(piece_size), data, rng);
    let staged = dir.path().join("staged");
    let sealed = dir.path().join("sealed");
    let cache = dir.path().join("cache");
    fs::create_dir_all(&cache).unwrap();
    let piece = stage(registered, &staged, &bytes);
    File::create(&sealed).unwrap();
    let piece_infos = vec![piece];
    let prover_id: ProverId = fr_bytes(rng);
    let sector_id = SectorId::from(rng.gen_range(1..1_000_000u64));
    let ticket: Ticket = fr_bytes(rng);
    let seed: Ticket = fr_bytes(rng);
    let pc1 = seal_pre_commit_phase1(
        registered,
        &cache,
        &staged,
        &sealed,
        prover_id,
        sector_id,
        ticket,
        &piece_infos,
    )
    .unwrap();
    let pc2 = seal_pre_commit_phase2(pc1, &cache, &sealed).unwrap();
    let (comm_r, comm_d) = (pc2.comm_r, pc2.comm_d);
    let c1 = seal_commit_phase1(
        &cache,
        &sealed,
        prover_id,
        sector_id,
        ticket,
        seed,
        pc2,
        &piece_infos,
    )
    .unwrap();
    Sealed {
        registered,
        prover_id,
        sector_id,
        ticket,
        seed,
        comm_r,
        comm_d,
        c1,
        sealed,
        cache,
        _dir: dir,
    }
}

/// 32 random bytes that are a canonical field element (top bits cleared), as Filecoin's
/// ids and randomness are.
pub fn fr_bytes(rng: &mut ChaCha20Rng) -> [u8; 32] {
    let mut b: [u8; 32] = rng.gen();
    b[31] &= 0x3f;
    b
}
