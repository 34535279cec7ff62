//! One proof's phases in order ([`ProofRun`]): H, the witness's upload, the MSMs over it,
//! and the proof's assembly, each timed and reported.

use std::time::Instant;

use sluice_backend::{CompactVec, ComputeBackend, HostVector, MemoryKind, MemoryTracker, Scalars};
use sluice_field::{Fr, G1Projective, G2Projective};

use crate::error::Groth16Error;
use crate::params::keys::{Proof, VerifyingKey};
use crate::params::source::{G1Query, ParameterSource};
use crate::progress::{self, ProgressEvent, Task};
use crate::prover::config::{HMode, ProverConfig};
use crate::prover::h::{compute_h_then, h_msm_on_device, HostInput};
use crate::prover::msm::{b_g2_msm_batched, msm_batched_vartime, HostScalars};
use crate::prover::report::{PhaseTimes, ProofReport};
use crate::prover::streaming::{compute_h_streaming, compute_h_two_vectors, StreamingPlan};
use crate::r1cs::domain::domain_size;
use crate::r1cs::shape::{check_shape, ShapeCounts};
use crate::synthesis::assignment::ProvingAssignment;

/// Checks every count the parameters and the synthesized circuit must agree on.
fn check_sizes<B: ComputeBackend, P: ParameterSource<B> + ?Sized>(
    params: &P,
    cs: &ProvingAssignment,
    n: usize,
) -> Result<(), Groth16Error> {
    let counts = ShapeCounts {
        inputs: cs.input_assignment().len(),
        aux: cs.aux_assignment().len(),
        a_aux: cs.a_aux_density().count_ones(),
        b: cs.b_input_density().count_ones() + cs.b_aux_density().count_ones(),
        domain: n,
    };
    check_shape(&params.query_lengths(), params.vk().ic.len(), &counts)
}

/// Where H left h's coefficients: on the device, or on the host (four-step streaming H,
/// with the chunk length its MSM batches by).
pub(crate) enum HCoefficients<B: ComputeBackend> {
    Device(B::FrBuffer),
    Host(HostVector, usize),
}

/// An assignment's own checks before it is proved: satisfied (a hand-built assignment may
/// have failed a constraint, and its proof would never verify), and its shape the
/// parameters'. Returns log2 of its domain and the domain size.
pub(crate) fn check_assignment<B, P>(
    cs: &ProvingAssignment,
    params: &P,
) -> Result<(u32, usize), Groth16Error>
where
    B: ComputeBackend,
    P: ParameterSource<B> + ?Sized,
{
    if let Some(u) = cs.first_unsatisfied() {
        let (index, name) = (u.index, u.name.clone());
        return Err(Groth16Error::Unsatisfied { index, name });
    }
    let (log_n, n) = domain_size(cs.num_constraints())?;
    check_sizes(params, cs, n)?;
    Ok((log_n, n))
}

/// The sums over the witness a proof combines: the L, A, B (G1) and B (G2) MSMs.
pub(crate) struct WitnessMsms {
    pub(crate) l: G1Projective,
    pub(crate) a: G1Projective,
    pub(crate) b_g1: G1Projective,
    pub(crate) b_g2: G2Projective,
}

/// One proof under way: where it runs, its shape, and its clock.
pub(crate) struct ProofRun<'a, B: ComputeBackend, P: ?Sized> {
    pub(crate) backend: &'a B,
    pub(crate) params: &'a P,
    pub(crate) config: &'a ProverConfig,
    pub(crate) host_tracker: &'a MemoryTracker,
    n: usize,
    log_n: u32,
    started: Instant,
    clock: Instant,
    phase: u64,
    /// Phases reported as progress.
    total: u64,
    device_baseline_bytes: u64,
}

