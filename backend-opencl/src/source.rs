//! Kernel sources: the `.cl` files of `kernels/`, assembled per program with a header that
//! is generated here from `sluice-field`'s constants (never copied by hand).
//!
//! The kernels' build switches are named `KERNEL_*` (`-DKERNEL_NVIDIA`,
//! `-DKERNEL_INLINE_CURVE`, ...), so that `SLUICE_*` names only environment variables.

use std::fmt::Write as _;

use crate::ptx::Reduction;
use ff::PrimeField;
use sluice_field::{Fq, Fr};

const COMMON: &str = include_str!("../kernels/common.cl");
const FIELD: &str = include_str!("../kernels/field.cl");
const FQ2: &str = include_str!("../kernels/fq2.cl");
const EC: &str = include_str!("../kernels/ec.cl");
const MSM: &str = include_str!("../kernels/msm.cl");
const FR_OPS: &str = include_str!("../kernels/fr.cl");
const COMPACT: &str = include_str!("../kernels/compact.cl");
const DECODE: &str = include_str!("../kernels/decode.cl");

/// Out-of-line Fq multiplications for the MSM programs: smaller kernels with fewer
/// registers, which build several times faster and run faster on an H200
/// (BENCHMARKS.md#build-and-load).
const NOINLINE_MUL: &str = "#ifndef KERNEL_NOINLINE_MUL\n#define KERNEL_NOINLINE_MUL\n#endif\n";

/// Out-of-line point operations and Fq2 products for the G2 program: inlined, its cold
/// build is too slow (BENCHMARKS.md#build-and-load; see `kernels/common.cl`).
const NOINLINE_CURVE: &str =
    "#ifndef KERNEL_NOINLINE_CURVE\n#define KERNEL_NOINLINE_CURVE\n#endif\n";

/// One program per job, so a job never compiles code it does not use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProgramKind {
    /// Fr: pointwise operations, NTT, MSM scalar preparation.
    Fr,
    /// G1 MSM (Fq arithmetic and G1 points).
    G1Msm,
    /// G2 MSM (Fq, Fq2 arithmetic and G2 points).
    G2Msm,
    /// Kernels that expose single field operations to the tests.
    #[cfg(test)]
    FieldTest,
}

impl ProgramKind {
    /// A short name for logs and build-time reports.
    pub fn name(self) -> &'static str {
        match self {
            ProgramKind::Fr => "fr",
            ProgramKind::G1Msm => "g1-msm",
            ProgramKind::G2Msm => "g2-msm",
            #[cfg(test)]
            ProgramKind::FieldTest => "field-test",
        }
    }

    /// The programs a backend builds (the test-only field program aside).
    pub const ALL: [ProgramKind; 3] = [ProgramKind::Fr, ProgramKind::G1Msm, ProgramKind::G2Msm];

    /// The program's full source as the backend builds it: the `.cl` files with the
    /// generated headers, before the build options (`-DKERNEL_NVIDIA` selects the PTX path).
    pub fn source(self) -> String {
        let mut s = String::from(COMMON);
        match self {
            ProgramKind::Fr => {
                push_field::<4>(&mut s, "Fr", &FR_CONSTS, FR_ROWS);
                s.push_str(FR_OPS);
                s.push_str(COMPACT);
            }
            ProgramKind::G1Msm => {
                s.insert_str(0, NOINLINE_MUL);
                push_scalar_defines(&mut s);
                push_field::<6>(&mut s, "Fq", &FQ_CONSTS, FQ_ROWS);
                push_curve(&mut s, "Fq", "G1");
            }
            ProgramKind::G2Msm => {
                s.insert_str(0, NOINLINE_CURVE);
                s.insert_str(0, NOINLINE_MUL);
                push_scalar_defines(&mut s);
                push_field::<6>(&mut s, "Fq", &FQ_CONSTS, FQ_ROWS);
                s.push_str(FQ2);
                push_curve(&mut s, "Fq2", "G2");
            }
            #[cfg(test)]
            ProgramKind::FieldTest => {
                push_field::<4>(&mut s, "Fr", &FR_CONSTS, FR_ROWS);
                push_field::<6>(&mut s, "Fq", &FQ_CONSTS, FQ_ROWS);
                s.push_str(FQ2);
                s.push_str(include_str!("../kernels/field_test.cl"));
            }
        }
        s
    }
}

/// The constants of one field, as `sluice-field` publishes them (64-bit little-endian limbs).
struct FieldConsts<const N: usize> {
    modulus: [u64; N],
    r: [u64; N],
    r2: [u64; N],
    inv: u64,
}

const FR_CONSTS: FieldConsts<4> = FieldConsts {
    modulus: Fr::MODULUS_LIMBS,
    r: Fr::R_LIMBS,
    r2: Fr::R2_LIMBS,
    inv: Fr::INV,
};

