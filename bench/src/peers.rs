//! Peers measured in the same run as sluice (`--compare`, feature `compare`): arkworks 0.5,
//! blst and bellperson 0.27, each on the CPU.
//!
//! Every function takes `(log, seed, reps)`, makes its inputs of size 2^log, runs the
//! operation once untimed, then `reps` timed times. Only the operation is timed: inputs are
//! generated and converted to the peer's native types (affine bases, its scalar type)
//! beforehand.
//!
//! NTT and MSM inputs are exactly the sluice row's: the runner's seed derivation and
//! generators ([`Fr::random`] scalars, then [`sluice_msm::random_points`] bases: random
//! chains `start + i·step`, batch-normalised), converted coordinate by coordinate through
//! canonical little-endian bytes (arkworks) or as Montgomery copies (blst, which shares
//! sluice's representation). The tests check the conversions and each peer's result against
//! sluice, so the ratios compare the same computation.
//!
//! Proofs use the row's circuit filling a domain of 2^log: bellperson runs the same circuit
//! in blstrs' field itself (`MimcLike`, `BitDecomposition`, `Sha256Preimage` with
//! `bellpepper`'s gadgets); for MiMC arkworks runs [`ArkMimc`], the same chain written as
//! an arkworks `ConstraintSynthesizer`. bellperson proves with sluice's benchmark parameters
//! for the circuit's shape (as the sluice proof row does), written in bellperson's format
//! and read by bellperson: its own setup takes minutes at 2^20. arkworks uses its own setup.
//! Set-ups are untimed (their durations go to stderr); the timed proof includes synthesis,
//! as sluice's does.
//!
//! With the feature `compare-gpu` (the GPU machine's bundle), bellperson is built with its
//! `opencl` path: its proof peer runs on the GPU (`bellperson-gpu`), and `bellperson-gpu`
//! MSM peers time its `CpuGpuMultiexpKernel` (all GPU unless `BELLMAN_CPU_UTILIZATION` says
//! otherwise), which uploads the bases on every call: compare them with the sluice rows
//! that upload too (`--uploads`). Its kernels build once per process, untimed.

use std::hint::black_box;
use std::time::{Duration, Instant};

use ark_ec::{AffineRepr, VariableBaseMSM};
use ark_ff::{Field as _, PrimeField as _};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_relations::lc;
use ark_relations::r1cs::{
    ConstraintSynthesizer, ConstraintSystemRef, SynthesisError as ArkSynthesisError, Variable,
};
use ark_snark::SNARK;
use blst::MultiPoint;
use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_field::{Fq, Fq2, Fr, G1Projective, G2Projective};
use sluice_groth16::demo::{BitDecomposition, MimcLike, Sha256Preimage};

/// The runner's timing loop: one untimed warm-up, then `reps` timed runs. Peers do
/// synchronous CPU work, so the CPU backend (whose `synchronize` has nothing to wait for)
/// stands in for the backend the loop waits on.
fn time(reps: usize, f: impl FnMut() -> Result<(), String>) -> Result<Vec<Duration>, String> {
    crate::time(&sluice_backend_cpu::CpuBackend::new(), reps, f)
}

/// A peer's measurement: `(log, seed, reps)` to `reps` timings.
pub type PeerFn = fn(u32, u64, usize) -> Result<Vec<Duration>, String>;

const NTT: &[(&str, PeerFn)] = &[("arkworks", ntt_arkworks)];
#[cfg(not(feature = "compare-gpu"))]
const MSM_G1: &[(&str, PeerFn)] = &[("blst", msm_g1_blst), ("arkworks", msm_g1_arkworks)];
#[cfg(not(feature = "compare-gpu"))]
const MSM_G2: &[(&str, PeerFn)] = &[("blst", msm_g2_blst), ("arkworks", msm_g2_arkworks)];
#[cfg(not(feature = "compare-gpu"))]
const PROOF: &[(&str, PeerFn)] = &[
    ("bellperson", proof_bellperson),
    ("arkworks", proof_arkworks),
];
#[cfg(feature = "compare-gpu")]
const MSM_G1: &[(&str, PeerFn)] = &[
    ("bellperson-gpu", gpu::msm_g1_bellperson),
    ("blst", msm_g1_blst),
    ("arkworks", msm_g1_arkworks),
];
#[cfg(feature = "compare-gpu")]
const MSM_G2: &[(&str, PeerFn)] = &[
    ("bellperson-gpu", gpu::msm_g2_bellperson),
    ("blst", msm_g2_blst),
    ("arkworks", msm_g2_arkworks),
];
#[cfg(feature = "compare-gpu")]
const PROOF: &[(&str, PeerFn)] = &[
    ("bellperson-gpu", proof_bellperson),
    ("arkworks", proof_arkworks),
];

#[cfg(not(feature = "compare-gpu"))]
const PROOF_BITS: &[(&str, PeerFn)] = &[("bellperson", proof_bits_bellperson)];
#[cfg(not(feature = "compare-gpu"))]
const PROOF_SHA256: &[(&str, PeerFn)] = &[("bellperson", proof_sha256_bellperson)];
#[cfg(feature = "compare-gpu")]
const PROOF_BITS: &[(&str, PeerFn)] = &[("bellperson-gpu", proof_bits_bellperson)];
#[cfg(feature = "compare-gpu")]
const PROOF_SHA256: &[(&str, PeerFn)] = &[("bellperson-gpu", proof_sha256_bellperson)];

