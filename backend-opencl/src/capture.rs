//! Launch capture for profiling outside OpenCL ([`CaptureConfig`]; `SLUICE_CAPTURE_DIR=DIR`
//! and `SLUICE_CAPTURE_KERNEL=name[,name..]` through the environment) records the first
//! `count` (`SLUICE_CAPTURE_COUNT`, default 1) launches of each named kernel into
//! `DIR/<kernel>-<k>/`:
//!
//! - `program.bin`: the program binary the launch ran (PTX text on NVIDIA);
//! - `arg<i>.bin` / `arg<i>.after.bin`: every buffer argument before and after the launch;
//! - `launch.json`: the kernel, the global and local sizes, and the arguments in order
//!   (`mem` with its files, `u32` / `u64` with the value, `local` with its bytes).
//!
//! Why: NVIDIA's profiler (`ncu`) sees no OpenCL kernel, but the same PTX launched through
//! the CUDA driver is a CUDA kernel to it. `tools/replay_capture.py` (carried in the device
//! bundle) replays a capture with CuPy, checks the result against `arg<i>.after.bin` and
//! then repeats the launch for `ncu`. A capture reads whole buffers back, so it is slow and
//! only for such runs; a failure to write one is logged and the launch runs regardless.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ocl::core::{self, MemInfo, MemInfoResult};

use crate::context::{AfterLaunch, DeviceCtx, LaunchArg, LaunchObserver, ObservedLaunch};
use crate::tuning::CaptureConfig;
use crate::util::lock;

/// Records the first launches of chosen kernels, as a [`CaptureConfig`] says.
pub(crate) struct Capture {
    config: CaptureConfig,
    /// Launches captured so far, per kernel.
    taken: Mutex<HashMap<String, usize>>,
}

impl Capture {
    /// A capture as `config` says, none taken yet.
    pub(crate) fn new(config: CaptureConfig) -> Self {
        Capture {
            config,
            taken: Mutex::new(HashMap::new()),
        }
    }

    /// The directory a launch of `kernel` that is running now is captured into, if it is
    /// within the first `count` (each call counts one launch).
    fn slot(&self, kernel: &str) -> Option<PathBuf> {
        let mut taken = lock(&self.taken);
        let k = taken.entry(kernel.to_owned()).or_insert(0);
        if *k >= self.config.count {
            return None;
        }
        *k += 1;
        Some(self.config.dir.join(format!("{kernel}-{}", *k - 1)))
    }
}

impl LaunchObserver for Capture {
    fn watches(&self, kernel: &str) -> bool {
        self.config.kernels.iter().any(|k| k == kernel)
    }

    /// Claims a slot and writes the buffers before the launch; after it, the buffers again,
    /// the program binary and `launch.json`. A failure is logged and the launch runs.
    fn before(&self, ctx: &DeviceCtx, launch: &ObservedLaunch<'_>) -> Option<AfterLaunch> {
        let dir = self.slot(launch.kernel)?;
        if let Err(e) = write_buffers(&dir, ctx, launch.args, "") {
            log::warn!("capture of {} into {}: {e}", launch.kernel, dir.display());
        }
        Some(Box::new(
            move |ctx: &DeviceCtx, launch: &ObservedLaunch<'_>| {
                let written = write_buffers(&dir, ctx, launch.args, ".after")
                    .and_then(|()| {
                        crate::program::program_binary(launch.program).map_err(|e| e.to_string())
                    })
                    .and_then(|bin| write_launch(&dir, launch, &bin));
                match written {
                    Ok(()) => log::info!(
                        "captured a launch of {} into {}",
                        launch.kernel,
                        dir.display()
                    ),
                    Err(e) => {
                        log::warn!("capture of {} into {}: {e}", launch.kernel, dir.display())
                    }
                }
            },
        ))
    }
}

/// The whole of a buffer, through the context's reads (staged for large buffers).
fn read_all(ctx: &DeviceCtx, mem: &core::Mem) -> Result<Vec<u8>, String> {
    let bytes = match core::get_mem_object_info(mem, MemInfo::Size) {
        Ok(MemInfoResult::Size(b)) => b,
        other => return Err(format!("buffer size unknown: {other:?}")),
    };
    let mut words = vec![0u32; bytes / 4];
    ctx.read(mem, 0, &mut words)
        .map_err(|e| format!("read back: {e}"))?;
    Ok(words.iter().flat_map(|w| w.to_le_bytes()).collect())
}

/// Writes the buffers' contents as `arg<i><suffix>.bin`.
fn write_buffers(
    dir: &Path,
    ctx: &DeviceCtx,
    args: &[LaunchArg],
    suffix: &str,
) -> Result<(), String> {
    ctx.finish().map_err(|e| format!("finish: {e}"))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (i, a) in args.iter().enumerate() {
        if let LaunchArg::Mem(m) = a {
            let file = dir.join(format!("arg{i}{suffix}.bin"));
            std::fs::write(&file, read_all(ctx, m)?)
                .map_err(|e| format!("{}: {e}", file.display()))?;
        }
    }
    Ok(())
}

