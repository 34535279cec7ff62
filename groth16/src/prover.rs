//! The prover, generic over the compute backend.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::time::{Duration, Instant};

use bellpepper_core::Circuit;
use ff::Field;
use rand_core::RngCore;
use rayon::prelude::*;
use sluice_backend::{
    Allocation, BackendError, CompactVec, ComputeBackend, Density, MemoryKind, MemoryReport,
    MemoryTracker, Scalars,
};
use sluice_field::{Fr, FrCompatible, G1Projective, G2Affine, G2Projective};

use crate::assignment::{Capacity, ProvingAssignment};
use crate::generator::domain_size;
use crate::params::Proof;
use crate::progress::{self, ProgressEvent, Task};
use crate::source::{Bases, G1Query, ParameterSource};
use crate::streaming::{
    compute_h_streaming, compute_h_two_vectors, quotient_to_h, HostVector, StreamingPlan,
};
use crate::Groth16Error;

/// How the prover computes H.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HMode {
    /// a, b and c are whole vectors in the backend (3 vectors of device memory).
    #[default]
    InMemory,
    /// Host-resident vectors, the device holding at most this many bytes at once (see
    /// [`StreamingPlan`]): whole-vector transforms two vectors at a time where the budget
    /// holds two vectors (h then stays on the device for its MSM), else four-step passes
    /// over chunks (h reaches its MSM in chunks of the same size).
    Streaming {
        /// Device bytes the H computation may hold at once.
        device_budget_bytes: u64,
    },
}

/// Options of [`prove_assignment_with`].
#[derive(Clone, Debug, Default)]
pub struct ProverConfig {
    /// How H is computed.
    pub h_mode: HMode,
    /// Where the host vectors the proof holds (a, b, streaming intermediates) are counted;
    /// `None`: the backend's tracker, as [`MemoryKind::Host`]. Its peaks are reset when the
    /// proof starts.
    pub host_tracker: Option<MemoryTracker>,
    /// Most scalars per MSM call, or `None` for whole queries (four-step streaming H then
    /// batches h by its chunk). With parameters on the host each batch uploads only its own
    /// bases, so the device holds one batch of bases and its MSM scratch at a time: how a
    /// device smaller than the parameters proves. h is then read back to the host first.
    pub msm_batch_len: Option<usize>,
}

/// Most compact scalars decoded on the host for one MSM: the host's transient when an MSM
/// reads a compact vector from the host (32 MiB), which planners count.
pub const DECODE_BATCH: usize = 1 << 20;

/// Scalars an MSM reads from the host: a slice, or a compact vector decoded a batch at a
/// time (so no full-size vector is made for it).
#[derive(Clone, Copy)]
enum HostScalars<'a> {
    Slice(&'a [Fr]),
    Compact(&'a CompactVec),
}

impl HostScalars<'_> {
    fn len(&self) -> usize {
        match self {
            HostScalars::Slice(s) => s.len(),
            HostScalars::Compact(c) => c.len(),
        }
    }

    /// The scalars `range`, borrowed where they are stored as elements.
    fn range(&self, range: Range<usize>) -> Cow<'_, [Fr]> {
        match self {
            HostScalars::Slice(s) => Cow::Borrowed(&s[range]),
            HostScalars::Compact(c) => match c.as_raw() {
                Some(raw) => Cow::Borrowed(&raw[range]),
                None => {
                    let mut out = vec![Fr::ZERO; range.len()];
                    c.decode_into(range.start, &mut out);
                    Cow::Owned(out)
                }
            },
        }
    }

    /// The most scalars per MSM: `asked`, and at most [`DECODE_BATCH`] of codes.
    fn batch(&self, asked: Option<usize>) -> Option<usize> {
        match self {
            HostScalars::Compact(c) if !c.is_raw() => {
                Some(asked.map_or(DECODE_BATCH, |b| b.min(DECODE_BATCH)))
            }
            _ => asked,
        }
    }
}