#[cfg(all(feature = "filecoin", not(feature = "compare-gpu")))]
const PROOF_POREP: &[(&str, PeerFn)] = &[("bellperson", filecoin::proof_porep_bellperson)];
#[cfg(all(feature = "filecoin", not(feature = "compare-gpu")))]
const PROOF_POST: &[(&str, PeerFn)] = &[("bellperson", filecoin::proof_post_bellperson)];
#[cfg(all(feature = "filecoin", feature = "compare-gpu"))]
const PROOF_POREP: &[(&str, PeerFn)] = &[("bellperson-gpu", filecoin::proof_porep_bellperson)];
#[cfg(all(feature = "filecoin", feature = "compare-gpu"))]
const PROOF_POST: &[(&str, PeerFn)] = &[("bellperson-gpu", filecoin::proof_post_bellperson)];
#[cfg(feature = "filecoin")]
const SYNTHESIS_POREP: &[(&str, PeerFn)] = &[("bellperson", filecoin::synthesis_porep_bellperson)];
#[cfg(feature = "filecoin")]
const SYNTHESIS_POST: &[(&str, PeerFn)] = &[("bellperson", filecoin::synthesis_post_bellperson)];

const SYNTHESIS: &[(&str, PeerFn)] = &[("bellperson", synthesis_bellperson)];
const SYNTHESIS_BITS: &[(&str, PeerFn)] = &[("bellperson", synthesis_bits_bellperson)];
const SYNTHESIS_MIMC: &[(&str, PeerFn)] = &[("bellperson", synthesis_mimc_bellperson)];
const VERIFY: &[(&str, PeerFn)] = &[("bellperson", verify_bellperson)];
const VERIFY_BATCH: &[(&str, PeerFn)] = &[("bellperson", verify_batch_bellperson)];

/// The peers of a row's operation (`ntt`, `msm-g1`, `msm-g2`, `proof`, `proof-bits`,
/// `proof-sha256`, `synthesis`, `synthesis-bits`, `synthesis-mimc`, `verify`, `verify-batch`;
/// with the `filecoin` feature `proof-porep`, `proof-post`, `synthesis-porep`,
/// `synthesis-post`), by name (`arkworks`, `blst`, `bellperson`); none for an unknown
/// operation.
pub fn peers_for(op: &str) -> &'static [(&'static str, PeerFn)] {
    match op {
        "ntt" => NTT,
        "msm-g1" => MSM_G1,
        "msm-g2" => MSM_G2,
        "proof" => PROOF,
        "proof-bits" => PROOF_BITS,
        "proof-sha256" => PROOF_SHA256,
        #[cfg(feature = "filecoin")]
        "proof-porep" => PROOF_POREP,
        #[cfg(feature = "filecoin")]
        "proof-post" => PROOF_POST,
        #[cfg(feature = "filecoin")]
        "synthesis-porep" => SYNTHESIS_POREP,
        #[cfg(feature = "filecoin")]
        "synthesis-post" => SYNTHESIS_POST,
        "synthesis" => SYNTHESIS,
        "synthesis-bits" => SYNTHESIS_BITS,
        "synthesis-mimc" => SYNTHESIS_MIMC,
        "verify" => VERIFY,
        "verify-batch" => VERIFY_BATCH,
        _ => &[],
    }
}

/// The runner's input stream for size 2^log (same derivation as its sluice rows).
fn rng_for(log: u32, seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed ^ (u64::from(log) << 32))
}

/// The sluice row's 2^log scalars.
fn scalars(log: u32, rng: &mut ChaCha20Rng) -> Vec<Fr> {
    (0..1usize << log).map(|_| Fr::random(&mut *rng)).collect()
}

fn ark_fr(x: &Fr) -> ark_bls12_381::Fr {
    ark_bls12_381::Fr::from_le_bytes_mod_order(&x.to_bytes_le())
}

/// A sluice base-field element as arkworks' (canonical bytes, so representation-agnostic).
trait ToArk {
    type Ark;
    fn to_ark(&self) -> Self::Ark;
}

impl ToArk for Fq {
    type Ark = ark_bls12_381::Fq;
    fn to_ark(&self) -> Self::Ark {
        ark_bls12_381::Fq::from_le_bytes_mod_order(&self.to_bytes_le())
    }
}

impl ToArk for Fq2 {
    type Ark = ark_bls12_381::Fq2;
    fn to_ark(&self) -> Self::Ark {
        ark_bls12_381::Fq2::new(self.c0.to_ark(), self.c1.to_ark())
    }
}

/// The NTT peer: arkworks' radix-2 `fft_in_place` (feature `parallel`), natural order in and
/// out, as sluice's `NaturalToNatural` row.
pub fn ntt_arkworks(log: u32, seed: u64, reps: usize) -> Result<Vec<Duration>, String> {
    let domain = Radix2EvaluationDomain::<ark_bls12_381::Fr>::new(1 << log)
        .ok_or_else(|| format!("arkworks has no radix-2 domain of 2^{log}"))?;
    let mut data: Vec<_> = scalars(log, &mut rng_for(log, seed))
        .iter()
        .map(ark_fr)
        .collect();
    time(reps, || {
        domain.fft_in_place(&mut data);
        Ok(())
    })
}

