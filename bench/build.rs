//! Records the commit sluice-bench is built from (`SLUICE_BENCH_COMMIT`), so that a run's
//! results.json says which code it measured even where the runner runs without the
//! repository (the GPU machine's bundle).

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn main() {
    let commit = match git(&["rev-parse", "--short=7", "HEAD"]) {
        // Tracked files that differ from the commit make the build not that commit's code.
        Some(hash) => match git(&["status", "--porcelain", "--untracked-files=no"]) {
            Some(changes) if changes.is_empty() => hash,
            _ => format!("{hash}-dirty"),
        },
        None => "unknown".to_owned(),
    };
    println!("cargo:rustc-env=SLUICE_BENCH_COMMIT={commit}");
    // Run again when HEAD or the index moves (commits, checkouts, staging) or a file of the
    // workspace changes (a tree that becomes dirty or clean); not for target/.
    for path in ["HEAD", "index"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(p) = git(&["rev-parse", "--git-path", &head_ref]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    if let Ok(entries) = std::fs::read_dir(&workspace) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name != "target" && name != ".git" {
                println!("cargo:rerun-if-changed={}", entry.path().display());
            }
        }
    }
}
