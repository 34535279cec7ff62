//! The decoders of parameters, verifying keys and proofs under libFuzzer: the checks of the
//! mutation test (`groth16/tests/decoder_mutation.rs`) on every input, taken both as an
//! encoding and as the choices of mutations of valid encodings (which reach past the
//! verifying key far more often than raw bytes do). A failed check panics: a crash.

#![no_main]

#[path = "../../groth16/tests/common/mod.rs"]
mod common;

use std::sync::OnceLock;

use common::mutate::{Choices, Fixture, FromBytes};
use common::readers::{check_params, check_proof, check_vk, ScratchFile};
use libfuzzer_sys::fuzz_target;

static FIXTURE: OnceLock<(Fixture, ScratchFile)> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let (fixture, file) = FIXTURE.get_or_init(|| (Fixture::new(1), ScratchFile::new("fuzz")));
    check_params(data, file).unwrap();
    check_vk(data).unwrap();
    check_proof(data).unwrap();
    let mut choices = FromBytes(data);
    match choices.below(3) {
        0 => check_params(&fixture.params_file.mutated(&mut choices), file).map(drop),
        1 => check_vk(&fixture.vk.mutated(&mut choices)).map(drop),
        _ => check_proof(&fixture.proof.mutated(&mut choices)).map(drop),
    }
    .unwrap();
});