/// `sum_i scalars[i] · base` over the scalars `density` keeps (all without one), paired in
/// order with a query's bases from `skip`, in MSMs of at most `batch` scalars (one MSM
/// without; compact scalars in batches of at most [`DECODE_BATCH`]). `bases_for(range)`
/// gives bases holding points `range` of the query and where `range.start` lies in them;
/// `msm` is the backend's MSM of the group.
///
/// # Security
/// Variable time, as [`ComputeBackend::msm_vartime`].
fn msm_batched_vartime<'p, T: 'p, G: group::Group>(
    scalars: HostScalars<'_>,
    density: Option<&Density>,
    skip: usize,
    batch: Option<usize>,
    mut bases_for: impl FnMut(Range<usize>) -> Result<(Bases<'p, T>, usize), Groth16Error>,
    mut msm: impl FnMut(&T, usize, &[Fr], Option<&Density>) -> Result<G, BackendError>,
) -> Result<G, Groth16Error> {
    let n = scalars.len();
    if let Some(d) = density {
        sluice_backend::check_len("msm scalars (density length)", d.len(), n)?;
    }
    let len = scalars.batch(batch).unwrap_or(n).max(1);
    let mut acc = G::identity();
    let mut base = skip;
    let mut s0 = 0;
    while s0 < n {
        let s1 = (s0 + len).min(n);
        let sub: Option<Cow<'_, Density>> = density.map(|d| match (s0, s1) {
            (0, end) if end == n => Cow::Borrowed(d),
            _ => Cow::Owned((s0..s1).map(|i| d.get(i)).collect()),
        });
        let used = sub.as_deref().map_or(s1 - s0, Density::count_ones);
        if used > 0 {
            let (bases, at) = bases_for(base..base + used)?;
            acc += msm(&bases, at, &scalars.range(s0..s1), sub.as_deref())?;
            base += used;
        }
        s0 = s1;
    }
    Ok(acc)
}

/// Wall-clock time of each part of one proof. Each part ends when its result is on the
/// host, so device work is included; what comes first (size checks, taking a and b) counts
/// with H.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseTimes {
    /// H: a, b, c to h's coefficients, then h's MSM.
    pub h: Duration,
    /// The L MSM, and before it the one upload of the auxiliary scalars that the L, A and
    /// B MSMs share when h's MSM ran on the device without batches (in H's part instead
    /// on a backend that queues work, where the upload overlaps H's transforms and h's
    /// MSM).
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
    /// Peak host bytes of the host tracker (see [`ProverConfig::host_tracker`]) over the
    /// proof: the a and b vectors and, when streaming, c's intermediate and the staging.
    pub host_peak_bytes: u64,
    /// Device bytes held when the proof started (resident parameters, other work): the
    /// proof's own device working set is `memory.device_peak` less this.
    pub device_baseline_bytes: u64,
    /// Time per part of the proof.
    pub phases: PhaseTimes,
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

/// Checks every count the parameters and the synthesized circuit must agree on.
fn check_sizes<B: ComputeBackend, P: ParameterSource<B> + ?Sized>(
    params: &P,
    cs: &ProvingAssignment,
    n: usize,
) -> Result<(), Groth16Error> {
    let lens = params.query_lengths();
    let num_inputs = cs.input_assignment().len();
    let b = cs.b_input_density().count_ones() + cs.b_aux_density().count_ones();
    let checks = [
        (
            "the number of public inputs (vk.ic)",
            params.vk().ic.len(),
            num_inputs,
        ),
        ("the h query (domain size - 1)", lens.h, n - 1),
        (
            "the l query (auxiliary variables)",
            lens.l,
            cs.aux_assignment().len(),
        ),
        (
            "the a query (variables used in A)",
            lens.a,
            num_inputs + cs.a_aux_density().count_ones(),
        ),
        ("the b_g1 query (variables used in B)", lens.b_g1, b),
        ("the b_g2 query (variables used in B)", lens.b_g2, b),
    ];
    for (what, params, circuit) in checks {
        if params != circuit {
            return Err(Groth16Error::ParameterMismatch {
                what,
                params,
                circuit,
            });
        }
    }
    Ok(())
}

