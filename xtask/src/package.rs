//! `cargo xtask package`: `cargo package` over the crates meant for crates.io, so CI catches
//! what would stop a publish (a file outside a crate, a path dependency without a version,
//! missing metadata) before anyone tries one.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace members published to crates.io, in dependency order. Every other member
/// says `publish = false` (a test checks both ways).
pub const PUBLISHED: [&str; 10] = [
    "sluice-field",
    "sluice-ntt",
    "sluice-msm",
    "sluice-backend",
    "sluice-backend-cpu",
    "sluice-backend-opencl",
    "sluice-groth16",
    "sluice-pipeline",
    "sluice-prover",
    "sluice-filecoin",
];

/// Published crates packaged without the verifying build: sluice-filecoin's build of
/// rust-fil-proofs in the debug profile took minutes of CI, and the test suite builds the
/// same sources anyway.
pub const UNVERIFIED: [&str; 1] = ["sluice-filecoin"];

/// The `cargo package` commands for [`PUBLISHED`]: every crate but those in [`UNVERIFIED`]
/// packaged and verified, then all of them packaged without verifying (so the unverified
/// ones resolve their sluice dependencies against the crates packaged beside them, which
/// crates.io does not have yet); `extra` arguments (for example `--allow-dirty`) appended.
pub fn commands(cargo: &str, extra: &[String]) -> [Command; 2] {
    let mut verified = Command::new(cargo);
    verified.arg("package");
    let mut all = Command::new(cargo);
    all.arg("package");
    for name in PUBLISHED {
        if !UNVERIFIED.contains(&name) {
            verified.args(["-p", name]);
        }
        all.args(["-p", name]);
    }
    verified.args(extra);
    all.args(extra);
    if !extra.iter().any(|a| a == "--no-verify") {
        all.arg("--no-verify");
    }
    [verified, all]
}

/// A workspace member's package name and whether its manifest says `publish = false`, read
/// from the manifest's text (xtask has no TOML parser; the manifests keep one key a line).
#[derive(Debug, PartialEq, Eq)]
pub struct Member {
    /// `[package] name`.
    pub name: String,
    /// `publish = false` is set.
    pub unpublished: bool,
}

/// Why the workspace's manifests could not be read.
#[derive(Debug)]
pub enum ManifestError {
    /// A manifest could not be read.
    Io {
        /// The manifest.
        path: std::path::PathBuf,
        /// What reading it said.
        error: std::io::Error,
    },
    /// A manifest lacks what the reader needs (`members`, a `name`).
    Malformed {
        /// The manifest.
        path: std::path::PathBuf,
        /// What is missing.
        what: &'static str,
    },
}

impl std::fmt::Display for ManifestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ManifestError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            ManifestError::Malformed { path, what } => {
                write!(f, "{}: no {what} found", path.display())
            }
        }
    }
}

/// The members of the workspace at `root` (its `members = [..]` list), each with its name
/// and `publish` setting.
pub fn members(root: &Path) -> Result<Vec<Member>, ManifestError> {
    let manifest = root.join("Cargo.toml");
    let text = read(&manifest)?;
    let list = text
        .split_once("members = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(list, _)| list)
        .ok_or(ManifestError::Malformed {
            path: manifest.clone(),
            what: "`members = [..]`",
        })?;
    let mut out = Vec::new();
    for dir in list
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
    {
        let path = root.join(dir).join("Cargo.toml");
        let text = read(&path)?;
        let key = |line: &str, key: &str| -> Option<String> {
            let (k, v) = line.split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches('"').to_owned())
        };
        // The `[package]` table's keys come before any other table's.
        let package: Vec<&str> = text
            .lines()
            .skip_while(|l| l.trim() != "[package]")
            .skip(1)
            .take_while(|l| !l.trim_start().starts_with('['))
            .collect();
        let name = package
            .iter()
            .find_map(|l| key(l, "name"))
            .ok_or(ManifestError::Malformed {
                path: path.clone(),
                what: "`[package] name`",
            })?;
        let unpublished = package
            .iter()
            .any(|l| key(l, "publish").is_some_and(|v| v == "false"));
        out.push(Member { name, unpublished });
    }
    Ok(out)
}

fn read(path: &Path) -> Result<String, ManifestError> {
    std::fs::read_to_string(path).map_err(|error| ManifestError::Io {
        path: path.to_owned(),
        error,
    })
}