const FQ_CONSTS: FieldConsts<6> = FieldConsts {
    modulus: Fq::MODULUS_LIMBS,
    r: Fq::R_LIMBS,
    r2: Fq::R2_LIMBS,
    inv: Fq::INV,
};

/// A 64-bit-limb constant as an OpenCL initializer of 32-bit limbs (same bytes on a
/// little-endian device).
fn limbs32(limbs: &[u64]) -> String {
    let mut s = String::from("{{");
    for (i, l) in limbs
        .iter()
        .flat_map(|l| [*l as u32, (*l >> 32) as u32])
        .enumerate()
    {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "0x{l:08x}u");
    }
    s.push_str("}}");
    s
}

/// Fr's Montgomery rows: split, which made the NTT faster on an H200 (BENCHMARKS.md#ntt), as
/// the offline SASS counts predicted (Fr's fused reduction products compile to an `IMAD`
/// plus a half-rate `IMAD.HI`).
const FR_ROWS: Reduction = Reduction::Split;
/// Fq's Montgomery rows: fused (`ptxas` already builds them from `IMAD.WIDE`; split, the
/// carry additions would only move onto the multiply pipe).
const FQ_ROWS: Reduction = Reduction::Fused;

/// The generated header of one field (type, constants, PTX helpers), then field.cl for it,
/// its Montgomery rows in the form `rows` unless the build defines
/// `KERNEL_<OTHER>_<NAME>_ROWS` (e.g. `-DKERNEL_FUSED_FR_ROWS`, `-DKERNEL_SPLIT_FQ_ROWS`;
/// see [`Reduction`]), the switch for A/B runs.
fn push_field<const N: usize>(s: &mut String, name: &str, c: &FieldConsts<N>, rows: Reduction) {
    let limbs = 2 * N;
    let _ = writeln!(
        s,
        "\n// ---- {name}: generated from sluice-field's constants ----"
    );
    let _ = writeln!(s, "#define {name}_LIMBS {limbs}");
    let _ = writeln!(s, "typedef struct {{ uint v[{limbs}]; }} {name};");
    let _ = writeln!(s, "__constant {name} {name}_P = {};", limbs32(&c.modulus));
    let _ = writeln!(s, "__constant {name} {name}_ONE = {};", limbs32(&c.r));
    let _ = writeln!(s, "__constant {name} {name}_R2 = {};", limbs32(&c.r2));
    // -p^-1 mod 2^64 reduces to -p^-1 mod 2^32 by truncation.
    let _ = writeln!(s, "#define {name}_INV 0x{:08x}u", c.inv as u32);
    s.push_str("#ifdef KERNEL_NVIDIA\n");
    s.push_str(&crate::ptx::carry_chains(name, limbs));
    s.push_str("#endif\n");
    let modulus: Vec<u32> = c
        .modulus
        .iter()
        .flat_map(|l| [*l as u32, (*l >> 32) as u32])
        .collect();
    let mul = |reduction| {
        crate::ptx::montgomery_mul_nocarry(name, limbs, &modulus, c.inv as u32, reduction)
    };
    let other = rows.other();
    let mul = format!(
        "#ifdef KERNEL_{}_{}_ROWS\n{}#else\n{}#endif\n",
        other.macro_name(),
        name.to_uppercase(),
        mul(other),
        mul(rows)
    );
    s.push_str(&FIELD.replace("FIELD", name).replace("@MUL_PTX@", &mul));
}

/// The scalar layout the MSM kernels read (canonical Fr, 32-bit limbs).
fn push_scalar_defines(s: &mut String) {
    let _ = writeln!(s, "#define SCALAR_LIMBS {}", 2 * Fr::MODULUS_LIMBS.len());
    let _ = writeln!(s, "#define SCALAR_BITS {}", Fr::NUM_BITS);
}

