//! The prover, generic over the compute backend: [`run`] runs one proof's phases in order,
//! H ([`h`], or [`streaming`] where the device is small), the MSMs over the witness
//! ([`msm`]), and the proof's assembly, each timed ([`report`]); [`entry`] proves circuits
//! and [`streamed`] overlaps the witness's MSMs with its synthesis; [`pass`] proves several
//! partitions over one upload of each batch of streamed bases.

pub(crate) mod config;
pub(crate) mod entry;
pub(crate) mod h;
pub(crate) mod msm;
pub(crate) mod pass;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod streamed;
pub(crate) mod streaming;
