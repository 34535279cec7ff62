//! Several partitions proved over one pass of the parameters ([`prove_pass`]): where
//! queries stream from the host, each batch of their bases goes up once and serves the
//! MSMs of every partition in the pass, so the host-to-device traffic per partition falls
//! with the number of partitions.
//!
//! The order: H of each partition (h's coefficients stay on the device for a resident h
//! query's MSM, else they come back to the host) and h's pass (per chunk of h, every
//! partition's coefficients and the bases they use go up, then each partition's MSM runs
//! over them), a group of partitions at a time where the host holds their h
//! ([`ProverConfig::pass_h_group`]); then the MSMs over each partition's witness whose
//! bases are resident, whole, as a single proof runs them (a chunked MSM pays its bucket
//! sums once per chunk); then the witness's pass for the queries that stream, a chunk of
//! the auxiliary assignment at a time: every partition's chunk goes up once (expanded from
//! its compact form on the device), and each streamed query among l, a, b_g1 and b_g2
//! uploads the bases that chunk uses and runs every partition's MSM over them. A thread
//! beside the MSMs uploads the next batch while they run ([`pipelined`]), so the copy
//! engine works during the kernels.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant};

use sluice_backend::{Buffer, ComputeBackend, Density, HostVector, Scalars};
use sluice_field::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

use crate::error::Groth16Error;
use crate::params::keys::Proof;
use crate::params::residency::{Residency, G1_FILE_BYTES, G2_FILE_BYTES};
use crate::params::source::{Bases, G1Query, ParameterSource};
use crate::prover::config::ProverConfig;
use crate::prover::h::h_msm_on_device;
use crate::prover::msm::{msm_batched_vartime, HostScalars};
use crate::prover::report::{PhaseTimes, ProofReport};
use crate::prover::run::{check_assignment, upload_witness, HCoefficients, ProofRun, WitnessMsms};
use crate::synthesis::assignment::ProvingAssignment;

/// One partition of a pass: its synthesized assignment, its blinding (secret, uniformly
/// random, as for [`prove_assignment`](crate::prove_assignment)) and its b_g2 sum where a
/// scheduler computed it elsewhere.
pub struct PassPartition {
    /// The synthesized partition.
    pub cs: ProvingAssignment,
    /// The blinding r.
    pub r: Fr,
    /// The blinding s.
    pub s: Fr,
    /// The B MSM in G2, computed elsewhere; `None`: in the pass.
    pub b_g2: Option<G2Projective>,
}

/// Proves `partitions` (of the same parameters) together: each batch of streamed bases is
/// uploaded once for all of them. `config.msm_batch_len` is the chunk of the witness (and
/// of h) each upload covers, `None` for whole queries. The proofs are the ones
/// [`prove_assignment`](crate::prove_assignment) gives for the same r and s, byte for byte.
///
/// Returns each partition's proof and report in order. A partition whose own checks fail
/// (unsatisfied, the wrong shape) fails alone; a failure of the shared work fails all the
/// others ([`Groth16Error::PassFailed`]). The reports are the pass's: its phase times, its
/// memory peaks, the partitions in it and the bases bytes it streamed, shared out.
///
/// # Security
/// The MSMs are variable time over the witness, as every prover MSM here; r and s are used
/// only in the proofs' constant-time assembly.
pub fn prove_pass<B, P>(
    partitions: Vec<PassPartition>,
    params: &P,
    backend: &B,
    config: &ProverConfig,
) -> Vec<Result<(Proof, ProofReport), Groth16Error>>
where
    B: ComputeBackend,
    P: ParameterSource<B> + Sync + ?Sized,
{
    let mut results: Vec<Option<Result<(Proof, ProofReport), Groth16Error>>> =
        (0..partitions.len()).map(|_| None).collect();
    let mut live = Vec::new();
    for (i, p) in partitions.into_iter().enumerate() {
        match check_assignment(&p.cs, params) {
            Ok((log_n, _)) => live.push((i, p, log_n)),
            Err(e) => results[i] = Some(Err(e)),
        }
    }
    if let Some(&(_, _, log_n)) = live.first() {
        let count = live.len();
        let mut run = ProofRun::start_with_phases(backend, params, config, log_n, 2);
        let streamed = AtomicU64::new(0);
        let (index, parts): (Vec<usize>, Vec<PassPartition>) =
            live.into_iter().map(|(i, p, _)| (i, p)).unzip();
        let blinding: Vec<(Fr, Fr)> = parts.iter().map(|p| (p.r, p.s)).collect();
        let mut phases = PhaseTimes::default();
        let outcome = Pass {
            run: &mut run,
            streamed: &streamed,
            residency: params.residency(),
        }
        .sums(parts, &mut phases);
        let outcome = run.finish_pass(outcome, &blinding, phases);
        let bytes = streamed.load(Ordering::Relaxed) / count as u64;
        log::info!(
            "pass of {count} partitions: {} bases bytes streamed ({bytes} a partition)",
            streamed.load(Ordering::Relaxed)
        );
        match outcome {
            Ok(proofs) => {
                for (i, (proof, mut report)) in index.into_iter().zip(proofs) {
                    report.pass_partitions = count;
                    report.streamed_bytes = bytes;
                    results[i] = Some(Ok((proof, report)));
                }
            }
            Err(e) => {
                let cause = e.to_string();
                let mut first = Some(e);
                for i in index {
                    results[i] = Some(Err(first.take().unwrap_or(Groth16Error::PassFailed {
                        partitions: count,
                        cause: cause.clone(),
                    })));
                }
            }
        }
    }
    results
        .into_iter()
        .map(|r| {
            r.unwrap_or(Err(Groth16Error::PassFailed {
                partitions: 0,
                cause: "the partition was not proved".into(),
            }))
        })
        .collect()
}

