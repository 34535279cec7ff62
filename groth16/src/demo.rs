//! Demo and benchmark circuits: a MiMC-like chain of cubings with a public start and end
//! (dense, non-boolean witness), a bit decomposition (boolean-heavy witness, as hashing
//! gadgets make: what a Filecoin partition's MSM scalars look like), and a SHA-256 preimage
//! built from `bellpepper`'s gadgets (the hash Filecoin's PoRep circuits are made of).
//!
//! Generic over the scalar field, so the very same circuit runs on sluice (`sluice_field::Fr`)
//! and on bellperson (`blstrs::Scalar`) — both speak bellpepper-core 0.2 — which is what a
//! side-by-side benchmark needs.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use ff::PrimeField;

/// `x_{i+1} = (x_i + k_i)^3` for `rounds` rounds: two multiplication constraints per round.
/// Public inputs: the start `x_0` and the end `x_rounds`. With `x: None` it synthesizes
/// the shape only (for setup).
#[derive(Clone, Debug)]
pub struct MimcLike<F> {
    /// The start, or `None` when only the shape is needed.
    pub x: Option<F>,
    /// The number of rounds.
    pub rounds: usize,
}

impl<F: PrimeField> MimcLike<F> {
    /// The circuit with the most rounds whose constraints (two per round, plus one per
    /// public input, as Groth16 adds) fill a domain of 2^log_domain.
    pub fn filling_domain(log_domain: u32, x: Option<F>) -> Self {
        let n = 1usize << log_domain;
        MimcLike {
            x,
            rounds: n.saturating_sub(3) / 2,
        }
    }

    /// The number of constraints Groth16 proves for it, public-input constraints included.
    pub fn num_constraints(&self) -> usize {
        if self.rounds == 0 {
            2
        } else {
            2 * self.rounds + 3
        }
    }

    /// The public inputs for start `x` (without the leading one): `[x_0, x_rounds]`, or
    /// just `[x_0]` for a circuit of no rounds.
    pub fn public_inputs(x: F, rounds: usize) -> Vec<F> {
        let mut y = x;
        for i in 0..rounds {
            let t = y + round_constant::<F>(i);
            y = t.square() * t;
        }
        if rounds == 0 {
            vec![x]
        } else {
            vec![x, y]
        }
    }
}

