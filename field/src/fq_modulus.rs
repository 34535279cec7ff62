//! Fq's modulus and Montgomery factor as plain limbs, below every Fq module.
//!
//! `Fq` (`fq.rs`) is built from them, and the assembly product (`adx.rs`) compares against
//! them to know it was handed Fq's modulus. Reading them from `Fq` itself would make the
//! product, which the arithmetic under `Fq` calls, depend on `Fq`: a loop.

/// p, the modulus of the base field of BLS12-381: canonical little-endian limbs
/// (`Fq::MODULUS_LIMBS`).
pub(crate) const MODULUS: [u64; 6] = [
    0xb9feffffffffaaab,
    0x1eabfffeb153ffff,
    0x6730d2a0f6b0f624,
    0x64774b84f38512bf,
    0x4b1ba7b6434bacd7,
    0x1a0111ea397fe69a,
];

/// `-p^-1 mod 2^64`, the Montgomery reduction factor (`Fq::INV`).
pub(crate) const INV: u64 = 0x89f3fffcfffcfffd;