/// The members whose `publish` setting disagrees with [`PUBLISHED`], as messages.
pub fn disagreements(members: &[Member]) -> Vec<String> {
    let mut out = Vec::new();
    for m in members {
        match (PUBLISHED.contains(&m.name.as_str()), m.unpublished) {
            (true, true) => out.push(format!(
                "{} is in xtask's PUBLISHED but says `publish = false`",
                m.name
            )),
            (false, false) => out.push(format!(
                "{} is not in xtask's PUBLISHED: add it there or set `publish = false`",
                m.name
            )),
            _ => {}
        }
    }
    for name in PUBLISHED {
        if !members.iter().any(|m| m.name == name) {
            out.push(format!(
                "{name} is in xtask's PUBLISHED but not a workspace member"
            ));
        }
    }
    out
}

/// Cargo's home: `$CARGO_HOME`, else `~/.cargo`.
fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo")
        })
}

/// The sources cargo unpacked from earlier runs' packages of [`PUBLISHED`] crates, under
/// `<cargo home>/registry/src/<overlay>/`. Cargo keys that folder by the package folder's
/// path and never unpacks a version again, so a rerun in the same checkout would verify a
/// crate against its dependencies' sources from the first run. Registries' own folders
/// (`index.*`) are left alone: these crates are not on crates.io.
pub fn overlay_extractions(cargo_home: &Path) -> Vec<PathBuf> {
    let Ok(registries) = std::fs::read_dir(cargo_home.join("registry").join("src")) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for registry in registries.flatten() {
        if registry.file_name().to_string_lossy().starts_with("index.") {
            continue;
        }
        let Ok(crates) = std::fs::read_dir(registry.path()) else {
            continue;
        };
        for unpacked in crates.flatten() {
            let name = unpacked.file_name().to_string_lossy().into_owned();
            let ours = PUBLISHED.iter().any(|p| {
                name.strip_prefix(p)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()))
            });
            if ours {
                found.push(unpacked.path());
            }
        }
    }
    found.sort();
    found
}

/// `cargo xtask package [cargo package args]`: checks [`PUBLISHED`] against the manifests,
/// then packages those crates together (cargo resolves their dependencies on each other
/// among the packages being made) and, unless `--no-verify` is passed, builds each package
/// from its own files.
pub fn run(root: &Path, cargo: &str, extra: &[String]) -> Result<(), String> {
    let members = members(root).map_err(|e| e.to_string())?;
    let wrong = disagreements(&members);
    if !wrong.is_empty() {
        return Err(wrong.join("\n"));
    }
    for stale in overlay_extractions(&cargo_home()) {
        std::fs::remove_dir_all(&stale)
            .map_err(|e| format!("removing {}: {e}", stale.display()))?;
    }
    for mut cmd in commands(cargo, extra) {
        cmd.current_dir(root);
        crate::run(&mut cmd)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("xtask lives in the workspace")
    }

    #[test]
    fn only_our_crates_unpacked_from_package_overlays_are_stale() {
        let home = std::env::temp_dir().join(format!("xtask-overlay-{}", std::process::id()));
        let overlay = home.join("registry/src/-22c3805da5a543b4");
        let index = home.join("registry/src/index.crates.io-1949cf8c6b5b557f");
        for dir in [
            overlay.join("sluice-groth16-0.1.0"),
            overlay.join("sluice-backend-cpu-0.1.0"),
            overlay.join("rayon-1.12.0"),
            index.join("sluice-field-0.1.0"),
        ] {
            std::fs::create_dir_all(dir).expect("temp dir");
        }
        let found = overlay_extractions(&home);
        std::fs::remove_dir_all(&home).expect("temp dir");
        assert_eq!(
            found,
            vec![
                overlay.join("sluice-backend-cpu-0.1.0"),
                overlay.join("sluice-groth16-0.1.0")
            ]
        );
    }

    #[test]
    fn published_matches_the_manifests() {
        let members = members(root()).expect("the workspace's manifests read");
        assert!(members.len() > PUBLISHED.len(), "{members:?}");
        assert_eq!(disagreements(&members), Vec::<String>::new());
    }

    #[test]
    fn a_member_without_publish_false_outside_the_list_is_named() {
        let mut members: Vec<Member> = PUBLISHED
            .iter()
            .map(|n| Member {
                name: (*n).to_owned(),
                unpublished: false,
            })
            .collect();
        members.push(Member {
            name: "sluice-new".to_owned(),
            unpublished: false,
        });
        members[0].unpublished = true;
        members.remove(1);
        let found = disagreements(&members);
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found[0].starts_with("sluice-field is in xtask's PUBLISHED but says"));
        assert!(found[1].starts_with("sluice-new is not in"));
        assert!(found[2].starts_with("sluice-ntt is in xtask's PUBLISHED but not"));
    }
}