/// The coefficients of h = (a·b - c) / Z, computed in the backend from the a and b
/// evaluations; `c = a ∘ b` is formed on the domain in the backend, never on the host, and
/// each host vector is freed as soon as it is uploaded. `a` and `b` hold at most `n`
/// evaluations (zero-padded to `n`); the backend holds three vectors at the peak.
///
/// A backend that queues work
/// ([`BackendInfo::queues_work`](sluice_backend::BackendInfo::queues_work)) gets c's copy
/// and a's coset transform queued before `a` is freed and `b` goes up, so the device
/// transforms a while the host frees a and sends b (a GPU's copy engine runs beside its
/// kernels). Otherwise each host vector is freed before the next buffer is made: a CPU
/// backend's buffers are host memory too, and that order holds one vector less.
pub fn compute_h<B: ComputeBackend>(
    backend: &B,
    a: HostVector,
    b: HostVector,
    n: usize,
) -> Result<B::FrBuffer, Groth16Error> {
    let (a, b) = (HostInput::Full(a), HostInput::Full(b));
    compute_h_then(backend, a, b, n, || Ok(())).map(|(h, ())| h)
}

/// An evaluation vector H reads from the host: whole, or compact (its host bytes counted
/// in a tracker while it lives).
pub(crate) enum HostInput {
    Full(HostVector),
    Compact {
        values: CompactVec,
        _counted: Allocation,
    },
}

impl HostInput {
    /// `values` compact, counted in `tracker` as `what`.
    fn compact(
        tracker: &MemoryTracker,
        what: &str,
        values: CompactVec,
    ) -> Result<Self, BackendError> {
        let _counted = tracker.allocate(MemoryKind::Host, what, values.host_bytes())?;
        Ok(HostInput::Compact { values, _counted })
    }

    /// A buffer of `n` scalars holding the values, then zeros.
    fn upload<B: ComputeBackend>(
        &self,
        backend: &B,
        name: &str,
        n: usize,
    ) -> Result<B::FrBuffer, BackendError> {
        match self {
            HostInput::Full(v) => backend.upload_fr(name, v, n),
            HostInput::Compact { values, .. } => backend.upload_compact(name, values, n),
        }
    }
}

/// [`compute_h`], running `queued` once all of H's device work is queued, before the
/// buffers that work reads are released. On a GPU a release waits for the kernels that
/// use the buffer, so work put there (an upload) runs beside all of H's kernels rather than
/// its last few. The device holds b and c a little longer (not above H's peak of three
/// vectors, plus what `queued` adds).
pub(crate) fn compute_h_then<B: ComputeBackend, T>(
    backend: &B,
    a: HostInput,
    b: HostInput,
    n: usize,
    queued: impl FnOnce() -> Result<T, Groth16Error>,
) -> Result<(B::FrBuffer, T), Groth16Error> {
    let mut a_buf = a.upload(backend, "a", n)?;
    let (b_buf, c_buf) = if backend.info().queues_work {
        // c = a b pointwise, from a copy of a made on the device (not a third upload).
        let mut c_buf = backend.copy_fr("c", &a_buf)?;
        backend.domain_to_coset(&mut a_buf)?;
        drop(a);
        let mut b_buf = b.upload(backend, "b", n)?;
        backend.mul_assign(&mut c_buf, &b_buf)?;
        for buf in [&mut b_buf, &mut c_buf] {
            backend.domain_to_coset(buf)?;
        }
        // Freed once the device has work queued behind the upload (tens of ms at 2^27).
        drop(b);
        (b_buf, c_buf)
    } else {
        drop(a);
        let mut b_buf = b.upload(backend, "b", n)?;
        drop(b);
        let mut c_buf = backend.copy_fr("c", &a_buf)?;
        backend.mul_assign(&mut c_buf, &b_buf)?;
        for buf in [&mut a_buf, &mut b_buf, &mut c_buf] {
            backend.domain_to_coset(buf)?;
        }
        (b_buf, c_buf)
    };
    // With queued work, b and c are released after `queued` has run (a release waits for
    // the kernels using the buffer); otherwise each goes once used, as a CPU backend's
    // buffers are host memory.
    let keep = backend.info().queues_work;
    backend.mul_assign(&mut a_buf, &b_buf)?;
    let b_buf = keep.then_some(b_buf);
    backend.sub_assign(&mut a_buf, &c_buf)?;
    let c_buf = keep.then_some(c_buf);
    quotient_to_h(backend, &mut a_buf, n)?;
    let then = queued()?;
    drop((b_buf, c_buf));
    Ok((a_buf, then))
}

