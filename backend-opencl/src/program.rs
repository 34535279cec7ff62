//! Program builds: from source or from a cached binary, with an on-disk binary cache, a
//! process-wide in-memory binary cache, and a record of every build's duration.

use std::collections::HashMap;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use ocl::core::{self, ProgramBuildInfo, ProgramBuildInfoResult, ProgramInfo, ProgramInfoResult};
use sluice_backend::BackendError;

use crate::device::DeviceInfo;
use crate::source::ProgramKind;
use crate::tuning::{BuildOptions, Overrides};
use crate::util::{driver_error, lock};

/// Where compiled program binaries are kept between processes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum KernelCache {
    /// The user's cache, `$XDG_CACHE_HOME/sluice/kernels`, else `~/.cache/sluice/kernels`,
    /// which only the environment says: [`OpenClConfig::with_env_overrides`] resolves it to
    /// [`Dir`](Self::Dir), or to [`Disabled`](Self::Disabled) where neither variable is set
    /// (`SLUICE_KERNEL_CACHE` names another directory). Left unresolved (a configuration
    /// that never read the environment), no disk cache: the environment is read in that
    /// one place, never at build time.
    ///
    /// [`OpenClConfig::with_env_overrides`]: crate::OpenClConfig::with_env_overrides
    #[default]
    Default,
    /// This directory.
    Dir(PathBuf),
    /// No disk cache (the in-process cache still applies).
    Disabled,
}

impl KernelCache {
    /// The directory this setting names, if any ([`Default`](Self::Default) names none
    /// until the environment resolves it).
    pub fn dir(&self) -> Option<PathBuf> {
        match self {
            KernelCache::Dir(d) => Some(d.clone()),
            KernelCache::Disabled | KernelCache::Default => None,
        }
    }

    /// The user's cache as `env` gives it: `$XDG_CACHE_HOME/sluice/kernels`, else
    /// `$HOME/.cache/sluice/kernels` (empty values count as unset), else none.
    pub(crate) fn user_cache(env: &Overrides<'_>) -> Self {
        env.path("XDG_CACHE_HOME")
            .map(|d| d.join("sluice/kernels"))
            .or_else(|| env.path("HOME").map(|d| d.join(".cache/sluice/kernels")))
            .map_or(KernelCache::Disabled, KernelCache::Dir)
    }
}

/// How one program build went.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramBuildTime {
    /// The program ("fr", "g1-msm", "g2-msm").
    pub program: &'static str,
    /// The device's name.
    pub device: String,
    /// Wall-clock seconds of the build (create + build; a cache read is included).
    pub seconds: f64,
    /// Where the program came from.
    pub source: BuildSource,
}

/// Where a built program came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildSource {
    /// Compiled from OpenCL C: a cold build.
    Compiled,
    /// Loaded from a binary cached earlier in this process.
    MemoryCache,
    /// Loaded from a binary in the on-disk cache.
    DiskCache,
}

/// Every build of this process, in order.
pub fn program_build_times() -> Vec<ProgramBuildTime> {
    lock(build_log()).clone()
}

fn build_log() -> &'static Mutex<Vec<ProgramBuildTime>> {
    static LOG: OnceLock<Mutex<Vec<ProgramBuildTime>>> = OnceLock::new();
    LOG.get_or_init(Default::default)
}

fn binaries() -> &'static Mutex<HashMap<u128, Arc<Vec<u8>>>> {
    static BIN: OnceLock<Mutex<HashMap<u128, Arc<Vec<u8>>>>> = OnceLock::new();
    BIN.get_or_init(Default::default)
}

/// FNV-1a, 128 bits, over length-prefixed parts: a stable cache key (std's hashers are not
/// guaranteed stable across Rust releases).
fn cache_key(parts: &[&str]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    let mut h = OFFSET;
    for p in parts {
        for b in (p.len() as u64).to_le_bytes().iter().chain(p.as_bytes()) {
            h ^= u128::from(*b);
            h = h.wrapping_mul(PRIME);
        }
    }
    h
}

