//! `cargo xtask check-layout`: the layout issues 29 and 48 set, checked on the tree.
//!
//! - no `.rs` file over [`MAX_LINES`] lines in a library crate's `src/` (in `backend-opencl`,
//!   anywhere in the crate: its tests, examples and tools too);
//! - no import loop between the modules of a library crate's `src/` (a module that declares
//!   another counts as importing it, so a child that reaches its parent's items is a loop;
//!   binaries under `src/bin/` are crates of their own and left out; a path through a `use`
//!   counts as reaching the module the `use` names; no loop is allowed, in any crate);
//! - no `std::env::var` in a library crate's sources outside functions named `from_env`,
//!   `with_env_overrides` or `*_from_env` (test modules and test support aside);
//! - `BENCHMARKS.md` under [`MAX_BENCHMARKS_BYTES`].
//!
//! The checks read the source text (comments and test modules stripped), not the compiler's
//! view: paths are resolved as `crate::`, `super::` and `self::` spell them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// The most lines a `.rs` file of a library crate's sources may have.
pub const MAX_LINES: usize = 800;

/// `BENCHMARKS.md` must stay below this many bytes.
pub const MAX_BENCHMARKS_BYTES: u64 = 40_000;

/// The library crates (their directories): files capped at [`MAX_LINES`], no import loop,
/// the environment read only in `from_env` functions.
const LIBRARY_CRATES: [&str; 9] = [
    "field",
    "ntt",
    "msm",
    "backend",
    "backend-cpu",
    "backend-opencl",
    "groth16",
    "pipeline",
    "sluice",
];

/// Crates whose every `.rs` file (tests, examples, tools) is capped, not only `src/`'s: the
/// crate that set the model. The others' tests are not capped yet (`field/tests/fields.rs`
/// is over).
const WHOLE_CRATE_CAPPED: [&str; 1] = ["backend-opencl"];

/// Files that only tests compile or call: their environment reads and imports are the
/// tests' own.
const TEST_FILES: [&str; 3] = ["tests.rs", "testing.rs", "test_support.rs"];

/// One way the tree breaks the layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// A file over [`MAX_LINES`].
    TooLong { file: PathBuf, lines: usize },
    /// Modules of the crate in directory `krate` that import each other in a loop, in the
    /// loop's order.
    ImportLoop {
        krate: String,
        modules: Vec<String>,
        /// For each step of the loop, where it happens: `file:line` and the path or `mod`.
        steps: Vec<String>,
    },
    /// `std::env::var` outside a `from_env` function (`function`: the enclosing one, if any).
    EnvironmentRead {
        file: PathBuf,
        line: usize,
        function: Option<String>,
    },
    /// `BENCHMARKS.md` too large (or missing: `bytes` 0 and `missing`).
    BenchmarksTooLarge { bytes: u64 },
    /// A file or directory the check needs could not be read.
    Unreadable { path: PathBuf, error: String },
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::TooLong { file, lines } => write!(
                f,
                "{}: {lines} lines (at most {MAX_LINES}): split it by job",
                file.display()
            ),
            Finding::ImportLoop {
                krate,
                modules,
                steps,
            } => {
                write!(
                    f,
                    "{krate}/src: modules import each other in a loop: {} -> {}",
                    modules.join(" -> "),
                    modules[0]
                )?;
                steps.iter().try_for_each(|s| write!(f, "\n      {s}"))
            }
            Finding::EnvironmentRead {
                file,
                line,
                function,
            } => write!(
                f,
                "{}:{line}: the environment is read in {}: read it in a `from_env` or \
                 `with_env_overrides` function",
                file.display(),
                function
                    .as_deref()
                    .map_or("no function".to_owned(), |n| format!("`{n}`"))
            ),
            Finding::BenchmarksTooLarge { bytes } => write!(
                f,
                "BENCHMARKS.md: {bytes} bytes (below {MAX_BENCHMARKS_BYTES}): move history to \
                 docs/bench-log/"
            ),
            Finding::Unreadable { path, error } => {
                write!(f, "{}: cannot read: {error}", path.display())
            }
        }
    }
}

