//! What a proof is asked for: how H is computed ([`HMode`]) and the prover's options
//! ([`ProverConfig`]).

use sluice_backend::MemoryTracker;

/// How the prover computes H.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HMode {
    /// a, b and c are whole vectors in the backend (3 vectors of device memory).
    #[default]
    InMemory,
    /// Host-resident vectors, the device holding at most this many bytes at once (see
    /// [`StreamingPlan`](crate::StreamingPlan)): whole-vector transforms two vectors at a
    /// time where the budget holds two vectors (h then stays on the device for its MSM),
    /// else four-step passes over chunks (h reaches its MSM in chunks of the same size).
    Streaming {
        /// Device bytes the H computation may hold at once.
        device_budget_bytes: u64,
    },
}

/// Options of [`prove_assignment`](crate::prove_assignment).
#[derive(Clone, Debug, Default)]
pub struct ProverConfig {
    /// How H is computed.
    pub h_mode: HMode,
    /// Where the host vectors the proof holds (a, b, streaming intermediates) are counted;
    /// `None`: the backend's tracker, as
    /// [`MemoryKind::Host`](sluice_backend::MemoryKind::Host). Its peaks are reset when the
    /// proof starts.
    pub host_tracker: Option<MemoryTracker>,
    /// Most scalars per MSM call, or `None` for whole queries (four-step streaming H then
    /// batches h by its chunk). With parameters on the host each batch uploads only its own
    /// bases, so the device holds one batch of bases and its MSM scratch at a time: how a
    /// device smaller than the parameters proves. h is then read back to the host first.
    pub msm_batch_len: Option<usize>,
    /// In a pass ([`prove_pass`](crate::phases::prove_pass)), the most partitions whose h
    /// coefficients the host holds at once (where h's bases stream, or H leaves h on the
    /// host): H and h's MSMs run a group of this many at a time, each group streaming h's
    /// bases once, while the MSMs over the witnesses still stream their bases once for the
    /// whole pass. `None`: the whole pass is one group. `Some(0)`: none on the host: where
    /// H leaves h on the device, h's MSM runs from there right after H, over h's bases
    /// streamed for that partition alone (no read-back, and h's bases go up once per
    /// partition).
    pub pass_h_group: Option<usize>,
}