/// Writes `launch.json` and `program.bin`.
fn write_launch(dir: &Path, launch: &ObservedLaunch<'_>, program: &[u8]) -> Result<(), String> {
    let (kernel, args, global, local) = (launch.kernel, launch.args, launch.global, launch.local);
    let mut json = format!(
        "{{\"kernel\": \"{kernel}\", \"global\": {global}, \"local\": {}, \"args\": [",
        local.unwrap_or(0)
    );
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            json.push_str(", ");
        }
        let _ = match a {
            LaunchArg::Mem(_) => write!(
                json,
                "{{\"kind\": \"mem\", \"file\": \"arg{i}.bin\", \"after\": \"arg{i}.after.bin\"}}"
            ),
            LaunchArg::U32(v) => write!(json, "{{\"kind\": \"u32\", \"value\": {v}}}"),
            LaunchArg::U64(v) => write!(json, "{{\"kind\": \"u64\", \"value\": {v}}}"),
            LaunchArg::Local(b) => write!(json, "{{\"kind\": \"local\", \"bytes\": {b}}}"),
        };
    }
    json.push_str("]}\n");
    std::fs::write(dir.join("launch.json"), json).map_err(|e| format!("launch.json: {e}"))?;
    std::fs::write(dir.join("program.bin"), program).map_err(|e| format!("program.bin: {e}"))
}

#[cfg(test)]
mod tests {
    use ff::Field;
    use sluice_backend::{ComputeBackend, NttOrder, Transform};
    use sluice_field::Fr;

    use crate::repr::as_words;
    use crate::testing::{backend_with, rng, test_device};
    use crate::{CaptureConfig, DeviceSelector, OpenClConfig, OpenClTuning};

    /// A captured launch holds the kernel's arguments in order, each buffer before and after
    /// the launch, and the program binary; only the first `count` launches of each chosen
    /// kernel are captured, and launches built only to query a kernel claim none.
    #[test]
    fn a_captured_launch_records_arguments_and_buffers() {
        let dir = std::env::temp_dir().join(format!("sluice-capture-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let capture = CaptureConfig {
            dir: dir.clone(),
            kernels: ["fr_mul_assign", "fr_sub_assign", "fr_ntt_pass_r1"]
                .map(String::from)
                .into(),
            count: 2,
        };
        let Some(b) = backend_with(OpenClConfig {
            devices: DeviceSelector::Index(test_device()),
            tuning: OpenClTuning {
                capture: Some(capture),
                ..OpenClTuning::default()
            },
            ..OpenClConfig::default()
        }) else {
            return;
        };
        let seed = 31;
        let mut r = rng(seed);
        let a: Vec<Fr> = (0..100).map(|_| Fr::random(&mut r)).collect();
        let bv: Vec<Fr> = (0..100).map(|_| Fr::random(&mut r)).collect();
        let mut da = b.upload_fr("a", &a, a.len()).unwrap();
        let db = b.upload_fr("b", &bv, bv.len()).unwrap();
        for _ in 0..3 {
            b.sub_assign(&mut da, &db).unwrap(); // the third is past the count
        }
        // 2^10: two passes, each launch built once before to query the kernel's group limit.
        let mut x = b.upload_fr("x", &[Fr::ONE; 1 << 10], 1 << 10).unwrap();
        b.transform(&mut x, Transform::Ntt, NttOrder::NaturalToNatural)
            .unwrap();
        let launch = dir.join("fr_sub_assign-0");
        let json = std::fs::read_to_string(launch.join("launch.json")).unwrap();
        assert!(
            json.starts_with("{\"kernel\": \"fr_sub_assign\", \"global\": "),
            "{json}"
        );
        assert!(
            json.contains(
                "\"args\": [{\"kind\": \"mem\", \"file\": \"arg0.bin\", \"after\": \
                 \"arg0.after.bin\"}, {\"kind\": \"mem\", \"file\": \"arg1.bin\", \"after\": \
                 \"arg1.after.bin\"}, {\"kind\": \"u32\", \"value\": 100}]"
            ),
            "{json}"
        );
        let words =
            |v: &[Fr]| -> Vec<u8> { as_words(v).iter().flat_map(|w| w.to_le_bytes()).collect() };
        let diff: Vec<Fr> = a.iter().zip(&bv).map(|(x, y)| x - y).collect();
        let read = |f: &str| std::fs::read(launch.join(f)).unwrap();
        // Buffers may be padded past the 100 elements (3200 bytes).
        assert_eq!(read("arg0.bin")[..3200], words(&a)[..], "seed {seed}");
        assert_eq!(
            read("arg0.after.bin")[..3200],
            words(&diff)[..],
            "seed {seed}"
        );
        assert_eq!(read("arg1.bin")[..3200], words(&bv)[..], "seed {seed}");
        assert!(!read("program.bin").is_empty());
        assert!(dir.join("fr_sub_assign-1").join("launch.json").exists());
        assert!(
            !dir.join("fr_sub_assign-2").exists(),
            "two launches asked for"
        );
        assert!(!dir.join("fr_mul_assign-0").exists(), "no such launch ran");
        for k in 0..2 {
            let pass = dir.join(format!("fr_ntt_pass_r1-{k}")).join("launch.json");
            assert!(pass.exists(), "{}", pass.display());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
