//! Making sure an OpenCL runtime (the ICD loader and at least one driver) is present.
//!
//! sluice's OpenCL tests and benchmarks run on PoCL where there is no GPU. A fresh Debian
//! machine has neither the loader nor PoCL: as root `cargo xtask test` and `cargo xtask
//! bench` install them with apt-get; otherwise the tests stop at once and the benchmarks
//! run on the CPU alone, both naming the command to run.

use std::path::Path;
use std::process::Command;

/// The Debian packages that give an OpenCL loader, a CPU driver (PoCL) and `clinfo`.
const OPENCL_PACKAGES: [&str; 3] = ["ocl-icd-opencl-dev", "pocl-opencl-icd", "clinfo"];

/// Whether the loader library and at least one installable client driver are present.
fn opencl_runtime_present() -> bool {
    loader_present() && icd_present()
}

fn loader_present() -> bool {
    [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
    ]
    .iter()
    .any(|dir| Path::new(dir).join("libOpenCL.so").exists())
}

fn icd_present() -> bool {
    let dir = std::env::var("OCL_ICD_VENDORS").unwrap_or_else(|_| "/etc/OpenCL/vendors".into());
    std::fs::read_dir(dir).is_ok_and(|mut entries| {
        entries.any(|e| e.is_ok_and(|e| e.path().extension().is_some_and(|ext| ext == "icd")))
    })
}

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Installs the OpenCL runtime if missing and we are root; otherwise returns an error that
/// names the command to run.
pub fn ensure_opencl_runtime() -> Result<(), String> {
    if opencl_runtime_present() {
        return Ok(());
    }
    let install = format!("apt-get install -y {}", OPENCL_PACKAGES.join(" "));
    if !running_as_root() {
        return Err(format!(
            "no OpenCL runtime found (the OpenCL backend needs the loader and a driver, \
             PoCL where there is no GPU).\n\
             Run once: sudo apt-get update && sudo {install}"
        ));
    }
    eprintln!(
        "xtask: no OpenCL runtime found; installing {}",
        OPENCL_PACKAGES.join(" ")
    );
    let ok = Command::new("apt-get")
        .args(["update", "-qq"])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .is_ok_and(|s| s.success())
        && Command::new("apt-get")
            .args(["install", "-y", "-qq"])
            .args(OPENCL_PACKAGES)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|s| s.success());
    if ok && opencl_runtime_present() {
        Ok(())
    } else {
        Err(format!(
            "installing the OpenCL runtime failed; run `{install}` and try again"
        ))
    }
}
