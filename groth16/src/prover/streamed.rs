//! A proof whose MSMs over the witness run while synthesis goes on.
//!
//! With recorded [`ConstraintMatrices`] the densities of the A and B queries are known
//! before synthesis, so each chunk of the witness has its place in every query's bases as
//! soon as it is synthesized. A thread beside synthesis uploads each completed chunk and
//! adds its L, A, B (G1) and B (G2) MSMs to running sums (an MSM is the sum of its chunks'
//! MSMs); once synthesis ends, H and the inputs' small MSMs are all that is left. The proof
//! is the one [`prove_assignment`](super::prove_assignment) gives for the same r and s.

use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::time::Instant;

use bellpepper_core::Circuit;
use sluice_backend::{ComputeBackend, Density, Scalars};
use sluice_field::{Fr, FrCompatible, G1Projective, G2Projective};

use crate::error::Groth16Error;
use crate::params::keys::Proof;
use crate::params::source::{G1Query, ParameterSource};
use crate::prover::config::ProverConfig;
use crate::prover::h::{compute_h_then, HostInput};
use crate::prover::msm::HostScalars;
use crate::prover::report::{PhaseTimes, ProofReport};
use crate::prover::run::{ProofRun, WitnessMsms};
use crate::r1cs::domain::domain_size;
use crate::synthesis::assignment::ProvingAssignment;
use crate::synthesis::matrices::ConstraintMatrices;
use crate::synthesis::options::{Capacity, SynthesisOptions};
use crate::synthesis::witness::ChunkSink;

/// Chunks a witness is cut into for its MSMs during synthesis: enough that the last one,
/// whose MSMs run after synthesis, is a small part of the witness.
const CHUNKS: usize = 16;

/// The fewest values in a chunk: smaller MSMs cost their launches more than their points.
const MIN_CHUNK: usize = 1 << 16;

/// Chunks synthesized and waiting for their MSMs at most: bounds the host memory the
/// stream holds (32 bytes a value) when the device falls behind.
const QUEUED_CHUNKS: usize = 2;

/// [`create_proof_streamed`](crate::create_proof_streamed) for circuits over any `S`: the
/// witness's completed chunks go to the device for the L, A and B MSMs while synthesis goes
/// on (at most [`QUEUED_CHUNKS`] waiting).
pub(crate) fn create_proof_streamed<S, B, C, P>(
    circuit: C,
    matrices: &Arc<ConstraintMatrices>,
    params: &P,
    r: Fr,
    s: Fr,
    backend: &B,
    chunk_len: Option<usize>,
) -> Result<(Proof, ProofReport), Groth16Error>
where
    S: FrCompatible,
    B: ComputeBackend,
    C: Circuit<S>,
    P: ParameterSource<B> + Sync + ?Sized,
{
    // Shorter chunks leave less of the witness's MSMs after synthesis and launch more MSMs.
    let chunk_len = chunk_len
        .unwrap_or((matrices.num_aux() / CHUNKS).max(MIN_CHUNK))
        .max(1);
    let lens = params.query_lengths();
    matrices.check_parameters(&lens, params.vk().ic.len())?;
    let options = SynthesisOptions {
        capacity: Capacity::for_queries(&lens),
        lender: backend.host_allocator(),
        matrices: Some(Arc::clone(matrices)),
        ..SynthesisOptions::default()
    };
    let started = Instant::now();
    let (cs, synthesis, sums) = std::thread::scope(|scope| {
        let (tx, rx) = sync_channel(QUEUED_CHUNKS);
        let msms = scope.spawn(|| chunk_msms(rx, backend, params, matrices));
        let sink = ChunkSink::new(chunk_len, tx);
        let cs = ProvingAssignment::synthesize_witness(circuit, matrices, &options, Some(sink));
        let synthesis = started.elapsed();
        let sums = msms.join().unwrap_or_else(|_| {
            Err(Groth16Error::Backend(
                sluice_backend::BackendError::Unsupported("the witness MSM thread panicked".into()),
            ))
        });
        (cs, synthesis, sums)
    });
    let (mut cs, sums) = (cs?, sums?);
    // What the chunks' MSMs took past synthesis: the last chunk's, or a device behind.
    let waited = started.elapsed() - synthesis;
    log::info!(
        "synthesis with the witness MSMs beside it: {} constraints in {:.1} ms, then {:.1} ms \
         for the last chunks' MSMs",
        cs.num_constraints(),
        synthesis.as_secs_f64() * 1e3,
        waited.as_secs_f64() * 1e3
    );
    // No `check_sizes`: the parameters were checked against the matrices before
    // synthesis, and synthesis checked the circuit's counts against the matrices.
    let (log_n, n) = domain_size(cs.num_constraints())?;
    let config = ProverConfig::default();
    let mut run = ProofRun::start(backend, params, &config, log_n);
    let mut phases = PhaseTimes {
        synthesis,
        l: waited,
        ..PhaseTimes::default()
    };
    let outcome = (|| {
        let (a, b) = cs.take_ab();
        let host = run.host_tracker;
        let (a, b) = (
            HostInput::compact(host, "a", a)?,
            HostInput::compact(host, "b", b)?,
        );
        let (h_buf, _) = compute_h_then(backend, a, b, n, || Ok(()))?;
        let h = run.h_on_device(h_buf)?;
        phases.h = run.lap("H");
        // The inputs' parts: inputs are all used in A (the input constraints).
        let inputs = HostScalars::Slice(cs.input_assignment());
        let a = run.g1_host(G1Query::A, 0, inputs, None, None)? + sums.a;
        phases.a = run.lap("A MSM (inputs)");
        let used = Some(cs.b_input_density());
        let b_g1 = run.g1_host(G1Query::BG1, 0, inputs, used, None)? + sums.b_g1;
        phases.b_g1 = run.lap("B MSM in G1 (inputs)");
        let bases = params.b_g2_bases(backend)?;
        let inputs = Scalars::Host(cs.input_assignment());
        let b_g2 = backend.msm_vartime(&bases, 0, inputs, used)? + sums.b_g2;
        phases.b_g2 = run.lap("B MSM in G2 (inputs)");
        Ok((
            h,
            WitnessMsms {
                l: sums.l,
                a,
                b_g1,
                b_g2,
            },
        ))
    })();
    run.finish(outcome, (r, s), phases)
}

