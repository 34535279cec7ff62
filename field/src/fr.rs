//! The BLS12-381 scalar field `Fr` (r = 0x73ed…0001, 255 bits).

use subtle::CtOption;

/// An element of the scalar field of BLS12-381, in Montgomery form (R = 2^256) with
/// little-endian limbs, always fully reduced: the layout of blst's `blst_fr`.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Fr(pub(crate) [u64; 4]);

impl_prime_field! {
    name: Fr,
    limbs: 4,
    bytes: 32,
    repr: [u8; 32],
    modulus: [0xffffffff00000001, 0x53bda402fffe5bfe, 0x3339d80809a1d805, 0x73eda753299d7d48],
    modulus_str: "0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001",
    num_bits: 255,
    safegcd_limbs: 5,
    r: [0x00000001fffffffe, 0x5884b7fa00034802, 0x998c4fefecbc4ff5, 0x1824b159acc5056f],
    r2: [0xc999e990f3f29c6d, 0x2b6cedcb87925c23, 0x05d314967254398f, 0x0748d9d99f59ff11],
    wide: [0xe3160c0321cdb9d8, 0xb77dd88dc67762c7, 0xd3858a3ce8abe60e, 0x710c0186793c5898],
    inv: 0xfffffffeffffffff,
    s: 32,
    // 7, in Montgomery form.
    generator: [0x0000000efffffff1, 0x17e363d300189c0f, 0xff9c57876f8457b0, 0x351332208fc5a8c4],
    // 7^((r - 1) / 2^32)
    root_of_unity: [0xb9b58d8c5f0e466a, 0x5b1b4c801819d7ec, 0x0af53ae352a31e64, 0x5bf3adda19e9b27b],
    root_of_unity_inv: [0x4256481adcf3219a, 0x45f37b7f96b6cad3, 0xf9c3f1d75f7a3b27, 0x2d2fc049658afd43],
    two_inv: [0x00000000ffffffff, 0xac425bfd0001a401, 0xccc627f7f65e27fa, 0x0c1258acd66282b7],
    // 7^(2^32)
    delta: [0x70e310d3d146f96a, 0x4b64c08919e299e6, 0x51e114186a8b970d, 0x6185d06627c067cb],
    blst: blst_fr,
}

impl Fr {
    /// `(t - 1) / 2` with `t = (r - 1) / 2^32`, for Tonelli–Shanks.
    const TM1D2: [u64; 4] = crate::arith::shr(crate::arith::shr(Self::MODULUS_LIMBS, 32), 1);

    /// Constant-time Tonelli–Shanks (r ≡ 1 mod 2^32).
    fn sqrt_impl(&self) -> CtOption<Self> {
        ff::helpers::sqrt_tonelli_shanks(self, Self::TM1D2)
    }
}
