//! A PoRep partition (`StackedCircuit`) as a fork: one part per challenge.

use std::sync::Arc;

use bellperson::SynthesisError;
use blstrs::Scalar as Fr;
use filecoin_hashers::Hasher;
use filecoin_proofs::MerkleTreeTrait;
use sluice::Fork;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_porep::stacked::{
    Challenges, Proof, PublicInputs, PublicParams, StackedCircuit, StackedCompound, StackedDrg,
};

use super::refused;
use crate::error::FilecoinError;

/// A PoRep partition as a [`Fork`]: the prefix is what `StackedCircuit` allocates before its
/// challenges (replica id and its bits, comm_d, comm_r, comm_r_last, comm_c and the
/// comm_r = H(comm_c, comm_r_last) check), each part the circuit of one challenge's vanilla
/// proof, built by `StackedCompound::circuit` as the whole partition's circuit is.
pub struct PorepFork<Tree: 'static + MerkleTreeTrait, G: 'static + Hasher> {
    public_inputs: PublicInputs<<Tree::Hasher as Hasher>::Domain, <G as Hasher>::Domain>,
    proofs: Vec<Proof<Tree, G>>,
    public_params: Arc<PublicParams<Tree>>,
    k: Option<usize>,
}

impl<Tree: 'static + MerkleTreeTrait, G: 'static + Hasher> PorepFork<Tree, G> {
    /// Partition `k`'s circuit from its challenges' vanilla `proofs`, as
    /// `StackedCompound::circuit` makes it. Refused as it would refuse it: no proofs, or
    /// proofs of different comm_r_last or comm_c.
    pub fn new(
        public_inputs: PublicInputs<<Tree::Hasher as Hasher>::Domain, <G as Hasher>::Domain>,
        proofs: Vec<Proof<Tree, G>>,
        public_params: Arc<PublicParams<Tree>>,
        k: Option<usize>,
    ) -> Result<Self, FilecoinError> {
        let first = proofs
            .first()
            .ok_or_else(|| FilecoinError::Input("a PoRep partition of no challenges".into()))?;
        if let Some(i) = proofs
            .iter()
            .position(|p| p.comm_r_last() != first.comm_r_last() || p.comm_c() != first.comm_c())
        {
            return Err(FilecoinError::Input(format!(
                "the vanilla proof of challenge {i} has another comm_r_last or comm_c than challenge 0's"
            )));
        }
        Ok(PorepFork {
            public_inputs,
            proofs,
            public_params,
            k,
        })
    }

    /// The partition's circuit, whole (the sequential synthesis).
    pub fn circuit(&self) -> Result<StackedCircuit<Tree, G>, FilecoinError> {
        self.circuit_of(&self.proofs)
            .map_err(FilecoinError::filecoin("building the PoRep circuit"))
    }

    fn circuit_of(&self, proofs: &Vec<Proof<Tree, G>>) -> anyhow::Result<StackedCircuit<Tree, G>> {
        <StackedCompound<Tree, G> as CompoundProof<StackedDrg<'_, Tree, G>, _>>::circuit(
            &self.public_inputs,
            (),
            proofs,
            &self.public_params,
            self.k,
        )
    }
}

impl<Tree: 'static + MerkleTreeTrait, G: 'static + Hasher> Fork<Fr> for PorepFork<Tree, G> {
    type Part = StackedCircuit<Tree, G>;

    fn parts(&self) -> usize {
        self.proofs.len()
    }

    /// The circuit of no challenge, blank (a fork's prefix is only counted):
    /// `StackedCompound::circuit` refuses an empty list, its blank circuit takes its
    /// challenge count from the parameters.
    fn prefix(&self) -> Result<Self::Part, SynthesisError> {
        let mut none = PublicParams::clone(&self.public_params);
        none.challenges = Challenges::new_interactive(0);
        Ok(<StackedCompound<Tree, G> as CompoundProof<
            StackedDrg<'_, Tree, G>,
            _,
        >>::blank_circuit(&none))
    }

    fn part(&self, index: usize) -> Result<Self::Part, SynthesisError> {
        let proof = self.proofs.get(index).ok_or_else(|| {
            refused(
                "PoRep challenge",
                format!("{index} of {}", self.proofs.len()),
            )
        })?;
        self.circuit_of(&vec![proof.clone()])
            .map_err(|e| refused("building a PoRep challenge's circuit", e))
    }
}
