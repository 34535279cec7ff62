//! PoRep C2 end to end on 2 KiB sectors: sealed and committed (C1) by filecoin-proofs,
//! proved by sluice, verified by filecoin-proofs' `verify_seal`; tampered requests refused.

use crate::support;
use crate::with_prover;

use filecoin_proofs_api::seal::{verify_seal, SealCommitPhase1Output};
use std::time::Instant;

use filecoin_proofs_api::SectorId;
use sluice::ComputeBackend;
use sluice_filecoin::c1::{read_commit2_input, write_commit2_input};
use sluice_filecoin::{FilecoinError, Prover};

#[test]
fn c2_of_a_sealed_sector_verifies_with_filecoin_proofs_and_tampering_is_refused() {
    support::init();
    let mut rng = support::rng("c2");
    let prover = support::prover();
    for proof in support::seal_proofs() {
        let start = Instant::now();
        let sealed = support::seal(proof, support::Data::Random, &mut rng);
        eprintln!(
            "{proof:?}: sealed (PC1, PC2, C1) in {:.2?}",
            start.elapsed()
        );
        with_prover!(&prover, |p| c2_case(p, &sealed));
    }
}

fn c2_case<B: ComputeBackend + 'static>(prover: &Prover<B>, sealed: &support::Sealed) {
    let registered = sealed.registered;
    // Through lotus-bench's C1 file, as an operator would.
    let mut file = Vec::new();
    write_commit2_input(&mut file, sealed.sector_id, &sealed.c1).unwrap();
    if let Some(dir) = std::env::var_os("SLUICE_FILECOIN_C1_OUT") {
        // The GPU bundle proves this file again with the command.
        let base =
            std::path::Path::new(&dir).join(format!("c1-{}", support::size_name(registered)));
        std::fs::write(base.with_extension("json"), &file).unwrap();
        std::fs::write(base.with_extension("prover"), hex::encode(sealed.prover_id)).unwrap();
    }
    let input = read_commit2_input(&file[..]).unwrap();
    assert_eq!(input.sector_id, Some(sealed.sector_id));
    let start = Instant::now();
    let output = prover
        .seal_commit_phase2(input.phase1_output, sealed.prover_id, sealed.sector_id)
        .unwrap();
    eprintln!(
        "{registered:?}: C2 (parameters loaded or generated, proved, verified) in {:.2?}",
        start.elapsed()
    );
    assert_eq!(
        output.proof.len(),
        192 * usize::from(registered.partitions())
    );
    assert!(verify_seal(
        registered,
        sealed.comm_r,
        sealed.comm_d,
        sealed.prover_id,
        sealed.sector_id,
        sealed.ticket,
        sealed.seed,
        &output.proof,
    )
    .unwrap());
    // A wrong sector id is refused before any partition is proved: the C1 output's
    // replica id is not that sector's.
    let wrong_id = SectorId::from(u64::from(sealed.sector_id) + 1);
    let err = prover
        .seal_commit_phase2(sealed.c1.clone(), sealed.prover_id, wrong_id)
        .unwrap_err();
    assert!(err.to_string().contains("replica id"), "{err}");

    // A flipped byte inside a vanilla proof: its partition is unsatisfied, found during
    // synthesis, and the error names the constraint.
    let err = prover
        .seal_commit_phase2(
            flip_vanilla_byte(&sealed.c1),
            sealed.prover_id,
            sealed.sector_id,
        )
        .unwrap_err();
    assert!(matches!(err, FilecoinError::Proving { .. }), "{err}");
    assert!(anyhow_chain(&err).contains("not satisfied"), "{err:?}");

    // The wrong number of partitions is an input error naming the counts.
    let mut value = serde_json::to_value(&sealed.c1).unwrap();
    let partitions = first_array(&mut value["vanilla_proofs"]).unwrap();
    partitions.push(partitions[0].clone());
    let extra: SealCommitPhase1Output = serde_json::from_value(value).unwrap();
    let err = prover
        .seal_commit_phase2(extra, sealed.prover_id, sealed.sector_id)
        .unwrap_err();
    assert!(err.to_string().contains("holds 2 partitions"), "{err}");
}

/// The error and its sources, as one string.
fn anyhow_chain(err: &dyn std::error::Error) -> String {
    let mut s = err.to_string();
    let mut source = err.source();
    while let Some(e) = source {
        s.push_str(": ");
        s.push_str(&e.to_string());
        source = e.source();
    }
    s
}

/// The C1 output with one byte of the first challenge's data-tree leaf changed.
fn flip_vanilla_byte(c1: &SealCommitPhase1Output) -> SealCommitPhase1Output {
    let mut value = serde_json::to_value(c1).unwrap();
    let leaf = find_key(&mut value["vanilla_proofs"], "comm_d_proofs")
        .and_then(|p| find_key(p, "leaf"))
        .expect("a comm_d proof with a leaf");
    let bytes = leaf.as_array_mut().expect("leaf bytes");
    let b = bytes[3].as_u64().unwrap();
    bytes[3] = serde_json::Value::from(b ^ 0x01);
    serde_json::from_value(value).unwrap()
}

fn find_key<'a>(v: &'a mut serde_json::Value, key: &str) -> Option<&'a mut serde_json::Value> {
    match v {
        serde_json::Value::Object(map) => {
            if map.contains_key(key) {
                return map.get_mut(key);
            }
            map.values_mut().find_map(|x| find_key(x, key))
        }
        serde_json::Value::Array(items) => items.iter_mut().find_map(|x| find_key(x, key)),
        _ => None,
    }
}

/// The array of partitions inside the vanilla proofs' enum wrapper.
fn first_array(v: &mut serde_json::Value) -> Option<&mut Vec<serde_json::Value>> {
    match v {
        serde_json::Value::Array(a) => Some(a),
        serde_json::Value::Object(map) => map.values_mut().find_map(first_array),
        _ => None,
    }
}
