//! Device discovery: the OpenCL platforms and devices of this machine, listed once per
//! process, and the selection of the devices a backend computes on.

use std::sync::OnceLock;

use ocl::core::{self, DeviceInfo as ClDeviceInfo, DeviceInfoResult, PlatformInfo};
use sluice_backend::BackendError;

/// `CL_PLATFORM_NOT_FOUND_KHR`: what the ICD loader answers when no driver is registered.
const PLATFORM_NOT_FOUND_KHR: i32 = -1001;

/// One OpenCL device, as discovered at startup.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// Position in [`devices`]: the index [`DeviceSelector::Index`] refers to.
    pub index: usize,
    /// The device's name (`CL_DEVICE_NAME`).
    pub name: String,
    /// The device's vendor (`CL_DEVICE_VENDOR`).
    pub vendor: String,
    /// The driver version (`CL_DRIVER_VERSION`).
    pub driver_version: String,
    /// The platform's name (`CL_PLATFORM_NAME`).
    pub platform_name: String,
    /// The platform's version (`CL_PLATFORM_VERSION`).
    pub platform_version: String,
    /// Global memory in bytes (`CL_DEVICE_GLOBAL_MEM_SIZE`).
    pub global_mem_bytes: u64,
    /// The largest single allocation in bytes (`CL_DEVICE_MAX_MEM_ALLOC_SIZE`).
    pub max_alloc_bytes: u64,
    /// Compute units (`CL_DEVICE_MAX_COMPUTE_UNITS`).
    pub compute_units: u32,
    /// The largest work group (`CL_DEVICE_MAX_WORK_GROUP_SIZE`).
    pub max_work_group_size: usize,
    /// Whether the device is a GPU (`CL_DEVICE_TYPE_GPU`); sizes the MSM's parallelism.
    pub is_gpu: bool,
    /// Whether the device's memory is the host's RAM: a CPU device, or one reporting
    /// `CL_DEVICE_HOST_UNIFIED_MEMORY` (an integrated GPU).
    pub host_unified_memory: bool,
    pub(crate) platform_id: core::PlatformId,
    pub(crate) device_id: core::DeviceId,
}

/// One line: index, name, vendor, platform, driver, memory, compute units.
impl std::fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "OpenCL device {}: {} ({}; {}; driver {}), {} MiB, max alloc {} MiB, {} CUs",
            self.index,
            self.name,
            self.vendor,
            self.platform_version,
            self.driver_version,
            self.global_mem_bytes >> 20,
            self.max_alloc_bytes >> 20,
            self.compute_units
        )
    }
}

impl DeviceInfo {
    /// Whether kernels for this device take the inline-PTX path (the vendor is NVIDIA).
    pub fn is_nvidia(&self) -> bool {
        self.vendor.to_ascii_uppercase().contains("NVIDIA")
    }
}

/// Which devices a backend uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceSelector {
    /// The device at this index of [`devices`].
    Index(usize),
    /// These devices, in this order. An index may repeat: each entry gets its own context
    /// and queue (how the multi-device code is tested on a single PoCL device).
    Indices(Vec<usize>),
    /// Every device whose name contains this substring (case-insensitive).
    NameContains(String),
    /// Every GPU (`CL_DEVICE_TYPE_GPU`); an error if there is none.
    Gpus,
    /// Every GPU, or device 0 where there is none (a machine with only a CPU driver such
    /// as PoCL): what benchmarks default to, since a CPU driver next to a GPU would only
    /// slow the GPU's work down.
    GpusOrFirst,
    /// The GPU at this position among the GPUs (`gpu0` is the first), whatever other
    /// devices (a CPU driver such as PoCL) are listed before it.
    Gpu(usize),
    /// Every device.
    All,
}

impl DeviceSelector {
    /// Parses a command-line or environment setting: `all`, `gpus` (every GPU), `gpuN`
    /// (the Nth GPU), an index (`1`), indices (`0,0`), or otherwise a name substring
    /// (`H200`).
    pub fn parse(s: &str) -> Self {
        let s = s.trim();
        if s.eq_ignore_ascii_case("all") {
            return DeviceSelector::All;
        }
        if s.eq_ignore_ascii_case("gpus") {
            return DeviceSelector::Gpus;
        }
        if let Some(Ok(n)) = s
            .strip_prefix("gpu")
            .or_else(|| s.strip_prefix("GPU"))
            .map(str::parse)
        {
            return DeviceSelector::Gpu(n);
        }
        let ix: Result<Vec<usize>, _> = s.split(',').map(|p| p.trim().parse()).collect();
        match ix {
            Ok(v) if v.len() == 1 => DeviceSelector::Index(v[0]),
            Ok(v) => DeviceSelector::Indices(v),
            Err(_) => DeviceSelector::NameContains(s.to_owned()),
        }
    }

