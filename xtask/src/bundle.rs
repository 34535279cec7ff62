//! `cargo xtask bundle`: release binaries for the GPU machine, in one folder with a run
//! script.
//!
//! The GPU machine has no Rust toolchain and no network: everything a run needs travels in
//! `target/device/` (an ignored folder, named in the device tool's `carry`). The run script
//! registers the NVIDIA OpenCL driver for the process (see shared/GPU.md), runs the
//! differential suite first and the benchmarks second, writes full logs under `$OUT` and
//! prints a short summary last.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{cargo, run};

/// The test targets whose binaries travel, with their features: the OpenCL backend's own
/// tests, the differential suite, and sluice-filecoin's end-to-end tests (`STEPS=filecoin`).
const TEST_TARGETS: [(&str, &str, &str); 3] = [
    ("sluice-backend-opencl", "--lib", ""),
    ("sluice-tests", "--test=differential_opencl", ""),
    ("sluice-filecoin", "--test=e2e", "opencl"),
];

/// The binaries that travel, by package, with their features: the benchmark runner (with
/// the peers, bellperson's GPU path among them, for `STEPS=peers`, and Filecoin's real
/// circuits, `--circuit porep,post`), the residency and pipeline benchmark, and the Filecoin
/// command, all with the OpenCL backend.
const BINARIES: [(&str, &str, &str); 3] = [
    (
        "sluice-bench",
        "sluice-bench",
        "opencl,compare-gpu,filecoin",
    ),
    ("sluice-pipeline", "residency", "opencl"),
    ("sluice-filecoin", "sluice-filecoin", "opencl"),
];

/// Replays a captured OpenCL launch through the CUDA driver, for `ncu` (`STEPS=profile`).
const REPLAYER: &str = "backend-opencl/tools/replay_capture.py";

/// Builds the bundle into `target/device/` and returns its path.
pub fn bundle() -> Result<PathBuf, String> {
    let out = PathBuf::from("target/device");
    if out.exists() {
        std::fs::remove_dir_all(&out)
            .map_err(|e| format!("cannot clear {}: {e}", out.display()))?;
    }
    let bin = out.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;

    for (package, binary, features) in BINARIES {
        run(Command::new(cargo()).args([
            "build",
            "--release",
            "-p",
            package,
            "--features",
            features,
            "--bin",
            binary,
        ]))?;
        copy_stripped(&Path::new("target/release").join(binary), &bin.join(binary))?;
    }

    for (package, target, features) in TEST_TARGETS {
        for exe in test_executables(package, target, features)? {
            let name = exe
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.rsplit_once('-').map(|(stem, _hash)| stem.to_owned()))
                .ok_or_else(|| format!("unexpected test binary name {}", exe.display()))?;
            copy_stripped(&exe, &bin.join(name))?;
        }
    }
    let script = out.join("run.sh");
    std::fs::write(&script, RUN_SCRIPT).map_err(|e| format!("cannot write run.sh: {e}"))?;
    set_executable(&script)?;
    // The `profile` step's replayer (Python with CuPy, both on the GPU machine's image).
    std::fs::copy(REPLAYER, out.join("replay_capture.py"))
        .map_err(|e| format!("cannot copy {REPLAYER}: {e}"))?;
    let bytes: u64 = std::fs::read_dir(&bin)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum();
    eprintln!(
        "xtask: bundle ready in {} ({:.1} MiB); on the GPU machine run: target/device/run.sh",
        out.display(),
        bytes as f64 / (1 << 20) as f64
    );
    Ok(out)
}