/// Every finding of the checks on the tree at `root`, in a stable order.
pub fn check(root: &Path) -> Vec<Finding> {
    let mut findings = Vec::new();
    for krate in LIBRARY_CRATES {
        let dir = root.join(krate);
        let capped = match WHOLE_CRATE_CAPPED.contains(&krate) {
            true => dir.clone(),
            false => dir.join("src"),
        };
        for file in rust_files(&capped, &mut findings) {
            match std::fs::read_to_string(&file) {
                Ok(text) if text.lines().count() > MAX_LINES => findings.push(Finding::TooLong {
                    lines: text.lines().count(),
                    file: relative(root, &file),
                }),
                Ok(_) => {}
                Err(e) => findings.push(unreadable(&file, e)),
            }
        }
        let (graph, why) = module_graph(root, &dir.join("src"), &mut findings);
        findings.extend(import_loops(&graph).into_iter().map(|modules| {
            let steps = (0..modules.len())
                .map(|i| {
                    let edge = (modules[i].clone(), modules[(i + 1) % modules.len()].clone());
                    format!("{} -> {}: {}", edge.0, edge.1, why[&edge])
                })
                .collect();
            Finding::ImportLoop {
                krate: krate.to_owned(),
                modules,
                steps,
            }
        }));
    }
    for krate in LIBRARY_CRATES {
        for file in rust_files(&root.join(krate).join("src"), &mut findings) {
            if is_test_file(&file) || file.components().any(|c| c.as_os_str() == "bin") {
                continue;
            }
            match std::fs::read_to_string(&file) {
                Ok(text) => findings.extend(env_reads(&text).into_iter().map(|(line, f)| {
                    Finding::EnvironmentRead {
                        file: relative(root, &file),
                        line,
                        function: f,
                    }
                })),
                Err(e) => findings.push(unreadable(&file, e)),
            }
        }
    }
    let benchmarks = root.join("BENCHMARKS.md");
    match std::fs::metadata(&benchmarks) {
        Ok(m) if m.len() >= MAX_BENCHMARKS_BYTES => {
            findings.push(Finding::BenchmarksTooLarge { bytes: m.len() })
        }
        Ok(_) => {}
        Err(e) => findings.push(unreadable(&benchmarks, e)),
    }
    findings
}

fn unreadable(path: &Path, e: std::io::Error) -> Finding {
    Finding::Unreadable {
        path: path.to_owned(),
        error: e.to_string(),
    }
}

fn relative(root: &Path, file: &Path) -> PathBuf {
    file.strip_prefix(root).unwrap_or(file).to_owned()
}

fn is_test_file(file: &Path) -> bool {
    file.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| TEST_FILES.contains(&n))
}

/// A binary's file (`src/main.rs`, `src/bin/..`): a crate of its own, not a module of the
/// library.
fn is_binary(src: &Path, file: &Path) -> bool {
    let rel = file.strip_prefix(src).unwrap_or(file);
    rel == Path::new("main.rs") || rel.starts_with("bin")
}