fn push_curve(s: &mut String, field: &str, point: &str) {
    let fq_per_coord = if field == "Fq" { 1 } else { 2 };
    let _ = writeln!(s, "#define {point}_FQ_PER_COORD {fq_per_coord}");
    for template in [EC, MSM, DECODE] {
        s.push_str(&template.replace("PFIELD", field).replace("POINT", point));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_constants_come_from_the_field_crate() {
        let src = ProgramKind::Fr.source();
        // r = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001
        assert!(src.contains(
            "__constant Fr Fr_P = {{0x00000001u, 0xffffffffu, 0xfffe5bfeu, 0x53bda402u, \
             0x09a1d805u, 0x3339d808u, 0x299d7d48u, 0x73eda753u}};"
        ));
        assert!(src.contains("#define Fr_INV 0xffffffffu"));
        assert!(!src.contains("Fq_"), "the Fr program carries no Fq code");
        let g1 = ProgramKind::G1Msm.source();
        assert!(g1.contains("G1_msm_accumulate") && !g1.contains("Fq2_"));
        assert!(!g1.contains("FIELD") && !g1.contains("POINT"));
        let g2 = ProgramKind::G2Msm.source();
        assert!(g2.contains("G2_msm_accumulate") && !g2.contains("G1_"));
    }

    /// Without a switch the preprocessor keeps the `#else` branch: Fr's split rows, Fq's
    /// fused ones.
    #[test]
    fn rows_default_to_split_for_fr_and_fused_for_fq() {
        let default_branch = |src: &str, switch: &str| -> String {
            let at = src.find(switch).expect("the switch is in the source");
            let rest = &src[at..];
            let (from, to) = (rest.find("#else").unwrap(), rest.find("#endif").unwrap());
            rest[from..to].to_string()
        };
        let fr = default_branch(&ProgramKind::Fr.source(), "#ifdef KERNEL_FUSED_FR_ROWS");
        assert!(fr.contains("neg.s32 m") && !fr.contains("mad.wide.u32 w, m,"));
        let fq = default_branch(&ProgramKind::G1Msm.source(), "#ifdef KERNEL_SPLIT_FQ_ROWS");
        assert!(fq.contains("mad.wide.u32 w, m,"));
    }
}

#[cfg(test)]
mod kernel_tests {
    //! Every field operation of the kernels against sluice-field, on seeded random values
    //! and the edge values 0, 1, -1 (the inverse of 0 being 0 on both sides).

    use ff::Field;
    use sluice_field::{Fq, Fq2, Fr};

    use super::ProgramKind;
    use crate::repr::{as_words, as_words_mut, DeviceRepr};
    use crate::testing::{backend, rng};

    /// Runs `kernel` of the field-test program on (a, b) and returns `ops` outputs per element.
    fn run<T: DeviceRepr + Default>(kernel: &str, a: &[T], b: &[T], ops: usize) -> Option<Vec<T>> {
        let backend = backend()?;
        let ctx = &backend.devices[0];
        let n = a.len();
        let upload = |v: &[T]| {
            let m = ctx.raw_buffer("test", v.len() * T::WORDS).unwrap();
            ctx.write(&m, 0, as_words(v)).unwrap();
            m
        };
        let (ma, mb) = (upload(a), upload(b));
        let out = ctx.raw_buffer("test out", n * ops * T::WORDS).unwrap();
        ctx.kernel(ProgramKind::FieldTest, kernel)
            .unwrap()
            .mem(&ma)
            .unwrap()
            .mem(&mb)
            .unwrap()
            .mem(&out)
            .unwrap()
            .u32(n as u32)
            .unwrap()
            .run(n, None)
            .unwrap();
        let mut res = vec![T::default(); n * ops];
        ctx.read(&out, 0, as_words_mut(&mut res)).unwrap();
        Some(res)
    }

    /// Random pairs plus every pair of edge values.
    fn inputs<F: Field>(seed: u64, n: usize) -> (Vec<F>, Vec<F>) {
        let edges = [F::ZERO, F::ONE, -F::ONE, F::ONE.double()];
        let mut r = rng(seed);
        let mut a = Vec::new();
        let mut b = Vec::new();
        for x in edges {
            for y in edges {
                a.push(x);
                b.push(y);
            }
        }
        for _ in 0..n {
            a.push(F::random(&mut r));
            b.push(F::random(&mut r));
        }
        (a, b)
    }

    #[test]
    fn fr_ops_match_the_host() {
        let seed = 11;
        let (a, b) = inputs::<Fr>(seed, 2000);
        let Some(out) = run("fr_ops", &a, &b, 7) else {
            return;
        };
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            let e = y.mont_limbs()[0]; // the kernel reads the exponent from the stored words
            let inv = x.invert().unwrap_or(Fr::ZERO);
            let want = [x + y, x - y, x * y, x.square(), -x, x.pow_vartime([e]), inv];
            assert_eq!(
                out[7 * i..7 * i + 7],
                want,
                "Fr ops on {x}, {y} (seed {seed}, #{i})"
            );
        }
    }

    #[test]
    fn fq_ops_match_the_host() {
        let seed = 12;
        let (a, b) = inputs::<Fq>(seed, 2000);
        let Some(out) = run("fq_ops", &a, &b, 6) else {
            return;
        };
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            let inv = x.invert().unwrap_or(Fq::ZERO);
            let want = [x + y, x - y, x * y, x.double(), -x, inv];
            assert_eq!(
                out[6 * i..6 * i + 6],
                want,
                "Fq ops on {x}, {y} (seed {seed}, #{i})"
            );
        }
    }

    #[test]
    fn fq2_ops_match_the_host() {
        let seed = 13;
        let (a, b) = inputs::<Fq2>(seed, 1000);
        let Some(out) = run("fq2_ops", &a, &b, 6) else {
            return;
        };
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            let inv = x.invert().unwrap_or(Fq2::ZERO);
            let want = [x + y, x - y, x * y, x.square(), -x, inv];
            assert_eq!(
                out[6 * i..6 * i + 6],
                want,
                "Fq2 ops on {x}, {y} (seed {seed}, #{i})"
            );
        }
    }
}