/// The build options of `kind` for a device: the PTX path on NVIDIA (`-DKERNEL_NVIDIA`),
/// then the extra ones (e.g. `-DKERNEL_INLINE_CURVE` for G2, `-DKERNEL_NOINLINE_CURVE` for
/// G1, `-cl-nv-maxrregcount=128`, `-cl-nv-verbose` for register use in the build log);
/// part of the cache key like every option.
pub(crate) fn build_options(
    device: &DeviceInfo,
    kind: ProgramKind,
    extra: &BuildOptions,
) -> String {
    let extra = extra.for_program(kind);
    let ptx = if device.is_nvidia() {
        "-DKERNEL_NVIDIA"
    } else {
        ""
    };
    [ptx, extra.as_str()]
        .iter()
        .filter(|o| !o.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Prints a successful build's log (warnings; with `-cl-nv-verbose`, each kernel's
/// registers and spills) to stderr.
fn print_build_log(program: &core::Program, device: &DeviceInfo, kind: ProgramKind) {
    if let Ok(ProgramBuildInfoResult::BuildLog(log)) =
        core::get_program_build_info(program, device.device_id, ProgramBuildInfo::BuildLog)
    {
        eprintln!("build log of `{}` on {}:\n{log}", kind.name(), device.name);
    }
}

/// Builds `kind` for one device in `context`, from a cached binary when one matches.
pub(crate) fn build(
    context: &core::Context,
    device: &DeviceInfo,
    kind: ProgramKind,
    cache: &KernelCache,
    extra: &BuildOptions,
) -> Result<core::Program, BackendError> {
    let source = kind.source();
    let options = build_options(device, kind, extra);
    let print_log = |p: &core::Program| {
        if extra.print_log {
            print_build_log(p, device, kind);
        }
    };
    let options = options.as_str();
    let key = cache_key(&[
        &source,
        &device.name,
        &device.driver_version,
        &device.platform_version,
        options,
    ]);
    let file = cache
        .dir()
        .map(|d| d.join(format!("{}-{key:032x}.bin", kind.name())));
    let start = Instant::now();

    let cached = lock(binaries()).get(&key).cloned();
    let (binary, origin) = match cached {
        Some(b) => (Some(b), BuildSource::MemoryCache),
        None => (
            file.as_deref()
                .and_then(|f| std::fs::read(f).ok())
                .map(Arc::new),
            BuildSource::DiskCache,
        ),
    };
    if let Some(bin) = binary {
        match from_binary(context, device, &bin, options) {
            Ok(p) => {
                print_log(&p);
                if let Some(f) = file.as_deref().filter(|f| !f.exists()) {
                    store(f, &bin);
                }
                lock(binaries()).insert(key, bin);
                record(kind, device, start, origin);
                return Ok(p);
            }
            Err(e) => log::warn!(
                "cached binary of the {} program for {} is unusable ({e}); rebuilding",
                kind.name(),
                device.name
            ),
        }
    }

    let program = from_source(context, device, &source, options)?;
    record(kind, device, start, BuildSource::Compiled);
    print_log(&program);
    match program_binary(&program) {
        Ok(bin) => {
            if let Some(f) = &file {
                store(f, &bin);
            }
            lock(binaries()).insert(key, Arc::new(bin));
        }
        Err(e) => log::warn!(
            "could not read back the {} program binary: {e}",
            kind.name()
        ),
    }
    Ok(program)
}

fn record(kind: ProgramKind, device: &DeviceInfo, start: Instant, source: BuildSource) {
    let seconds = start.elapsed().as_secs_f64();
    log::info!(
        "OpenCL program `{}` for {}: {:.3} s ({source:?})",
        kind.name(),
        device.name,
        seconds
    );
    lock(build_log()).push(ProgramBuildTime {
        program: kind.name(),
        device: device.name.clone(),
        seconds,
        source,
    });
}

fn from_binary(
    context: &core::Context,
    device: &DeviceInfo,
    binary: &[u8],
    options: &str,
) -> Result<core::Program, BackendError> {
    let program = core::create_program_with_binary(context, &[device.device_id], &[binary])
        .map_err(|e| driver_error("clCreateProgramWithBinary", &e))?;
    let opts = CString::new(options).unwrap_or_default();
    core::build_program(&program, Some(&[device.device_id]), &opts, None, None)
        .map_err(|e| driver_error("clBuildProgram (binary)", &e))?;
    Ok(program)
}

fn from_source(
    context: &core::Context,
    device: &DeviceInfo,
    source: &str,
    options: &str,
) -> Result<core::Program, BackendError> {
    let src = CString::new(source).map_err(|_| BackendError::Driver {
        code: 0,
        message: "kernel source contains a NUL byte".into(),
        build_log: None,
    })?;
    let program = core::create_program_with_source(context, &[src])
        .map_err(|e| driver_error("clCreateProgramWithSource", &e))?;
    let opts = CString::new(options).unwrap_or_default();
    if let Err(e) = core::build_program(&program, Some(&[device.device_id]), &opts, None, None) {
        let build_log = match core::get_program_build_info(
            &program,
            device.device_id,
            ProgramBuildInfo::BuildLog,
        ) {
            Ok(ProgramBuildInfoResult::BuildLog(l)) => l,
            _ => String::new(),
        };
        // CL_BUILD_PROGRAM_FAILURE unless the driver said otherwise.
        let code = e.api_status().map(|s| s as i32).unwrap_or(-11);
        return Err(BackendError::Driver {
            code,
            message: format!("building an OpenCL program for {} failed", device.name),
            build_log: Some(build_log),
        });
    }
    Ok(program)
}

pub(crate) fn program_binary(program: &core::Program) -> Result<Vec<u8>, BackendError> {
    match core::get_program_info(program, ProgramInfo::Binaries) {
        Ok(ProgramInfoResult::Binaries(mut b)) if b.len() == 1 && !b[0].is_empty() => {
            Ok(b.swap_remove(0))
        }
        Ok(_) => Err(BackendError::Driver {
            code: 0,
            message: "the driver returned no program binary".into(),
            build_log: None,
        }),
        Err(e) => Err(driver_error("clGetProgramInfo(BINARIES)", &e)),
    }
}

/// Writes a cache file atomically (temporary file, then rename); failures only warn.
fn store(file: &Path, bin: &[u8]) {
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    let res = file
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&tmp, bin))
        .and_then(|()| std::fs::rename(&tmp, file));
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        log::warn!("could not store a kernel binary in {}: {e}", file.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::backend;
    use crate::{OpenClBackend, OpenClConfig};

    #[test]
    fn a_build_failure_returns_the_build_log() {
        let Some(b) = backend() else { return };
        let ctx = &b.devices[0];
        let bad = "__kernel void broken(__global uint *a) { a[0] = undeclared_thing; }";
        match from_source(&ctx.context, ctx.info, bad, "") {
            Err(BackendError::Driver {
                code,
                build_log: Some(log),
                ..
            }) => {
                assert_ne!(code, 0);
                assert!(log.contains("undeclared_thing"), "log: {log}");
            }
            Err(e) => panic!("expected a build log, got {e}"),
            Ok(_) => panic!("a broken kernel built"),
        }
    }

    #[test]
    fn binaries_are_cached_on_disk_and_reload() {
        if backend().is_none() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("sluice-kcache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let b = OpenClBackend::new(OpenClConfig {
            devices: crate::DeviceSelector::Index(crate::testing::test_device()),
            kernel_cache: KernelCache::Dir(dir.clone()),
            ..OpenClConfig::default()
        })
        .unwrap();
        b.devices[0].program(ProgramKind::Fr).unwrap();
        let files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("fr-") && name.ends_with(".bin"), "{name}");
        let bin = std::fs::read(&files[0]).unwrap();
        let ctx = &b.devices[0];
        from_binary(
            &ctx.context,
            ctx.info,
            &bin,
            &build_options(ctx.info, ProgramKind::Fr, &ctx.build_options),
        )
        .unwrap();
        let times = program_build_times();
        assert!(times.iter().any(|t| t.program == "fr" && t.seconds >= 0.0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cache_key_separates_parts() {
        assert_ne!(cache_key(&["ab", "c"]), cache_key(&["a", "bc"]));
        assert_eq!(cache_key(&["x"]), cache_key(&["x"]));
    }
}
