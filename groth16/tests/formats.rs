//! What the readers of the bellperson formats accept and reject (README "Formats"), reader
//! against reader on the same corrupted files: `Parameters::read` and
//! `MappedParameters::open`, checked and unchecked, `VerifyingKey::read`, and
//! `Proof::from_bytes` against `Proof::read`.

#![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

mod common;

use common::readers::{
    check_params, check_proof, layout, non_subgroup_point, read_params_both_ways, ScratchFile,
    Verdict, VK_POINTS,
};
use common::Chain;
use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend_cpu::CpuBackend;
use sluice_field::{DecodeError, Fr, G1Affine, G2Affine};
use sluice_groth16::*;

const ROUNDS: usize = 3;

/// Parameters of a small circuit and their bytes.
fn params(seed: u64) -> (Parameters, Vec<u8>) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let params = generate_random_parameters(Chain::<Fr>::new(None, ROUNDS), &mut rng).unwrap();
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    (params, bytes)
}

fn identity_encoding(size: usize) -> Vec<u8> {
    match size {
        96 => G1Affine::identity().to_uncompressed().to_vec(),
        _ => G2Affine::identity().to_uncompressed().to_vec(),
    }
}

/// Every parameter reader's error on `bytes` (both must fail), checked and unchecked.
fn param_errors(bytes: &[u8], file: &ScratchFile) -> Vec<Groth16Error> {
    [true, false]
        .into_iter()
        .flat_map(|checked| read_params_both_ways(bytes, checked, file))
        .map(|r| match r {
            Ok(_) => panic!("a reader accepted corrupted parameters"),
            Err(e) => e,
        })
        .collect()
}

/// All the errors are the same (by their message).
fn assert_same(errors: &[Groth16Error]) {
    let first = errors[0].to_string();
    for e in errors {
        assert_eq!(e.to_string(), first, "the readers disagree");
    }
}

#[test]
fn identity_verifying_key_points_are_rejected_by_every_reader() {
    let (params, bytes) = params(1);
    let file = ScratchFile::new("identity-vk");
    let vk_len = params.vk.serialized_size();
    for (name, at, size) in VK_POINTS {
        let mut bad = bytes.clone();
        bad[at..at + size].copy_from_slice(&identity_encoding(size));
        let mut errors = vec![VerifyingKey::read(&bad[..vk_len]).unwrap_err()];
        errors.extend(param_errors(&bad, &file));
        for e in &errors {
            match e {
                Groth16Error::PointAtInfinity { offset, what } => {
                    assert_eq!((*offset, what.as_str()), (at as u64, name));
                }
                other => panic!("{name}: expected PointAtInfinity, got {other}"),
            }
        }
        assert_same(&errors);
    }
}

#[test]
fn trailing_bytes_after_the_last_query_are_rejected_by_both_readers() {
    let (_, bytes) = params(2);
    let file = ScratchFile::new("trailing");
    for extra in [1usize, 7, 200, 100_000] {
        let mut bad = bytes.clone();
        bad.resize(bytes.len() + extra, 0);
        let errors = param_errors(&bad, &file);
        for e in &errors {
            match e {
                Groth16Error::TrailingBytes {
                    offset, extra: got, ..
                } => assert_eq!((*offset, *got), (bytes.len() as u64, extra as u64)),
                other => panic!("{extra} trailing bytes: expected TrailingBytes, got {other}"),
            }
        }
        assert_same(&errors);
    }
}

#[test]
fn unchecked_reads_check_the_curve_equation_and_skip_only_the_subgroup_check() {
    let (params, bytes) = params(3);
    let file = ScratchFile::new("unchecked");
    for section in &layout(&params)[1..] {
        let i = section.count / 2;
        let at = section.point(i);
        // y's lowest bit flipped: off the curve.
        let mut off_curve = bytes.clone();
        off_curve[at + section.point_size - 1] ^= 1;
        // (0, 0) without the infinity flag encodes nothing.
        let mut zeros = bytes.clone();
        zeros[at..at + section.point_size].fill(0);
        for bad in [off_curve, zeros] {
            let errors = param_errors(&bad, &file);
            for e in &errors {
                match e {
                    Groth16Error::InvalidPoint {
                        offset,
                        what,
                        source,
                    } => {
                        assert_eq!(
                            (*offset, what.as_str(), *source),
                            (
                                at as u64,
                                format!("{}[{i}]", section.name).as_str(),
                                DecodeError::NotOnCurve
                            )
                        );
                    }
                    other => panic!("{}[{i}]: expected InvalidPoint, got {other}", section.name),
                }
            }
            assert_same(&errors);
        }
    }
    // On the curve, outside the subgroup: only checked reads reject it.
    let h0 = layout(&params)[1].point(0);
    let mut bad = bytes.clone();
    bad[h0..h0 + 96].copy_from_slice(&non_subgroup_point().to_uncompressed());
    assert_eq!(check_params(&bad, &file), Ok(Verdict::UncheckedOnly));
    for r in read_params_both_ways(&bad, true, &file) {
        assert!(matches!(
            r,
            Err(Groth16Error::InvalidPoint {
                source: DecodeError::NotInSubgroup,
                ..
            })
        ));
    }
}