    /// The devices this selector picks.
    ///
    /// # Errors
    /// [`BackendError::NoMatchingDevice`] naming the selection and the devices there are
    /// when it picks none (or an index past the last); the discovery's
    /// [`BackendError::Driver`] when there is no OpenCL device at all ([`devices`]).
    pub fn select(&self) -> Result<Vec<&'static DeviceInfo>, BackendError> {
        let all = devices()?;
        let chosen: Vec<&'static DeviceInfo> = match self {
            DeviceSelector::Index(i) => all.get(*i).into_iter().collect(),
            DeviceSelector::Indices(ix) => {
                let mut v = Vec::with_capacity(ix.len());
                for i in ix {
                    v.push(all.get(*i).ok_or_else(|| no_device(self, all))?);
                }
                v
            }
            DeviceSelector::NameContains(s) => {
                let s = s.to_ascii_lowercase();
                all.iter()
                    .filter(|d| d.name.to_ascii_lowercase().contains(&s))
                    .collect()
            }
            DeviceSelector::Gpus => all.iter().filter(|d| d.is_gpu).collect(),
            DeviceSelector::GpusOrFirst => {
                let gpus: Vec<_> = all.iter().filter(|d| d.is_gpu).collect();
                match gpus.is_empty() {
                    true => all.iter().take(1).collect(),
                    false => gpus,
                }
            }
            DeviceSelector::Gpu(n) => all
                .iter()
                .filter(|d| d.is_gpu)
                .nth(*n)
                .into_iter()
                .collect(),
            DeviceSelector::All => all.iter().collect(),
        };
        if chosen.is_empty() {
            return Err(no_device(self, all));
        }
        Ok(chosen)
    }
}

/// The selection as [`DeviceSelector::parse`] reads it (`gpu0`, `1`, `0,0`, `H200`), for
/// the error naming what was asked.
impl std::fmt::Display for DeviceSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceSelector::Index(i) => write!(f, "{i}"),
            DeviceSelector::Indices(ix) => {
                let ix: Vec<String> = ix.iter().map(usize::to_string).collect();
                f.write_str(&ix.join(","))
            }
            DeviceSelector::NameContains(s) => f.write_str(s),
            DeviceSelector::Gpus => f.write_str("gpus"),
            DeviceSelector::GpusOrFirst => f.write_str("every GPU, else device 0"),
            DeviceSelector::Gpu(n) => write!(f, "gpu{n}"),
            DeviceSelector::All => f.write_str("all"),
        }
    }
}

/// The configuration error for a selection that picks nothing: what was asked and what
/// there is (the index, name and whether each device is a GPU, which `gpuN` counts).
fn no_device(sel: &DeviceSelector, all: &[DeviceInfo]) -> BackendError {
    let available: Vec<String> = all
        .iter()
        .map(|d| {
            let kind = if d.is_gpu { "GPU" } else { "not a GPU" };
            format!("{}: {} ({kind})", d.index, d.name)
        })
        .collect();
    BackendError::NoMatchingDevice {
        selector: sel.to_string(),
        available: match available.is_empty() {
            true => "no devices".into(),
            false => available.join(", "),
        },
    }
}

/// Every OpenCL device of every platform, discovered once per process.
///
/// Returns an error (never panics, never waits) when no OpenCL platform is installed: the
/// ICD loader's "no platform" answer is checked before `ocl` is asked, because `ocl` retries
/// that answer for ten seconds.
pub fn devices() -> Result<&'static [DeviceInfo], BackendError> {
    static DEVICES: OnceLock<Result<Vec<DeviceInfo>, (i32, String)>> = OnceLock::new();
    match DEVICES.get_or_init(discover) {
        Ok(v) => Ok(v),
        Err((code, message)) => Err(BackendError::Driver {
            code: *code,
            message: message.clone(),
            build_log: None,
        }),
    }
}