/// Builds one test target and returns its executables, from cargo's JSON messages.
fn test_executables(package: &str, target: &str, features: &str) -> Result<Vec<PathBuf>, String> {
    let output = Command::new(cargo())
        .args([
            "test",
            "--release",
            "--no-run",
            "--message-format=json",
            "-p",
            package,
            target,
        ])
        .args(if features.is_empty() {
            Vec::new()
        } else {
            vec!["--features", features]
        })
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!("building the tests of {package} failed"));
    }
    let exes: Vec<PathBuf> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| l.contains("\"reason\":\"compiler-artifact\""))
        // Only test harnesses: an integration test also builds its package's binaries.
        .filter(|l| !l.contains("\"kind\":[\"bin\"]"))
        .filter_map(|l| {
            let start = l.find("\"executable\":\"")? + "\"executable\":\"".len();
            let end = start + l[start..].find('"')?;
            Some(PathBuf::from(&l[start..end]))
        })
        .collect();
    if exes.is_empty() {
        return Err(format!("no test executable for {package} {target}"));
    }
    Ok(exes)
}

fn copy_stripped(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))?;
    // Debug info would blow the 64 MiB a device run may carry; symbols stay for backtraces.
    let stripped = Command::new("strip")
        .arg("--strip-debug")
        .arg(to)
        .status()
        .is_ok_and(|s| s.success());
    if !stripped {
        eprintln!("xtask: warning: could not strip {}", to.display());
    }
    Ok(())
}

#[cfg(unix)]
fn set_executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("cannot make {} executable: {e}", path.display()))
}

#[cfg(not(unix))]
fn set_executable(_: &Path) -> Result<(), String> {
    Ok(())
}

/// The script that runs on the GPU machine. `STEPS` (default
/// `unit,small,large,bench,multi,residency`; `peers`, `partition`, `params`, `c2`, `filecoin`
/// and `profile` on request) picks the
/// steps; `OPS`, `SIZES` (sluice-bench
/// `--sizes` flags), `REPS`, `DEVICES` (default `gpu0`) and `BENCH_BACKENDS` (default `opencl`;
/// `opencl,opencl-shifted` adds the shifted-bases rows) override the bench ladder;
/// `CIRCUITS` and `PEER_CIRCUITS` the proof rows' circuits (`mimc`, `bits`, `sha256`);
/// `MULTI_OPS`/`MULTI_SIZES` the every-GPU MSM ladder (`multi`, only where there are two or
/// more GPUs); `PEERS`, `PEER_OPS`, `PEER_SIZES`, `PEER_BACKENDS` (default `opencl`) and
/// `PEER_FLAGS` (more sluice-bench flags, e.g. `--matrices`) the side-by-side run; `RESIDENCY` the residency binary's flags.
const RUN_SCRIPT: &str = r#"#!/usr/bin/env bash
# sluice device run: correctness first, timings second. One log per step goes to $OUT
# (default ./out): at most 8 files, all the device tool returns. Bench JSON and plots go to
# $WORK (default /tmp/sluice-run); their tables are in the logs.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
OUT="${OUT:-$here/out}"
WORK="${WORK:-/tmp/sluice-run}"
mkdir -p "$OUT" "$WORK"

# Register the NVIDIA OpenCL driver for this process (the loader only sees PoCL by default).
nv="$(ldconfig -p | awk '/libnvidia-opencl.so.1/{print $NF; exit}')"
if [ -n "$nv" ]; then
    mkdir -p /tmp/icd
    echo "$nv" > /tmp/icd/nvidia.icd
    export OCL_ICD_VENDORS=/tmp/icd
fi
export SLUICE_REQUIRE_OPENCL=1
export SLUICE_KERNEL_CACHE="${SLUICE_KERNEL_CACHE:-$WORK/kernel-cache}"
export RUST_BACKTRACE=1
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null

status=0
summary=()
step() {  # step NAME LOGFILE COMMAND...
    local name="$1" log="$2"; shift 2
    local t0=$(date +%s)
    # STEP_TIMEOUT (seconds) stops a stalled step rather than the whole device call.
    timeout "${STEP_TIMEOUT:-3600}" "$@" > "$OUT/$log" 2>&1
    local rc=$?
    local dt=$(( $(date +%s) - t0 ))
    summary+=("$(printf '%-34s rc=%-3s %5ss  %s' "$name" "$rc" "$dt" "$log")")
    [ $rc -eq 0 ] || status=1
}

