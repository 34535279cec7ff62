//! What one proof held and where its time went.

use std::fmt;
use std::time::Duration;

use sluice_backend::MemoryReport;

use crate::prover::config::HMode;

/// Wall-clock time of each part of one proof. Each part ends when its result is on the
/// host, so device work is included; what comes first (size checks, taking a and b) counts
/// with H.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseTimes {
    /// Synthesis, where the prover ran it ([`create_proof_streamed`](crate::create_proof_streamed):
    /// the witness MSMs on its chunks included) or a scheduler timed it (sluice-pipeline's
    /// partition reports); zero otherwise.
    pub synthesis: Duration,
    /// H: a, b, c to h's coefficients, then h's MSM.
    pub h: Duration,
    /// The L MSM, and before it the one upload of the auxiliary scalars that the L, A and
    /// B MSMs share when h's MSM ran on the device without batches (in H's part instead
    /// on a backend that queues work, where the upload overlaps H's last transforms). In a
    /// streamed proof: the wait for the witness chunks' MSMs after synthesis.
    pub l: Duration,
    /// The A MSMs (inputs, then aux by density).
    pub a: Duration,
    /// The B MSMs in G1.
    pub b_g1: Duration,
    /// The B MSM in G2 (zero when the caller computed it elsewhere).
    pub b_g2: Duration,
}

impl fmt::Display for PhaseTimes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        if !self.synthesis.is_zero() {
            write!(f, "synthesis {:.1} ms, ", ms(self.synthesis))?;
        }
        write!(
            f,
            "h {:.1} ms, l {:.1} ms, a {:.1} ms, b_g1 {:.1} ms, b_g2 {:.1} ms",
            ms(self.h),
            ms(self.l),
            ms(self.a),
            ms(self.b_g1),
            ms(self.b_g2)
        )
    }
}

/// What one proof held, as the trackers saw it, and where its time went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProofReport {
    /// The NTT domain size n.
    pub domain_size: usize,
    /// How H was computed.
    pub h_mode: HMode,
    /// The backend tracker's figures over the proof: peaks since the proof started (the
    /// tracker's peaks are reset at its start, so concurrent work on the same backend is
    /// included).
    pub memory: MemoryReport,
    /// Peak host bytes of the host tracker (see
    /// [`ProverConfig::host_tracker`](crate::ProverConfig::host_tracker)) over the proof:
    /// the a and b vectors and, when streaming, c's intermediate and the staging.
    pub host_peak_bytes: u64,
    /// Device bytes held when the proof started (resident parameters, other work): the
    /// proof's own device working set is `memory.device_peak` less this.
    pub device_baseline_bytes: u64,
    /// Time per part of the proof.
    pub phases: PhaseTimes,
    /// Partitions proved together with this one in a pass over the parameters
    /// ([`prove_pass`](crate::phases::prove_pass)), itself included; 1 for a proof alone.
    /// In a pass, the times and memory peaks are the pass's.
    pub pass_partitions: usize,
    /// Bytes of streamed bases (file encodings) a pass uploaded, per partition of it: its
    /// share of the host-to-device traffic for parameters; 0 outside a pass.
    pub streamed_bytes: u64,
}

impl ProofReport {
    /// Peak device residency in full evaluation vectors (n × 32 bytes).
    pub fn device_peak_vectors(&self) -> f64 {
        MemoryReport::in_vectors(self.memory.device_peak, self.domain_size)
    }

    /// Peak host residency (the host tracker's) in full evaluation vectors.
    pub fn host_peak_vectors(&self) -> f64 {
        MemoryReport::in_vectors(self.host_peak_bytes, self.domain_size)
    }

    /// The proof's own peak device working set (peak less baseline) in full vectors.
    pub fn device_working_set_vectors(&self) -> f64 {
        let own = self
            .memory
            .device_peak
            .saturating_sub(self.device_baseline_bytes);
        MemoryReport::in_vectors(own, self.domain_size)
    }
}