impl<'a, B, P> ProofRun<'a, B, P>
where
    B: ComputeBackend,
    P: ParameterSource<B> + ?Sized,
{
    /// Starts the clock and the trackers' peaks.
    pub(crate) fn start(
        backend: &'a B,
        params: &'a P,
        config: &'a ProverConfig,
        log_n: u32,
    ) -> Self {
        Self::start_with_phases(backend, params, config, log_n, PROOF_PHASES)
    }

    /// [`start`](Self::start) for work that reports `total` phases as progress.
    pub(crate) fn start_with_phases(
        backend: &'a B,
        params: &'a P,
        config: &'a ProverConfig,
        log_n: u32,
        total: u64,
    ) -> Self {
        let tracker = backend.tracker();
        let host_tracker = config.host_tracker.as_ref().unwrap_or(tracker);
        tracker.reset_peaks();
        host_tracker.reset_peaks();
        progress::report(&ProgressEvent {
            task: Task::Proof,
            what: "",
            done: 0,
            total,
        });
        ProofRun {
            backend,
            params,
            config,
            host_tracker,
            n: 1 << log_n,
            log_n,
            started: Instant::now(),
            clock: Instant::now(),
            phase: 0,
            total,
            device_baseline_bytes: tracker.current(MemoryKind::Device),
        }
    }

    /// The time since the last phase ended, logged at info and reported as progress.
    pub(crate) fn lap(&mut self, what: &'static str) -> std::time::Duration {
        let now = Instant::now();
        let took = std::mem::replace(&mut self.clock, now).elapsed();
        self.phase += 1;
        log::info!(
            "proof 2^{}: {what} in {:.1} ms",
            self.log_n,
            took.as_secs_f64() * 1e3
        );
        progress::report(&ProgressEvent {
            task: Task::Proof,
            what,
            done: self.phase,
            total: self.total,
        });
        took
    }

    /// The MSM of `query`'s points from `skip` with host scalars (in batches where asked).
    pub(crate) fn g1_host(
        &self,
        query: G1Query,
        skip: usize,
        scalars: HostScalars<'_>,
        density: Option<&sluice_backend::Density>,
        batch: Option<usize>,
    ) -> Result<G1Projective, Groth16Error> {
        let (backend, params) = (self.backend, self.params);
        msm_batched_vartime(
            scalars,
            density,
            skip,
            batch,
            |range| params.g1_bases_range(backend, query, range),
            |bases, at, s, d| backend.msm_vartime(bases, at, Scalars::Host(s), d),
        )
    }

    /// h's MSM over its first n - 1 coefficients (the top one is zero) from the host.
    pub(crate) fn h_from_host(
        &self,
        h: &[Fr],
        batch: Option<usize>,
    ) -> Result<G1Projective, Groth16Error> {
        self.g1_host(
            G1Query::H,
            0,
            HostScalars::Slice(&h[..self.n - 1]),
            None,
            batch,
        )
    }

    /// h's MSM with h left on the device: one MSM there, or read back for batches.
    pub(crate) fn h_on_device(&self, h_buf: B::FrBuffer) -> Result<G1Projective, Groth16Error> {
        let batch = self.config.msm_batch_len;
        if batch.is_none() {
            return h_msm_on_device(self.backend, self.params, h_buf, self.n);
        }
        let mut h = HostVector::zeroed(self.host_tracker, "h", self.n)?;
        self.backend.read_fr(&h_buf, 0, &mut h)?;
        drop(h_buf);
        self.h_from_host(&h, batch)
    }

    /// H: a and b to h's coefficients, where H leaves them; `aux`, where given, goes up
    /// beside H's last kernels on a backend that queues work (in-memory H only; `None`
    /// in the second place otherwise).
    pub(crate) fn h_coefficients(
        &self,
        a: CompactVec,
        b: CompactVec,
        aux: Option<&CompactVec>,
    ) -> Result<(HCoefficients<B>, Option<B::FrBuffer>), Groth16Error> {
        let (backend, n, host) = (self.backend, self.n, self.host_tracker);
        match self.config.h_mode {
            HMode::InMemory => {
                let a = HostInput::compact(host, "a", a)?;
                let b = HostInput::compact(host, "b", b)?;
                // Where the backend can, the witness goes up (BENCHMARKS.md#partition) once
                // H's work is queued, before h's MSM: its transfers run beside H's last
                // kernels. Not from a thread beside h's MSM: on NVIDIA a blocking call there
                // (a release waits for the queue's work) holds the other thread's calls up,
                // and the upload waited for h's MSM to end. The device holds no more for
                // it: h's MSM converts h in place instead of copying it.
                let (h_buf, aux) = compute_h_then(backend, a, b, n, || match aux {
                    Some(aux) => upload_witness(backend, aux, n),
                    None => Ok(None),
                })?;
                Ok((HCoefficients::Device(h_buf), aux.flatten()))
            }
            HMode::Streaming {
                device_budget_bytes,
            } => {
                let plan = StreamingPlan::new(n, device_budget_bytes)?;
                // Streaming H works in host memory: the values whole, zero-padded to n.
                let whole = |v: CompactVec, what| -> Result<HostVector, Groth16Error> {
                    let mut whole = HostVector::zeroed(host, what, n)?;
                    v.decode_into(0, &mut whole[..v.len()]);
                    Ok(whole)
                };
                let (a, b) = (whole(a, "a")?, whole(b, "b")?);
                if plan.holds_two_vectors() {
                    let h = compute_h_two_vectors(backend, a, b)?;
                    Ok((HCoefficients::Device(h), None))
                } else {
                    let h = compute_h_streaming(backend, host, a, b, &plan)?;
                    Ok((HCoefficients::Host(h, plan.chunk_len()), None))
                }
            }
        }
    }

    /// h's coefficients on the host: read back from the device where H left them there.
    pub(crate) fn h_to_host(&self, h: HCoefficients<B>) -> Result<HostVector, Groth16Error> {
        match h {
            HCoefficients::Host(h, _) => Ok(h),
            HCoefficients::Device(buf) => {
                let mut h = HostVector::zeroed(self.host_tracker, "h", self.n)?;
                self.backend.read_fr(&buf, 0, &mut h)?;
                Ok(h)
            }
        }
    }

    /// H: a and b to h's coefficients and h's MSM. Returns h's sum and, where it went up
    /// while H ran, the witness's device buffer; and whether h was a device vector, so the
    /// witness may take its place after.
    pub(crate) fn h_phase(
        &self,
        a: CompactVec,
        b: CompactVec,
        aux: &CompactVec,
    ) -> Result<(G1Projective, Option<B::FrBuffer>, bool), Groth16Error> {
        let h_vector_on_device = self.config.msm_batch_len.is_none();
        let beside = h_vector_on_device.then_some(aux);
        match self.h_coefficients(a, b, beside)? {
            (HCoefficients::Device(h), aux) => Ok((self.h_on_device(h)?, aux, h_vector_on_device)),
            (HCoefficients::Host(h, chunk), _) => {
                let batch = Some(self.config.msm_batch_len.unwrap_or(chunk));
                Ok((self.h_from_host(&h, batch)?, None, false))
            }
        }
    }

    /// The MSMs over the witness (on the device from `aux_buf` where it is there, from the
    /// host otherwise) and the inputs; the B MSM in G2 unless given.
    pub(crate) fn witness_msms(
        &mut self,
        cs: &ProvingAssignment,
        aux_buf: Option<&B::FrBuffer>,
        b_g2: Option<G2Projective>,
        phases: &mut PhaseTimes,
    ) -> Result<WitnessMsms, Groth16Error> {
        let (backend, params, batch) = (self.backend, self.params, self.config.msm_batch_len);
        let inputs = cs.input_assignment();
        let g1_aux = |run: &Self, query, skip, density| match aux_buf {
            Some(buf) => {
                let bases = params.g1_bases(backend, query)?;
                Ok(backend.msm_vartime(&bases, skip, Scalars::Buffer(buf), density)?)
            }
            None => run.g1_host(
                query,
                skip,
                HostScalars::Compact(cs.aux_assignment()),
                density,
                batch,
            ),
        };
        let l = g1_aux(self, G1Query::L, 0, None)?;
        phases.l = self.lap("L MSM");
        // Inputs are all used in A (the input constraints).
        let a = self.g1_host(G1Query::A, 0, HostScalars::Slice(inputs), None, batch)?
            + g1_aux(self, G1Query::A, inputs.len(), Some(cs.a_aux_density()))?;
        phases.a = self.lap("A MSM");
        let b_inputs_used = cs.b_input_density().count_ones();
        let b_inputs = HostScalars::Slice(inputs);
        let b_g1 = self.g1_host(G1Query::BG1, 0, b_inputs, Some(cs.b_input_density()), batch)?
            + g1_aux(self, G1Query::BG1, b_inputs_used, Some(cs.b_aux_density()))?;
        phases.b_g1 = self.lap("B MSM in G1");
        let b_g2 = match (b_g2, aux_buf) {
            (Some(b_g2), _) => b_g2,
            (None, Some(buf)) => {
                let bases = params.b_g2_bases(backend)?;
                let (inputs, aux) = (Scalars::Host(inputs), Scalars::Buffer(buf));
                backend.msm_vartime(&bases, 0, inputs, Some(cs.b_input_density()))?
                    + backend.msm_vartime(&bases, b_inputs_used, aux, Some(cs.b_aux_density()))?
            }
            (None, None) => b_g2_msm_batched(cs, backend, batch, |range| {
                params.b_g2_bases_range(backend, range)
            })?,
        };
        phases.b_g2 = self.lap("B MSM in G2");
        Ok(WitnessMsms { l, a, b_g1, b_g2 })
    }

    /// The domain size n.
    pub(crate) fn n(&self) -> usize {
        self.n
    }

    /// The proof from H and the witness's sums once the device has synchronized (failed
    /// or not, the proof's device buffers are freed before it returns: a backend that
    /// frees them at its queue's drain, OpenCL, does so here), with its report.
    pub(crate) fn finish(
        &self,
        outcome: Result<(G1Projective, WitnessMsms), Groth16Error>,
        blinding: (Fr, Fr),
        phases: PhaseTimes,
    ) -> Result<(Proof, ProofReport), Groth16Error> {
        let mut proofs = self.finish_pass(outcome.map(|sums| vec![sums]), &[blinding], phases)?;
        // One sum in, one proof out.
        Ok(proofs.swap_remove(0))
    }

    /// [`finish`](Self::finish) for the sums of several partitions, `blinding` their r and
    /// s in order; each report is the run's.
    pub(crate) fn finish_pass(
        &self,
        outcome: Result<Vec<(G1Projective, WitnessMsms)>, Groth16Error>,
        blinding: &[(Fr, Fr)],
        phases: PhaseTimes,
    ) -> Result<Vec<(Proof, ProofReport)>, Groth16Error> {
        let synchronized = self.backend.synchronize();
        let sums = match (outcome, synchronized) {
            (Ok(done), Ok(())) => done,
            (Err(e), sync) => {
                if let Err(s) = sync {
                    log::debug!("after a failed proof, the device did not synchronize: {s}");
                }
                return Err(e);
            }
            (Ok(_), Err(e)) => return Err(e.into()),
        };
        let report = self.report(phases);
        let proofs = sums
            .iter()
            .zip(blinding)
            .map(|((h, msms), &(r, s))| (assemble(self.params.vk(), r, s, *h, msms), report))
            .collect();
        log::info!(
            "proof 2^{}: {}done in {:.1} ms; device peak {} bytes",
            self.log_n,
            match sums.len() {
                1 => String::new(),
                k => format!("a pass of {k} partitions "),
            },
            self.started.elapsed().as_secs_f64() * 1e3,
            report.memory.device_peak
        );
        Ok(proofs)
    }

    /// What the proof held and where its time went.
    pub(crate) fn report(&self, phases: PhaseTimes) -> ProofReport {
        let tracker = self.backend.tracker();
        ProofReport {
            domain_size: self.n,
            h_mode: self.config.h_mode,
            memory: tracker.report(),
            host_peak_bytes: self.host_tracker.peak(MemoryKind::Host),
            device_baseline_bytes: self.device_baseline_bytes,
            phases,
            pass_partitions: 1,
            streamed_bytes: 0,
        }
    }
}

