//! The order of an NTT's input and output: shared by the CPU kernels (sluice-ntt) and the
//! backend trait, so it lives below both.

/// The order of a transform's input and output.
///
/// "Bit-reversed" means index `p` holds element `bitrev(p)` of the natural-order vector, with
/// `bitrev` reversing the low `log2(n)` bits. For the forward transforms the input is the
/// coefficient vector and the output the evaluations; for the inverse ones, the reverse.
/// Pairing a `NaturalToBitReversed` transform with a `BitReversedToNatural` one skips both
/// permutations, which is the fast path for a transform, pointwise work, and the way back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttOrder {
    /// Natural-order input, natural-order output (costs one bit-reversal pass).
    NaturalToNatural,
    /// Natural-order input, bit-reversed output.
    NaturalToBitReversed,
    /// Bit-reversed input, natural-order output.
    BitReversedToNatural,
}

impl NttOrder {
    /// All orders, for callers (and tests) that iterate over them.
    pub const ALL: [NttOrder; 3] = [
        Self::NaturalToNatural,
        Self::NaturalToBitReversed,
        Self::BitReversedToNatural,
    ];

    /// Whether the input is expected in bit-reversed order.
    pub const fn input_bit_reversed(self) -> bool {
        matches!(self, Self::BitReversedToNatural)
    }

    /// Whether the output is produced in bit-reversed order.
    pub const fn output_bit_reversed(self) -> bool {
        matches!(self, Self::NaturalToBitReversed)
    }
}