/// The bases and scalars of the sluice MSM row at 2^log, in a peer's native form.
macro_rules! msm_peers {
    (
        $group:literal, $proj:ty, $blst_fn:ident, $blst_affine:ident, $ark_fn:ident,
        $ark_affine:ty, $ark_proj:ty, $inputs:ident, $to_blst:ident, $to_ark:ident
    ) => {
        /// The sluice row's bases and scalars.
        fn $inputs(log: u32, seed: u64) -> (Vec<<$proj as group::Curve>::AffineRepr>, Vec<Fr>) {
            let mut rng = rng_for(log, seed);
            let s = scalars(log, &mut rng);
            (sluice_msm::random_points::<$proj>(1 << log, &mut rng), s)
        }

        /// A Montgomery copy: blst stores coordinates as sluice does, identity as (0, 0).
        fn $to_blst(p: &<$proj as group::Curve>::AffineRepr) -> blst::$blst_affine {
            blst::$blst_affine {
                x: p.x().into(),
                y: p.y().into(),
            }
        }

        fn $to_ark(p: &<$proj as group::Curve>::AffineRepr) -> $ark_affine {
            if bool::from(p.is_identity()) {
                <$ark_affine>::zero()
            } else {
                <$ark_affine>::new_unchecked(p.x().to_ark(), p.y().to_ark())
            }
        }

        #[doc = concat!("The ", $group, " MSM peer: blst's Pippenger over affine bases and")]
        /// 255-bit little-endian scalars (`p1_affines::mult`'s slice form, which it calls).
        pub fn $blst_fn(log: u32, seed: u64, reps: usize) -> Result<Vec<Duration>, String> {
            let (bases, scalars) = $inputs(log, seed);
            let bases: Vec<blst::$blst_affine> = bases.iter().map($to_blst).collect();
            let bytes: Vec<u8> = scalars.iter().flat_map(Fr::to_bytes_le).collect();
            time(reps, || {
                black_box(bases.as_slice().mult(&bytes, 255));
                Ok(())
            })
        }

        #[doc = concat!("The ", $group, " MSM peer: arkworks' `VariableBaseMSM::msm` (feature")]
        /// `parallel`) over affine bases.
        pub fn $ark_fn(log: u32, seed: u64, reps: usize) -> Result<Vec<Duration>, String> {
            let (bases, scalars) = $inputs(log, seed);
            let bases: Vec<$ark_affine> = bases.iter().map($to_ark).collect();
            let scalars: Vec<_> = scalars.iter().map(ark_fr).collect();
            time(reps, || {
                let sum = <$ark_proj>::msm(&bases, &scalars)
                    .map_err(|n| format!("arkworks msm: length mismatch at {n}"))?;
                let _ = black_box(sum);
                Ok(())
            })
        }
    };
}

msm_peers!(
    "G1",
    G1Projective,
    msm_g1_blst,
    blst_p1_affine,
    msm_g1_arkworks,
    ark_bls12_381::G1Affine,
    ark_bls12_381::G1Projective,
    g1_inputs,
    g1_to_blst,
    g1_to_ark
);
msm_peers!(
    "G2",
    G2Projective,
    msm_g2_blst,
    blst_p2_affine,
    msm_g2_arkworks,
    ark_bls12_381::G2Affine,
    ark_bls12_381::G2Projective,
    g2_inputs,
    g2_to_blst,
    g2_to_ark
);

/// bellperson's GPU multiexp as a peer (feature `compare-gpu`).
#[cfg(feature = "compare-gpu")]
mod gpu {
    use std::hint::black_box;
    use std::sync::{Arc, Mutex, OnceLock};
    use std::time::{Duration, Instant};

    use bellperson::gpu::CpuGpuMultiexpKernel;
    use ec_gpu_gen::rust_gpu_tools::Device;
    use ec_gpu_gen::threadpool::Worker;
    use sluice_field::{Fr, G1Affine, G2Affine};

    use super::{g1_inputs, g2_inputs, time};

    /// A blstrs field element from a sluice one: the same Montgomery limbs (as blst's).
    fn fp(x: sluice_field::Fq) -> blstrs::Fp {
        blstrs::Fp::from_raw_unchecked(blst::blst_fp::from(x).l)
    }

    fn fp2(x: sluice_field::Fq2) -> blstrs::Fp2 {
        blstrs::Fp2::new(fp(x.c0), fp(x.c1))
    }

    /// Identity as (0, 0) in both libraries.
    fn g1(p: &G1Affine) -> blstrs::G1Affine {
        blstrs::G1Affine::from_raw_unchecked(fp(p.x()), fp(p.y()), false)
    }

    fn g2(p: &G2Affine) -> blstrs::G2Affine {
        blstrs::G2Affine::from_raw_unchecked(fp2(p.x()), fp2(p.y()), false)
    }

    macro_rules! gpu_msm {
        ($fn:ident, $inputs:ident, $affine:ty, $convert:ident, $group:literal) => {
            #[doc = concat!("The ", $group, " MSM peer: bellperson's GPU multiexp (bases")]
            /// uploaded on every call, as bellperson does).
            pub fn $fn(log: u32, seed: u64, reps: usize) -> Result<Vec<Duration>, String> {
                type Kernel = CpuGpuMultiexpKernel<'static, $affine>;
                static KERNEL: OnceLock<Result<Mutex<Kernel>, String>> = OnceLock::new();
                let kernel = KERNEL
                    .get_or_init(|| {
                        let start = Instant::now();
                        let k = Kernel::create(&Device::all())
                            .map(Mutex::new)
                            .map_err(|e| format!("bellperson GPU kernels: {e}"));
                        crate::bar::note(format!(
                            "(bellperson {} kernels: {:.1?}, untimed) ",
                            $group,
                            start.elapsed()
                        ));
                        k
                    })
                    .as_ref()
                    .map_err(Clone::clone)?;
                let (bases, scalars) = $inputs(log, seed);
                let bases: Arc<Vec<$affine>> = Arc::new(bases.iter().map($convert).collect());
                let exps: Arc<Vec<[u8; 32]>> =
                    Arc::new(scalars.iter().map(Fr::to_bytes_le).collect());
                let pool = Worker::new();
                time(reps, || {
                    let mut k = kernel
                        .lock()
                        .map_err(|_| "bellperson kernel lock poisoned")?;
                    let sum = k
                        .multiexp(&pool, bases.clone(), exps.clone(), 0)
                        .map_err(|e| format!("bellperson GPU multiexp: {e}"))?;
                    black_box(sum);
                    Ok(())
                })
            }
        };
    }

