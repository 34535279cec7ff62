//! Mutations of encoded parameters, verifying keys and proofs, for the decoder mutation
//! test and the fuzz target (`fuzz/`): every choice comes from a [`Choices`] source, a
//! seeded RNG in the test and the fuzzer's bytes in the fuzz target.

use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use sluice_backend_cpu::CpuBackend;
use sluice_field::{Fr, G1Affine, G2Affine};
use sluice_groth16::{create_random_proof, generate_random_parameters};

use super::readers::{layout, non_subgroup_point, VK_POINTS};
use super::Chain;

/// Where a mutation's choices come from.
pub trait Choices {
    /// A number below `n` (which is at least 1).
    fn below(&mut self, n: usize) -> usize;
}

/// Choices from a seeded RNG.
pub struct Seeded(ChaCha20Rng);

impl Seeded {
    /// Choices from `seed`.
    pub fn new(seed: u64) -> Self {
        Seeded(ChaCha20Rng::seed_from_u64(seed))
    }
}

impl Choices for Seeded {
    fn below(&mut self, n: usize) -> usize {
        (self.0.next_u64() % n as u64) as usize
    }
}

/// Choices read from bytes (a fuzzer's input), two at a time; zeros once they run out.
pub struct FromBytes<'a>(pub &'a [u8]);

impl Choices for FromBytes<'_> {
    fn below(&mut self, n: usize) -> usize {
        let take = self.0.len().min(2);
        let (head, rest) = self.0.split_at(take);
        self.0 = rest;
        let v = head.iter().fold(0usize, |v, &b| v << 8 | b as usize);
        v % n
    }
}

/// An encoding to mutate and what is known of its layout.
#[derive(Clone)]
pub struct Target {
    /// The valid encoding.
    pub bytes: Vec<u8>,
    /// Offset and size of every point.
    points: Vec<(usize, usize)>,
    /// Offsets of the u32 length fields.
    lengths: Vec<usize>,
    /// Encodings to put in place of a point: identities, points outside the subgroup,
    /// per size.
    specials: Vec<Vec<u8>>,
}

/// A valid parameters file, its verifying key and a proof, to mutate.
pub struct Fixture {
    /// The parameters file.
    pub params_file: Target,
    /// The verifying key alone.
    pub vk: Target,
    /// A proof.
    pub proof: Target,
}

impl Fixture {
    /// Parameters of a small circuit (a few dozen points, so a case is quick), from `seed`.
    pub fn new(seed: u64) -> Self {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let params = generate_random_parameters(Chain::<Fr>::new(None, 2), &mut rng)
            .expect("setup of the fixture circuit");
        let x = Fr::random(&mut rng);
        let proof = create_random_proof(
            Chain::new(Some(x), 2),
            &params,
            &mut rng,
            &CpuBackend::new(),
        )
        .expect("a proof of the fixture circuit");
        let mut bytes = Vec::new();
        params.write(&mut bytes).expect("writing to memory");
        let uncompressed_specials = vec![
            G1Affine::identity().to_uncompressed().to_vec(),
            G2Affine::identity().to_uncompressed().to_vec(),
            non_subgroup_point().to_uncompressed().to_vec(),
        ];
        let sections = layout(&params);
        let mut points: Vec<(usize, usize)> = VK_POINTS.iter().map(|p| (p.1, p.2)).collect();
        for s in &sections {
            points.extend((0..s.count).map(|i| (s.point(i), s.point_size)));
        }
        let vk_len = params.vk.serialized_size();
        let params_file = Target {
            bytes: bytes.clone(),
            points: points.clone(),
            lengths: sections.iter().map(|s| s.len_at).collect(),
            specials: uncompressed_specials.clone(),
        };
        let vk = Target {
            bytes: bytes[..vk_len].to_vec(),
            points: points.into_iter().filter(|p| p.0 < vk_len).collect(),
            lengths: vec![sections[0].len_at],
            specials: uncompressed_specials,
        };
        let proof = Target {
            bytes: proof.to_bytes().to_vec(),
            points: vec![(0, 48), (48, 96), (144, 48)],
            lengths: Vec::new(),
            specials: vec![
                G1Affine::identity().to_compressed().to_vec(),
                G2Affine::identity().to_compressed().to_vec(),
                non_subgroup_point().to_compressed().to_vec(),
            ],
        };
        Fixture {
            params_file,
            vk,
            proof,
        }
    }
}