/// A query whose MSMs a pass runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Query {
    G1(G1Query),
    BG2,
}

/// The queries over the auxiliary assignment, in the order their MSMs run.
const WITNESS_QUERIES: [Query; 4] = [
    Query::G1(G1Query::L),
    Query::G1(G1Query::A),
    Query::G1(G1Query::BG1),
    Query::BG2,
];

impl Query {
    /// Which of the witness's bases `cs` uses in this query: `None` for all of them.
    fn density(self, cs: &ProvingAssignment) -> Option<&Density> {
        match self {
            Query::G1(G1Query::L) | Query::G1(G1Query::H) => None,
            Query::G1(G1Query::A) => Some(cs.a_aux_density()),
            Query::G1(G1Query::BG1) | Query::BG2 => Some(cs.b_aux_density()),
        }
    }

    /// The query's first base over the witness: after the inputs' ones.
    fn witness_skip(self, cs: &ProvingAssignment) -> usize {
        match self {
            Query::G1(G1Query::L) | Query::G1(G1Query::H) => 0,
            Query::G1(G1Query::A) => cs.input_assignment().len(),
            Query::G1(G1Query::BG1) | Query::BG2 => cs.b_input_density().count_ones(),
        }
    }

    /// Its place among the phase times of the witness's MSMs.
    fn slot(self) -> usize {
        match self {
            Query::G1(G1Query::L) => 0,
            Query::G1(G1Query::A) => 1,
            Query::G1(G1Query::BG1) | Query::G1(G1Query::H) => 2,
            Query::BG2 => 3,
        }
    }

    /// Whether its bases stay on the device.
    fn resident_in(self, residency: &Residency) -> bool {
        match self {
            Query::G1(q) => q.resident_in(residency),
            Query::BG2 => residency.b_g2,
        }
    }
}

/// One batch of a pass: a query's bases `bases` (indices into the query), for the
/// partitions `parts` (positions in the pass), over their scalars `scalars` (indices into
/// h, or into the auxiliary assignment).
struct Batch {
    query: Query,
    bases: Range<usize>,
    scalars: Range<usize>,
    parts: Vec<usize>,
}