/// The h MSM over h's n coefficients left on the device; it takes h (nothing reads it
/// after), so a backend may convert the scalars in place rather than copy them.
fn h_msm_on_device<B, P>(
    backend: &B,
    params: &P,
    h: B::FrBuffer,
    n: usize,
) -> Result<G1Projective, Groth16Error>
where
    B: ComputeBackend,
    P: ParameterSource<B> + ?Sized,
{
    // The h query has n - 1 points; the top coefficient of h is zero. A density with the
    // first n - 1 bits set pairs them without downloading h.
    let mut h_density = Density::full(n - 1);
    h_density.push(false);
    let bases = params.g1_bases(backend, G1Query::H)?;
    Ok(backend.msm_vartime(&bases, 0, Scalars::Owned(h), Some(&h_density))?)
}

/// Proves a synthesized circuit with blinding `r`, `s`; returns the proof and what it held.
///
/// `r` and `s` must be uniformly random and secret (see [`create_random_proof`]). An
/// assignment that failed a constraint is [`Groth16Error::Unsatisfied`], naming the first.
pub fn prove_assignment<B, P>(
    cs: ProvingAssignment,
    params: &P,
    r: Fr,
    s: Fr,
    backend: &B,
) -> Result<(Proof, ProofReport), Groth16Error>
where
    B: ComputeBackend,
    P: ParameterSource<B> + ?Sized,
{
    prove_assignment_with(cs, params, r, s, backend, &ProverConfig::default(), None)
}

/// The b_g2 MSM of a synthesized circuit over `bases` resident in `backend`: how a caller
/// computes it elsewhere (e.g. on the CPU while the device works) and hands it to
/// [`prove_assignment_with`].
pub fn b_g2_msm<B: ComputeBackend>(
    cs: &ProvingAssignment,
    backend: &B,
    bases: &B::Bases<G2Affine>,
) -> Result<G2Projective, Groth16Error> {
    b_g2_msm_batched(cs, backend, None, |range| {
        Ok((Bases::Resident(bases), range.start))
    })
}