/// The constant of round `i` (fixed, public, and different for every round).
fn round_constant<F: PrimeField>(i: usize) -> F {
    F::from((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

impl<F: PrimeField> Circuit<F> for MimcLike<F> {
    fn synthesize<CS: ConstraintSystem<F>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let missing = || SynthesisError::AssignmentMissing;
        let mut x_val = self.x;
        let mut x = cs.alloc_input(|| "x", || x_val.ok_or_else(missing))?;
        for i in 0..self.rounds {
            let mut cs = cs.namespace(|| format!("round {i}"));
            let k = round_constant::<F>(i);
            let t_val = x_val.map(|v| v + k);
            let sq_val = t_val.map(|t| t.square());
            let sq = cs.alloc(|| "sq", || sq_val.ok_or_else(missing))?;
            cs.enforce(
                || "t^2",
                |lc| lc + x + (k, CS::one()),
                |lc| lc + x + (k, CS::one()),
                |lc| lc + sq,
            );
            x_val = sq_val.zip(t_val).map(|(s, t)| s * t);
            let next = if i + 1 == self.rounds {
                cs.alloc_input(|| "out", || x_val.ok_or_else(missing))?
            } else {
                cs.alloc(|| "cube", || x_val.ok_or_else(missing))?
            };
            cs.enforce(
                || "t^3",
                |lc| lc + sq,
                |lc| lc + x + (k, CS::one()),
                |lc| lc + next,
            );
            x = next;
        }
        Ok(())
    }
}

/// Bits per word of [`BitDecomposition`].
const WORD_BITS: usize = 64;

/// `words` 64-bit words, each allocated with its bits: per word, 64 booleanity constraints
/// `b (b - 1) = 0` and one packing constraint `(sum 2^i b_i) · 1 = x`. 64 of every 65
/// auxiliary scalars are 0 or 1; A and B use the bits (density 64/65), C the words. The
/// words are a fixed function of `seed` (`None`: the shape only, for setup). One public
/// input: the constant one.
#[derive(Clone, Debug)]
pub struct BitDecomposition<F> {
    /// The seed of the words, or `None` when only the shape is needed.
    pub seed: Option<u64>,
    /// The number of words.
    pub words: usize,
    _field: core::marker::PhantomData<F>,
}

impl<F: PrimeField> BitDecomposition<F> {
    /// The circuit with the most words whose constraints (65 per word, plus the one-input
    /// constraint Groth16 adds) fill a domain of 2^log_domain.
    pub fn filling_domain(log_domain: u32, seed: Option<u64>) -> Self {
        let n = 1usize << log_domain;
        BitDecomposition {
            seed,
            words: n.saturating_sub(1) / (WORD_BITS + 1),
            _field: core::marker::PhantomData,
        }
    }

    /// Word `w`: splitmix64 of the seed and `w`.
    fn word(seed: u64, w: usize) -> u64 {
        let mut z = seed ^ (w as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl<F: PrimeField> Circuit<F> for BitDecomposition<F> {
    fn synthesize<CS: ConstraintSystem<F>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let missing = || SynthesisError::AssignmentMissing;
        for w in 0..self.words {
            let mut cs = cs.namespace(|| format!("word {w}"));
            let value = self.seed.map(|seed| Self::word(seed, w));
            let mut packed = bellpepper_core::LinearCombination::zero();
            let mut weight = F::ONE;
            for i in 0..WORD_BITS {
                let bit = value.map(|v| (v >> i) & 1 == 1);
                let b = cs.alloc(
                    || format!("bit {i}"),
                    || {
                        bit.map(|b| if b { F::ONE } else { F::ZERO })
                            .ok_or_else(missing)
                    },
                )?;
                cs.enforce(
                    || format!("bit {i} is boolean"),
                    |lc| lc + b,
                    |lc| lc + b - CS::one(),
                    |lc| lc,
                );
                packed = packed + (weight, b);
                weight = weight.double();
            }
            let x = cs.alloc(|| "word", || value.map(F::from).ok_or_else(missing))?;
            cs.enforce(|| "packing", |_| packed, |lc| lc + CS::one(), |lc| lc + x);
        }
        Ok(())
    }
}

/// Constraints one 512-bit block of [`Sha256Preimage`] adds: the compression function and
/// the booleanity of its 512 message bits.
const SHA256_BLOCK_CONSTRAINTS: usize = 26_704;

/// Constraints the whole circuit has fewer than its blocks' (less the packing and input
/// constraints it adds): the padding bits and the first block's initial state are
/// constants. Measured by synthesis (the unit test checks it).
const SHA256_CONSTANT_SAVINGS: usize = 675;

/// Knowledge of a preimage of a public SHA-256 digest: `8 (64 blocks - 9)` message bits
/// allocated as booleans (so the padding fills exactly `blocks` blocks), hashed with
/// `bellpepper`'s SHA-256 gadget, the digest multipacked into two public inputs as Filecoin
/// exposes its commitments. Almost every auxiliary scalar is a bit and almost every A and B
/// evaluation a small integer: the witness a real Filecoin partition has. The message is a
/// fixed function of `seed` (`None`: the shape only, for setup).
#[derive(Clone, Debug)]
pub struct Sha256Preimage<F> {
    /// The seed of the message, or `None` when only the shape is needed.
    pub seed: Option<u64>,
    /// The number of 512-bit blocks hashed (at least 1).
    pub blocks: usize,
    _field: core::marker::PhantomData<F>,
}

impl<F: PrimeField> Sha256Preimage<F> {
    /// A preimage of `blocks` blocks (at least one).
    pub fn new(blocks: usize, seed: Option<u64>) -> Self {
        Sha256Preimage {
            seed,
            blocks: blocks.max(1),
            _field: core::marker::PhantomData,
        }
    }

    /// The circuit with the most blocks (at least one) whose constraints, the public-input
    /// constraints included, fit a domain of 2^log_domain.
    pub fn filling_domain(log_domain: u32, seed: Option<u64>) -> Self {
        let n = 1usize << log_domain;
        let blocks = (n + SHA256_CONSTANT_SAVINGS - 5) / SHA256_BLOCK_CONSTRAINTS;
        Self::new(blocks, seed)
    }

    /// The number of constraints Groth16 proves for it, public-input constraints included.
    pub fn num_constraints(&self) -> usize {
        // Two packing constraints and three input constraints (the one and the two packed
        // inputs) come on top of the blocks'.
        SHA256_BLOCK_CONSTRAINTS * self.blocks - SHA256_CONSTANT_SAVINGS + 2 + 3
    }

    /// The message hashed for `seed`.
    pub fn message(seed: u64, blocks: usize) -> Vec<u8> {
        let len = 64 * blocks.max(1) - 9;
        (0..len)
            .map(|i| (BitDecomposition::<F>::word(seed, i / 8) >> (8 * (i % 8))) as u8)
            .collect()
    }

    /// The public inputs for `seed` (without the leading one): the SHA-256 digest of the
    /// message, multipacked (bits in big-endian order per byte, `F::CAPACITY` per input).
    pub fn public_inputs(seed: u64, blocks: usize) -> Vec<F> {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(Self::message(seed, blocks));
        bellpepper::gadgets::multipack::compute_multipacking(
            &bellpepper::gadgets::multipack::bytes_to_bits(&digest),
        )
    }
}

impl<F: PrimeField> Circuit<F> for Sha256Preimage<F> {
    fn synthesize<CS: ConstraintSystem<F>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        use bellpepper_core::boolean::{AllocatedBit, Boolean};
        let bytes = 64 * self.blocks - 9;
        let message = self.seed.map(|seed| Self::message(seed, self.blocks));
        let mut bits = Vec::with_capacity(8 * bytes);
        for i in 0..8 * bytes {
            // Big-endian bits within each byte, as SHA-256 reads them.
            let bit = message.as_ref().map(|m| (m[i / 8] >> (7 - i % 8)) & 1 == 1);
            let b = AllocatedBit::alloc(cs.namespace(|| format!("message bit {i}")), bit)?;
            bits.push(Boolean::from(b));
        }
        let digest = bellpepper::gadgets::sha256::sha256(cs.namespace(|| "sha256"), &bits)?;
        bellpepper::gadgets::multipack::pack_into_inputs(cs.namespace(|| "digest"), &digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProvingAssignment;
    use sluice_field::Fr;

    /// The bit decomposition fills its domain, is boolean-heavy, and proves and verifies.
    #[test]
    fn bit_decomposition_is_boolean_heavy_and_proves() {
        use crate::{
            create_random_proof, generate_random_parameters, prepare_verifying_key, verify_proof,
        };
        use ff::Field;
        use rand_chacha::ChaCha20Rng;
        use rand_core::SeedableRng;
        use sluice_backend_cpu::CpuBackend;
        let seed = 61;
        let log = 9;
        let c = BitDecomposition::<Fr>::filling_domain(log, Some(seed));
        assert_eq!(c.words, 7);
        let cs = ProvingAssignment::synthesize(c.clone()).unwrap();
        assert_eq!(cs.num_constraints(), 7 * 65 + 1);
        assert!(cs.num_constraints() <= 1 << log);
        let aux = cs.aux_assignment();
        let booleans = aux
            .iter()
            .filter(|v| *v == Fr::ZERO || *v == Fr::ONE)
            .count();
        assert!(
            booleans >= aux.len() * 64 / 65,
            "{booleans} of {}",
            aux.len()
        );
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let params =
            generate_random_parameters(BitDecomposition::<Fr>::filling_domain(log, None), &mut rng)
                .unwrap();
        let proof = create_random_proof(c, &params, &mut rng, &CpuBackend::new()).unwrap();
        let pvk = prepare_verifying_key(&params.vk);
        assert!(verify_proof(&pvk, &proof, &[]).unwrap(), "seed {seed}");
    }

    /// The SHA-256 preimage's constraint count, its public inputs and its satisfaction agree
    /// with synthesis, and it is boolean-heavy.
    #[test]
    fn sha256_preimage_shape_inputs_and_satisfaction() {
        use ff::Field;
        for (blocks, seed) in [(1, 5u64), (2, 6), (3, 7)] {
            let c = Sha256Preimage::<Fr>::new(blocks, Some(seed));
            let cs = ProvingAssignment::synthesize(c.clone()).unwrap();
            assert_eq!(cs.num_constraints(), c.num_constraints(), "{blocks} blocks");
            let inputs = Sha256Preimage::<Fr>::public_inputs(seed, blocks);
            assert_eq!(inputs.len(), 2);
            assert_eq!(&cs.input_assignment()[1..], &inputs[..], "{blocks} blocks");
            let aux = cs.aux_assignment();
            let bits = aux.iter().filter(|v| *v == Fr::ZERO || *v == Fr::ONE);
            assert!(bits.count() * 100 >= aux.len() * 99, "{blocks} blocks");
        }
        for log in [16, 17] {
            let c = Sha256Preimage::<Fr>::filling_domain(log, None);
            assert!(c.num_constraints() <= 1 << log, "2^{log}");
            let more = Sha256Preimage::<Fr>::new(c.blocks + 1, None);
            assert!(more.num_constraints() > 1 << log, "2^{log}");
        }
    }

    #[test]
    fn shape_and_inputs_agree_with_synthesis() {
        for log in [2, 5, 10] {
            let x = Fr::from(5u64);
            let c = MimcLike::filling_domain(log, Some(x));
            let cs = ProvingAssignment::synthesize(c.clone()).unwrap();
            let inputs = MimcLike::public_inputs(x, c.rounds);
            assert_eq!(&cs.input_assignment()[1..], &inputs[..]);
            assert_eq!(cs.num_constraints(), c.num_constraints());
            assert!(c.num_constraints() <= 1 << log);
        }
    }
}
