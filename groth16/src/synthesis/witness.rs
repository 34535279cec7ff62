//! The constraint system of a synthesis with recorded
//! [`ConstraintMatrices`](crate::ConstraintMatrices): it records the assignment and counts
//! the constraints, and never calls an `enforce` closure or a name closure, whose linear
//! combinations and names the matrices make unnecessary.

use std::sync::mpsc::{Sender, SyncSender};

use bellpepper_core::LinearCombination;
use ff::Field;
use sluice_backend::compact::{SealedPage, PAGE_LEN};
use sluice_backend::CompactVec;
use sluice_field::{Fr, FrCompatible};

use crate::synthesis::join::{Joinable, Prefix};
use crate::synthesis::options::{report_progress, SynthesisOptions, SynthesisProgress};
use crate::synthesis::system::{constraint_system, Synthesizer};

/// Where a streamed synthesis sends each completed chunk of the witness, `(index of its
/// first value, values)`, as it fills (the channel bounds how many wait).
pub(crate) struct ChunkSink {
    len: usize,
    tx: Option<SyncSender<(usize, Vec<Fr>)>>,
    sent: usize,
}

impl ChunkSink {
    /// Chunks of `len` (at least one) values into `tx`.
    pub(crate) fn new(len: usize, tx: SyncSender<(usize, Vec<Fr>)>) -> Self {
        ChunkSink {
            len: len.max(1),
            tx: Some(tx),
            sent: 0,
        }
    }

    /// Sends `aux`'s values from the last chunk sent to `end`. A receiver gone (its MSMs
    /// failed, with an error of their own) stops the sending, not the synthesis.
    fn send(&mut self, aux: &CompactVec, end: usize) {
        let Some(tx) = &self.tx else {
            return;
        };
        let mut values = vec![Fr::ZERO; end - self.sent];
        aux.decode_into(self.sent, &mut values);
        if tx.send((self.sent, values)).is_err() {
            self.tx = None;
        }
        self.sent = end;
    }

    /// Sends the values not sent yet, then closes the channel.
    pub(crate) fn finish(mut self, aux: &CompactVec) {
        if aux.len() > self.sent {
            self.send(aux, aux.len());
        }
    }
}

/// The witness of a circuit and its constraint count.
pub(crate) struct WitnessOnly {
    /// The public inputs, the constant one first.
    pub(crate) inputs: Vec<Fr>,
    /// The auxiliary assignment, stored as `options` say.
    pub(crate) aux: CompactVec,
    /// Constraints enforced.
    pub(crate) constraints: usize,
    progress: Option<SynthesisProgress>,
    expected: usize,
    /// Where completed chunks of the witness go, for a streamed proof.
    pub(crate) chunks: Option<ChunkSink>,
    /// Where each full page of the witness goes, with the inputs so far, for the rows'
    /// evaluation during synthesis (`matrices::evaluate_early`).
    pub(crate) pages: Option<Sender<(SealedPage, Vec<Fr>)>>,
}

impl WitnessOnly {
    /// A witness stored as `options` say, of a circuit of `expected` constraints (0:
    /// unknown), for progress reports.
    pub(crate) fn new(options: &SynthesisOptions, expected: usize) -> Self {
        WitnessOnly {
            inputs: Vec::new(),
            aux: options.vector(options.capacity.aux),
            constraints: 0,
            progress: options.progress.clone(),
            expected,
            chunks: None,
            pages: None,
        }
    }

    /// Sends page `k` of the witness, just filled, to the evaluation. A receiver gone
    /// (it stopped at a row it could not read) stops the sending: the rows are then
    /// evaluated after synthesis.
    #[cold]
    fn send_page(&mut self, k: usize) {
        let Some(tx) = &self.pages else {
            return;
        };
        let sent = self
            .aux
            .sealed_page(k)
            .map(|page| tx.send((page, self.inputs.clone())));
        if !matches!(sent, Some(Ok(()))) {
            self.pages = None;
        }
    }
}

/// Parts of a fork join (`synthesis::join`) as the witness of the whole circuit, before
/// the input constraints.
impl Joinable for WitnessOnly {
    fn lengths(&self) -> (usize, usize, usize) {
        (self.inputs.len(), self.aux.len(), self.constraints)
    }

    fn values(&self) -> (&[Fr], &CompactVec) {
        (&self.inputs, &self.aux)
    }

    fn append_rest(&mut self, _: usize, part: Self, prefix: Prefix) {
        self.inputs.extend_from_slice(&part.inputs[prefix.inputs..]);
        self.constraints += part.constraints - prefix.constraints;
        part.aux.move_tail_into(prefix.aux, &mut self.aux);
    }
}

impl Synthesizer for WitnessOnly {
    const WITNESS: bool = true;

    fn fresh() -> Self {
        WitnessOnly::new(&SynthesisOptions::default(), 0)
    }

    #[inline]
    fn aux(&mut self, value: Option<Fr>) -> usize {
        self.aux.push(value.unwrap_or(Fr::ZERO));
        let len = self.aux.len();
        if let Some(sink) = &mut self.chunks {
            if len - sink.sent == sink.len {
                sink.send(&self.aux, len);
            }
        }
        if len % PAGE_LEN == 0 {
            self.send_page(len / PAGE_LEN - 1);
        }
        len - 1
    }

    #[inline]
    fn input(&mut self, value: Option<Fr>) -> usize {
        self.inputs.push(value.unwrap_or(Fr::ZERO));
        self.inputs.len() - 1
    }

    /// Counts the constraint; the matrices hold its combinations.
    fn constraint<S: FrCompatible>(
        &mut self,
        _: impl FnOnce() -> String,
        _: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        _: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
        _: impl FnOnce(LinearCombination<S>) -> LinearCombination<S>,
    ) {
        self.constraints += 1;
        report_progress(self.progress.as_ref(), self.constraints, self.expected);
    }
}

constraint_system!(WitnessOnly);
