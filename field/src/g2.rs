//! The group G2: the prime-order subgroup of E2: y^2 = x^3 + 4(u + 1) over Fq2 (the M-type
//! sextic twist of E1).

use crate::curve::{Affine, CurveField, Jacobian};
use crate::fq::Fq;
use crate::fq2::Fq2;
use subtle::{Choice, ConstantTimeEq, CtOption};

/// psi's x factor 1 / (u + 1)^((p - 1) / 3) (Montgomery form), canonical
/// c0 = 0, c1 = 0x1a0111ea397fe699ec02408663d4de85aa0d857d89759ad4897d29650fb85f9b409427eb4f49fffd8bfd00000000aaad.
const PSI_X: Fq2 = Fq2::from_mont_limbs_unchecked([
    [0, 0, 0, 0, 0, 0],
    [
        0x890d_c9e4_8675_45c3,
        0x2af3_2253_3285_a5d5,
        0x5088_0866_309b_7e2c,
        0xa20d_1b8c_7e88_1024,
        0x14e4_f04f_e2db_9068,
        0x14e5_6d3f_1564_853a,
    ],
]);

/// psi's y factor 1 / (u + 1)^((p - 1) / 2) (Montgomery form), canonical
/// c0 = 0x135203e60180a68ee2e9c448d77a2cd91c3dedd930b1cf60ef396489f61eb45e304466cf3e67fa0af1ee7b04121bdea2,
/// c1 = 0x06af0e0437ff400b6831e36d6bd17ffe48395dabc2d3435e77f76e17009241c5ee67992f72ec05f4c81084fbede3cc09.
const PSI_Y: Fq2 = Fq2::from_mont_limbs_unchecked([
    [
        0x3e2f_585d_a55c_9ad1,
        0x4294_213d_86c1_8183,
        0x3828_44c8_8b62_3732,
        0x92ad_2afd_1910_3e18,
        0x1d79_4e4f_ac7c_f0b9,
        0x0bd5_92fc_7d82_5ec8,
    ],
    [
        0x7bcf_a7a2_5aa3_0fda,
        0xdc17_dec1_2a92_7e7c,
        0x2f08_8dd8_6b4e_bef1,
        0xd1ca_2087_da74_d4a7,
        0x2da2_5966_96ce_bc1d,
        0x0e2b_7eed_bbfd_87d2,
    ],
]);

/// The untwist-Frobenius-twist endomorphism psi on Jacobian coordinates. Frobenius is a field
/// automorphism, so it commutes with the Z^2 / Z^3 denominators.
fn psi(p: &Jacobian<Fq2>) -> Jacobian<Fq2> {
    Jacobian {
        x: p.x.conjugate() * PSI_X,
        y: p.y.conjugate() * PSI_Y,
        z: p.z.conjugate(),
    }
}

impl CurveField for Fq2 {
    /// 4(u + 1).
    const B: Fq2 = Fq2 {
        c0: <Fq as CurveField>::B,
        c1: <Fq as CurveField>::B,
    };

    /// The standard generator, in Montgomery form.
    const GENERATOR: Affine<Fq2> = Affine {
        x: Fq2::from_mont_limbs_unchecked([
            [
                0xf5f2_8fa2_0294_0a10,
                0xb3f5_fb26_87b4_961a,
                0xa1a8_93b5_3e2a_e580,
                0x9894_999d_1a3c_aee9,
                0x6f67_b763_1863_366b,
                0x0581_9192_4350_bcd7,
            ],
            [
                0xa5a9_c075_9e23_f606,
                0xaaa0_c59d_bccd_60c3,
                0x3bb1_7e18_e286_7806,
                0x1b1a_b6cc_8541_b367,
                0xc2b6_ed0e_f215_8547,
                0x1192_2a09_7360_edf3,
            ],
        ]),
        y: Fq2::from_mont_limbs_unchecked([
            [
                0x4c73_0af8_6049_4c4a,
                0x597c_fa1f_5e36_9c5a,
                0xe7e6_856c_aa0a_635a,
                0xbbef_b5e9_6e0d_495f,
                0x07d3_a975_f0ef_25a2,
                0x0083_fd8e_7e80_dae5,
            ],
            [
                0xadc0_fc92_df64_b05d,
                0x18aa_270a_2b14_61dc,
                0x86ad_ac6a_3be4_eba0,
                0x7949_5c4e_c93d_a33a,
                0xe717_5850_a43c_caed,
                0x0b2b_c2a1_63de_1bf2,
            ],
        ]),
    };

    const BYTES: usize = 96;

    /// c1 first, then c0 (the ZCash order).
    fn write_be(&self, out: &mut [u8]) {
        out[..48].copy_from_slice(&self.c1.to_bytes_be());
        out[48..].copy_from_slice(&self.c0.to_bytes_be());
    }

    fn read_be(bytes: &[u8]) -> CtOption<Self> {
        let (hi, lo) = bytes.split_at(bytes.len().min(48));
        let c1 = <Fq as CurveField>::read_be(hi);
        let c0 = <Fq as CurveField>::read_be(lo);
        c1.and_then(|c1| c0.map(|c0| Fq2 { c0, c1 }))
    }

    fn sign(&self) -> Choice {
        self.lexicographically_largest()
    }

    /// Scott's check (eprint 2021/1130 §4, proof in 2022/352): P is in G2 iff psi(P) = [x] P,
    /// i.e. psi(P) = -[|x|] P since x < 0.
    fn is_torsion_free(p: &Affine<Fq2>) -> Choice {
        psi(&p.to_jacobian()).ct_eq(&Jacobian::affine_mul_by_abs_x(p).neg())
    }
}

impl_group! {
    name: "G2",
    affine: G2Affine,
    projective: G2Projective,
    field: Fq2,
    compressed: G2Compressed,
    uncompressed: G2Uncompressed,
    compressed_len: 96,
    uncompressed_len: 192,
}