STEPS="${STEPS:-unit,small,large,bench,multi,residency}"
want() { [[ ",$STEPS," == *",$1,"* ]]; }
# The machine lists PoCL next to the GPU: test on the NVIDIA device unless told otherwise.
export SLUICE_TEST_OPENCL_DEVICE="${SLUICE_TEST_OPENCL_DEVICE:-NVIDIA}"

want unit && step "opencl unit tests" opencl-unit.log "$here/bin/sluice_backend_opencl" --test-threads=1
want small && step "differential (small sizes)" diff-small.log "$here/bin/differential_opencl" --test-threads=1
want large && SLUICE_DIFF_LARGE=1 step "differential (large sizes)" diff-large.log "$here/bin/differential_opencl" --test-threads=1
# GPU ladders (override with SIZES="--sizes ntt=20..22 ..." and REPS); uploads timed too.
want bench && step "bench" bench.log "$here/bin/sluice-bench" --backends "${BENCH_BACKENDS:-opencl}" --uploads \
    --ops "${OPS:-ntt,msm-g1,msm-g2,proof}" ${CIRCUITS:+--circuit "$CIRCUITS"} \
    ${SIZES:---sizes ntt=20..27 --sizes msm-g1=20,22,24,26 --sizes msm-g2=20,22,24 --sizes proof=20} \
    --reps "${REPS:-3}" --devices "${DEVICES:-gpu0}" --out "$WORK/bench"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if want multi && [ "$gpus" -ge 2 ]; then
    step "bench (every GPU)" bench-multi.log "$here/bin/sluice-bench" --backends opencl \
        --ops "${MULTI_OPS:-msm-g1,msm-g2}" --demo off \
        ${MULTI_SIZES:---sizes msm-g1=22,24,26 --sizes msm-g2=22,24} \
        --reps "${REPS:-3}" --devices gpus --out "$WORK/bench-multi"
fi
# Side by side with bellperson's GPU path (not by default: its kernels take minutes to
# build cold). bellperson uploads bases per call: compare with the opencl+upload rows. It uses
# every GPU it finds; run on a one-GPU machine for a one-GPU comparison.
want peers && step "bench with peers (bellperson GPU)" bench-peers.log "$here/bin/sluice-bench" \
    --backends "${PEER_BACKENDS:-opencl}" --compare --peers "${PEERS:-bellperson-gpu}" --uploads --demo off \
    --ops "${PEER_OPS:-msm-g1,msm-g2,proof}" ${PEER_CIRCUITS:+--circuit "$PEER_CIRCUITS"} \
    ${PEER_SIZES:---sizes msm-g1=20,22,24 --sizes msm-g2=20,22 --sizes proof=20} ${PEER_FLAGS:-} \
    --reps "${REPS:-3}" --devices "${DEVICES:-gpu0}" --out "$WORK/bench-peers"
# Issue 8's partition figure: prover work without synthesis on a boolean-heavy witness,
# parameters resident (not by default: 2^27 needs ~77 GB of parameters on the host and the
# device, the host peaks above that while they upload next to the assignment, and making
# them takes minutes: BENCHMARKS.md#partition).
want partition && step "partition" partition.log "$here/bin/sluice-bench" --backends opencl \
    --ops partition --demo off --sizes "${PARTITION_SIZES:-24,26,27}" --reps "${REPS:-2}" \
    --devices "${DEVICES:-gpu0}" --out "$WORK/partition"
