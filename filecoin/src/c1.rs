//! The C1 output as operators hold it: the JSON lotus-bench's `prove` command reads
//! (`{"SectorNum": n, "Phase1Out": base64 of filecoin-proofs-api's C1 JSON, "SectorSize": b}`),
//! or filecoin-proofs-api's C1 JSON itself.

use std::io::{Read, Write};

use base64::Engine as _;
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use filecoin_proofs_api::SectorId;
use serde::{Deserialize, Serialize};

use crate::error::FilecoinError;

/// A C2 request: the sector and its C1 output.
#[derive(Clone, Debug)]
pub struct Commit2Input {
    /// The sector number, where the file gives it (lotus-bench's form does).
    pub sector_id: Option<SectorId>,
    /// filecoin-proofs-api's C1 output.
    pub phase1_output: SealCommitPhase1Output,
}

/// lotus-bench's `Commit2In` (Go's JSON: `[]byte` is base64).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct LotusCommit2In {
    sector_num: u64,
    phase1_out: String,
    sector_size: u64,
}

/// Reads a C1 output in either form. Errors name what is wrong: not JSON, bad base64, a
/// C1 output that does not decode, or a `SectorSize` other than the proof type's.
pub fn read_commit2_input(mut reader: impl Read) -> Result<Commit2Input, FilecoinError> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| FilecoinError::Input(format!("reading the C1 output: {e}")))?;
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| FilecoinError::Input(format!("the C1 output is not JSON: {e}")))?;
    if value.get("Phase1Out").is_none() {
        let phase1_output = serde_json::from_value(value)
            .map_err(|e| FilecoinError::Input(format!("the C1 output does not decode: {e}")))?;
        return Ok(Commit2Input {
            sector_id: None,
            phase1_output,
        });
    }
    let lotus: LotusCommit2In = serde_json::from_value(value)
        .map_err(|e| FilecoinError::Input(format!("lotus-bench's C1 file does not decode: {e}")))?;
    let inner = base64::engine::general_purpose::STANDARD
        .decode(lotus.phase1_out.trim())
        .map_err(|e| FilecoinError::Input(format!("Phase1Out is not base64: {e}")))?;
    let phase1_output: SealCommitPhase1Output = serde_json::from_slice(&inner)
        .map_err(|e| FilecoinError::Input(format!("Phase1Out does not decode: {e}")))?;
    let size = u64::from(phase1_output.registered_proof.sector_size());
    if size != lotus.sector_size {
        return Err(FilecoinError::Input(format!(
            "SectorSize is {} but Phase1Out is a {:?} output ({size} bytes)",
            lotus.sector_size, phase1_output.registered_proof
        )));
    }
    Ok(Commit2Input {
        sector_id: Some(SectorId::from(lotus.sector_num)),
        phase1_output,
    })
}

/// Writes a C1 output in lotus-bench's form.
pub fn write_commit2_input(
    writer: impl Write,
    sector_id: SectorId,
    phase1_output: &SealCommitPhase1Output,
) -> Result<(), FilecoinError> {
    let inner = serde_json::to_vec(phase1_output)
        .map_err(|e| FilecoinError::Input(format!("encoding the C1 output: {e}")))?;
    let lotus = LotusCommit2In {
        sector_num: u64::from(sector_id),
        phase1_out: base64::engine::general_purpose::STANDARD.encode(inner),
        sector_size: u64::from(phase1_output.registered_proof.sector_size()),
    };
    serde_json::to_writer(writer, &lotus)
        .map_err(|e| FilecoinError::Input(format!("writing the C1 file: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_what_is_wrong() {
        let e = read_commit2_input(&b"not json"[..]).unwrap_err();
        assert!(e.to_string().contains("not JSON"), "{e}");
        let e = read_commit2_input(&br#"{"SectorNum":1,"Phase1Out":"@@","SectorSize":2048}"#[..])
            .unwrap_err();
        assert!(e.to_string().contains("not base64"), "{e}");
        let e = read_commit2_input(&br#"{"registered_proof":"nope"}"#[..]).unwrap_err();
        assert!(e.to_string().contains("does not decode"), "{e}");
    }
}
