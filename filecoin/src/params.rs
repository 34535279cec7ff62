//! Filecoin's parameter cache: the files filecoin-proofs reads, memory-mapped; test
//! parameters generated once under the names filecoin-proofs looks for where the official
//! ones are absent.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rand_core::OsRng;
use sluice::groth16::ParameterInfo;
use sluice::{ConstraintMatrices, MappedParameters};

use crate::error::FilecoinError;
use crate::kind::ProofKind;

/// Opens `kind`'s parameters from the cache, memory-mapped (points are decoded as the
/// prover reads them; off-curve points are refused there). Where the file is absent and
/// `generate_missing` is set, runs a single-party setup first and writes the parameters,
/// verifying key and metadata under filecoin-proofs' names, saying loudly that they are not
/// the official ones. A verifying key beside the parameters must be theirs.
pub(crate) fn open(
    kind: ProofKind,
    generate_missing: bool,
) -> Result<MappedParameters, FilecoinError> {
    let params_path = kind.params_path()?;
    let vk_path = kind.verifying_key_path()?;
    if !params_path.exists() {
        if vk_path.exists() {
            return Err(FilecoinError::OrphanVerifyingKey {
                vk: vk_path,
                params: params_path,
            });
        }
        if !generate_missing {
            return Err(FilecoinError::MissingParameters {
                kind: kind.to_string(),
                path: params_path,
            });
        }
        generate(kind, &params_path, &vk_path)?;
    }
    let start = Instant::now();
    let params = MappedParameters::open(&params_path, false).map_err(|source| {
        FilecoinError::DamagedParameters {
            kind: kind.to_string(),
            path: params_path.clone(),
            source,
        }
    })?;
    check_verifying_key(&params, &params_path, &vk_path)?;
    log::info!(
        "{kind}: parameters mapped from {} in {:.2?}",
        params_path.display(),
        start.elapsed()
    );
    Ok(params)
}

/// The constraint matrices of `kind`'s circuit, for witness-only synthesis: read from
/// `<circuit id>.sluice-matrices` beside its parameters, else recorded from its blank
/// circuit (one synthesis without a witness) and written there, atomically. A write that
/// fails is a warning (the matrices are used from memory); a damaged file is an error
/// naming it.
pub(crate) fn matrices(kind: ProofKind) -> Result<ConstraintMatrices, FilecoinError> {
    matrices_at(kind, &kind.params_path()?.with_extension("sluice-matrices"))
}

/// [`matrices`] with the file at `path`.
fn matrices_at(kind: ProofKind, path: &Path) -> Result<ConstraintMatrices, FilecoinError> {
    let path = path.to_path_buf();
    let start = Instant::now();
    if path.exists() {
        let file = File::open(&path).map_err(|source| FilecoinError::File {
            path: path.clone(),
            source,
        })?;
        let matrices = ConstraintMatrices::read(io::BufReader::new(file)).map_err(|source| {
            FilecoinError::DamagedMatrices {
                kind: kind.to_string(),
                path: path.clone(),
                source,
            }
        })?;
        log::info!(
            "{kind}: constraint matrices read from {} in {:.2?} ({} host bytes)",
            path.display(),
            start.elapsed(),
            matrices.host_bytes()
        );
        return Ok(matrices);
    }
    let matrices = kind.record_matrices()?;
    log::info!(
        "{kind}: constraint matrices recorded in {:.2?} ({} host bytes)",
        start.elapsed(),
        matrices.host_bytes()
    );
    if let Err(e) = write_atomically(&path, |w| matrices.write(w).map_err(io::Error::from)) {
        log::warn!(
            "{kind}: the constraint matrices could not be written to {}: {e}; they are used \
             from memory and recorded again next time",
            path.display()
        );
    }
    Ok(matrices)
}