    gpu_msm!(msm_g1_bellperson, g1_inputs, blstrs::G1Affine, g1, "G1");
    gpu_msm!(msm_g2_bellperson, g2_inputs, blstrs::G2Affine, g2, "G2");
}

/// Runs a peer's setup, reporting how long it took (it is not part of the timing).
fn setup<T, E: std::fmt::Display>(
    peer: &str,
    log: u32,
    f: impl FnOnce() -> Result<T, E>,
) -> Result<T, String> {
    let start = Instant::now();
    let out = f().map_err(|e| format!("{peer} setup: {e}"))?;
    crate::bar::note(format!(
        "({peer} setup 2^{log}: {:.1?}, untimed) ",
        start.elapsed()
    ));
    Ok(out)
}

/// The proof peer bellperson 0.27: `create_random_proof` of `MimcLike<blstrs::Scalar>` with
/// sluice's benchmark parameters for the circuit, read by bellperson from its own format
/// (unchecked, as for a trusted file). Such proofs do not verify, but take as long as real
/// ones (same query sizes and densities).
pub fn proof_bellperson(log: u32, seed: u64, reps: usize) -> Result<Vec<Duration>, String> {
    let x = blstrs::Scalar::random(&mut rng_for(log, seed ^ 1));
    bellperson_proof(
        log,
        seed,
        reps,
        MimcLike::<Fr>::filling_domain(log, Some(Fr::ONE)),
        MimcLike::filling_domain(log, Some(x)),
    )
}

/// The `proof-bits` peer: bellperson 0.27 proving the row's `BitDecomposition`.
pub fn proof_bits_bellperson(log: u32, seed: u64, reps: usize) -> Result<Vec<Duration>, String> {
    bellperson_proof(
        log,
        seed,
        reps,
        BitDecomposition::<Fr>::filling_domain(log, Some(seed)),
        BitDecomposition::<blstrs::Scalar>::filling_domain(log, Some(seed)),
    )
}

/// The `proof-sha256` peer: bellperson 0.27 proving the row's `Sha256Preimage` (the same
/// `bellpepper` gadgets in blstrs' field).
pub fn proof_sha256_bellperson(log: u32, seed: u64, reps: usize) -> Result<Vec<Duration>, String> {
    bellperson_proof(
        log,
        seed,
        reps,
        Sha256Preimage::<Fr>::filling_domain(log, Some(seed)),
        Sha256Preimage::<blstrs::Scalar>::filling_domain(log, Some(seed)),
    )
}

/// sluice's benchmark parameters for `ours`, written in bellperson's format and read by
/// bellperson (unchecked, as for a trusted file); untimed.
fn bellperson_parameters(
    log: u32,
    ours: impl sluice_groth16::Circuit<Fr>,
    rng: &mut ChaCha20Rng,
) -> Result<bellperson::groth16::Parameters<blstrs::Bls12>, String> {
    setup("bellperson", log, || {
        to_bellperson(&crate::benchmark_parameters(ours, rng)?)
    })
}

/// sluice's parameters in bellperson's types: written in bellperson's format and read back
/// by bellperson (unchecked, as for a trusted file).
fn to_bellperson(
    params: &sluice_groth16::Parameters,
) -> Result<bellperson::groth16::Parameters<blstrs::Bls12>, String> {
    let mut bytes = Vec::new();
    params.write(&mut bytes).map_err(|e| e.to_string())?;
    bellperson::groth16::Parameters::<blstrs::Bls12>::read(&bytes[..], false)
        .map_err(|e| e.to_string())
}

/// bellperson's timed proofs of `circuit` (synthesis included, as in sluice's proof rows),
/// with benchmark parameters made by sluice for `ours`, the same circuit in sluice's field.
fn bellperson_proof<C>(
    log: u32,
    seed: u64,
    reps: usize,
    ours: impl sluice_groth16::Circuit<Fr>,
    circuit: C,
) -> Result<Vec<Duration>, String>
where
    C: bellperson::Circuit<blstrs::Scalar> + Clone + Send,
{
    let mut rng = rng_for(log, seed);
    let params = bellperson_parameters(log, ours, &mut rng)?;
    bellperson_proof_with(&params, circuit, reps, &mut rng)
}

/// bellperson's timed proofs of `circuit` with `params`.
fn bellperson_proof_with<C>(
    params: &bellperson::groth16::Parameters<blstrs::Bls12>,
    circuit: C,
    reps: usize,
    rng: &mut ChaCha20Rng,
) -> Result<Vec<Duration>, String>
where
    C: bellperson::Circuit<blstrs::Scalar> + Clone + Send,
{
    use bellperson::groth16;
    time(reps, || {
        let proof = groth16::create_random_proof(circuit.clone(), params, &mut *rng)
            .map_err(|e| format!("bellperson proof: {e}"))?;
        black_box(proof);
        Ok(())
    })
}

/// bellperson's peers of Filecoin's circuits (feature `filecoin`): the row's partition (the
/// same circuit, made from the same seed) with the parameters of sluice's setup that the
/// row used, converted (untimed).
#[cfg(feature = "filecoin")]
mod filecoin {
    use std::time::Duration;

    use crate::filecoin::{parameters, porep_instance, post_instance};
    use crate::options::CircuitKind;

    use super::{bellperson_proof_with, bellperson_synthesis_with, rng_for, setup, to_bellperson};

    type BellpersonParameters = bellperson::groth16::Parameters<blstrs::Bls12>;

    /// The row's parameters (sluice's setup, made once per size) in bellperson's types.
    fn bellperson_parameters(
        kind: CircuitKind,
        log: u32,
        seed: u64,
    ) -> Result<BellpersonParameters, String> {
        let params = parameters(kind, log, seed)?;
        setup("bellperson", log, || to_bellperson(&params))
    }

