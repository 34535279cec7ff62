//! Writes each OpenCL program's assembled source (`fr.cl`, `g1-msm.cl`, `g2-msm.cl`) into a
//! directory, for review and for counting the machine instructions of a kernel without a GPU.
//!
//! `cargo run -p sluice-backend-opencl --example dump_kernels -- DIR`
//!
//! The count that showed the carry-flag Montgomery rows' cost (BENCHMARKS.md#msm-gpu)
//! went: prepend `#define asm __asm__`, `#define KERNEL_NVIDIA` and
//! `#define clz(x) __builtin_clzl(x)` to a file holding the field part of a source plus a
//! one-line kernel calling the function of interest; `clang-15 -x cl -cl-std=CL1.2 -target
//! nvptx64-nvidia-nvcl -Xclang -finclude-default-header -O3 -S` to PTX; set its `.version`
//! to what the `ptxas` at hand takes and `.target` to `sm_90`; `ptxas -arch=sm_90` (PyPI's
//! `nvidia-cuda-nvcc-cu12` wheel carries one); `cuobjdump -sass` (the Triton wheel carries
//! one). The GPU machine's own OpenCL binaries (the kernel cache) are PTX too and take the
//! same two last steps.
//!
//! A whole program compiles the same way (the eighth session counted the Fr program's
//! kernels so) with these lines prepended instead: `#define asm __asm__`, `#define
//! KERNEL_NVIDIA`, `#define inline static inline` (clang leaves C99 inline functions
//! undefined), `#define clz(x) __builtin_clz(x)`, `min` / `max` as macros, the work-item
//! functions as `__nvvm_read_ptx_sreg_{tid,ctaid,ntid,nctaid}_x()`, `barrier(x)` as
//! `__nvvm_bar_sync(0)`, and for the MSM programs `atomic_add` / `atomic_inc` as plain
//! read-modify-writes (the count is all that matters there); plus `-DSLUICE_...` switches to
//! compare variants. Clang's PTX differs from the NVIDIA driver's outside the inline
//! assembly (it kept the NTT's register array on the stack), so compare variants, not
//! absolute counts.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: dump_kernels DIR (the directory to write the .cl files into)")?;
    std::fs::create_dir_all(&dir)?;
    for kind in sluice_backend_opencl::ProgramKind::ALL {
        let path = std::path::Path::new(&dir).join(format!("{}.cl", kind.name()));
        std::fs::write(&path, kind.source())?;
        println!("{}", path.display());
    }
    Ok(())
}