#[test]
fn truncation_names_the_first_incomplete_item_where_it_starts() {
    let (params, bytes) = params(4);
    let file = ScratchFile::new("truncated");
    let [ic, h, .., b_g2] = layout(&params);
    // (cut, where the incomplete item starts, how its description starts)
    let cases = [
        (0, 0, "vk.alpha_g1 ".to_owned()),
        (50, 0, "vk.alpha_g1 ".to_owned()),
        (300, 192, "vk.beta_g2 ".to_owned()),
        (
            ic.len_at + 2,
            ic.len_at,
            "the u32 length of vk.ic".to_owned(),
        ),
        (ic.point(1) + 10, ic.point(1), "vk.ic[1] of ".to_owned()),
        (h.len_at, h.len_at, "the u32 length of h".to_owned()),
        (h.point(2), h.point(2), "h[2] of ".to_owned()),
        (h.point(3) + 95, h.point(3), "h[3] of ".to_owned()),
        (
            b_g2.point(b_g2.count - 1) + 100,
            b_g2.point(b_g2.count - 1),
            format!("b_g2[{}] of ", b_g2.count - 1),
        ),
    ];
    for (cut, at, what) in cases {
        let errors = param_errors(&bytes[..cut], &file);
        for e in &errors {
            match e {
                Groth16Error::Truncated { offset, expected } => {
                    assert_eq!(*offset, at as u64, "cut {cut}: {e}");
                    assert!(expected.starts_with(&what), "cut {cut}: {e}");
                }
                other => panic!("cut {cut}: expected Truncated, got {other}"),
            }
        }
        assert_same(&errors);
    }

    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let x = Fr::random(&mut rng);
    let proof = create_random_proof(
        Chain::new(Some(x), ROUNDS),
        &params,
        &mut rng,
        &CpuBackend::new(),
    )
    .unwrap();
    let pb = proof.to_bytes();
    for (cut, at, what) in [
        (0, 0, "proof.a "),
        (20, 0, "proof.a "),
        (48, 48, "proof.b "),
        (100, 48, "proof.b "),
        (191, 144, "proof.c "),
    ] {
        check_proof(&pb[..cut]).unwrap();
        let errors = [
            Proof::from_bytes(&pb[..cut]).unwrap_err(),
            Proof::read(&pb[..cut]).unwrap_err(),
        ];
        for e in &errors {
            match e {
                Groth16Error::Truncated { offset, expected } => {
                    assert_eq!(*offset, at as u64, "cut {cut}: {e}");
                    assert!(expected.starts_with(what), "cut {cut}: {e}");
                }
                other => panic!("proof cut {cut}: expected Truncated, got {other}"),
            }
        }
        assert_same(&errors);
    }
}

/// One corruption of each kind, in every section: the readers agree on each file (and
/// every one is rejected).
#[test]
fn the_readers_agree_on_corrupted_files() {
    let (params, bytes) = params(6);
    let file = ScratchFile::new("agree");
    assert_eq!(check_params(&bytes, &file), Ok(Verdict::Accepted));
    let mut corrupted = Vec::new();
    for s in layout(&params) {
        let len = |n: u64| {
            let mut b = bytes.clone();
            b[s.len_at..s.len_at + 4].copy_from_slice(&(n as u32).to_be_bytes());
            b
        };
        let count = s.count as u64;
        corrupted.extend([len(count + 1), len(count - 1), len(0), len(u32::MAX.into())]);
        let mut flags = bytes.clone();
        flags[s.point(0)] |= 0x80; // the compression flag in an uncompressed file
        corrupted.push(flags);
        let mut ident = bytes.clone();
        ident[s.point(0)..s.point(1)].copy_from_slice(&identity_encoding(s.point_size));
        corrupted.push(ident);
        let mut cut = bytes.clone();
        cut.truncate(s.point(s.count - 1) + 1);
        corrupted.push(cut);
        // A bad point early and a length error later: each reader reports one of them.
        let mut two = len(count + 1);
        two[layout(&params)[1].point(0) + 5] ^= 0x10;
        corrupted.push(two);
    }
    let mut long = bytes.clone();
    long.push(0);
    corrupted.push(long);
    for (k, bad) in corrupted.iter().enumerate() {
        assert_eq!(check_params(bad, &file), Ok(Verdict::Rejected), "file {k}");
    }
}