# Mapped parameters made resident, the device's decoder beside the host's (not by default:
# MiMC parameters of 2^24 are a 10 GB file in $WORK, BENCHMARKS.md#pipeline-and-residency).
want params && step "mapped parameters" params.log "$here/bin/sluice-bench" --backends opencl \
    --ops params --demo off --sizes "${PARAMS_SIZES:-20,22,24}" --reps "${REPS:-3}" \
    --devices "${DEVICES:-gpu0}" --out "$WORK/params"
# The C2-shaped job through the partition pipeline (not by default: BENCHMARKS.md#c2):
# C2_PARTITIONS partitions of 2^C2_SIZES per proof, C2_PROOFS proofs back to back, workers
# and host budget from the machine unless C2_WORKERS / C2_BUDGET_GIB say; C2_CIRCUITS picks
# bits (the bit decomposition), sha256 (bellpepper's gadget) and mimc (dense, for contrast);
# C2_FLAGS adds sluice-bench flags (`--matrices`: a second row with recorded matrices).
# C2_DEVICE_BUDGET_GIB lists device budgets to emulate smaller cards, a row each on the same
# parameters (`full`: the whole device), e.g. full,24,16: parameters that do not fit stream.
want c2 && step "c2 pipeline" c2.log "$here/bin/sluice-bench" --backends opencl \
    --ops c2 --demo off --sizes "c2=${C2_SIZES:-27}" --circuit "${C2_CIRCUITS:-bits}" \
    --partitions "${C2_PARTITIONS:-10}" --proofs "${C2_PROOFS:-2}" \
    --device-budget-gib "${C2_DEVICE_BUDGET_GIB:-full}" \
    ${C2_WORKERS:+--workers "$C2_WORKERS"} ${C2_BUDGET_GIB:+--host-budget-gib "$C2_BUDGET_GIB"} ${C2_FLAGS:-} \
    --devices "${DEVICES:-gpu0}" --out "$WORK/c2"
# Filecoin's own proofs (not by default: sealing a 512 MiB sector takes minutes): sectors
# of FILECOIN_SIZES sealed by filecoin-proofs, C2 proved by sluice on the GPU and verified
# (tampered requests refused), PoSt and update at 2 KiB; then the command proves the
# largest size's C1 file FILECOIN_REPEAT times, its parameters resident after the first.
if want filecoin; then
    export FIL_PROOFS_PARAMETER_CACHE="$WORK/filecoin-parameters" FIL_PROOFS_PARENT_CACHE="$WORK/filecoin-parents"
    mkdir -p "$WORK/c1"
    SLUICE_FILECOIN_TEST_BACKEND=opencl SLUICE_FILECOIN_C1_OUT="$WORK/c1" \
    SLUICE_FILECOIN_TEST_SIZES="${FILECOIN_SIZES:-2KiB,8MiB,512MiB}" RUST_LOG="${RUST_LOG:-info}" \
        step "filecoin c2 (sealed sectors)" filecoin-c2.log "$here/bin/e2e" c2:: --test-threads=1 --nocapture
    SLUICE_FILECOIN_TEST_BACKEND=opencl RUST_LOG="${RUST_LOG:-info}" \
        step "filecoin post and update" filecoin-post.log "$here/bin/e2e" post:: update:: --test-threads=1 --nocapture
    c1="$(ls -S "$WORK"/c1/*.json 2>/dev/null | head -1)"
    if [ -n "$c1" ]; then
        step "filecoin command: c2 $(basename "$c1")" filecoin-cli.log "$here/bin/sluice-filecoin" \
            --backend opencl --devices "${DEVICES:-gpu0}" c2 --c1 "$c1" \
            --prover-id "$(cat "${c1%.json}.prover")" --repeat "${FILECOIN_REPEAT:-3}" --out "$WORK/c2.proof"
    fi
