//! The record stays usable: every `BENCHMARKS.md#<anchor>` that code or docs cite exists,
//! BENCHMARKS.md stays short (the history lives in docs/bench-log/), every log file is in
//! the log's index, and the relative links of the docs lead to files that exist.

use std::path::{Path, PathBuf};

/// The anchors code comments cite; renaming one breaks those citations.
const STABLE_ANCHORS: [&str; 13] = [
    "machines",
    "headline",
    "ntt",
    "msm-cpu",
    "msm-gpu",
    "proof",
    "partition",
    "pipeline-and-residency",
    "c2",
    "verification",
    "peers",
    "build-and-load",
    "ci",
];

/// Current figures only: the issue that split off the log set this bound.
const MAX_BENCHMARKS_BYTES: usize = 40_000;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Files under `dir` whose names end in one of `extensions`, skipping build output and git.
fn files(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != ".git" {
                files(&path, extensions, out);
            }
        } else if extensions
            .iter()
            .any(|ext| name.to_string_lossy().ends_with(ext))
        {
            out.push(path);
        }
    }
}

/// The anchors BENCHMARKS.md defines (`<a id="name"></a>`).
fn defined_anchors(benchmarks: &str) -> Vec<&str> {
    benchmarks
        .split("<a id=\"")
        .skip(1)
        .filter_map(|rest| rest.split_once('"').map(|(id, _)| id))
        .collect()
}

/// Every anchor `text` cites as `BENCHMARKS.md#<anchor>` (placeholders like that one skipped).
fn cited_anchors(text: &str) -> Vec<&str> {
    text.split("BENCHMARKS.md#")
        .skip(1)
        .map(|rest| {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .filter(|anchor| !anchor.is_empty())
        .collect()
}

/// Relative link targets of a markdown text: inline `](target)` and reference
/// definitions `[name]: target`, fragments included.
fn link_targets(text: &str) -> Vec<&str> {
    let inline = text
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(t, _)| t));
    let references = text.lines().filter_map(|line| {
        let rest = line.strip_prefix('[')?;
        let (_, target) = rest.split_once("]: ")?;
        Some(target.trim())
    });
    inline
        .chain(references)
        .filter(|t| !t.contains("://") && !t.starts_with("mailto:"))
        .collect()
}

#[test]
fn cited_anchors_exist_and_stable_ones_stay() {
    let root = root();
    let benchmarks = read(&root.join("BENCHMARKS.md"));
    let defined = defined_anchors(&benchmarks);
    for anchor in STABLE_ANCHORS {
        assert!(
            defined.contains(&anchor),
            "BENCHMARKS.md lost the anchor `{anchor}`"
        );
    }
    let mut sources = Vec::new();
    files(&root, &[".rs", ".md", ".toml"], &mut sources);
    let mut checked = 0;
    for path in &sources {
        for anchor in cited_anchors(&read(path)) {
            assert!(
                defined.contains(&anchor),
                "{} cites BENCHMARKS.md#{anchor}, which BENCHMARKS.md does not define",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "no citation found: the scan is broken");
}

#[test]
fn benchmarks_holds_current_figures_only() {
    let size = read(&root().join("BENCHMARKS.md")).len();
    assert!(
        size < MAX_BENCHMARKS_BYTES,
        "BENCHMARKS.md is {size} bytes (at most {MAX_BENCHMARKS_BYTES}): move history to docs/bench-log/"
    );
}

#[test]
fn every_log_file_is_in_the_index() {
    let log = root().join("docs/bench-log");
    let index = read(&log.join("README.md"));
    let mut entries = Vec::new();
    files(&log, &[".md"], &mut entries);
    assert!(entries.len() > 1, "docs/bench-log holds no log");
    for path in entries {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        assert!(
            name == "README.md" || index.contains(&format!("]({name})")),
            "docs/bench-log/README.md does not link {name}"
        );
    }
}

#[test]
fn relative_links_of_the_docs_resolve() {
    let root = root();
    let benchmarks = read(&root.join("BENCHMARKS.md"));
    let anchors = defined_anchors(&benchmarks);
    let mut docs = vec![root.join("README.md"), root.join("BENCHMARKS.md")];
    files(&root.join("docs"), &[".md"], &mut docs);
    for doc in docs {
        let text = read(&doc);
        let dir = doc.parent().unwrap_or(&root).to_path_buf();
        for target in link_targets(&text) {
            let (file, fragment) = target.split_once('#').unwrap_or((target, ""));
            let resolved = if file.is_empty() {
                doc.clone()
            } else {
                dir.join(file)
            };
            assert!(
                resolved.exists(),
                "{} links `{target}`, and {} does not exist",
                doc.display(),
                resolved.display()
            );
            let into_benchmarks = resolved.file_name().is_some_and(|n| n == "BENCHMARKS.md");
            if into_benchmarks && !fragment.is_empty() {
                assert!(
                    anchors.contains(&fragment),
                    "{} links BENCHMARKS.md#{fragment}, which is not defined",
                    doc.display()
                );
            }
        }
    }
}

#[test]
fn the_scanners_find_what_they_look_for() {
    let md = "see [a](x.md#y) and [b][r]\n[r]: docs/z.md\n[w](https://e.org)";
    assert_eq!(link_targets(md), ["x.md#y", "docs/z.md"]);
    assert_eq!(
        cited_anchors("// BENCHMARKS.md#msm-gpu). `BENCHMARKS.md#<x>`"),
        ["msm-gpu"]
    );
    assert_eq!(defined_anchors("<a id=\"ntt\"></a>\n## NTT"), ["ntt"]);
}