    /// The `proof-porep` peer: bellperson 0.27 proving the row's PoRep partition.
    pub fn proof_porep_bellperson(
        log: u32,
        seed: u64,
        reps: usize,
    ) -> Result<Vec<Duration>, String> {
        let circuit = porep_instance(log, seed)?.circuit;
        let params = bellperson_parameters(CircuitKind::Porep, log, seed)?;
        bellperson_proof_with(&params, circuit, reps, &mut rng_for(log, seed))
    }

    /// The `proof-post` peer: bellperson 0.27 proving the row's PoSt partition.
    pub fn proof_post_bellperson(
        log: u32,
        seed: u64,
        reps: usize,
    ) -> Result<Vec<Duration>, String> {
        let circuit = post_instance(log, seed)?.circuit;
        let params = bellperson_parameters(CircuitKind::Post, log, seed)?;
        bellperson_proof_with(&params, circuit, reps, &mut rng_for(log, seed))
    }

    /// The `synthesis-porep` peer: bellperson's synthesis of the row's PoRep partition.
    pub fn synthesis_porep_bellperson(
        log: u32,
        seed: u64,
        reps: usize,
    ) -> Result<Vec<Duration>, String> {
        let circuit = porep_instance(log, seed)?.circuit;
        let params = bellperson_parameters(CircuitKind::Porep, log, seed)?;
        bellperson_synthesis_with(&params, circuit, reps, &mut rng_for(log, seed))
    }

    /// The `synthesis-post` peer: bellperson's synthesis of the row's PoSt partition
    /// (bellperson synthesizes a PoSt's sectors on several threads, as in production).
    pub fn synthesis_post_bellperson(
        log: u32,
        seed: u64,
        reps: usize,
    ) -> Result<Vec<Duration>, String> {
        let circuit = post_instance(log, seed)?.circuit;
        let params = bellperson_parameters(CircuitKind::Post, log, seed)?;
        bellperson_synthesis_with(&params, circuit, reps, &mut rng_for(log, seed))
    }
}

/// The `synthesis` peer: bellperson 0.27's synthesis of the row's `Sha256Preimage`.
pub fn synthesis_bellperson(log: u32, seed: u64, reps: usize) -> Result<Vec<Duration>, String> {
    bellperson_synthesis(
        log,
        seed,
        reps,
        Sha256Preimage::<Fr>::filling_domain(log, Some(seed)),
        Sha256Preimage::<blstrs::Scalar>::filling_domain(log, Some(seed)),
    )
}

/// The `synthesis-bits` peer: bellperson's synthesis of the row's `BitDecomposition`.
pub fn synthesis_bits_bellperson(
    log: u32,
    seed: u64,
    reps: usize,
) -> Result<Vec<Duration>, String> {
    bellperson_synthesis(
        log,
        seed,
        reps,
        BitDecomposition::<Fr>::filling_domain(log, Some(seed)),
        BitDecomposition::<blstrs::Scalar>::filling_domain(log, Some(seed)),
    )
}

/// The `synthesis-mimc` peer: bellperson's synthesis of the row's `MimcLike`.
pub fn synthesis_mimc_bellperson(
    log: u32,
    seed: u64,
    reps: usize,
) -> Result<Vec<Duration>, String> {
    bellperson_synthesis(
        log,
        seed,
        reps,
        MimcLike::<Fr>::filling_domain(log, Some(Fr::from(seed))),
        MimcLike::filling_domain(log, Some(blstrs::Scalar::from(seed))),
    )
}

/// bellperson's synthesis times of `circuit` (one thread: a single circuit), each read from
/// the log line its `create_random_proof` writes; each run is a whole proof on the CPU (or
/// its GPU with `compare-gpu`), with benchmark parameters made by sluice for `ours`.
fn bellperson_synthesis<C>(
    log: u32,
    seed: u64,
    reps: usize,
    ours: impl sluice_groth16::Circuit<Fr>,
    circuit: C,
) -> Result<Vec<Duration>, String>
where
    C: bellperson::Circuit<blstrs::Scalar> + Clone + Send,
{
    let mut rng = rng_for(log, seed);
    let params = bellperson_parameters(log, ours, &mut rng)?;
    bellperson_synthesis_with(&params, circuit, reps, &mut rng)
}

/// bellperson's synthesis times of `circuit` (see [`bellperson_synthesis`]) with `params`.
fn bellperson_synthesis_with<C>(
    params: &bellperson::groth16::Parameters<blstrs::Bls12>,
    circuit: C,
    reps: usize,
    rng: &mut ChaCha20Rng,
) -> Result<Vec<Duration>, String>
where
    C: bellperson::Circuit<blstrs::Scalar> + Clone + Send,
{
    use bellperson::groth16;
    bellperson_log::install()?;
    let mut times = Vec::with_capacity(reps);
    for rep in 0..=reps {
        if rep > 0 {
            crate::bar::runs(rep - 1, reps);
        }
        bellperson_log::take();
        let proof = groth16::create_random_proof(circuit.clone(), params, &mut *rng)
            .map_err(|e| format!("bellperson proof: {e}"))?;
        black_box(proof);
        let took = bellperson_log::take()
            .ok_or("bellperson logged no `synthesis time` line for its proof")?;
        if rep > 0 {
            times.push(took);
        }
    }
    Ok(times)
}

/// The one logger of the bench process while a synthesis peer runs: it keeps the duration
/// of bellperson's `synthesis time: ...` info line and drops every other record.
mod bellperson_log {
    use std::sync::{Mutex, OnceLock};
    use std::time::Duration;

    static LAST: Mutex<Option<Duration>> = Mutex::new(None);

    struct Capture;

