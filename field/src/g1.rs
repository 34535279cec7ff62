//! The group G1: the prime-order subgroup of E1: y^2 = x^3 + 4 over Fq.

use crate::curve::{Affine, CurveField, Jacobian};
use crate::fq::Fq;
use ff::Field;
use subtle::{Choice, ConstantTimeEq, CtOption};

/// A non-trivial cube root of unity in Fq (Montgomery form), canonical value
/// 0x5f19672fdf76ce51ba69c6076a0f77eaddb3a93be6f89688de17d813620a00022e01fffffffefffe: the one
/// for which sigma(x, y) = (BETA x, y) acts on G1 as multiplication by -x^2.
const BETA: Fq = Fq::from_mont_limbs_unchecked([
    0x30f1_361b_798a_64e8,
    0xf3b8_ddab_7ece_5a2a,
    0x16a8_ca3a_c615_77f7,
    0xc26a_2ff8_74fd_029b,
    0x3636_b766_6070_1c6e,
    0x051b_a4ab_241b_6160,
]);

impl CurveField for Fq {
    /// 4, in Montgomery form.
    const B: Fq = Fq::from_mont_limbs_unchecked([
        0xaa27_0000_000c_fff3,
        0x53cc_0032_fc34_000a,
        0x478f_e97a_6b0a_807f,
        0xb1d3_7ebe_e6ba_24d7,
        0x8ec9_733b_bf78_ab2f,
        0x09d6_4551_3d83_de7e,
    ]);

    /// The standard generator (x = 0x17f1d3a7…, y = 0x08b3f481…), in Montgomery form.
    const GENERATOR: Affine<Fq> = Affine {
        x: Fq::from_mont_limbs_unchecked([
            0x5cb3_8790_fd53_0c16,
            0x7817_fc67_9976_fff5,
            0x154f_95c7_143b_a1c1,
            0xf0ae_6acd_f3d0_e747,
            0xedce_6ecc_21db_f440,
            0x1201_7741_9e0b_fb75,
        ]),
        y: Fq::from_mont_limbs_unchecked([
            0xbaac_93d5_0ce7_2271,
            0x8c22_631a_7918_fd8e,
            0xdd59_5f13_5707_25ce,
            0x51ac_5829_5040_5194,
            0x0e1c_8c3f_ad00_59c0,
            0x0bbc_3efc_5008_a26a,
        ]),
    };

    const BYTES: usize = 48;

    fn write_be(&self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_bytes_be());
    }

    fn read_be(bytes: &[u8]) -> CtOption<Self> {
        match <&[u8; 48]>::try_from(bytes) {
            Ok(b) => Fq::from_bytes_be(b),
            Err(_) => CtOption::new(Fq::ZERO, Choice::from(0)),
        }
    }

    fn sign(&self) -> Choice {
        self.lexicographically_largest()
    }

    /// Scott's check (eprint 2021/1130 §6, proof in 2022/352): P is in G1 iff
    /// sigma(P) = -[x^2] P, i.e. [x^2] P = (BETA x, -y).
    fn is_torsion_free(p: &Affine<Fq>) -> Choice {
        let x2p = Jacobian::affine_mul_by_abs_x(p).mul_by_abs_x();
        let minus_sigma = Affine {
            x: p.x * BETA,
            y: -p.y,
        };
        x2p.ct_eq(&minus_sigma.to_jacobian())
    }
}

impl_group! {
    name: "G1",
    affine: G1Affine,
    projective: G1Projective,
    field: Fq,
    compressed: G1Compressed,
    uncompressed: G1Uncompressed,
    compressed_len: 48,
    uncompressed_len: 96,
}