fn discover() -> Result<Vec<DeviceInfo>, (i32, String)> {
    let mut count: core::ffi::cl_uint = 0;
    // SAFETY: a size query: no list pointer, `count` outlives the call.
    let status = unsafe { core::ffi::clGetPlatformIDs(0, std::ptr::null_mut(), &mut count) };
    if status == PLATFORM_NOT_FOUND_KHR || (status == 0 && count == 0) {
        return Err((
            PLATFORM_NOT_FOUND_KHR,
            "no OpenCL platform found (install an OpenCL driver, e.g. pocl-opencl-icd)".into(),
        ));
    }
    if status != 0 {
        return Err((status, format!("clGetPlatformIDs failed ({status})")));
    }
    let platforms = core::get_platform_ids().map_err(|e| to_pair("clGetPlatformIDs", &e))?;
    let mut out = Vec::new();
    for platform in platforms {
        let pinfo = |what| {
            core::get_platform_info(platform, what)
                .map(|r| r.to_string())
                .unwrap_or_default()
        };
        let platform_name = pinfo(PlatformInfo::Name);
        let platform_version = pinfo(PlatformInfo::Version);
        let ids = match core::get_device_ids(platform, Some(core::DeviceType::ALL), None) {
            Ok(ids) => ids,
            Err(e) => {
                log::warn!("OpenCL platform `{platform_name}` lists no devices: {e}");
                continue;
            }
        };
        for device_id in ids {
            let info = |what| core::get_device_info(device_id, what);
            let text = |what| info(what).map(|r| r.to_string()).unwrap_or_default();
            let u64_of = |what| match info(what) {
                Ok(DeviceInfoResult::GlobalMemSize(v))
                | Ok(DeviceInfoResult::MaxMemAllocSize(v)) => v,
                _ => 0,
            };
            let compute_units = match info(ClDeviceInfo::MaxComputeUnits) {
                Ok(DeviceInfoResult::MaxComputeUnits(v)) => v,
                _ => 1,
            };
            let max_work_group_size = match info(ClDeviceInfo::MaxWorkGroupSize) {
                Ok(DeviceInfoResult::MaxWorkGroupSize(v)) => v,
                _ => 1,
            };
            let is_gpu = match info(ClDeviceInfo::Type) {
                Ok(DeviceInfoResult::Type(t)) => t.contains(core::DeviceType::GPU),
                _ => false,
            };
            let is_cpu = match info(ClDeviceInfo::Type) {
                Ok(DeviceInfoResult::Type(t)) => t.contains(core::DeviceType::CPU),
                _ => false,
            };
            let unified = matches!(
                info(ClDeviceInfo::HostUnifiedMemory),
                Ok(DeviceInfoResult::HostUnifiedMemory(true))
            );
            out.push(DeviceInfo {
                index: out.len(),
                name: text(ClDeviceInfo::Name),
                vendor: text(ClDeviceInfo::Vendor),
                driver_version: text(ClDeviceInfo::DriverVersion),
                platform_name: platform_name.clone(),
                platform_version: platform_version.clone(),
                global_mem_bytes: u64_of(ClDeviceInfo::GlobalMemSize),
                max_alloc_bytes: u64_of(ClDeviceInfo::MaxMemAllocSize),
                compute_units,
                max_work_group_size,
                is_gpu,
                host_unified_memory: is_cpu || unified,
                platform_id: platform,
                device_id,
            });
        }
    }
    if out.is_empty() {
        return Err((0, "OpenCL platforms found, but no device".into()));
    }
    for d in &out {
        log::info!("{d}");
    }
    Ok(out)
}