/// The `.rs` files under `dir`, sorted (none where `dir` is missing; `target/` skipped).
fn rust_files(dir: &Path, findings: &mut Vec<Finding>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && d == dir => continue,
            Err(e) => {
                findings.push(unreadable(&d, e));
                continue;
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The source without comments and without the test modules that close a file
/// (`#[cfg(test)] mod name { .. }`, by convention the file's last item).
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod ") && next.ends_with('{'))
        {
            break;
        }
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The module path of a file of `src` (`lib.rs` the root `crate`, `a/mod.rs` and `a.rs` the
/// module `a`, `a/b.rs` the module `a::b`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    match parts.is_empty() {
        true => "crate".to_owned(),
        false => format!("crate::{}", parts.join("::")),
    }
}

/// Which modules of `src` import which (test-only files and binaries aside): `crate::`,
/// `super::` and `self::` paths resolved to the longest module they name, and every `mod` a
/// file declares. A path through a `use` (a re-export such as `crate::Fr` for
/// `crate::fr::Fr`) counts as importing the module the `use` names, not the one holding the
/// `use`: that module's code is not what the path reaches.
/// With the graph, where each edge first shows (`file:line` and the path or `mod`).
fn module_graph(
    root: &Path,
    src: &Path,
    findings: &mut Vec<Finding>,
) -> (Graph, BTreeMap<(String, String), String>) {
    let files: Vec<PathBuf> = rust_files(src, findings)
        .into_iter()
        .filter(|f| !is_test_file(f) && !is_binary(src, f))
        .collect();
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(src, f)).collect();
    let mut texts = Vec::new();
    for file in &files {
        match std::fs::read_to_string(file) {
            Ok(t) => texts.push((module_of(src, file), relative(root, file), code_of(&t))),
            Err(e) => findings.push(unreadable(file, e)),
        }
    }
    let mut aliases: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (me, _, text) in &texts {
        aliases.extend(use_aliases(me, text, &modules));
    }
    let mut graph = Graph::new();
    let mut why = BTreeMap::new();
    for (me, file, text) in &texts {
        let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
        let edges = graph.entry(me.clone()).or_default();
        let mut add = |target: String, evidence: String| {
            if &target != me && edges.insert(target.clone()) {
                why.insert((me.clone(), target), evidence);
            }
        };
        for (offset, path) in paths_at(text) {
            let absolute = through_aliases(&aliases, &modules, resolve(me, &path));
            if absolute.first().is_some_and(|s| s == EXTERNAL) {
                continue;
            }
            let evidence = format!(
                "{}:{} `{}`",
                file.display(),
                line_of(offset),
                path.join("::")
            );
            add(longest_module(&modules, &absolute), evidence);
        }
        for (line, child) in declared_mods(text) {
            let target = format!("{me}::{child}");
            if modules.contains(&target) {
                add(target, format!("{}:{line} `mod {child};`", file.display()));
            }
        }
    }
    (graph, why)
}

/// Which modules import which, by module path.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The names the `use` declarations of module `me` bring in, as `me::name` and the absolute
/// path each stands for. Only paths into this crate count (`crate::`, `super::`, `self::`
/// or a child module's name); globs name nothing.
fn use_aliases(me: &str, code: &str, modules: &BTreeSet<String>) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while let Some(at) = code[i..].find("use ").map(|a| a + i) {
        i = at + 4;
        if at > 0 && (is_ident(bytes[at - 1]) || bytes[at - 1] == b':') {
            continue;
        }
        let Some(end) = code[i..].find(';').map(|e| e + i) else {
            break;
        };
        let tokens = use_tokens(&code[i..end]);
        let mut pos = 0;
        let mut leaves = Vec::new();
        use_tree(&tokens, &mut pos, Vec::new(), &mut leaves);
        for (mut segs, rename) in leaves {
            if segs.last().is_some_and(|s| s == "self") {
                segs.pop();
            }
            let Some(first) = segs.first() else { continue };
            let local = ["crate", "super", "self"].contains(&first.as_str())
                || modules.contains(&format!("{me}::{first}"));
            let target = match local {
                true => resolve(me, &segs),
                // Another crate's item (`pub use sluice_field::Fr`): no module of this one.
                false => [EXTERNAL.to_owned()]
                    .into_iter()
                    .chain(segs.clone())
                    .collect(),
            };
            match rename.or_else(|| segs.last().cloned()) {
                Some(name) if name != "_" && name != "*" => {
                    out.push((format!("{me}::{name}"), target))
                }
                _ => {}
            }
        }
        i = end;
    }
    out
}

/// The first segment of a `use` target outside this crate.
const EXTERNAL: &str = "<external>";

/// A `use` tree's tokens: identifiers, `::`, braces, commas and `*`.
fn use_tokens(tree: &str) -> Vec<String> {
    let bytes = tree.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < tree.len() {
        let start = i;
        if is_ident(bytes[i]) {
            while i < tree.len() && is_ident(bytes[i]) {
                i += 1;
            }
        } else if tree[i..].starts_with("::") {
            i += 2;
        } else if b"{},*".contains(&bytes[i]) {
            i += 1;
        } else {
            i += 1;
            continue;
        }
        out.push(tree[start..i].to_owned());
    }
    out
}