/// The b_g2 MSM in batches (see [`ProverConfig::msm_batch_len`]), its bases from
/// `bases_for` (as [`ParameterSource::b_g2_bases_range`] gives them).
fn b_g2_msm_batched<'p, B: ComputeBackend + 'p>(
    cs: &ProvingAssignment,
    backend: &B,
    batch: Option<usize>,
    mut bases_for: impl FnMut(
        Range<usize>,
    ) -> Result<(Bases<'p, B::Bases<G2Affine>>, usize), Groth16Error>,
) -> Result<G2Projective, Groth16Error> {
    let msm = |bases: &B::Bases<G2Affine>, at, s: &[Fr], d: Option<&Density>| {
        backend.msm_vartime(bases, at, Scalars::Host(s), d)
    };
    let b_inputs_used = cs.b_input_density().count_ones();
    Ok(msm_batched_vartime(
        HostScalars::Slice(cs.input_assignment()),
        Some(cs.b_input_density()),
        0,
        batch,
        &mut bases_for,
        msm,
    )? + msm_batched_vartime(
        HostScalars::Compact(cs.aux_assignment()),
        Some(cs.b_aux_density()),
        b_inputs_used,
        batch,
        &mut bases_for,
        msm,
    )?)
}

/// [`prove_assignment`] with options: how H is computed and where host memory is counted
/// (`config`), and optionally the b_g2 MSM computed elsewhere ([`b_g2_msm`]; `None`: here).
pub fn prove_assignment_with<B, P>(
    mut cs: ProvingAssignment,
    params: &P,
    r: Fr,
    s: Fr,
    backend: &B,
    config: &ProverConfig,
    b_g2: Option<G2Projective>,
) -> Result<(Proof, ProofReport), Groth16Error>
where
    B: ComputeBackend,
    P: ParameterSource<B> + ?Sized,
{
    // A hand-built assignment may have failed a constraint: its proof would never verify.
    if let Some(u) = cs.first_unsatisfied() {
        let (index, name) = (u.index, u.name.clone());
        return Err(Groth16Error::Unsatisfied { index, name });
    }
    let (started, mut clock, mut phase) = (Instant::now(), Instant::now(), 0);
    let (log_n, n) = domain_size(cs.num_constraints())?;
    // Each phase's time, logged at info and reported as progress (Task::Proof).
    let mut lap = |what: &'static str| {
        let now = Instant::now();
        let took = std::mem::replace(&mut clock, now).elapsed();
        phase += 1;
        log::info!(
            "proof 2^{log_n}: {what} in {:.1} ms",
            took.as_secs_f64() * 1e3
        );
        let (done, total) = (phase, PROOF_PHASES);
        progress::report(&ProgressEvent {
            task: Task::Proof,
            what,
            done,
            total,
        });
        took
    };
    check_sizes(params, &cs, n)?;
    log::info!(
        "proof 2^{log_n} on {}: {} constraints, {} inputs, {} auxiliary; H {:?}, MSM batches {:?}",
        backend.info().name,
        cs.num_constraints(),
        cs.input_assignment().len(),
        cs.aux_assignment().len(),
        config.h_mode,
        config.msm_batch_len
    );
    let (done, total) = (0, PROOF_PHASES);
    progress::report(&ProgressEvent {
        task: Task::Proof,
        what: "",
        done,
        total,
    });
    let tracker = backend.tracker();
    let host_tracker = config.host_tracker.as_ref().unwrap_or(tracker);
    tracker.reset_peaks();
    host_tracker.reset_peaks();
    let device_baseline_bytes = tracker.current(MemoryKind::Device);

    let batch = config.msm_batch_len;
    let g1 = |query, skip, scalars: HostScalars<'_>, density, batch| {
        msm_batched_vartime(
            scalars,
            density,
            skip,
            batch,
            |range| params.g1_bases_range(backend, query, range),
            |bases, at, s, d| backend.msm_vartime(bases, at, Scalars::Host(s), d),
        )
    };
    // h's MSM over its first n - 1 coefficients (the top one is zero) from the host.
    let h_from_host =
        |h: &[Fr], batch| g1(G1Query::H, 0, HostScalars::Slice(&h[..n - 1]), None, batch);
    // h left on the device: one MSM there, or read back for batches.
    let h_on_device = |h_buf: B::FrBuffer| -> Result<G1Projective, Groth16Error> {
        if batch.is_none() {
            return h_msm_on_device(backend, params, h_buf, n);
        }
        let mut h = HostVector::zeroed(host_tracker, "h", n)?;
        backend.read_fr(&h_buf, 0, &mut h)?;
        drop(h_buf);
        h_from_host(&h, batch)
    };

    let (a, b) = cs.take_ab();
    // Whether h's MSM read a device vector of n, whose place the auxiliary scalars may
    // take (the pipeline's planner reserves it next to the MSM scratch).
    let mut h_vector_on_device = batch.is_none();
    // The auxiliary scalars go to the device once, for the four MSMs over them, which then
    // gather them by density there: one upload instead of four, and no host copy per
    // density (at 2^26 a density's copy made the A MSM three times the L MSM's time).
    // The slice, not `cs`, is what the upload's thread may share.
    let aux = cs.aux_assignment();
    let upload_aux = || -> Result<Option<B::FrBuffer>, Groth16Error> {
        match aux.len() <= n && !aux.is_empty() {
            true => Ok(Some(backend.upload_compact("aux", aux, aux.len())?)),
            false => Ok(None),
        }
    };
    // Set where the auxiliary scalars went up before h's MSM.
    let mut early_aux = None;
    let h = match config.h_mode {
        HMode::InMemory => {
            let a = HostInput::compact(host_tracker, "a", a)?;
            let b = HostInput::compact(host_tracker, "b", b)?;
            // With queued work, the upload (BENCHMARKS.md#partition) runs while H's transforms
            // and h's MSM do, not after h's MSM with the device idle. It goes up from its
            // own thread, so this one releases H's buffers and queues h's MSM meanwhile (a
            // blocking upload here left the device idle between H and h's MSM). The device
            // holds no more for it: h's MSM converts h in place instead of copying it.
            let (h, aux) = std::thread::scope(|scope| {
                let queued = compute_h_then(backend, a, b, n, || {
                    Ok((backend.info().queues_work && h_vector_on_device)
                        .then(|| scope.spawn(upload_aux)))
                });
                let (h_buf, upload) = match queued {
                    Ok(q) => q,
                    Err(e) => return (Err(e), None),
                };
                let h = h_on_device(h_buf);
                let aux = upload.map(|t| t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
                (h, aux)
            });
            let h = h?;
            early_aux = aux.transpose()?;
            h
        }
        HMode::Streaming {
            device_budget_bytes,
        } => {
            let plan = StreamingPlan::new(n, device_budget_bytes)?;
            // Streaming H works in host memory: the values whole, zero-padded to n.
            let pad = |v: CompactVec, what| -> Result<HostVector, Groth16Error> {
                let mut whole = HostVector::zeroed(host_tracker, what, n)?;
                v.decode_into(0, &mut whole[..v.len()]);
                Ok(whole)
            };
            let (a, b) = (pad(a, "a")?, pad(b, "b")?);
            if plan.holds_two_vectors() {
                h_on_device(compute_h_two_vectors(backend, a, b)?)?
            } else {
                h_vector_on_device = false;
                let h = compute_h_streaming(backend, host_tracker, a, b, &plan)?;
                h_from_host(&h, Some(batch.unwrap_or(plan.chunk_len())))?
            }
        }
    };

    let mut phases = PhaseTimes {
        h: lap("H"),
        ..PhaseTimes::default()
    };

    let inputs = cs.input_assignment();
    let aux_buf = match early_aux {
        Some(buf) => buf,
        None if h_vector_on_device => upload_aux()?,
        None => None,
    };
    // The MSM of `query`'s points from `skip` with the auxiliary scalars used by `density`.
    let g1_aux = |query, skip, density| match &aux_buf {
        Some(buf) => {
            let bases = params.g1_bases(backend, query)?;
            Ok(backend.msm_vartime(&bases, skip, Scalars::Buffer(buf), density)?)
        }
        None => g1(query, skip, HostScalars::Compact(aux), density, batch),
    };
    let l = g1_aux(G1Query::L, 0, None)?;
    phases.l = lap("L MSM");
    // Inputs are all used in A (the input constraints).
    let a = g1(G1Query::A, 0, HostScalars::Slice(inputs), None, batch)?
        + g1_aux(G1Query::A, inputs.len(), Some(cs.a_aux_density()))?;
    phases.a = lap("A MSM");
    let b_inputs_used = cs.b_input_density().count_ones();
    let b_g1 = g1(
        G1Query::BG1,
        0,
        HostScalars::Slice(inputs),
        Some(cs.b_input_density()),
        batch,
    )? + g1_aux(G1Query::BG1, b_inputs_used, Some(cs.b_aux_density()))?;
    phases.b_g1 = lap("B MSM in G1");
    let b_g2 = match (b_g2, &aux_buf) {
        (Some(b_g2), _) => b_g2,
        (None, Some(buf)) => {
            let bases = params.b_g2_bases(backend)?;
            let (inputs, aux) = (Scalars::Host(inputs), Scalars::Buffer(buf));
            backend.msm_vartime(&bases, 0, inputs, Some(cs.b_input_density()))?
                + backend.msm_vartime(&bases, b_inputs_used, aux, Some(cs.b_aux_density()))?
        }
        (None, None) => b_g2_msm_batched(&cs, backend, batch, |range| {
            params.b_g2_bases_range(backend, range)
        })?,
    };
    drop(aux_buf);
    phases.b_g2 = lap("B MSM in G2");
    let report = ProofReport {
        domain_size: n,
        h_mode: config.h_mode,
        memory: tracker.report(),
        host_peak_bytes: host_tracker.peak(MemoryKind::Host),
        device_baseline_bytes,
        phases,
    };

    // The blinding uses constant-time group operations: r and s are secret.
    let vk = params.vk();
    let g_a = G1Projective::from(vk.alpha_g1) + a + G1Projective::from(vk.delta_g1) * r;
    let g_b = G2Projective::from(vk.beta_g2) + b_g2 + G2Projective::from(vk.delta_g2) * s;
    // C = s·A + r·B1 - r·s·delta + h + l, with B1 = beta + b_g1 + s·delta, which expands to
    // s·(alpha + a) + r·(beta + b_g1) + r·s·delta + h + l.
    let g_c = (G1Projective::from(vk.alpha_g1) + a) * s
        + (G1Projective::from(vk.beta_g1) + b_g1) * r
        + G1Projective::from(vk.delta_g1) * (r * s)
        + h
        + l;
    let proof = Proof {
        a: g_a.to_affine(),
        b: g_b.to_affine(),
        c: g_c.to_affine(),
    };
    log::info!(
        "proof 2^{log_n}: done in {:.1} ms; device peak {} bytes",
        started.elapsed().as_secs_f64() * 1e3,
        report.memory.device_peak
    );
    Ok((proof, report))
}

