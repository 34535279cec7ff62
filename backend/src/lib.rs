//! The `ComputeBackend` trait: the boundary between the Groth16 prover and the hardware.
//!
//! Everything heavy the prover does — NTTs, the pointwise operations of the H computation,
//! and the multi-scalar multiplications — goes through [`ComputeBackend`]. The prover never
//! touches a driver. Backends keep their data in buffers they own (device memory for a GPU,
//! RAM for the CPU), and every buffer is tracked by a [`MemoryTracker`], so the bytes a proof
//! holds are a number that can be reported, tested and budgeted.
//!
//! Host and device share one representation: [`Fr`] in Montgomery form with little-endian
//! limbs, affine points as `(x, y)` with the identity stored as `(0, 0)`. Buffers cross the
//! boundary with no conversion.
//!
//! No backend falls back to another on its own: an error is returned, and falling back is an
//! explicit, logged choice of the caller.

mod check;
pub mod compact;
mod compute_backend;
mod error;
mod host_vec;
pub mod huge_pages;
mod memory;
mod memory_kind;
mod shared;
#[cfg(feature = "testing")]
pub mod testing;
mod tracked_vec;

pub use check::{
    check_len, check_msm_bases, check_pow2_segment, check_range, check_segment, decode_base,
    encoded_len, LowestIndexed,
};
pub use compact::{CompactConfig, CompactVec, HostBudget, Storage};
pub use compute_backend::{BackendInfo, Buffer, ComputeBackend, Scalars, Transform};
pub use error::{BackendError, BaseDefect};
pub use host_vec::{FrVec, HeapLender, HostAllocator, LentMemory};
pub use memory::{host_memory_bytes, Allocation, MemoryInfo, MemoryReport, MemoryTracker};
pub use memory_kind::MemoryKind;
pub use sluice_field::{
    CurveAffine, CurveGroup, Density, Fr, G1Affine, G1Projective, G2Affine, G2Projective,
    GroupKind, NttOrder,
};
pub use tracked_vec::HostVector;