fi
# Per-instruction profiles (not by default): ncu sees no OpenCL kernel, so a bench run
# captures the first PROFILE_COUNT launches of each of PROFILE_KERNELS (SLUICE_CAPTURE_DIR;
# every pass of the first 2^24 NTT, whole buffers before and after), and each capture
# is replayed through the CUDA driver (replay_capture.py: checked against the OpenCL result,
# then timed) and profiled with ncu. Text reports go to profile.log, the per-instruction
# (source page) CSVs to profile.tgz.
if want profile; then
    cap="$WORK/capture"; rm -rf "$cap" "$WORK/profile"; mkdir -p "$WORK/profile"
    SLUICE_CAPTURE_DIR="$cap" SLUICE_CAPTURE_COUNT="${PROFILE_COUNT:-4}" \
    SLUICE_CAPTURE_KERNEL="${PROFILE_KERNELS:-fr_ntt_pass_r1,G1_msm_accumulate,G2_msm_accumulate}" \
    step "capture launches" capture.log "$here/bin/sluice-bench" --backends opencl --demo off \
        --ops "${PROFILE_OPS:-ntt,msm-g1,msm-g2}" \
        ${PROFILE_SIZES:---sizes ntt=24 --sizes msm-g1=22 --sizes msm-g2=20} --reps 1 \
        --devices "${DEVICES:-gpu0}" --out "$WORK/capture-bench"
    for d in "$cap"/*/; do
        [ -f "$d/launch.json" ] || continue
        k="$(basename "$d")"; kernel="${k%-*}"
        {
            echo "=== $k"
            timeout "${STEP_TIMEOUT:-600}" python3 "$here/replay_capture.py" "$d" 5
            echo "replay rc=$?"
            timeout "${STEP_TIMEOUT:-600}" ncu --clock-control none --set full -k "regex:^${kernel}\$" -c 1 \
                -f -o "$WORK/profile/$k" python3 "$here/replay_capture.py" "$d" 0 > /dev/null 2>&1
            echo "ncu rc=$?"
            ncu --import "$WORK/profile/$k.ncu-rep" --page details 2>&1
            ncu --import "$WORK/profile/$k.ncu-rep" --page source --csv --print-source sass \
                > "$WORK/profile/$k-source.csv" 2>&1
        } >> "$OUT/profile.log" 2>&1
    done
    tar czf "$OUT/profile.tgz" -C "$WORK" profile 2>/dev/null
    summary+=("$(printf '%-34s %s' "profiles" "profile.log, profile.tgz")")
fi
# Streaming vs in-memory proofs at 2^20 and 2^24 with a 1 GiB device budget, then the
# pipeline's throughput and device busy fraction (one device worker per GPU).
want residency && step "residency and pipeline" residency.log "$here/bin/residency" \
    ${RESIDENCY:---backend opencl --sizes 20,24 --budget-bytes 1073741824 --pipeline-log 20 --partitions 8}

echo "== logs in $OUT"
printf '%s\n' "${summary[@]}"
for log in bench.log bench-multi.log bench-peers.log partition.log params.log c2.log; do
    [ -f "$OUT/$log" ] && { echo "== $log table"; sed -n '/^op /,$p' "$OUT/$log" | head -80; }
done
[ -f "$OUT/c2.log" ] && { echo "== c2 set-up"; grep -oE "c2[a-z0-9-]* 2\^[0-9]+ set-up \(untimed\)[^;]*" "$OUT/c2.log"; }
[ -f "$OUT/partition.log" ] && { echo "== partition set-up and phases"; grep -oE "partition 2\^[0-9]+ set-up \(untimed\): [a-z0-9., ]+ s|\(last run[^)]*\)" "$OUT/partition.log"; }
[ -f "$OUT/residency.log" ] && { echo "== residency"; cat "$OUT/residency.log"; }
for log in filecoin-c2.log filecoin-post.log filecoin-cli.log; do
    [ -f "$OUT/$log" ] && { echo "== $log"; grep -E "sealed|C2 \(|proved|resident|setup: done|test result|panicked|error" "$OUT/$log" | cut -c1-300 | head -40; }
done
exit $status
"#;