/// The witness as one device buffer for the MSMs over it, which then gather it by density
/// there (one upload instead of four, no host copy per density); `None` where there is
/// nothing to upload or more than a domain of it.
pub(crate) fn upload_witness<B: ComputeBackend>(
    backend: &B,
    aux: &CompactVec,
    n: usize,
) -> Result<Option<B::FrBuffer>, Groth16Error> {
    match aux.len() <= n && !aux.is_empty() {
        true => Ok(Some(backend.upload_compact("aux", aux, aux.len())?)),
        false => Ok(None),
    }
}

/// The proof from its parts, blinded by `r` and `s` with constant-time group operations
/// (they are secret).
pub(crate) fn assemble(vk: &VerifyingKey, r: Fr, s: Fr, h: G1Projective, w: &WitnessMsms) -> Proof {
    let g_a = G1Projective::from(vk.alpha_g1) + w.a + G1Projective::from(vk.delta_g1) * r;
    let g_b = G2Projective::from(vk.beta_g2) + w.b_g2 + G2Projective::from(vk.delta_g2) * s;
    // C = s·A + r·B1 - r·s·delta + h + l, with B1 = beta + b_g1 + s·delta, which expands to
    // s·(alpha + a) + r·(beta + b_g1) + r·s·delta + h + l.
    let g_c = (G1Projective::from(vk.alpha_g1) + w.a) * s
        + (G1Projective::from(vk.beta_g1) + w.b_g1) * r
        + G1Projective::from(vk.delta_g1) * (r * s)
        + h
        + w.l;
    Proof {
        a: g_a.to_affine(),
        b: g_b.to_affine(),
        c: g_c.to_affine(),
    }
}