/// The phases [`prove_assignment_with`] reports ([`Task::Proof`]): H and four MSMs.
const PROOF_PHASES: u64 = 5;

/// Proves `circuit` with blinding `r`, `s` (uniformly random and secret). Synthesis writes
/// the assignment where `backend` uploads fastest from
/// ([`ProvingAssignment::synthesize_for`]).
pub fn create_proof<S, B, C, P>(
    circuit: C,
    params: &P,
    r: Fr,
    s: Fr,
    backend: &B,
) -> Result<Proof, Groth16Error>
where
    S: FrCompatible,
    B: ComputeBackend,
    C: Circuit<S>,
    P: ParameterSource<B> + ?Sized,
{
    let capacity = Capacity::for_queries(&params.query_lengths());
    let started = Instant::now();
    let cs = ProvingAssignment::synthesize_for(circuit, capacity, backend)?;
    log_synthesis(&cs, started);
    Ok(prove_assignment(cs, params, r, s, backend)?.0)
}

/// Logs a synthesis at info: its size and time.
fn log_synthesis(cs: &ProvingAssignment, started: Instant) {
    log::info!(
        "synthesis: {} constraints, {} auxiliary in {:.1} ms",
        cs.num_constraints(),
        cs.aux_assignment().len(),
        started.elapsed().as_secs_f64() * 1e3
    );
}