/// What goes up for one step of a pass: a chunk of every partition's witness, or a batch's
/// bases.
enum Upload<'p, B: ComputeBackend> {
    Chunk(Vec<B::FrBuffer>),
    G1(Bases<'p, B::Bases<G1Affine>>, usize),
    G2(Bases<'p, B::Bases<G2Affine>>, usize),
}

/// A step of the witness's pass.
enum Step {
    /// The chunk `range` of every partition's auxiliary assignment goes up.
    Chunk(Range<usize>),
    /// A batch over the chunk last uploaded.
    Batch(Batch),
}

struct Pass<'r, 'a, B: ComputeBackend, P: ?Sized> {
    run: &'r mut ProofRun<'a, B, P>,
    streamed: &'r AtomicU64,
    residency: Residency,
}

impl<'a, B, P> Pass<'_, 'a, B, P>
where
    B: ComputeBackend,
    P: ParameterSource<B> + Sync + ?Sized,
{
    /// Every partition's h sum and witness sums.
    fn sums(
        &mut self,
        mut parts: Vec<PassPartition>,
        phases: &mut PhaseTimes,
    ) -> Result<Vec<(G1Projective, WitnessMsms)>, Groth16Error> {
        let (backend, params) = (self.run.backend, self.run.params);
        let n = self.run.n();
        // H of each partition; h's sum at once where its bases are resident and h is on the
        // device, or (a group of 0) from the device over h's bases streamed for it; else
        // h's coefficients on the host for h's pass, a group at a time (the host holds a
        // group's h vectors).
        let mut h_sums = vec![G1Projective::identity(); parts.len()];
        let on_device = self.run.config.pass_h_group == Some(0);
        let group = (self.run.config.pass_h_group.filter(|&g| g > 0))
            .unwrap_or(parts.len())
            .max(1);
        let (mut h_time, mut h_pass_time) = (Duration::ZERO, Duration::ZERO);
        for (g, members) in parts.chunks_mut(group).enumerate() {
            let clock = Instant::now();
            let mut h_host: Vec<Option<HostVector>> = Vec::with_capacity(members.len());
            for (i, p) in members.iter_mut().enumerate() {
                let (a, b) = p.cs.take_ab();
                match self.run.h_coefficients(a, b, None)?.0 {
                    HCoefficients::Device(h) if self.residency.h => {
                        h_sums[g * group + i] = h_msm_on_device(backend, params, h, n)?;
                        h_host.push(None);
                    }
                    HCoefficients::Device(h) if on_device => {
                        h_sums[g * group + i] = self.h_from_device(&h)?;
                        h_host.push(None);
                    }
                    h => h_host.push(Some(self.run.h_to_host(h)?)),
                }
            }
            h_time += clock.elapsed();
            let clock = Instant::now();
            let sums = &mut h_sums[g * group..g * group + members.len()];
            self.h_pass(&h_host, sums)?;
            h_pass_time += clock.elapsed();
        }
        let groups = match on_device {
            true => "h's MSMs from the device, in H's time".to_owned(),
            false => format!("groups of {group}"),
        };
        log::debug!(
            "pass: H of {} partitions in {:.1} ms, h's streamed MSMs in {:.1} ms ({groups})",
            parts.len(),
            h_time.as_secs_f64() * 1e3,
            h_pass_time.as_secs_f64() * 1e3
        );
        phases.h = self.run.lap("H");

        let mut times = [Duration::ZERO; 4];
        let msms = self.witness_pass(&parts, &mut times)?;
        let [l, a, b_g1, b_g2] = times;
        self.run.lap("MSMs over the witness");
        (phases.l, phases.a, phases.b_g1, phases.b_g2) = (l, a, b_g1, b_g2);
        Ok(h_sums.into_iter().zip(msms).collect())
    }

    /// The chunk length of a streamed query's batches (whole queries where none is set).
    fn chunk(&self, len: usize) -> usize {
        self.run.config.msm_batch_len.unwrap_or(len).max(1)
    }

    /// h's chunks, one batch of its bases each.
    fn h_chunks(&self) -> Vec<Range<usize>> {
        // The top coefficient of h is zero: n - 1 bases.
        let len = self.run.n() - 1;
        let chunk = self.chunk(len);
        (0..len)
            .step_by(chunk)
            .map(|s0| s0..(s0 + chunk).min(len))
            .collect()
    }

    /// The batch of h's bases `range` for the partitions `parts`.
    fn h_batch(range: Range<usize>, parts: Vec<usize>) -> Batch {
        Batch {
            query: Query::G1(G1Query::H),
            bases: range.clone(),
            scalars: range,
            parts,
        }
    }

    /// h's MSMs of the partitions whose h is on the host, a batch of h's bases at a time:
    /// per chunk of h, every partition's coefficients go up, then the bases they use, both
    /// on the uploading thread while the last chunk's MSMs run.
    fn h_pass(
        &self,
        h_host: &[Option<HostVector>],
        sums: &mut [G1Projective],
    ) -> Result<(), Groth16Error> {
        let hs: Vec<(usize, &HostVector)> = (h_host.iter().enumerate())
            .filter_map(|(k, h)| Some((k, h.as_ref()?)))
            .collect();
        if hs.is_empty() {
            return Ok(());
        }
        let steps: Vec<Step> = (self.h_chunks().into_iter())
            .flat_map(|range| {
                let batch = Self::h_batch(range.clone(), (0..hs.len()).collect());
                [Step::Chunk(range), Step::Batch(batch)]
            })
            .collect();
        let backend = self.run.backend;
        let mut coefficients: Vec<B::FrBuffer> = Vec::new();
        pipelined(
            &steps,
            |step| match step {
                Step::Chunk(range) => {
                    let up = hs
                        .iter()
                        .map(|(_, h)| backend.upload_fr("h chunk", &h[range.clone()], range.len()));
                    Ok(Upload::Chunk(up.collect::<Result<_, _>>()?))
                }
                Step::Batch(batch) => self.upload_bases(batch),
            },
            |step, up| {
                match (step, up) {
                    (Step::Chunk(_), Upload::Chunk(up)) => coefficients = up,
                    (Step::Batch(batch), Upload::G1(bases, at)) => {
                        for &i in &batch.parts {
                            let s = Scalars::Buffer(&coefficients[i]);
                            sums[hs[i].0] += backend.msm_vartime(&bases, at, s, None)?;
                        }
                    }
                    _ => {}
                }
                Ok(())
            },
        )
    }

    /// h's MSM of one partition from its coefficients on the device, over h's bases
    /// streamed a batch at a time for it alone: nothing comes back to the host. Each MSM
    /// takes its batch's range of `h` by a density ([`Density::range`]).
    fn h_from_device(&self, h: &B::FrBuffer) -> Result<G1Projective, Groth16Error> {
        let batches: Vec<Batch> = (self.h_chunks().into_iter())
            .map(|range| Self::h_batch(range, vec![0]))
            .collect();
        let backend = self.run.backend;
        let mut sum = G1Projective::identity();
        pipelined(
            &batches,
            |batch| self.upload_bases(batch),
            |batch, up| {
                if let Upload::G1(bases, at) = up {
                    let density = Density::range(h.len(), batch.scalars.clone());
                    sum += backend.msm_vartime(&bases, at, Scalars::Buffer(h), Some(&density))?;
                }
                Ok(())
            },
        )?;
        Ok(sum)
    }

    /// The bases of `batch`, uploaded where its query streams (and counted).
    fn upload_bases(&self, batch: &Batch) -> Result<Upload<'a, B>, Groth16Error> {
        let (backend, params) = (self.run.backend, self.run.params);
        let range = batch.bases.clone();
        self.count_streamed(batch.query, range.len());
        match batch.query {
            Query::G1(q) => {
                let (bases, at) = params.g1_bases_range(backend, q, range)?;
                Ok(Upload::G1(bases, at))
            }
            Query::BG2 => {
                let (bases, at) = params.b_g2_bases_range(backend, range)?;
                Ok(Upload::G2(bases, at))
            }
        }
    }

    /// The L, A, B (G1) and B (G2) sums of every partition: the inputs' parts apart (a
    /// few bases each), the resident queries whole per partition, then the witness's pass
    /// for the queries that stream.
    fn witness_pass(
        &self,
        parts: &[PassPartition],
        times: &mut [Duration; 4],
    ) -> Result<Vec<WitnessMsms>, Groth16Error> {
        let backend = self.run.backend;
        let whole = self.whole_queries(parts);
        let mut sums = Vec::with_capacity(parts.len());
        for p in parts {
            let mut sum = self.inputs_sums(p)?;
            let queries = whole
                .iter()
                .filter(|&&q| q != Query::BG2 || p.b_g2.is_none());
            let mut queries = queries.peekable();
            if queries.peek().is_some() {
                // Where a resident query runs whole, the witness goes up whole: in h's
                // place, which the planner reserved next to a whole MSM's scratch.
                let aux = upload_witness(backend, p.cs.aux_assignment(), self.run.n())?;
                if let Some(aux) = aux {
                    for &q in queries {
                        let clock = Instant::now();
                        let up = self.whole_bases(q, q.witness_skip(&p.cs))?;
                        let scalars = Scalars::Buffer(&aux);
                        self.add_msm(&mut sum, q, &up, scalars, q.density(&p.cs))?;
                        times[q.slot()] += clock.elapsed();
                    }
                }
            }
            sums.push(sum);
        }
        log::debug!(
            "pass: {} resident queries whole in {:.1} ms",
            whole.len(),
            times.iter().sum::<Duration>().as_secs_f64() * 1e3
        );
        let steps = self.witness_steps(parts, &whole);
        let mut chunk: Vec<B::FrBuffer> = Vec::new();
        pipelined(
            &steps,
            |step| match step {
                Step::Chunk(range) => {
                    let up = parts.iter().map(|p| {
                        backend.upload_compact_range(
                            "aux chunk",
                            p.cs.aux_assignment(),
                            range.clone(),
                        )
                    });
                    Ok(Upload::Chunk(up.collect::<Result<_, _>>()?))
                }
                Step::Batch(batch) => self.upload_bases(batch),
            },
            |step, up| {
                let Step::Batch(batch) = step else {
                    if let Upload::Chunk(up) = up {
                        chunk = up;
                    }
                    return Ok(());
                };
                let clock = Instant::now();
                let (q, from) = (batch.query, batch.scalars.clone());
                for &k in &batch.parts {
                    let cs = &parts[k].cs;
                    let density = q.density(cs).map(|d| d.slice(from.clone()));
                    let scalars = Scalars::Buffer(&chunk[k]);
                    self.add_msm(&mut sums[k], q, &up, scalars, density.as_ref())?;
                }
                times[q.slot()] += clock.elapsed();
                Ok(())
            },
        )?;
        for (sum, p) in sums.iter_mut().zip(parts) {
            if let Some(b_g2) = p.b_g2 {
                sum.b_g2 = b_g2;
            }
        }
        Ok(sums)
    }

    /// A partition's sums over its inputs (A and B's: a few bases each), the B MSM in G2's
    /// where the pass computes it.
    fn inputs_sums(&self, p: &PassPartition) -> Result<WitnessMsms, Groth16Error> {
        let backend = self.run.backend;
        let inputs = p.cs.input_assignment();
        let b_in = Some(p.cs.b_input_density());
        let count = |q: Query, used: usize| self.count_streamed(q, used);
        count(Query::G1(G1Query::A), inputs.len());
        let used = p.cs.b_input_density().count_ones();
        count(Query::G1(G1Query::BG1), used);
        let host = |s| HostScalars::Slice(s);
        let b_g2 = match p.b_g2 {
            Some(_) => G2Projective::identity(),
            None => {
                count(Query::BG2, used);
                msm_batched_vartime(
                    host(inputs),
                    b_in,
                    0,
                    None,
                    |r| self.run.params.b_g2_bases_range(backend, r),
                    |bases: &B::Bases<G2Affine>, at, s: &[Fr], d: Option<&Density>| {
                        backend.msm_vartime(bases, at, Scalars::Host(s), d)
                    },
                )?
            }
        };
        Ok(WitnessMsms {
            l: G1Projective::identity(),
            a: self.run.g1_host(G1Query::A, 0, host(inputs), None, None)?,
            b_g1: self
                .run
                .g1_host(G1Query::BG1, 0, host(inputs), b_in, None)?,
            b_g2,
        })
    }

    /// The witness queries whose MSMs run whole, one per partition: those with resident
    /// bases, where the witness fits a domain's vector (as a single proof uploads it).
    fn whole_queries(&self, parts: &[PassPartition]) -> Vec<Query> {
        let fits = parts.iter().all(|p| {
            let aux = p.cs.aux_assignment().len();
            aux > 0 && aux <= self.run.n()
        });
        WITNESS_QUERIES
            .into_iter()
            .filter(|q| fits && q.resident_in(&self.residency))
            .collect()
    }

    /// The whole of resident query `q`'s bases, its MSMs starting at base `at`.
    fn whole_bases(&self, q: Query, at: usize) -> Result<Upload<'a, B>, Groth16Error> {
        let (backend, params) = (self.run.backend, self.run.params);
        Ok(match q {
            Query::G1(q) => Upload::G1(params.g1_bases(backend, q)?, at),
            Query::BG2 => Upload::G2(params.b_g2_bases(backend)?, at),
        })
    }

    /// Adds query `q`'s MSM of `scalars` over `up`'s bases (from its index, and the
    /// scalars' `density`) to its sum in `sum`.
    fn add_msm(
        &self,
        sum: &mut WitnessMsms,
        q: Query,
        up: &Upload<'a, B>,
        scalars: Scalars<'_, B>,
        density: Option<&Density>,
    ) -> Result<(), Groth16Error> {
        let backend = self.run.backend;
        match (up, q) {
            (Upload::G1(bases, at), Query::G1(G1Query::L)) => {
                sum.l += backend.msm_vartime(bases, *at, scalars, density)?;
            }
            (Upload::G1(bases, at), Query::G1(G1Query::A)) => {
                sum.a += backend.msm_vartime(bases, *at, scalars, density)?;
            }
            (Upload::G1(bases, at), Query::G1(G1Query::BG1)) => {
                sum.b_g1 += backend.msm_vartime(bases, *at, scalars, density)?;
            }
            (Upload::G2(bases, at), Query::BG2) => {
                sum.b_g2 += backend.msm_vartime(bases, *at, scalars, density)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Counts `used` bases of query `q` as streamed, unless it is resident.
    fn count_streamed(&self, q: Query, used: usize) {
        if !q.resident_in(&self.residency) {
            let bytes = match q {
                Query::G1(_) => G1_FILE_BYTES,
                Query::BG2 => G2_FILE_BYTES,
            };
            self.streamed
                .fetch_add(used as u64 * bytes, Ordering::Relaxed);
        }
    }

    /// The witness's pass in order for the queries not run `whole`: per chunk, its upload,
    /// then for each query the batches of bases that chunk uses: one per distinct range of
    /// bases among the partitions (one for all of them where their densities agree, as a
    /// circuit's do). No steps where every query runs whole.
    fn witness_steps(&self, parts: &[PassPartition], whole: &[Query]) -> Vec<Step> {
        let queries: Vec<Query> = WITNESS_QUERIES
            .into_iter()
            .filter(|q| !whole.contains(q))
            .collect();
        let Some(first) = parts.first().filter(|_| !queries.is_empty()) else {
            return Vec::new();
        };
        let aux = first.cs.aux_assignment().len();
        let chunk = self.chunk(aux);
        // Per query and partition, the next base: after the inputs' ones.
        let mut next: Vec<Vec<usize>> = queries
            .iter()
            .map(|q| parts.iter().map(|p| q.witness_skip(&p.cs)).collect())
            .collect();
        let mut steps = Vec::new();
        for s0 in (0..aux).step_by(chunk) {
            let scalars = s0..(s0 + chunk).min(aux);
            steps.push(Step::Chunk(scalars.clone()));
            for (qi, &query) in queries.iter().enumerate() {
                let mut groups: Vec<(Range<usize>, Vec<usize>)> = Vec::new();
                for (k, p) in parts.iter().enumerate() {
                    if query == Query::BG2 && p.b_g2.is_some() {
                        continue;
                    }
                    let used = match query.density(&p.cs) {
                        Some(d) => d.slice(scalars.clone()).count_ones(),
                        None => scalars.len(),
                    };
                    let bases = next[qi][k]..next[qi][k] + used;
                    next[qi][k] += used;
                    if used == 0 {
                        continue;
                    }
                    match groups.iter_mut().find(|(r, _)| *r == bases) {
                        Some((_, ks)) => ks.push(k),
                        None => groups.push((bases, vec![k])),
                    }
                }
                steps.extend(groups.into_iter().map(|(bases, parts)| {
                    Step::Batch(Batch {
                        query,
                        bases,
                        scalars: scalars.clone(),
                        parts,
                    })
                }));
            }
        }
        steps
    }
}

/// Runs `consume` over `steps` in order, each with what `upload` made for it on a thread
/// beside: the upload of the next step runs while the current one is consumed (one step
/// ahead, so at most three steps' uploads are held). The first error stops both.
fn pipelined<'s, S: Sync, U: Send>(
    steps: &'s [S],
    upload: impl Fn(&'s S) -> Result<U, Groth16Error> + Sync,
    mut consume: impl FnMut(&'s S, U) -> Result<(), Groth16Error>,
) -> Result<(), Groth16Error> {
    std::thread::scope(|scope| {
        let (tx, rx) = sync_channel::<Result<U, Groth16Error>>(1);
        let upload = &upload;
        scope.spawn(move || {
            for step in steps {
                let up = upload(step);
                let failed = up.is_err();
                if tx.send(up).is_err() || failed {
                    return;
                }
            }
        });
        // The time spent waiting for uploads: where it is large, the pass is bound by
        // its transfers, not its MSMs.
        let (clock, mut waited) = (Instant::now(), Duration::ZERO);
        for step in steps {
            let wait = Instant::now();
            let up = rx.recv().map_err(|_| Groth16Error::PassFailed {
                partitions: 0,
                cause: "the uploading thread stopped".into(),
            })??;
            waited += wait.elapsed();
            consume(step, up)?;
        }
        log::debug!(
            "pass: {} steps in {:.1} ms, {:.1} ms of it waiting for uploads",
            steps.len(),
            clock.elapsed().as_secs_f64() * 1e3,
            waited.as_secs_f64() * 1e3
        );
        Ok(())
    })
}