/// Proves a synthesized circuit with blinding `r`, `s` as `config` says (how H is computed,
/// MSM batches, where host memory is counted); returns the proof and what it held.
///
/// `r` and `s` must be uniformly random and secret (see
/// [`create_random_proof`](crate::create_random_proof)). An assignment that failed a
/// constraint is [`Groth16Error::Unsatisfied`], naming the first.
///
/// The phases: H (a and b go up and are freed, h's MSM runs), the witness goes to the
/// device (while H runs on a backend that queues work) and its host copy is freed, then the
/// MSMs over it, then the proof's assembly.
pub fn prove_assignment<B, P>(
    cs: ProvingAssignment,
    params: &P,
    r: Fr,
    s: Fr,
    backend: &B,
    config: &ProverConfig,
) -> Result<(Proof, ProofReport), Groth16Error>
where
    B: ComputeBackend,
    P: ParameterSource<B> + ?Sized,
{
    prove_assignment_with_b_g2(cs, params, r, s, backend, config, None)
}

/// [`prove_assignment`] with the b_g2 MSM computed elsewhere
/// ([`b_g2_msm`](crate::phases::b_g2_msm); `None`: here), for a scheduler that runs it on
/// another device.
pub fn prove_assignment_with_b_g2<B, P>(
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
    let (log_n, n) = check_assignment(&cs, params)?;
    log::info!(
        "proof 2^{log_n} on {}: {} constraints, {} inputs, {} auxiliary; H {:?}, MSM batches {:?}",
        backend.info().name,
        cs.num_constraints(),
        cs.input_assignment().len(),
        cs.aux_assignment().len(),
        config.h_mode,
        config.msm_batch_len
    );
    let mut run = ProofRun::start(backend, params, config, log_n);
    let mut phases = PhaseTimes::default();
    let outcome = (|| {
        let (a, b) = cs.take_ab();
        let (h, early_aux, h_vector_on_device) = run.h_phase(a, b, cs.aux_assignment())?;
        phases.h = run.lap("H");
        let aux_buf = match early_aux {
            Some(buf) => Some(buf),
            // In h's place, which the planner reserved next to the MSM scratch.
            None if h_vector_on_device => upload_witness(backend, cs.aux_assignment(), n)?,
            None => None,
        };
        if aux_buf.is_some() {
            // The witness is on the device: its host copy goes (and its host budget too).
            drop(cs.take_aux());
        }
        let msms = run.witness_msms(&cs, aux_buf.as_ref(), b_g2, &mut phases)?;
        Ok::<_, Groth16Error>((h, msms))
    })();
    run.finish(outcome, (r, s), phases)
}

/// The phases [`prove_assignment_with_b_g2`] reports ([`Task::Proof`]): H and four MSMs.
pub(crate) const PROOF_PHASES: u64 = 5;
