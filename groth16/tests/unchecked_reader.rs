//! The unchecked parameter readers skip the subgroup check and nothing else: what blst
//! refuses unchecked, and so bellperson's unchecked reader too, they refuse. The case here
//! is x = 0: G1's points (0, 2) and (0, -2) are on the curve (of order 3, outside the
//! subgroup), and blst refuses them even unchecked. Planted in a query, every reader
//! (`Parameters::read`, `MappedParameters` decoded on the host and through a backend's own
//! decoder) refuses the file, naming the point's offset and index as the other reader
//! errors do; bellperson refuses the same bytes, and still accepts a point outside the
//! subgroup that is not x = 0, as sluice's unchecked readers do.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

mod common;

use bellperson::groth16 as bp;
use common::readers::{
    check_params, layout, non_subgroup_point, read_params_both_ways, ScratchFile, Verdict,
};
use common::Chain;
use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend_cpu::CpuBackend;
use sluice_field::{DecodeError, Fq, Fr, G1Affine};
use sluice_groth16::{
    generate_random_parameters, G1Query, Groth16Error, MappedParameters, ParameterSource,
    Parameters,
};

const ROUNDS: usize = 5;

/// Parameters of a small circuit and their bytes.
fn params(seed: u64) -> (Parameters, Vec<u8>) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let params = generate_random_parameters(Chain::<Fr>::new(None, ROUNDS), &mut rng).unwrap();
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    (params, bytes)
}

/// The uncompressed encodings of (0, 2) and (0, -2), each checked to be on the curve and
/// outside the subgroup, so that only the x = 0 rule can refuse them.
fn zero_x_points() -> [(&'static str, [u8; 96]); 2] {
    let two = Fq::from(2u64);
    [("(0, 2)", two), ("(0, -2)", -two)].map(|(name, y)| {
        let p = G1Affine::from_xy_unchecked(Fq::ZERO, y);
        assert!(bool::from(p.is_on_curve()), "{name} is on the curve");
        assert!(
            !bool::from(p.is_torsion_free()),
            "{name} is outside the subgroup"
        );
        let bytes = p.to_uncompressed();
        // blstrs (blst) refuses it unchecked: the rule matched here.
        assert!(
            bool::from(blstrs::G1Affine::from_uncompressed_unchecked(&bytes).is_none()),
            "blstrs refuses {name} unchecked"
        );
        (name, bytes)
    })
}

/// bellperson's reader on `bytes`, checked or not: whether it accepts.
fn bellperson_accepts(bytes: &[u8], checked: bool) -> bool {
    bp::Parameters::<blstrs::Bls12>::read(bytes, checked).is_ok()
}

#[test]
fn zero_x_in_a_query_is_refused_unchecked_by_every_reader_as_by_bellperson() {
    let (params, bytes) = params(48);
    assert!(
        bellperson_accepts(&bytes, false),
        "bellperson reads the file"
    );
    let file = ScratchFile::new("zero-x");
    let mapped_file = MappedFile::new("zero-x");
    let sections = layout(&params);
    // h, l, a, b_g1: the G1 queries, which unchecked reads decode without the subgroup
    // check (vk.ic is always checked).
    let queries = [G1Query::H, G1Query::L, G1Query::A, G1Query::BG1];
    for (section, query) in sections[1..5].iter().zip(queries) {
        assert!(section.count > 2, "{}: a query with a middle", section.name);
        let i = section.count / 2;
        let at = section.point(i);
        let what = format!("{}[{i}]", section.name);
        for (name, point) in zero_x_points() {
            let mut bad = bytes.clone();
            bad[at..at + 96].copy_from_slice(&point);
            let context = format!("{name} as {what} at byte {at}");

            assert!(
                !bellperson_accepts(&bad, false),
                "bellperson, unchecked: {context}"
            );
            assert_eq!(
                check_params(&bad, &file),
                Ok(Verdict::Rejected),
                "every reader refuses, checked or not: {context}"
            );
            for checked in [false, true] {
                for r in read_params_both_ways(&bad, checked, &file) {
                    match r {
                        Err(Groth16Error::InvalidPoint {
                            offset,
                            what: got,
                            source,
                        }) => assert_eq!(
                            (offset, got.as_str(), source),
                            (at as u64, what.as_str(), DecodeError::NotInSubgroup),
                            "checked {checked}: {context}"
                        ),
                        other => panic!(
                            "checked {checked}: {context}: expected InvalidPoint, got {:?}",
                            other.map(|_| ()).map_err(|e| e.to_string())
                        ),
                    }
                }
            }

            // Mapped, unchecked, the query uploaded to a backend that decodes the file's
            // encodings itself (the CPU backend's decoder) rather than on the host.
            std::fs::write(&mapped_file.0, &bad).unwrap();
            let mapped = MappedParameters::open(&mapped_file.0, false).unwrap();
            match ParameterSource::<CpuBackend>::g1_bases(&mapped, &CpuBackend::new(), query) {
                Err(Groth16Error::InvalidPoint {
                    offset,
                    what: got,
                    source,
                }) => assert_eq!(
                    (offset, got.as_str(), source),
                    (at as u64, what.as_str(), DecodeError::NotInSubgroup),
                    "backend decoder: {context}"
                ),
                other => panic!(
                    "backend decoder: {context}: expected InvalidPoint, got {:?}",
                    other.map(|_| ()).map_err(|e| e.to_string())
                ),
            }
        }
    }
}

/// A point outside the subgroup with x != 0 is what unchecked reads exist to accept: both
/// bellperson and sluice read it unchecked and refuse it checked, so the test above refuses
/// x = 0 for its own sake, not for the subgroup.
#[test]
fn other_points_outside_the_subgroup_still_pass_unchecked_as_in_bellperson() {
    let (params, bytes) = params(49);
    let file = ScratchFile::new("outside-subgroup");
    let h = layout(&params)[1];
    let at = h.point(h.count / 2);
    let mut bad = bytes.clone();
    let q = non_subgroup_point();
    assert!(!bool::from(q.x().is_zero()));
    bad[at..at + 96].copy_from_slice(&q.to_uncompressed());
    assert!(bellperson_accepts(&bad, false), "bellperson, unchecked");
    assert!(!bellperson_accepts(&bad, true), "bellperson, checked");
    assert_eq!(check_params(&bad, &file), Ok(Verdict::UncheckedOnly));
}

/// A file of this process for the mapped reader, removed on drop.
struct MappedFile(std::path::PathBuf);

impl MappedFile {
    fn new(tag: &str) -> Self {
        MappedFile(std::env::temp_dir().join(format!(
            "sluice-unchecked-reader-{tag}-{}.params",
            std::process::id()
        )))
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