/// Parses one `use` tree from `tokens[*pos]` under `prefix` into its leaves: each path with
/// its `as` name, if any.
fn use_tree(
    tokens: &[String],
    pos: &mut usize,
    prefix: Vec<String>,
    leaves: &mut Vec<(Vec<String>, Option<String>)>,
) {
    let mut segs = prefix;
    while let Some(tok) = tokens.get(*pos) {
        *pos += 1;
        match tok.as_str() {
            "::" => continue,
            "{" => {
                while tokens.get(*pos).is_some_and(|t| t != "}") {
                    use_tree(tokens, pos, segs.clone(), leaves);
                    if tokens.get(*pos).is_some_and(|t| t == ",") {
                        *pos += 1;
                    }
                }
                *pos += 1;
                return;
            }
            "*" => {
                segs.push("*".to_owned());
                leaves.push((segs, None));
                return;
            }
            "}" | "," => {
                // The end of an enclosing group: leave it to the caller.
                *pos -= 1;
                break;
            }
            ident => {
                segs.push(ident.to_owned());
                match tokens.get(*pos).map(String::as_str) {
                    Some("::") => continue,
                    Some("as") => {
                        let rename = tokens.get(*pos + 1).cloned();
                        *pos += 2;
                        leaves.push((segs, rename));
                        return;
                    }
                    _ => break,
                }
            }
        }
    }
    if !segs.is_empty() {
        leaves.push((segs, None));
    }
}

/// `path` with every prefix that a `use` names replaced by what it stands for (a bounded
/// number of times, so `use` declarations naming each other cannot hang the check).
fn through_aliases(
    aliases: &BTreeMap<String, Vec<String>>,
    modules: &BTreeSet<String>,
    mut path: Vec<String>,
) -> Vec<String> {
    for _ in 0..16 {
        let hit = (2..=path.len()).rev().find_map(|n| {
            let key = path[..n].join("::");
            match modules.contains(&key) {
                true => None,
                false => aliases.get(&key).map(|target| (n, target)),
            }
        });
        match hit {
            Some((n, target)) => {
                let mut next = target.clone();
                next.extend(path[n..].iter().cloned());
                path = next;
            }
            None => break,
        }
    }
    path
}

/// Every path starting with `crate`, `super` or `self` in `code`, as its segments; a group
/// (`crate::{a, b::c}`) gives one path per member.
#[cfg(test)]
fn paths_in(code: &str) -> Vec<Vec<String>> {
    paths_at(code).into_iter().map(|(_, p)| p).collect()
}

/// [`paths_in`], each path with the offset in `code` where it (or its group) starts.
fn paths_at(code: &str) -> Vec<(usize, Vec<String>)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let start_ok = i == 0 || !is_ident(bytes[i - 1]) && bytes[i - 1] != b':';
        let head = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|h| code[i..].starts_with(h));
        match (start_ok, head) {
            (true, Some(h)) => {
                let (paths, end) =
                    parse_path(code, i, vec![h.trim_end_matches(':').to_owned()], h.len());
                out.extend(paths.into_iter().map(|p| (i, p)));
                i = end.max(i + 1);
            }
            _ => i += 1,
        }
    }
    out
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Parses the rest of a path whose first `skip` bytes after `at` are `prefix`: its
/// segments, and a brace group's members each as a path of their own.
fn parse_path(
    code: &str,
    at: usize,
    prefix: Vec<String>,
    skip: usize,
) -> (Vec<Vec<String>>, usize) {
    let bytes = code.as_bytes();
    let mut segs = prefix;
    let mut i = at + skip;
    loop {
        let start = i;
        while i < code.len() && is_ident(bytes[i]) {
            i += 1;
        }
        if i > start {
            segs.push(code[start..i].to_owned());
            if code[i..].starts_with("::") {
                i += 2;
                continue;
            }
            return (vec![segs], i);
        }
        if i < code.len() && bytes[i] == b'{' {
            // A group: each comma-separated member at depth 1 continues `segs`.
            let mut out = Vec::new();
            let mut depth = 0;
            let mut member = i + 1;
            let mut j = i;
            while j < code.len() {
                match bytes[j] {
                    b'{' => depth += 1,
                    b'}' | b',' if depth == 1 => {
                        let text = code[member..j].trim();
                        if !text.is_empty() {
                            let offset = member
                                + (code[member..j].len() - code[member..j].trim_start().len());
                            let (paths, _) = parse_path(code, offset, segs.clone(), 0);
                            out.extend(paths);
                        }
                        member = j + 1;
                        if bytes[j] == b'}' {
                            return (out, j + 1);
                        }
                    }
                    b'}' => depth -= 1,
                    _ => {}
                }
                j += 1;
            }
            return (out, j);
        }
        return (vec![segs], i);
    }
}