/// The L, A, B (G1) and B (G2) sums over the witness chunks `chunks` brings, each chunk
/// uploaded once and its MSMs taken at its place in each query's bases.
fn chunk_msms<B, P>(
    chunks: Receiver<(usize, Vec<Fr>)>,
    backend: &B,
    params: &P,
    matrices: &ConstraintMatrices,
) -> Result<WitnessMsms, Groth16Error>
where
    B: ComputeBackend,
    P: ParameterSource<B> + ?Sized,
{
    let [a_aux, b_inputs, b_aux] = matrices.densities();
    let l_bases = params.g1_bases(backend, G1Query::L)?;
    let a_bases = params.g1_bases(backend, G1Query::A)?;
    let b_bases = params.g1_bases(backend, G1Query::BG1)?;
    let b_g2_bases = params.b_g2_bases(backend)?;
    let mut sums = WitnessMsms {
        l: G1Projective::identity(),
        a: G1Projective::identity(),
        b_g1: G1Projective::identity(),
        b_g2: G2Projective::identity(),
    };
    // Where the next chunk's used variables start in the A and B bases: after the inputs'.
    let (mut a_at, mut b_at) = (matrices.num_inputs(), b_inputs.count_ones());
    for (start, values) in chunks {
        let range = start..start + values.len();
        let buf = backend.upload_fr("aux chunk", &values, values.len())?;
        drop(values);
        let (a_used, b_used) = (slice(a_aux, range.clone()), slice(b_aux, range.clone()));
        let scalars = || Scalars::Buffer(&buf);
        sums.l += backend.msm_vartime(&l_bases, range.start, scalars(), None)?;
        sums.a += backend.msm_vartime(&a_bases, a_at, scalars(), Some(&a_used))?;
        sums.b_g1 += backend.msm_vartime(&b_bases, b_at, scalars(), Some(&b_used))?;
        sums.b_g2 += backend.msm_vartime(&b_g2_bases, b_at, scalars(), Some(&b_used))?;
        a_at += a_used.count_ones();
        b_at += b_used.count_ones();
    }
    Ok(sums)
}

