//! `ComputeBackend` on OpenCL devices.
//!
//! Not yet implemented: this crate reserves its place in the layer map (see the README's
//! status table).