    impl log::Log for Capture {
        fn enabled(&self, m: &log::Metadata<'_>) -> bool {
            m.level() <= log::Level::Info && m.target().starts_with("bellperson")
        }

        fn log(&self, record: &log::Record<'_>) {
            if !self.enabled(record.metadata()) {
                return;
            }
            let line = record.args().to_string();
            if let Some(took) = line
                .strip_prefix("synthesis time: ")
                .and_then(crate::synthesis::parse_debug_duration)
            {
                *LAST.lock().unwrap_or_else(|e| e.into_inner()) = Some(took);
            }
        }

        fn flush(&self) {}
    }

    /// Installs the capture (once); an error where another logger was installed first.
    pub fn install() -> Result<(), String> {
        static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
        INSTALLED
            .get_or_init(|| {
                log::set_logger(&Capture)
                    .map(|()| log::set_max_level(log::LevelFilter::Info))
                    .map_err(|e| format!("cannot read bellperson's log ({e}): unset RUST_LOG"))
            })
            .clone()
    }

    /// The last synthesis time logged since the previous call.
    pub fn take() -> Option<Duration> {
        LAST.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// A verify row's fixture in bellperson's types, read from sluice's bytes: the prepared
/// key, the proofs and their inputs.
type BellpersonVerify = (
    bellperson::groth16::PreparedVerifyingKey<blstrs::Bls12>,
    Vec<bellperson::groth16::Proof<blstrs::Bls12>>,
    Vec<Vec<blstrs::Scalar>>,
);

fn bellperson_fixture(f: &crate::verify::Fixture) -> Result<BellpersonVerify, String> {
    use bellperson::groth16;
    let e = |e: std::io::Error| format!("bellperson reading sluice's bytes: {e}");
    let mut vk_bytes = Vec::new();
    f.vk.write(&mut vk_bytes).map_err(|e| e.to_string())?;
    let vk = groth16::VerifyingKey::<blstrs::Bls12>::read(&vk_bytes[..]).map_err(e)?;
    let proofs = f
        .proofs
        .iter()
        .map(|p| groth16::Proof::<blstrs::Bls12>::read(&p.to_bytes()[..]).map_err(e))
        .collect::<Result<_, _>>()?;
    let inputs = f
        .inputs
        .iter()
        .map(|i| i.iter().map(|&x| blstrs::Scalar::from(x)).collect())
        .collect();
    Ok((groth16::prepare_verifying_key(&vk), proofs, inputs))
}

/// sluice's and bellperson's verification of the same proofs (a `verify` row's one proof,
/// or a `verify-batch` row's batch), run alternately, one timed run each per round with the
/// order flipped every round, so that load drifting over seconds falls on both alike:
/// `(sluice, bellperson)` times, `reps` each.
pub fn verify_side_by_side(
    batch: bool,
    log: u32,
    seed: u64,
    reps: usize,
) -> Result<(Vec<Duration>, Vec<Duration>), String> {
    use crate::verify::{time_calls, Fixture};
    let fixture = match batch {
        true => Fixture::batch(log, seed)?,
        false => Fixture::single(log, seed)?,
    };
    let pvk = sluice_groth16::prepare_verifying_key(&fixture.vk);
    let (bp_pvk, bp_proofs, bp_inputs) = bellperson_fixture(&fixture)?;
    let bp_refs: Vec<_> = bp_proofs.iter().collect();
    let mut rng = rng_for(log, seed);
    let mut ours = || {
        time_calls(1, || {
            let ok = match batch {
                true => sluice_groth16::verify_proofs_batch(
                    &pvk,
                    &mut rng,
                    &fixture.proofs,
                    &fixture.inputs,
                ),
                false => sluice_groth16::verify_proof(&pvk, &fixture.proofs[0], &fixture.inputs[0]),
            };
            ok.map_err(|e| e.to_string())
        })
    };
    let mut bp_rng = rng_for(log, seed ^ 1);
    let mut theirs = || {
        time_calls(1, || {
            let ok = match batch {
                true => bellperson::groth16::verify_proofs_batch(
                    &bp_pvk,
                    &mut bp_rng,
                    &bp_refs,
                    &bp_inputs,
                ),
                false => bellperson::groth16::verify_proof(&bp_pvk, bp_refs[0], &bp_inputs[0]),
            };
            ok.map_err(|e| e.to_string())
        })
    };
    let (mut a, mut b) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
    for round in 0..reps {
        crate::bar::runs(round, reps);
        if round % 2 == 0 {
            a.extend(ours()?);
            b.extend(theirs()?);
        } else {
            b.extend(theirs()?);
            a.extend(ours()?);
        }
    }
    Ok((a, b))
}

/// bellperson 0.27's `verify_proof` on the `verify` row's proof (the same bytes sluice
/// verifies), its key prepared beforehand.
pub fn verify_bellperson(log: u32, seed: u64, reps: usize) -> Result<Vec<Duration>, String> {
    let (pvk, proofs, inputs) = bellperson_fixture(&crate::verify::Fixture::single(log, seed)?)?;
    crate::verify::time_calls(reps, || {
        bellperson::groth16::verify_proof(&pvk, &proofs[0], &inputs[0]).map_err(|e| e.to_string())
    })
}

/// bellperson 0.27's `verify_proofs_batch` on the `verify-batch` row's proofs.
pub fn verify_batch_bellperson(log: u32, seed: u64, reps: usize) -> Result<Vec<Duration>, String> {
    let (pvk, proofs, inputs) = bellperson_fixture(&crate::verify::Fixture::batch(log, seed)?)?;
    let refs: Vec<_> = proofs.iter().collect();
    let mut rng = rng_for(log, seed);
    crate::verify::time_calls(reps, || {
        bellperson::groth16::verify_proofs_batch(&pvk, &mut rng, &refs, &inputs)
            .map_err(|e| e.to_string())
    })
}

/// The proof peer arkworks (ark-groth16 0.5, `parallel`): `Groth16::prove` of [`ArkMimc`]
/// with keys from `Groth16::circuit_specific_setup`.
pub fn proof_arkworks(log: u32, seed: u64, reps: usize) -> Result<Vec<Duration>, String> {
    type G = ark_groth16::Groth16<ark_bls12_381::Bls12_381>;
    let mut rng = rng_for(log, seed);
    let (pk, _vk) = setup("arkworks", log, || {
        G::circuit_specific_setup(ArkMimc::filling_domain(log, None), &mut rng)
    })?;
    let x = ark_fr(&Fr::random(&mut rng));
    time(reps, || {
        let proof = G::prove(&pk, ArkMimc::filling_domain(log, Some(x)), &mut rng)
            .map_err(|e| format!("arkworks proof: {e}"))?;
        black_box(proof);
        Ok(())
    })
}

/// [`MimcLike`] written for arkworks: the same rounds, round constants, constraints and
/// public inputs (`x_0`, and `x_rounds` when there are rounds).
///
/// Constraint counts differ only by convention: `MimcLike::num_constraints` counts the
/// Groth16 input constraints (one per instance variable, the constant one included), which
/// arkworks adds in its QAP reduction instead of its constraint system; so
/// `ark.num_constraints() + ark.num_instance_variables() == MimcLike::num_constraints()`
/// and both fill the same domain.
#[derive(Clone, Copy, Debug)]
pub struct ArkMimc {
    /// The start, or `None` for setup.
    pub x: Option<ark_bls12_381::Fr>,
    /// The number of rounds.
    pub rounds: usize,
}

impl ArkMimc {
    /// The arkworks twin of [`MimcLike::filling_domain`] (same number of rounds).
    pub fn filling_domain(log: u32, x: Option<ark_bls12_381::Fr>) -> Self {
        ArkMimc {
            x,
            rounds: MimcLike::<Fr>::filling_domain(log, None).rounds,
        }
    }
}

impl ConstraintSynthesizer<ark_bls12_381::Fr> for ArkMimc {
    fn generate_constraints(
        self,
        cs: ConstraintSystemRef<ark_bls12_381::Fr>,
    ) -> Result<(), ArkSynthesisError> {
        let missing = || ArkSynthesisError::AssignmentMissing;
        let mut x_val = self.x;
        let mut x = cs.new_input_variable(|| x_val.ok_or_else(missing))?;
        for i in 0..self.rounds {
            // MimcLike's round constant, i·0x9e3779b97f4a7c15 (mod 2^64) as a field element.
            let k = ark_bls12_381::Fr::from((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let t = lc!() + x + (k, Variable::One);
            let t_val = x_val.map(|v| v + k);
            let sq_val = t_val.map(|t| t.square());
            let sq = cs.new_witness_variable(|| sq_val.ok_or_else(missing))?;
            cs.enforce_constraint(t.clone(), t.clone(), lc!() + sq)?;
            x_val = sq_val.zip(t_val).map(|(s, t)| s * t);
            let next = if i + 1 == self.rounds {
                cs.new_input_variable(|| x_val.ok_or_else(missing))?
            } else {
                cs.new_witness_variable(|| x_val.ok_or_else(missing))?
            };
            cs.enforce_constraint(lc!() + sq, t, lc!() + next)?;
            x = next;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_relations::r1cs::ConstraintSystem;
    use sluice_ntt::{Domain, NttOrder};

    const SEED: u64 = 0x5eed;

    #[test]
    fn every_peer_times_every_rep() {
        for op in ["ntt", "msm-g1", "msm-g2", "proof"] {
            for (name, f) in peers_for(op) {
                let times = f(5, SEED, 3).unwrap_or_else(|e| panic!("{op} {name}: {e}"));
                assert_eq!(times.len(), 3, "{op} {name}");
                assert!(times.iter().all(|t| !t.is_zero()), "{op} {name}: {times:?}");
            }
        }
        assert!(peers_for("fft").is_empty());
    }

    /// Canonical little-endian bytes of an arkworks field element.
    fn ark_bytes(x: &impl ark_ff::PrimeField) -> Vec<u8> {
        let mut out = Vec::new();
        x.serialize_uncompressed(&mut out).unwrap();
        out
    }

    #[test]
    fn arkworks_ntt_is_sluice_ntt() {
        for log in [1, 6, 11] {
            let mut ours = scalars(log, &mut rng_for(log, SEED));
            let mut theirs: Vec<_> = ours.iter().map(ark_fr).collect();
            sluice_ntt::ntt(
                &Domain::new(log).unwrap(),
                &mut ours,
                NttOrder::NaturalToNatural,
            )
            .unwrap();
            Radix2EvaluationDomain::<ark_bls12_381::Fr>::new(1 << log)
                .unwrap()
                .fft_in_place(&mut theirs);
            for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
                assert_eq!(
                    a.to_bytes_le().to_vec(),
                    ark_bytes(b),
                    "log {log} index {i} seed {SEED:#x}"
                );
            }
        }
    }

    /// The peers' MSMs on the converted sluice inputs equal sluice's MSM (blst's as a
    /// projective point against ours with Z = 1; arkworks' in affine form).
    macro_rules! msm_agrees {
        ($name:ident, $inputs:ident, $to_blst:ident, $to_ark:ident, $msm:path,
         $blst_proj:ident, $base:ty, $ark_proj:ty) => {
            #[test]
            fn $name() {
                for log in [0, 3, 7, 10] {
                    let (bases, scalars) = $inputs(log, SEED);
                    let ours = $msm(&bases, &scalars, None).unwrap().to_affine();
                    assert!(!bool::from(ours.is_identity()), "log {log}, seed {SEED:#x}");

                    let bases_b: Vec<_> = bases.iter().map($to_blst).collect();
                    let bytes: Vec<u8> = scalars.iter().flat_map(Fr::to_bytes_le).collect();
                    let theirs: blst::$blst_proj = bases_b.as_slice().mult(&bytes, 255);
                    let ours_b = $to_blst(&ours);
                    let ours_b = blst::$blst_proj {
                        x: ours_b.x,
                        y: ours_b.y,
                        z: <$base>::ONE.into(),
                    };
                    assert!(theirs == ours_b, "blst, log {log}, seed {SEED:#x}");

                    let bases_a: Vec<_> = bases.iter().map($to_ark).collect();
                    let scalars_a: Vec<_> = scalars.iter().map(ark_fr).collect();
                    let theirs = <$ark_proj>::msm(&bases_a, &scalars_a).unwrap();
                    assert_eq!(
                        ark_ec::CurveGroup::into_affine(theirs),
                        $to_ark(&ours),
                        "arkworks, log {log}, seed {SEED:#x}"
                    );
                }
            }
        };
    }

    msm_agrees!(
        blst_and_arkworks_g1_msm_are_sluice_msm,
        g1_inputs,
        g1_to_blst,
        g1_to_ark,
        sluice_msm::msm_g1_vartime,
        blst_p1,
        Fq,
        ark_bls12_381::G1Projective
    );
    msm_agrees!(
        blst_and_arkworks_g2_msm_are_sluice_msm,
        g2_inputs,
        g2_to_blst,
        g2_to_ark,
        sluice_msm::msm_g2_vartime,
        blst_p2,
        Fq2,
        ark_bls12_381::G2Projective
    );

    /// Same shape (constraint count, convention as documented on [`ArkMimc`]) and same
    /// public inputs as `MimcLike`, at several sizes.
    #[test]
    fn ark_mimc_matches_mimc_like() {
        for log in [2, 3, 6, 10] {
            let x = Fr::from(7u64 + u64::from(log));
            let ours = MimcLike::filling_domain(log, Some(x));
            let cs = ConstraintSystem::new_ref();
            ArkMimc::filling_domain(log, Some(ark_fr(&x)))
                .generate_constraints(cs.clone())
                .unwrap();
            assert!(cs.is_satisfied().unwrap(), "log {log}");
            assert_eq!(
                cs.num_constraints() + cs.num_instance_variables(),
                ours.num_constraints(),
                "log {log}"
            );
            let inputs: Vec<_> = MimcLike::public_inputs(x, ours.rounds)
                .iter()
                .map(ark_fr)
                .collect();
            let cs = cs.borrow().unwrap();
            assert_eq!(&cs.instance_assignment[1..], &inputs[..], "log {log}");
        }
    }

    /// The verify rows' fixtures are valid for both verifiers and a changed input is
    /// invalid for both, so the rows time the same verdicts.
    #[test]
    fn verify_fixtures_verify_in_both() {
        use sluice_groth16::{prepare_verifying_key, verify_proof};
        let f = crate::verify::Fixture::new(3, 2, SEED).unwrap();
        let (bp_pvk, bp_proofs, mut bp_inputs) = bellperson_fixture(&f).unwrap();
        let pvk = prepare_verifying_key(&f.vk);
        for i in 0..2 {
            assert!(verify_proof(&pvk, &f.proofs[i], &f.inputs[i]).unwrap());
            assert!(
                bellperson::groth16::verify_proof(&bp_pvk, &bp_proofs[i], &bp_inputs[i]).unwrap()
            );
        }
        bp_inputs[0][1] += blstrs::Scalar::ONE;
        assert!(!bellperson::groth16::verify_proof(&bp_pvk, &bp_proofs[0], &bp_inputs[0]).unwrap());
    }

    /// Both proof peers make valid proofs of the same statement.
    #[test]
    fn proof_peers_verify() {
        let log = 6;
        let mut rng = rng_for(log, SEED);
        let x = Fr::random(&mut rng);
        let rounds = MimcLike::<Fr>::filling_domain(log, None).rounds;
        let inputs = MimcLike::public_inputs(x, rounds);

        type G = ark_groth16::Groth16<ark_bls12_381::Bls12_381>;
        let (pk, vk) =
            G::circuit_specific_setup(ArkMimc::filling_domain(log, None), &mut rng).unwrap();
        let proof = G::prove(
            &pk,
            ArkMimc::filling_domain(log, Some(ark_fr(&x))),
            &mut rng,
        )
        .unwrap();
        let ark_inputs: Vec<_> = inputs.iter().map(ark_fr).collect();
        assert!(G::verify(&vk, &ark_inputs, &proof).unwrap());
        let mut wrong = ark_inputs.clone();
        wrong[1] += ark_bls12_381::Fr::ONE;
        assert!(!G::verify(&vk, &wrong, &proof).unwrap());

        use bellperson::groth16;
        let to_blstrs =
            |v: &Fr| Option::from(blstrs::Scalar::from_bytes_le(&v.to_bytes_le())).unwrap();
        let params = groth16::generate_random_parameters::<blstrs::Bls12, _, _>(
            MimcLike::<blstrs::Scalar>::filling_domain(log, None),
            &mut rng,
        )
        .unwrap();
        let circuit = MimcLike::filling_domain(log, Some(to_blstrs(&x)));
        let proof = groth16::create_random_proof(circuit, &params, &mut rng).unwrap();
        let pvk = groth16::prepare_verifying_key(&params.vk);
        let inputs: Vec<_> = inputs.iter().map(to_blstrs).collect();
        assert!(groth16::verify_proof(&pvk, &proof, &inputs).unwrap());
    }
}