/// Proves `circuit`, drawing `r` and `s` from `rng` (pass a CSPRNG such as `OsRng` or
/// `ChaCha20Rng`).
pub fn create_random_proof<S, B, C, P, R>(
    circuit: C,
    params: &P,
    rng: &mut R,
    backend: &B,
) -> Result<Proof, Groth16Error>
where
    S: FrCompatible,
    B: ComputeBackend,
    C: Circuit<S>,
    P: ParameterSource<B> + ?Sized,
    R: RngCore,
{
    let (r, s) = (Fr::random(&mut *rng), Fr::random(&mut *rng));
    create_proof(circuit, params, r, s, backend)
}

/// Proves many circuits with one parameter set (e.g. the partitions of a Filecoin proof):
/// synthesizes them in parallel on the CPU, then proves them one after the other in the
/// backend. With [`ResidentParameters`](crate::ResidentParameters) the bases are uploaded
/// once for the whole batch; other sources upload each query per proof.
///
/// All circuits are synthesized before the first proof, so the host holds every
/// partition's a and b vectors at once: in the memory the backend lends
/// ([`ProvingAssignment::synthesize_for`]) up to its limit, in ordinary memory beyond it.
pub fn create_random_proof_batch<S, B, C, P, R>(
    circuits: Vec<C>,
    params: &P,
    rng: &mut R,
    backend: &B,
) -> Result<Vec<Proof>, Groth16Error>
where
    S: FrCompatible,
    B: ComputeBackend,
    C: Circuit<S> + Send,
    P: ParameterSource<B> + ?Sized,
    R: RngCore,
{
    let blinding: Vec<(Fr, Fr)> = circuits
        .iter()
        .map(|_| (Fr::random(&mut *rng), Fr::random(&mut *rng)))
        .collect();
    let capacity = Capacity::for_queries(&params.query_lengths());
    let assignments = circuits
        .into_par_iter()
        .map(|c| {
            let started = Instant::now();
            let cs = ProvingAssignment::synthesize_for(c, capacity, backend)?;
            log_synthesis(&cs, started);
            Ok(cs)
        })
        .collect::<Result<Vec<_>, Groth16Error>>()?;
    assignments
        .into_iter()
        .zip(blinding)
        .map(|(cs, (r, s))| Ok(prove_assignment(cs, params, r, s, backend)?.0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;
    use sluice_backend_cpu::{CpuBackend, CpuBases};

    /// Batches of every size, with and without a density and a skip, and with the bases
    /// of each batch uploaded alone (from compact scalars), give the one-call sum.
    #[test]
    fn batched_msms_equal_the_naive_sum() {
        let seed = 74;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let backend = CpuBackend::new();
        let points: Vec<_> = (0..45)
            .map(|_| (G1Projective::generator() * Fr::random(&mut rng)).to_affine())
            .collect();
        let resident = backend.upload_bases("q", &points).unwrap();
        // Small values among them, so the compact copy has codes and exceptions.
        let scalars: Vec<Fr> = (0..37)
            .map(|i| match i % 3 {
                0 => Fr::random(&mut rng),
                _ => Fr::from(i as u64 % 5),
            })
            .collect();
        let compact = CompactVec::from(&scalars[..]);
        assert!(!compact.is_raw() && compact.exceptions() > 0);
        let density: Density = (0..37).map(|i| i % 3 != 1).collect();
        let skip = 4;
        for masked in [false, true] {
            let mut next = skip;
            let naive: G1Projective = scalars
                .iter()
                .enumerate()
                .filter(|(i, _)| !masked || density.get(*i))
                .map(|(_, s)| {
                    next += 1;
                    G1Projective::from(points[next - 1]) * s
                })
                .sum();
            let d = masked.then_some(&density);
            let msm = |bases: &CpuBases<_>, at, s: &[Fr], d: Option<&Density>| {
                backend.msm_vartime(bases, at, Scalars::Host(s), d)
            };
            for batch in [None, Some(1), Some(5), Some(16), Some(37), Some(64)] {
                let whole = msm_batched_vartime(
                    HostScalars::Slice(&scalars),
                    d,
                    skip,
                    batch,
                    |range| Ok((Bases::Resident(&resident), range.start)),
                    msm,
                )
                .unwrap();
                assert_eq!(
                    whole, naive,
                    "seed {seed}, batch {batch:?}, masked {masked}"
                );
                let per_batch = msm_batched_vartime(
                    HostScalars::Compact(&compact),
                    d,
                    skip,
                    batch,
                    |range| {
                        let b = backend.upload_bases("batch", &points[range]).unwrap();
                        Ok((Bases::Uploaded(b), 0))
                    },
                    msm,
                )
                .unwrap();
                assert_eq!(
                    per_batch, naive,
                    "seed {seed}, batch {batch:?}, masked {masked}"
                );
            }
        }
        let short: Density = (0..36).map(|_| true).collect();
        assert!(msm_batched_vartime(
            HostScalars::Slice(&scalars),
            Some(&short),
            0,
            None,
            |range| Ok((Bases::Resident(&resident), range.start)),
            |bases: &CpuBases<_>, at, s: &[Fr], d: Option<&Density>| {
                backend.msm_vartime(bases, at, Scalars::Host(s), d)
            },
        )
        .is_err());
    }
}