/// `path` (from module `me`) as an absolute path starting at `crate`.
fn resolve(me: &str, path: &[String]) -> Vec<String> {
    let mut base: Vec<String> = me.split("::").map(str::to_owned).collect();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base = vec!["crate".to_owned()];
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        _ => {}
    }
    while rest.first().is_some_and(|s| s == "super") {
        if base.len() > 1 {
            base.pop();
        }
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    base
}

/// The longest prefix of `path` that is one of `modules`.
fn longest_module(modules: &BTreeSet<String>, path: &[String]) -> String {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| modules.contains(m))
        .unwrap_or_else(|| "crate".to_owned())
}

/// The modules a file declares with `mod name;` (not inline ones, not under `#[cfg(test)]`).
/// Each with its line (1-based).
fn declared_mods(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut test_only = false;
    for (i, line) in code.lines().enumerate() {
        let t = line.trim();
        if t.starts_with("#[cfg(test)]") {
            test_only = true;
            continue;
        }
        let decl = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        if let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
            if !test_only {
                out.push((i + 1, name.trim().to_owned()));
            }
        }
        if !t.starts_with("#[") {
            test_only = false;
        }
    }
    out
}

/// The loops of `graph`: each strongly connected set of two or more modules (or a module
/// importing itself), from a module on it round to it, in a stable order.
fn import_loops(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut loops = Vec::new();
    let mut reported: BTreeSet<String> = BTreeSet::new();
    for start in graph.keys() {
        if reported.contains(start) {
            continue;
        }
        if let Some(cycle) = shortest_cycle(graph, start) {
            reported.extend(cycle.iter().cloned());
            loops.push(cycle);
        }
    }
    loops
}

/// The shortest path from `start` back to itself, by breadth-first search.
fn shortest_cycle(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(m) = queue.pop_front() {
        for next in graph.get(m).into_iter().flatten() {
            if next == start {
                let mut cycle = vec![m.to_owned()];
                let mut at = m;
                while at != start {
                    at = came_from[at];
                    cycle.push(at.to_owned());
                }
                cycle.reverse();
                return Some(cycle);
            }
            if !came_from.contains_key(next.as_str()) && next != start {
                came_from.insert(next, m);
                queue.push_back(next);
            }
        }
    }
    None
}

/// Lines (1-based) of `text` that read the environment, with the function each is in.
fn env_reads(text: &str) -> Vec<(usize, Option<String>)> {
    let code = code_of(text);
    let mut function: Option<String> = None;
    let mut out = Vec::new();
    for (i, line) in code.lines().enumerate() {
        if let Some(name) = fn_name(line) {
            function = Some(name);
        }
        if line.contains("env::var") {
            let allowed = function.as_deref().is_some_and(|f| {
                f == "from_env" || f == "with_env_overrides" || f.ends_with("_from_env")
            });
            if !allowed {
                out.push((i + 1, function.clone()));
            }
        }
    }
    out
}

/// The name of the function a line declares, if it declares one.
fn fn_name(line: &str) -> Option<String> {
    let at = line.find("fn ")?;
    if at > 0 && is_ident(line.as_bytes()[at - 1]) {
        return None;
    }
    let rest = &line[at + 3..];
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty() && rest[name.len()..].trim_start().starts_with(['(', '<'])).then_some(name)
}

