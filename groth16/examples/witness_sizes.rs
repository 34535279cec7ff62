//! What the witness of real gadget circuits looks like, and what candidate compact
//! encodings of a, b and the auxiliary assignment would hold: the measurement behind
//! `sluice_backend::compact`'s encoding.
//!
//! `cargo run --release -p sluice-groth16 --example witness_sizes [log2 domain]`

use bellpepper_core::Circuit;
use ff::Field;
use sluice_field::Fr;
use sluice_groth16::demo::{BitDecomposition, MimcLike, Sha256Preimage};
use sluice_groth16::ProvingAssignment;

/// How many values of a vector fall in each class.
#[derive(Default)]
struct Classes {
    len: usize,
    zero: usize,
    one: usize,
    minus_one: usize,
    /// |v| <= 127, not 0 or ±1.
    small: usize,
    /// |v| < 2^64, not small.
    word: usize,
    full: usize,
}

impl Classes {
    fn of(values: &[Fr]) -> Self {
        let mut c = Classes {
            len: values.len(),
            ..Classes::default()
        };
        for v in values {
            let (pos, neg) = (v.to_canonical_limbs(), (-*v).to_canonical_limbs());
            let magnitude = |l: [u64; 4]| (l[1] | l[2] | l[3] == 0).then_some(l[0]);
            let m = match (magnitude(pos), magnitude(neg)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            match m {
                _ if *v == Fr::ZERO => c.zero += 1,
                _ if *v == Fr::ONE => c.one += 1,
                _ if *v == -Fr::ONE => c.minus_one += 1,
                Some(m) if m <= 127 => c.small += 1,
                Some(_) => c.word += 1,
                None => c.full += 1,
            }
        }
        c
    }

    fn pct(&self, k: usize) -> f64 {
        100.0 * k as f64 / self.len.max(1) as f64
    }

    /// One byte per value, a u32 position and the 32-byte element per other value.
    fn bytes_byte_codes(&self) -> usize {
        self.len + 36 * (self.word + self.full)
    }

    /// As `bytes_byte_codes`, with 64-bit words as a u32 position and 8 bytes.
    fn bytes_byte_codes_words(&self) -> usize {
        self.len + 12 * self.word + 36 * self.full
    }

    /// Two bits per value (0, 1, -1, other), others as byte codes of the others.
    fn bytes_two_bit_codes(&self) -> usize {
        let others = self.small + self.word + self.full;
        self.len.div_ceil(4) + others + 36 * (self.word + self.full)
    }
}

fn report(name: &str, cs: &ProvingAssignment, n: usize) {
    println!(
        "\n{name}: {} constraints, {} aux, domain 2^{}",
        cs.num_constraints(),
        cs.aux_assignment().len(),
        n.trailing_zeros()
    );
    println!(
        "  {:<4} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} | bytes/value: byte codes, +words, 2-bit codes",
        "vec", "0", "1", "-1", "small", "u64", "full"
    );
    let mut totals = [0usize; 3];
    for (v, values) in [("a", cs.a()), ("b", cs.b()), ("aux", cs.aux_assignment())] {
        let c = Classes::of(&values.to_vec());
        let sizes = [
            c.bytes_byte_codes(),
            c.bytes_byte_codes_words(),
            c.bytes_two_bit_codes(),
        ];
        for (t, s) in totals.iter_mut().zip(sizes) {
            *t += s;
        }
        println!(
            "  {v:<4} {:>6.1}% {:>6.1}% {:>6.1}% {:>6.1}% {:>6.1}% {:>6.1}% | {:.3} {:.3} {:.3}",
            c.pct(c.zero),
            c.pct(c.one),
            c.pct(c.minus_one),
            c.pct(c.small),
            c.pct(c.word),
            c.pct(c.full),
            sizes[0] as f64 / c.len.max(1) as f64,
            sizes[1] as f64 / c.len.max(1) as f64,
            sizes[2] as f64 / c.len.max(1) as f64,
        );
    }
    let vector = 32.0 * n as f64;
    println!(
        "  as stored (sluice_backend::compact, bitmaps and inputs included): {:.3} vectors",
        cs.host_bytes() as f64 / vector
    );
    println!(
        "  a + b + aux in vectors (n x 32 bytes): raw {:.3}; byte codes {:.3}; +words {:.3}; 2-bit codes {:.3}",
        (32 * (2 * cs.num_constraints() + cs.aux_assignment().len())) as f64 / vector,
        totals[0] as f64 / vector,
        totals[1] as f64 / vector,
        totals[2] as f64 / vector,
    );
}

fn synthesize<C: Circuit<Fr>>(c: C) -> ProvingAssignment {
    ProvingAssignment::synthesize(c).expect("the demo circuits are satisfied")
}

fn main() {
    let log: u32 = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("log2 of the domain size"))
        .unwrap_or(18);
    let n = 1usize << log;
    report(
        "bellpepper SHA-256 preimage",
        &synthesize(Sha256Preimage::<Fr>::filling_domain(log, Some(1))),
        n,
    );
    report(
        "demo::BitDecomposition",
        &synthesize(BitDecomposition::<Fr>::filling_domain(log, Some(1))),
        n,
    );
    report(
        "demo::MimcLike",
        &synthesize(MimcLike::filling_domain(log, Some(Fr::from(3u64)))),
        n,
    );
}