fn generate(kind: ProofKind, params_path: &Path, vk_path: &Path) -> Result<(), FilecoinError> {
    log::warn!(
        "{kind}: {} is not in the parameter cache; generating TEST parameters with sluice's \
         single-party setup. They are NOT Filecoin's official parameters: proofs made with them \
         verify only against the verifying key written beside them, never on chain.",
        params_path.display()
    );
    let start = Instant::now();
    let params = kind.generate_parameters(&mut OsRng)?;
    let generated = start.elapsed();
    let file_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| FilecoinError::File { path, source }
    };
    if let Some(dir) = params_path.parent() {
        fs::create_dir_all(dir).map_err(file_error(dir))?;
    }
    write_atomically(vk_path, |w| params.vk.write(w).map_err(io::Error::from))
        .map_err(file_error(vk_path))?;
    write_atomically(params_path, |w| params.write(w).map_err(io::Error::from))
        .map_err(file_error(params_path))?;
    let meta_path = kind.metadata_path()?;
    if !meta_path.exists() {
        let meta = serde_json::json!({ "sector_size": kind.sector_size() });
        write_atomically(&meta_path, |w| {
            serde_json::to_writer(w, &meta).map_err(io::Error::from)
        })
        .map_err(file_error(&meta_path))?;
    }
    log::warn!(
        "{kind}: test parameters generated in {generated:.2?} and written to {} ({} bytes)",
        params_path.display(),
        fs::metadata(params_path).map_or(0, |m| m.len())
    );
    Ok(())
}

/// Writes through a temporary file renamed into place, so a reader (another prover, or
/// filecoin-proofs' verifier) never sees half a file.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let temp = temporary_name(path);
    let result = (|| {
        let mut w = BufWriter::new(File::create(&temp)?);
        write(&mut w)?;
        w.flush()?;
        w.get_ref().sync_all()?;
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

fn temporary_name(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".sluice-{}.tmp", std::process::id()));
    path.with_file_name(name)
}

/// The verifying key in the parameters must equal the `.vk` file filecoin-proofs verifies
/// with; a missing `.vk` is written from the parameters (as filecoin-proofs does).
fn check_verifying_key(
    params: &MappedParameters,
    params_path: &Path,
    vk_path: &Path,
) -> Result<(), FilecoinError> {
    let mut ours = Vec::new();
    params
        .vk()
        .write(&mut ours)
        .map_err(|source| FilecoinError::File {
            path: params_path.to_path_buf(),
            source: source.into(),
        })?;
    match fs::read(vk_path) {
        Ok(theirs) if theirs == ours => Ok(()),
        Ok(_) => Err(FilecoinError::MismatchedVerifyingKey {
            params: params_path.to_path_buf(),
            vk: vk_path.to_path_buf(),
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => write_atomically(vk_path, |w| {
            w.write_all(&ours)
        })
        .map_err(|source| FilecoinError::File {
            path: vk_path.to_path_buf(),
            source,
        }),
        Err(source) => Err(FilecoinError::File {
            path: vk_path.to_path_buf(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_matrices_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.sluice-matrices");
        fs::write(&path, b"not matrices").unwrap();
        let kind = ProofKind::Seal(filecoin_proofs_api::RegisteredSealProof::StackedDrg2KiBV1_1);
        match matrices_at(kind, &path) {
            Err(e @ FilecoinError::DamagedMatrices { .. }) => {
                assert!(e.to_string().contains("x.sluice-matrices"), "{e}")
            }
            other => panic!("expected a damaged-matrices error, got {:?}", other.err()),
        }
    }

    #[test]
    fn temporary_names_sit_beside_the_file_and_name_the_process() {
        let t = temporary_name(Path::new("/cache/v28-x.params"));
        assert_eq!(t.parent(), Some(Path::new("/cache")));
        let name = t.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("v28-x.params.sluice-") && name.ends_with(".tmp"));
    }

    #[test]
    fn a_failed_write_leaves_neither_the_file_nor_the_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.vk");
        let err = write_atomically(&path, |_| Err(io::Error::other("disk full"))).unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        write_atomically(&path, |w| w.write_all(b"ok")).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"ok");
    }
}