fn to_pair(what: &str, e: &core::Error) -> (i32, String) {
    (
        e.api_status().map(|s| s as i32).unwrap_or(0),
        format!("{what}: {e}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHILD: &str = "SLUICE_TEST_NO_PLATFORM_CHILD";
    const SKIPPED: &str = "no-platform check skipped: the ICD loader still lists platforms";

    #[test]
    fn selector_parsing() {
        assert_eq!(DeviceSelector::parse("all"), DeviceSelector::All);
        assert_eq!(DeviceSelector::parse("gpus"), DeviceSelector::Gpus);
        assert_eq!(DeviceSelector::parse("gpu1"), DeviceSelector::Gpu(1));
        assert_eq!(
            DeviceSelector::parse("gpuX"),
            DeviceSelector::NameContains("gpuX".into())
        );
        assert_eq!(DeviceSelector::parse(" 1 "), DeviceSelector::Index(1));
        assert_eq!(
            DeviceSelector::parse("0,0"),
            DeviceSelector::Indices(vec![0, 0])
        );
        assert_eq!(
            DeviceSelector::parse("H200"),
            DeviceSelector::NameContains("H200".into())
        );
    }

    #[test]
    fn selection_by_index_name_and_all() {
        if crate::testing::backend().is_none() {
            return;
        }
        let all = devices().unwrap();
        assert!(all
            .iter()
            .enumerate()
            .all(|(i, d)| d.index == i && d.max_alloc_bytes > 0));
        let first = &DeviceSelector::Index(0).select().unwrap()[0];
        assert_eq!(first.index, 0);
        let part = first.name[..first.name.len().min(6)].to_ascii_uppercase();
        let by_name = DeviceSelector::NameContains(part).select().unwrap();
        assert!(by_name.iter().any(|d| d.index == 0));
        assert_eq!(DeviceSelector::All.select().unwrap().len(), all.len());
        assert_eq!(
            DeviceSelector::Indices(vec![0, 0]).select().unwrap().len(),
            2
        );
        assert!(matches!(
            DeviceSelector::Index(all.len()).select(),
            Err(BackendError::NoMatchingDevice { .. })
        ));
        let gpus: Vec<usize> = all.iter().filter(|d| d.is_gpu).map(|d| d.index).collect();
        let default: Vec<usize> = DeviceSelector::GpusOrFirst
            .select()
            .unwrap()
            .iter()
            .map(|d| d.index)
            .collect();
        match gpus.is_empty() {
            true => assert_eq!(default, vec![0]),
            false => assert_eq!(default, gpus),
        }
        assert!(matches!(
            DeviceSelector::NameContains("no such device \u{1}".into()).select(),
            Err(BackendError::NoMatchingDevice { .. })
        ));
    }

    /// A selection that matches nothing is a configuration error naming the selection and
    /// the devices there are, not a driver error: `gpuN` past the GPUs (`gpu0` on PoCL's
    /// CPU device alone), an index or one of several indices past the last device.
    #[test]
    fn a_selection_matching_nothing_names_what_was_asked_and_what_exists() {
        let Ok(all) = devices() else {
            return;
        };
        let gpus = all.iter().filter(|d| d.is_gpu).count();
        let cases = [
            (DeviceSelector::Gpu(gpus), format!("gpu{gpus}")),
            (DeviceSelector::Index(all.len()), all.len().to_string()),
            (
                DeviceSelector::Indices(vec![0, all.len() + 3]),
                format!("0,{}", all.len() + 3),
            ),
            (
                DeviceSelector::parse("no such device"),
                "no such device".into(),
            ),
        ];
        for (sel, spelled) in cases {
            match sel.select() {
                Err(BackendError::NoMatchingDevice {
                    selector,
                    available,
                }) => {
                    assert_eq!(selector, spelled);
                    for d in all {
                        assert!(
                            available.contains(&format!("{}: {}", d.index, d.name)),
                            "{available}"
                        );
                    }
                }
                other => panic!(
                    "{sel:?}: expected NoMatchingDevice, got {:?}",
                    other.map(|v| v.len())
                ),
            }
        }
        if gpus == 0 {
            // Where only a CPU driver (PoCL) exists, `gpu0` and `gpus` match nothing.
            for sel in ["gpu0", "gpus"] {
                let err = DeviceSelector::parse(sel).select().unwrap_err();
                assert!(
                    matches!(err, BackendError::NoMatchingDevice { .. }),
                    "{err}"
                );
                assert!(err.to_string().contains(&format!("`{sel}`")), "{err}");
                assert!(err.to_string().contains("(not a GPU)"), "{err}");
            }
        }
        // The backend's constructor reports the same.
        let config = crate::OpenClConfig {
            devices: DeviceSelector::Index(all.len()),
            ..crate::OpenClConfig::default()
        };
        assert!(matches!(
            crate::OpenClBackend::new(config),
            Err(BackendError::NoMatchingDevice { .. })
        ));
    }

    /// Runs in a child process whose ICD loader sees no driver (see the next test).
    #[test]
    fn no_platform_child() {
        if std::env::var_os(CHILD).is_none() {
            return;
        }
        // Some ICD loaders ignore OCL_ICD_VENDORS; nothing to check where they do.
        let Err(err) = devices() else {
            println!("{SKIPPED}");
            return;
        };
        assert!(err.to_string().contains("no OpenCL platform"), "{err}");
        assert!(DeviceSelector::All.select().is_err());
    }

    /// Without any OpenCL driver, discovery is an error within moments, not a panic and not
    /// `ocl`'s ten-second retry loop.
    #[test]
    fn no_platform_is_a_quick_error() {
        let empty = std::env::temp_dir().join(format!("sluice-no-icd-{}", std::process::id()));
        std::fs::create_dir_all(&empty).unwrap();
        let start = std::time::Instant::now();
        let run = std::env::current_exe().and_then(|exe| {
            std::process::Command::new(exe)
                .args(["--exact", "device::tests::no_platform_child", "--nocapture"])
                .env(CHILD, "1")
                .env("OCL_ICD_VENDORS", &empty)
                .output()
        });
        // Seen on one machine: re-running the test binary failed to spawn ("nul byte found in
        // provided data"); that says nothing about discovery, so it skips rather than fails.
        let out = match run {
            Ok(out) => out,
            Err(e) => {
                let _ = std::fs::remove_dir(&empty);
                eprintln!("no-platform check skipped: cannot re-run the test binary ({e})");
                return;
            }
        };
        let elapsed = start.elapsed();
        let _ = std::fs::remove_dir(&empty);
        assert!(
            out.status.success(),
            "child failed: {}",
            String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr)
        );
        assert!(elapsed.as_secs() < 5, "discovery took {elapsed:?}");
        if String::from_utf8_lossy(&out.stdout).contains(SKIPPED) {
            eprintln!("{SKIPPED}");
        }
    }
}