/// The variables `range` of `density`, as a density of their own.
fn slice(density: &Density, range: std::ops::Range<usize>) -> Density {
    let mut part = Density::new(range.len());
    for i in density.positions_in(range.clone()) {
        // In range: i - range.start is below range.len().
        let _ = part.set(i - range.start, true);
    }
    part
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::{BitDecomposition, MimcLike, Sha256Preimage};
    use crate::{generate_random_parameters, prove_assignment};
    use ff::Field;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;
    use sluice_backend_cpu::CpuBackend;

    /// Streamed proofs, in one chunk or many (chunk boundaries anywhere, chunks with no
    /// variable used in A or B), are byte for byte the proofs of a full synthesis with the
    /// same r and s, on a boolean circuit, a dense one and bellpepper's SHA-256 gadget.
    #[test]
    fn streamed_proofs_are_the_plain_ones() {
        fn check<C: Circuit<Fr> + Clone>(name: &str, shape: C, circuit: C, seed: u64) {
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            let params = generate_random_parameters(shape.clone(), &mut rng).unwrap();
            let matrices = Arc::new(ConstraintMatrices::record(shape).unwrap());
            let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
            let backend = CpuBackend::new();
            let plain = ProvingAssignment::synthesize(circuit.clone()).unwrap();
            let want = prove_assignment(plain, &params, r, s, &backend, &Default::default())
                .unwrap()
                .0;
            for chunk in [1, 7, 1000, usize::MAX] {
                let (got, report) = create_proof_streamed(
                    circuit.clone(),
                    &matrices,
                    &params,
                    r,
                    s,
                    &backend,
                    Some(chunk),
                )
                .unwrap();
                assert_eq!(
                    got.to_bytes(),
                    want.to_bytes(),
                    "{name}, chunks of {chunk}, seed {seed}"
                );
                assert!(!report.phases.synthesis.is_zero());
            }
        }
        check(
            "bits",
            BitDecomposition::<Fr>::filling_domain(9, None),
            BitDecomposition::<Fr>::filling_domain(9, Some(3)),
            271,
        );
        check(
            "mimc",
            MimcLike::<Fr>::filling_domain(9, None),
            MimcLike::<Fr>::filling_domain(9, Some(Fr::from(5u64))),
            272,
        );
        check(
            "sha256",
            Sha256Preimage::<Fr>::new(1, None),
            Sha256Preimage::<Fr>::new(1, Some(4)),
            273,
        );
    }

    /// With several pages of witness, the chunks sent to the MSMs and the pages sent to the
    /// rows' evaluation (both during synthesis, chunks not aligned to pages) give the
    /// plain proof's bytes.
    #[test]
    fn streamed_proofs_of_several_witness_pages_are_the_plain_ones() {
        let seed = 274;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let circuit = BitDecomposition::<Fr>::filling_domain(18, Some(8));
        let plain = ProvingAssignment::synthesize(circuit.clone()).unwrap();
        let shape = crate::CircuitShape::of(&plain);
        let params = crate::generate_benchmark_parameters(&shape, &mut rng).unwrap();
        let matrices = Arc::new(ConstraintMatrices::record(circuit.clone()).unwrap());
        assert!(matrices.num_aux() > 2 * sluice_backend::compact::PAGE_LEN);
        let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
        let backend = CpuBackend::new();
        let want = prove_assignment(plain, &params, r, s, &backend, &Default::default())
            .unwrap()
            .0;
        let (got, _) =
            create_proof_streamed(circuit, &matrices, &params, r, s, &backend, Some(50_000))
                .unwrap();
        assert_eq!(got.to_bytes(), want.to_bytes(), "seed {seed}");
    }

    /// Parameters of another circuit are refused before synthesis; a failing witness is
    /// reported by index.
    #[test]
    fn wrong_parameters_and_witnesses_are_refused() {
        let seed = 274;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let shape = BitDecomposition::<Fr>::filling_domain(9, None);
        let other =
            generate_random_parameters(MimcLike::<Fr>::filling_domain(9, None), &mut rng).unwrap();
        let matrices = Arc::new(ConstraintMatrices::record(shape.clone()).unwrap());
        let backend = CpuBackend::new();
        let circuit = BitDecomposition::<Fr>::filling_domain(9, Some(1));
        let rs = (Fr::random(&mut rng), Fr::random(&mut rng));
        let err = create_proof_streamed(circuit, &matrices, &other, rs.0, rs.1, &backend, Some(64))
            .unwrap_err();
        assert!(
            matches!(err, Groth16Error::ParameterMismatch { .. }),
            "seed {seed}: {err}"
        );
        let params = generate_random_parameters(shape, &mut rng).unwrap();
        // A MiMC witness against the bit decomposition's matrices: refused by its counts.
        let wrong = MimcLike::<Fr>::filling_domain(9, Some(Fr::ONE));
        let err = create_proof_streamed(wrong, &matrices, &params, rs.0, rs.1, &backend, Some(64))
            .unwrap_err();
        assert!(
            matches!(err, Groth16Error::MatricesMismatch { .. }),
            "seed {seed}: {err}"
        );
    }
}
