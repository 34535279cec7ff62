#!/usr/bin/env python3
"""Measures the issue rate of the integer instructions a Montgomery product is built from, on
the GPU the CUDA driver sees first:

    python3 int_throughput.py [PTX_DIR]

Each variant is a PTX kernel whose threads run CHAINS independent chains of one instruction
(or of a fixed mix) for ITERS iterations, enough warps to fill every SM. The figure printed
is warp instructions per clock per SM, counting the PTX instructions of the loop body, so
a full-rate 32-bit IMAD on sm_90 reads 2.0 (64 lanes per clock) and the dispatch limit is
4.0 (four schedulers). Clocks are the launch's wall time at the device's maximum SM clock
(a lower clock under load would read as a lower rate). With PTX_DIR
the kernels' PTX is written there too (for ptxas/cuobjdump: check that each variant becomes
the SASS it names). Needs CuPy and nothing from sluice.
"""
import os
import sys

import cupy as cp

CHAINS = 8
ITERS = 4096
THREADS = 256

# name: (register declarations, per-chain body with {i} the chain, PTX instructions per chain)
VARIANTS = {
    # IMAD: a_i = a_i * x + y
    "imad.lo": (".reg .u32 a<8>;", "mad.lo.u32 a{i}, a{i}, x, y;", 1),
    # IMAD.HI
    "imad.hi": (".reg .u32 a<8>;", "mad.hi.u32 a{i}, a{i}, x, a{i};", 1),
    # IMAD.WIDE.U32 with a 64-bit addend: w_i = hi(w_i) * x + w_i
    "imad.wide": (".reg .u64 w<8>; .reg .u32 l<8>, h<8>;",
                  "mov.b64 {{l{i}, h{i}}}, w{i}; mad.wide.u32 w{i}, h{i}, x, w{i};", 1),
    # IADD3: a_i = a_i + x + y
    "iadd3": (".reg .u32 a<8>;", "add.u32 a{i}, a{i}, x; add.u32 a{i}, a{i}, y;", 1),
    # One IMAD.WIDE and two IADD3 (the no-carry product's per-limb mix)
    "wide+2add": (".reg .u64 w<8>; .reg .u32 l<8>, h<8>;",
                  "mov.b64 {{l{i}, h{i}}}, w{i}; add.u32 l{i}, l{i}, h{i}; add.u32 h{i}, h{i}, x;"
                  " mov.b64 w{i}, {{l{i}, h{i}}}; mad.wide.u32 w{i}, l{i}, x, w{i};", 3),
    # mad.lo.cc / madc.hi.cc pairs (sppark-style carry chains), CHAINS limbs in one chain
    "madc pair": (".reg .u32 a<8>, b<8>;",
                  "madc.lo.cc.u32 a{i}, a{i}, x, b{i}; madc.hi.cc.u32 b{i}, a{i}, x, b{i};", 2),
}


def kernel_ptx(name, decl, body):
    lines = [
        ".version 7.8", ".target sm_90", ".address_size 64",
        ".visible .entry bench(.param .u64 out, .param .u32 seed)", "{",
        "  .reg .u32 x, y, k, tid; .reg .u64 p, acc, v; .reg .pred more;",
        "  " + decl,
        "  ld.param.u32 x, [seed]; mov.u32 tid, %tid.x; add.u32 y, x, tid; or.b32 x, x, 1;",
    ]
    for i in range(CHAINS):
        if "w<" in decl:
            lines.append(f"  cvt.u64.u32 w{i}, y; add.u64 w{i}, w{i}, {i};")
        if "a<" in decl:
            lines.append(f"  add.u32 a{i}, y, {i};")
        if "b<" in decl:
            lines.append(f"  add.u32 b{i}, y, {2 * i + 1};")
    lines += ["  mov.u32 k, 0;", "LOOP:"]
    if "madc" in body:
        lines.append("  add.cc.u32 x, x, 0;")
    for i in range(CHAINS):
        lines.append("  " + body.format(i=i))
    lines += ["  add.u32 k, k, 1;", f"  setp.lt.u32 more, k, {ITERS};", "  @more bra LOOP;",
              "  mov.u64 acc, 0;"]
    for i in range(CHAINS):
        if "w<" in decl:
            lines.append(f"  add.u64 acc, acc, w{i};")
        else:
            lines.append(f"  cvt.u64.u32 v, a{i}; add.u64 acc, acc, v;")
    lines += [
        # Keep every chain live: thread-dependent output.
        "  ld.param.u64 p, [out]; cvta.to.global.u64 p, p;",
        "  mov.u32 k, %ctaid.x; mov.u32 y, %ntid.x; mad.lo.u32 k, k, y, tid; mul.wide.u32 v, k, 8; add.u64 p, p, v;",
        "  st.global.u64 [p], acc;",
        "  ret;", "}",
    ]
    return "\n".join(lines)


def main():
    ptx_dir = sys.argv[1] if len(sys.argv) > 1 else None
    dev = cp.cuda.Device(0)
    sms = dev.attributes["MultiProcessorCount"]
    mhz = dev.attributes["ClockRate"] / 1e3  # kHz
    print(f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}: {sms} SMs at up to "
          f"{mhz:.0f} MHz, {CHAINS} chains x {ITERS} iterations, {THREADS} threads per block")
    for name, (decl, body, per) in VARIANTS.items():
        ptx = kernel_ptx(name, decl, body)
        if ptx_dir:
            with open(os.path.join(ptx_dir, name.replace(" ", "_").replace("+", "_") + ".ptx"),
                      "w") as f:
                f.write(ptx)
        mod = cp.cuda.function.Module()
        mod.load(ptx.encode())
        fn = mod.get_function("bench")
        for blocks_per_sm in (4, 8):
            blocks = sms * blocks_per_sm
            out = cp.zeros(blocks * THREADS, dtype=cp.uint64)
            fn((blocks,), (THREADS,), (out, cp.uint32(0x9e3779b9)))
            cp.cuda.runtime.deviceSynchronize()
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            fn((blocks,), (THREADS,), (out, cp.uint32(0x9e3779b9)))
            stop.record()
            stop.synchronize()
            ms = cp.cuda.get_elapsed_time(start, stop)
            cycles = ms * 1e3 * mhz
            warps_per_sm = blocks_per_sm * THREADS // 32
            instrs = warps_per_sm * ITERS * CHAINS * per
            print(f"{name:12s} {warps_per_sm:3d} warps/SM: {instrs / cycles:5.2f} "
                  f"warp-instr/clk/SM (launch {ms:.3f} ms)")


if __name__ == "__main__":
    main()
