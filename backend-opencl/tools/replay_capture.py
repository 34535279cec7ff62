#!/usr/bin/env python3
"""Replays one OpenCL kernel launch captured by sluice (SLUICE_CAPTURE_DIR, see
backend-opencl/src/capture.rs) through the CUDA driver, so that NVIDIA's profiler sees it:

    python3 replay_capture.py CAPTURE_DIR [REPEATS]
    ncu --clock-control none --set full -o prof python3 replay_capture.py CAPTURE_DIR 1

The program binary of an NVIDIA OpenCL build is PTX, which the CUDA driver loads as a
module once its OpenCL launch registers are replaced (see load_module). Buffer arguments are uploaded from arg<i>.bin; scalars are passed as recorded;
`__local` arguments are pointers into the launch's dynamic shared memory (the OpenCL
compiler passes them as .shared addresses), laid out one after another from its start,
which a one-line CUDA kernel reports (the architecture may reserve shared memory below it).
The first launch's buffers are compared with arg<i>.after.bin (exit status 1 on a
mismatch), then the launch is repeated REPEATS times (default 3) and timed with CUDA events.
Needs CuPy (on the GPU machine's image) and nothing from sluice.
"""
import json
import os
import re
import sys

import cupy as cp
import numpy as np


def dynamic_shared_base():
    """The .shared address where a launch's dynamic shared memory starts."""
    probe = cp.RawKernel(
        r'''extern "C" __global__ void sluice_shared_base(unsigned *out) {
             extern __shared__ char s[];
             out[0] = (unsigned)__cvta_generic_to_shared(s);
           }''', "sluice_shared_base")
    out = cp.zeros(1, dtype=cp.uint32)
    probe((1,), (1,), (out,), shared_mem=16)
    return int(out[0])


def load_module(path, groups):
    """The captured program as a CUDA module. An NVIDIA OpenCL binary is PTX that the CUDA
    driver refuses as captured (CUDA_ERROR_INVALID_IMAGE, even compiled by `ptxas`); it
    loaded (H200, driver 580) once the state-space attribute of pointer parameters was
    gone. The `%envreg` launch registers (group and global offsets, group counts), which
    CUDA does not set, are replaced by this launch's values too: no offsets, `groups` groups
    along x, one along y and z."""
    with open(path, "rb") as f:
        data = f.read()
    text = data.rstrip(b"\0")
    is_ptx = b".version" in text[:4096] and b".target" in text[:4096]
    head = [ln for ln in text[:4096].split(b"\n") if ln.startswith((b".version", b".target"))]
    print(f"program.bin: {len(data)} bytes, {'PTX ' + repr(head) if is_ptx else 'not PTX'}, "
          f"starts {data[:16]!r}")
    if not is_ptx:
        module = cp.cuda.function.Module()
        module.load(data)
        return module
    # envreg 0-2: group offsets, 3-5: global offsets, 6-8: group counts (x, y, z).
    env = {0: 0, 1: 0, 2: 0, 3: 0, 4: 0, 5: 0, 6: groups, 7: 1, 8: 1}
    used = sorted({int(m) for m in re.findall(rb"%envreg(\d+)", text)})
    unknown = [r for r in used if r not in env]
    if unknown:
        sys.exit(f"the program reads launch registers this replay cannot set: {unknown}")
    text = re.sub(rb"%envreg(\d+)", lambda m: str(env[int(m.group(1))]).encode(), text)
    text = text.replace(b", texmode_independent", b"")
    # Kernel parameters that carry a state space (`.ptr .shared .align 4`, OpenCL's __local
    # and __global pointers) become plain 64-bit values: the code addresses memory with
    # them the same way.
    text, ptrs = re.subn(rb"\.ptr\s+\.(?:global|shared|const|local)\s+(?:\.align\s+\d+\s+)?",
                         b"", text)
    print(f"replaced %envreg{used} with the launch's values; {ptrs} pointer parameters plain")
    image = text + b"\0"
    try:
        module = cp.cuda.function.Module()
        module.load(image)
        return module
    except Exception as e:  # the driver's error names the cause
        print(f"program load failed: {e}")
    try:  # the JIT linker reports what it refused, where the module loader does not
        link = cp.cuda.function.LinkState()
        link.add_ptr_data(image, "program.ptx", cp.cuda.driver.CU_JIT_INPUT_PTX)
        link.complete()
    except Exception as e:
        print(f"JIT link: {e}")
    sys.exit("cannot load the captured program")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    with open(os.path.join(d, "launch.json")) as f:
        launch = json.load(f)
    base = dynamic_shared_base()
    local = launch["local"] or 128  # 0: the OpenCL driver chose; any size the kernel allows
    grid = (launch["global"] + local - 1) // local
    module = load_module(os.path.join(d, "program.bin"), grid)
    kernel = module.get_function(launch["kernel"])

    def fresh_args():
        args, buffers, shared = [], {}, 0
        for i, a in enumerate(launch["args"]):
            if a["kind"] == "mem":
                host = np.fromfile(os.path.join(d, a["file"]), dtype=np.uint8)
                buffers[i] = cp.asarray(host)
                args.append(buffers[i])
            elif a["kind"] == "u32":
                args.append(np.uint32(a["value"]))
            elif a["kind"] == "u64":
                args.append(np.uint64(a["value"]))
            elif a["kind"] == "local":
                args.append(np.uint64(base + shared))
                shared += (a["bytes"] + 15) // 16 * 16
            else:
                sys.exit(f"unknown argument kind {a['kind']}")
        return args, buffers, shared

    args, buffers, shared = fresh_args()
    if shared > 48 * 1024:
        cp.cuda.driver.funcSetAttribute(
            kernel.ptr, 8, shared)  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    kernel((grid,), (local,), tuple(args), shared_mem=shared)
    cp.cuda.Device().synchronize()
    bad = 0
    for i, buf in buffers.items():
        want = np.fromfile(os.path.join(d, launch["args"][i]["after"]), dtype=np.uint8)
        got = cp.asnumpy(buf)
        if not np.array_equal(got, want):
            bad += 1
            print(f"argument {i}: differs from the OpenCL launch in "
                  f"{int(np.count_nonzero(got != want))} of {got.size} bytes")
    print(f"{launch['kernel']}: grid {grid} x {local}, {shared} bytes shared from "
          f"{base}; replay "
          + ("matches the OpenCL launch" if bad == 0 else f"MISMATCH in {bad} buffers"))
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeats):
        args, _, _ = fresh_args()
        start.record()
        kernel((grid,), (local,), tuple(args), shared_mem=shared)
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    if times:
        print(f"{launch['kernel']}: median {sorted(times)[len(times) // 2]:.3f} ms of {repeats}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