/// `cargo xtask check-layout [DIR]`: the checks on the tree at `DIR` (the repository root by
/// default); an error listing every finding.
pub fn run(args: &[String]) -> Result<(), String> {
    let root = match args.first() {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .ok_or("xtask has no parent directory")?
            .to_owned(),
    };
    let findings = check(&root);
    if findings.is_empty() {
        println!("layout: {} follows the layout", root.display());
        return Ok(());
    }
    let list: Vec<String> = findings.iter().map(|f| format!("  {f}")).collect();
    Err(format!(
        "check-layout found {} problem(s) in {}:\n{}",
        findings.len(),
        root.display(),
        list.join("\n")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch tree under the system's temporary directory, removed when dropped.
    struct Tree(PathBuf);

    impl Tree {
        fn new(name: &str) -> Tree {
            let dir =
                std::env::temp_dir().join(format!("xtask-layout-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Tree(dir)
        }

        fn write(&self, file: &str, text: &str) -> &Tree {
            let path = self.0.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
            self
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A tree that follows the layout: modules in a line, the environment read in
    /// `from_env` only, a short BENCHMARKS.md.
    fn good(name: &str) -> Tree {
        let t = Tree::new(name);
        t.write(
            "backend-opencl/src/lib.rs",
            "mod a;\nmod b;\nuse crate::b::B;\n/// See crate::a::A.\npub fn f() {}\n",
        )
        .write("backend-opencl/src/a.rs", "pub struct A;\n")
        .write(
            "backend-opencl/src/b/mod.rs",
            "mod c;\nuse crate::a::A;\nuse self::c::C;\npub struct B;\n",
        )
        .write(
            "backend-opencl/src/b/c.rs",
            "use super::super::a::A;\npub struct C;\n#[cfg(test)]\nmod tests {\n    use super::super::B;\n}\n",
        )
        .write(
            "backend/src/lib.rs",
            "pub fn from_env() -> bool {\n    std::env::var(\"X\").is_ok()\n}\n\
             fn dir_from_env() -> bool {\n    std::env::var_os(\"HOME\").is_some()\n}\n\
             // std::env::var in a comment\n",
        )
        .write("backend/src/test_support.rs", "pub fn t() -> bool { std::env::var(\"T\").is_ok() }\n")
        // A child reaching the root's re-export reaches the module it names, not the root;
        // another crate's item is no module at all.
        .write(
            "sluice/src/lib.rs",
            "mod inner;\nmod user;\npub use crate::inner::Thing;\npub use sluice_field::Fr;\n",
        )
        .write("sluice/src/inner.rs", "pub struct Thing;\n")
        .write("sluice/src/user.rs", "use crate::{Fr, Thing};\n")
        // Tests of a crate other than backend-opencl are not capped (yet).
        .write("field/tests/long.rs", &"// x\n".repeat(MAX_LINES + 1))
        .write("BENCHMARKS.md", "# figures\n");
        t
    }

    #[test]
    fn a_tree_that_follows_the_layout_has_no_findings() {
        let t = good("good");
        assert_eq!(check(&t.0), Vec::<Finding>::new());
    }

    #[test]
    fn a_bad_tree_gives_every_finding() {
        let t = good("bad");
        t.write(
            "backend-opencl/src/long.rs",
            &"// x\n".repeat(MAX_LINES + 1),
        )
        // c reaches its parent's item: b declares c, so b -> c -> b.
        .write(
            "backend-opencl/src/b/c.rs",
            "use super::B;\npub struct C;\n",
        )
        // a reaches lib.rs's function, and lib.rs declares a.
        .write(
            "backend-opencl/src/a.rs",
            "pub struct A;\nfn g() { crate::f() }\n",
        )
        .write(
            "groth16/src/prover.rs",
            "fn tune() -> usize {\n    std::env::var(\"N\").map_or(1, |v| v.len())\n}\n",
        )
        // Every library crate is checked: a long file and a child using its parent's item.
        .write("groth16/src/long.rs", &"// x\n".repeat(MAX_LINES + 1))
        .write("groth16/src/lib.rs", "mod a;\npub struct Root;\n")
        .write("groth16/src/a.rs", "\nuse crate::Root;\n")
        .write("BENCHMARKS.md", &"x".repeat(MAX_BENCHMARKS_BYTES as usize));
        let findings = check(&t.0);
        assert!(
            findings.contains(&Finding::TooLong {
                file: "backend-opencl/src/long.rs".into(),
                lines: MAX_LINES + 1
            }),
            "{findings:?}"
        );
        let loops: Vec<&Vec<String>> = findings
            .iter()
            .filter_map(|f| match f {
                Finding::ImportLoop { modules, .. } => Some(modules),
                _ => None,
            })
            .collect();
        assert!(
            loops.contains(&&vec!["crate".to_owned(), "crate::a".to_owned()]),
            "{loops:?}"
        );
        assert!(
            loops.contains(&&vec!["crate::b".to_owned(), "crate::b::c".to_owned()]),
            "{loops:?}"
        );
        assert!(findings.contains(&Finding::EnvironmentRead {
            file: "groth16/src/prover.rs".into(),
            line: 2,
            function: Some("tune".into())
        }));
        assert!(findings.contains(&Finding::BenchmarksTooLarge {
            bytes: MAX_BENCHMARKS_BYTES
        }));
        assert!(
            findings.contains(&Finding::TooLong {
                file: "groth16/src/long.rs".into(),
                lines: MAX_LINES + 1
            }),
            "{findings:?}"
        );
        assert!(
            findings.contains(&Finding::ImportLoop {
                krate: "groth16".into(),
                modules: vec!["crate".into(), "crate::a".into()],
                steps: vec![
                    "crate -> crate::a: groth16/src/lib.rs:1 `mod a;`".into(),
                    "crate::a -> crate: groth16/src/a.rs:2 `crate::Root`".into(),
                ],
            }),
            "{findings:?}"
        );
        assert_eq!(findings.len(), 7, "{findings:?}");
    }

    #[test]
    fn a_loop_fails_in_every_crate_with_no_exception() {
        // A child calling its parent's function in ntt, whose loop was once tolerated: every
        // loop of every library crate is a finding, and nothing but the loop is.
        let t = good("no-exception");
        t.write("ntt/src/lib.rs", "mod a;\npub fn f() {}\n")
            .write("ntt/src/a.rs", "fn g() { super::f() }\n");
        assert_eq!(
            check(&t.0),
            [Finding::ImportLoop {
                krate: "ntt".into(),
                modules: vec!["crate".into(), "crate::a".into()],
                steps: vec![
                    "crate -> crate::a: ntt/src/lib.rs:1 `mod a;`".into(),
                    "crate::a -> crate: ntt/src/a.rs:1 `super::f`".into(),
                ],
            }]
        );
    }

    #[test]
    fn use_declarations_name_what_they_stand_for() {
        let modules: BTreeSet<String> = ["crate", "crate::m", "crate::m::a", "crate::m::a::d"]
            .map(str::to_owned)
            .into();
        let got = use_aliases(
            "crate::m",
            "pub use self::a::{B as C, d::{self, E}};\nuse sluice_field::Fr;\nuse super::*;\n",
            &modules,
        );
        let path = |p: &str| p.split("::").map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            got,
            [
                ("crate::m::C".to_owned(), path("crate::m::a::B")),
                ("crate::m::d".to_owned(), path("crate::m::a::d")),
                ("crate::m::E".to_owned(), path("crate::m::a::d::E")),
                (
                    "crate::m::Fr".to_owned(),
                    path("<external>::sluice_field::Fr")
                ),
            ]
        );
        let aliases: BTreeMap<String, Vec<String>> = got.into_iter().collect();
        assert_eq!(
            through_aliases(&aliases, &modules, path("crate::m::E::new")),
            path("crate::m::a::d::E::new")
        );
    }

    #[test]
    fn grouped_and_relative_paths_resolve_to_their_modules() {
        let paths = paths_in("use crate::{a::X, b, c::{d::Y, e}};\nlet v = super::f::g();");
        assert_eq!(
            paths,
            [
                vec!["crate", "a", "X"],
                vec!["crate", "b"],
                vec!["crate", "c", "d", "Y"],
                vec!["crate", "c", "e"],
                vec!["super", "f", "g"],
            ]
            .map(|p| p.into_iter().map(str::to_owned).collect::<Vec<_>>())
        );
        assert_eq!(
            resolve("crate::m::n", &["super".into(), "k".into()]),
            ["crate", "m", "k"]
        );
    }
}