impl Target {
    /// The encoding with one to three mutations applied.
    pub fn mutated(&self, c: &mut impl Choices) -> Vec<u8> {
        let mut bytes = self.bytes.clone();
        for _ in 0..1 + c.below(3) {
            self.mutate(&mut bytes, c);
        }
        bytes
    }

    fn mutate(&self, bytes: &mut Vec<u8>, c: &mut impl Choices) {
        let mut below = |n| c.below(n);
        let len = bytes.len();
        match below(12) {
            0 if len > 0 => {
                let p = below(len);
                bytes[p] ^= 1 << below(8);
            }
            1 if len > 0 => {
                let p = below(len);
                bytes[p] = below(256) as u8;
            }
            2 if len > 0 => {
                let p = below(len);
                bytes[p] = [0x00, 0xff, 0x80, 0x40, 0x20, 0xc0, 0xe0, 0x1f][below(8)];
            }
            3 => bytes.truncate(below(len + 1)),
            4 => {
                let extra = 1 + below(300);
                bytes.extend((0..extra).map(|_| below(256) as u8));
            }
            5 => {
                let p = below(len + 1);
                let n = 1 + below(8);
                let insert: Vec<u8> = (0..n).map(|_| below(256) as u8).collect();
                bytes.splice(p..p, insert);
            }
            6 if len > 0 => {
                let p = below(len);
                let end = (p + 1 + below(8)).min(len);
                bytes.drain(p..end);
            }
            7 if !self.lengths.is_empty() => {
                let at = self.lengths[below(self.lengths.len())];
                if at + 4 <= len {
                    let old = u32::from_be_bytes([
                        bytes[at],
                        bytes[at + 1],
                        bytes[at + 2],
                        bytes[at + 3],
                    ]);
                    let new = match below(6) {
                        0 => 0,
                        1 => old.wrapping_add(1),
                        2 => old.wrapping_sub(1),
                        3 => u32::MAX,
                        4 => 1 << (16 + below(16)),
                        _ => below(1 << 16) as u32 | (below(1 << 16) as u32) << 16,
                    };
                    bytes[at..at + 4].copy_from_slice(&new.to_be_bytes());
                }
            }
            8 => {
                // Another point of the same size in its place: a valid encoding.
                let (to, size) = self.points[below(self.points.len())];
                let same: Vec<usize> = self
                    .points
                    .iter()
                    .filter(|p| p.1 == size)
                    .map(|p| p.0)
                    .collect();
                let from = same[below(same.len())];
                if to + size <= len {
                    let donor = self.bytes[from..from + size].to_vec();
                    bytes[to..to + size].copy_from_slice(&donor);
                }
            }
            9 => {
                let (to, size) = self.points[below(self.points.len())];
                let fitting: Vec<&Vec<u8>> =
                    self.specials.iter().filter(|s| s.len() == size).collect();
                if to + size <= len && !fitting.is_empty() {
                    bytes[to..to + size].copy_from_slice(fitting[below(fitting.len())]);
                }
            }
            10 => {
                // A flag bit of a point: compression, infinity or sign.
                let (at, _) = self.points[below(self.points.len())];
                if at < len {
                    bytes[at] ^= [0x80, 0x40, 0x20][below(3)];
                }
            }
            _ => {
                // Random bytes over a whole point.
                let (at, size) = self.points[below(self.points.len())];
                if at + size <= len {
                    for b in &mut bytes[at..at + size] {
                        *b = below(256) as u8;
                    }
                }
            }
        }
    }
}
