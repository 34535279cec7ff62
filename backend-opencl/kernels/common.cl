// Helpers shared by every sluice program.
//
// KERNEL_NVIDIA is defined at program-build time when the device's vendor is NVIDIA; it
// selects the inline PTX of src/ptx.rs (each field's `*_add_nc` / `*_sub_nc` carry chains
// and `*_mul`). Every other device uses the portable C of field.cl.

// KERNEL_NOINLINE_MUL keeps the field multiplications out of line: far smaller code for
// the NVIDIA compiler to schedule (the G2 program's cold build), at the cost of a call.
#ifdef KERNEL_NOINLINE_MUL
#define KERNEL_MUL_ATTR __attribute__((noinline))
#else
#define KERNEL_MUL_ATTR
#endif

// KERNEL_NOINLINE_CURVE (the G2 program) also keeps the point operations and Fq2 products
// out of line: inlined, its cold build is too slow (BENCHMARKS.md#build-and-load). The G1
// program inlines them: its accumulate kernel runs faster so on an H200
// (BENCHMARKS.md#msm-gpu) and it still builds in seconds. -DKERNEL_INLINE_CURVE inlines them in G2 too, and
// -DKERNEL_NOINLINE_CURVE moves G1's out of line, for comparison.
#if defined(KERNEL_NOINLINE_CURVE) && !defined(KERNEL_INLINE_CURVE)
#define KERNEL_CURVE_ATTR __attribute__((noinline))
#else
#define KERNEL_CURVE_ATTR
#endif

