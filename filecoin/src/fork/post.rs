//! A PoSt partition (`FallbackPoStCircuit`) as a fork: one part per sector.

use bellperson::SynthesisError;
use blstrs::Scalar as Fr;
use filecoin_proofs::MerkleTreeTrait;
use sluice::Fork;
use storage_proofs_post::fallback::FallbackPoStCircuit;

use super::refused;

/// A Window or Winning PoSt partition as a [`Fork`]: no prefix (the circuit allocates
/// nothing before its sectors), each part the circuit of one sector.
pub struct PostFork<Tree: 'static + MerkleTreeTrait>(pub FallbackPoStCircuit<Tree>);

impl<Tree: 'static + MerkleTreeTrait> Fork<Fr> for PostFork<Tree> {
    type Part = FallbackPoStCircuit<Tree>;

    fn parts(&self) -> usize {
        self.0.sectors.len()
    }

    fn prefix(&self) -> Result<Self::Part, SynthesisError> {
        Ok(FallbackPoStCircuit {
            prover_id: self.0.prover_id,
            sectors: Vec::new(),
        })
    }

    fn part(&self, index: usize) -> Result<Self::Part, SynthesisError> {
        let sector = self.0.sectors.get(index).ok_or_else(|| {
            refused(
                "PoSt sector",
                format!("{index} of {}", self.0.sectors.len()),
            )
        })?;
        Ok(FallbackPoStCircuit {
            prover_id: self.0.prover_id,
            sectors: vec![sector.clone()],
        })
    }
}
