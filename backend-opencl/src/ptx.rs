//! The NVIDIA-only inline PTX: carry chains and Montgomery products, the whole of the PTX
//! path, isolated here for review.
//!
//! PTX keeps the carry flag only within one `asm` statement, so a multi-limb addition or
//! subtraction must be a single statement; its text depends on the limb count, hence it is
//! generated. The portable equivalents are `FIELD_add_nc` / `FIELD_sub_nc` in `field.cl`.
//! The Montgomery product ([`montgomery_mul_nocarry`]) uses no carry flag at all:
//! its rows are modelled as [`Op`]s, which the tests run on the host against sluice-field.

use std::fmt::Write as _;

/// `{name}_add_nc(a, b)` (a + b mod 2^(32 limbs)) and `{name}_sub_nc(a, b, &borrow)`
/// (a - b mod 2^(32 limbs), borrow = 1 when b > a) as `add.cc`/`addc` and `sub.cc`/`subc`
/// chains.
pub(crate) fn carry_chains(name: &str, limbs: usize) -> String {
    let mut s = String::new();
    let chain = |first: &str, next: &str, last: &str, extra: usize| {
        // Operands: %0..%{limbs-1} = a (in/out), then `extra` outputs, then b.
        let mut body = String::new();
        for i in 0..limbs {
            let op = if i == 0 {
                first
            } else if i + 1 == limbs {
                last
            } else {
                next
            };
            let _ = write!(body, "{op} %{i}, %{i}, %{};\\n\\t", i + limbs + extra);
        }
        body
    };
    let a_out: Vec<String> = (0..limbs).map(|i| format!("\"+r\"(a.v[{i}])")).collect();
    let b_in: Vec<String> = (0..limbs).map(|i| format!("\"r\"(b.v[{i}])")).collect();

    let add = chain("add.cc.u32", "addc.cc.u32", "addc.u32", 0);
    let _ = write!(
        s,
        "inline {name} {name}_add_nc({name} a, {name} b) {{\n  asm(\"{add}\"\n      : {}\n      : {});\n  return a;\n}}\n",
        a_out.join(", "),
        b_in.join(", ")
    );
    let sub = chain("sub.cc.u32", "subc.cc.u32", "subc.cc.u32", 1);
    let _ = write!(
        s,
        "inline {name} {name}_sub_nc({name} a, {name} b, uint *borrow) {{\n  uint br;\n  asm(\"{sub}subc.u32 %{limbs}, 0, 0;\"\n      : {}, \"=r\"(br)\n      : {});\n  *borrow = br & 1;\n  return a;\n}}\n",
        a_out.join(", "),
        b_in.join(", ")
    );
    s
}

/// A 32-bit operand of the no-carry Montgomery rows: the accumulator word `T(j)`, limb `X(j)`
/// of the first factor, the current limb `Y` of the second, the row's product carry `A`,
/// reduction carry `C`, Montgomery factor `M`, a discarded word `D`, or an immediate.
#[derive(Clone, Copy, Debug, PartialEq)]
enum W32 {
    T(usize),
    X(usize),
    Y,
    A,
    C,
    M,
    D,
    Imm(u32),
}

/// The 64-bit temporaries of a row.
#[derive(Clone, Copy, Debug, PartialEq)]
enum W64 {
    W,
    S,
    U,
}

/// The PTX subset the no-carry rows use. No instruction reads or writes the carry flag, so
/// ptxas may interleave the product and reduction chains freely.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    /// `mul.wide.u32 d, x, y`
    MulWide(W64, W32, W32),
    /// `mad.wide.u32 d, x, y, s`
    MadWide(W64, W32, W32, W64),
    /// `cvt.u64.u32 d, x`
    Widen(W64, W32),
    /// `add.u64 d, a, b`
    Add64(W64, W64, W64),
    /// `mov.b64 {lo, hi}, w`
    Split(W32, W32, W64),
    /// `mul.lo.u32 d, x, y`
    MulLo(W32, W32, W32),
    /// `add.u32 d, x, y`
    Add32(W32, W32, W32),
    /// `neg.s32 d, x` (d = 2^32 - x, or 0)
    Neg(W32, W32),
    /// `min.u32 d, x, 1` (1 where x is not zero)
    Min1(W32, W32),
}

/// How a row adds the reduction's limb products m p_j.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Reduction {
    /// `mad.wide.u32 w, m, p_j, s`, as the products x_j y.
    Fused,
    /// `mul.wide.u32 w, m, p_j` then `add.u64 w, w, s`; and where p_0 = 1 (so -p^-1 = -1
    /// mod 2^32, as in Fr), m = -t_0 and the first step's carry is t_0 != 0, without
    /// products. `ptxas` (12.9, sm_90) builds the fused form of Fr's rows from an `IMAD`
    /// plus a half-rate `IMAD.HI` per reduction product, and this one from `IMAD.WIDE`:
    /// fewer instructions for the Fr product and the NTT pass, the multiply pipe's load
    /// unchanged. For Fq's rows `ptxas` already uses `IMAD.WIDE`, and the split form only
    /// moves carry additions onto the multiply pipe. So Fr's rows are split, which made the
    /// NTT faster on an H200 (BENCHMARKS.md#ntt), and Fq's fused (`source.rs`).
    Split,
}

impl Reduction {
    /// The other form: the one a build switch selects instead of a field's default.
    pub(crate) fn other(self) -> Reduction {
        match self {
            Reduction::Fused => Reduction::Split,
            Reduction::Split => Reduction::Fused,
        }
    }

    /// The form's name in the build switch `KERNEL_<NAME>_<FIELD>_ROWS`.
    pub(crate) fn macro_name(self) -> &'static str {
        match self {
            Reduction::Fused => "FUSED",
            Reduction::Split => "SPLIT",
        }
    }
}

/// Row `i` of the no-carry CIOS Montgomery product (the "no-carry" optimisation of
/// Gautam Botrel and Youssef El Housni, as in gnark-crypto): t = (t + x y_i + m p) / 2^32
/// with the product and the reduction as two carry words A and C, so the accumulator needs
/// no extra words and the two chains interleave. Valid when the top limb of p is below
/// 2^31 - 2, which `montgomery_mul_nocarry` checks; row 0 starts from t = 0.
fn nocarry_row(i: usize, limbs: usize, modulus: &[u32], inv: u32, reduction: Reduction) -> Vec<Op> {
    use Op::*;
    use W32::*;
    use W64::*;
    let mut ops = Vec::new();
    // (t_j + carry + x_j y) as 64 bits into W: the low word is the new t, the high the
    // carry; `split` multiplies and adds in two instructions.
    let acc = |ops: &mut Vec<Op>, x: W32, y: W32, terms: &[W32], split: bool| {
        match terms {
            [] => return ops.push(MulWide(W, x, y)),
            [t] => ops.push(Widen(S, *t)),
            [t, c] => {
                ops.push(Widen(S, *t));
                ops.push(Widen(U, *c));
                ops.push(Add64(S, S, U));
            }
            _ => unreachable!("at most two addends"),
        }
        if split {
            ops.push(MulWide(W, x, y));
            ops.push(Add64(W, W, S));
        } else {
            ops.push(MadWide(W, x, y, S));
        }
    };
    let split = reduction == Reduction::Split;
    let first = i == 0;
    acc(&mut ops, X(0), Y, if first { &[] } else { &[T(0)] }, false);
    ops.push(Split(T(0), A, W));
    if split && modulus[0] == 1 && inv == u32::MAX {
        // t_0 + m p_0 = t_0 + (2^32 - t_0): 2^32 unless t_0 is zero.
        ops.push(Neg(M, T(0)));
        ops.push(Min1(C, T(0)));
    } else {
        ops.push(MulLo(M, T(0), Imm(inv)));
        acc(&mut ops, M, Imm(modulus[0]), &[T(0)], split);
        ops.push(Split(D, C, W)); // the low word is zero by the choice of m
    }
    for (j, &p_j) in modulus.iter().enumerate().take(limbs).skip(1) {
        let terms: &[W32] = if first { &[A] } else { &[T(j), A] };
        acc(&mut ops, X(j), Y, terms, false);
        ops.push(Split(T(j), A, W));
        acc(&mut ops, M, Imm(p_j), &[T(j), C], split);
        ops.push(Split(T(j - 1), C, W));
    }
    ops.push(Add32(T(limbs - 1), C, A));
    ops
}

/// `{name}_mul(a, b)`: the Montgomery product a b R^-1 as no-carry CIOS rows (`field.cl`
/// computes the same rows in portable C)
/// ([`nocarry_row`]), one `asm` statement per row built from 32 x 32 -> 64-bit
/// multiply-adds. On an sm_90 `ptxas` turns a 12-limb product into about 1100 instructions
/// this way against about 1490 for CIOS rows of `mad.lo.cc` / `madc.hi.cc` carry chains
/// (each of which becomes a multiply plus a carry addition), and the MSM accumulate kernels
/// ran faster on an H200 (BENCHMARKS.md#msm-gpu).
///
/// The rows leave t < 2p. The function ends with `field.cl`'s branch-free
/// `{name}_reduce_once(t)`: s = t - p through the `sub_nc` chain, then t where that
/// subtraction borrows and s otherwise, selected limb by limb with a mask made from the
/// borrow (no branch, so the lanes of a warp never diverge in the product).
pub(crate) fn montgomery_mul_nocarry(
    name: &str,
    limbs: usize,
    modulus: &[u32],
    inv: u32,
    reduction: Reduction,
) -> String {
    assert!(
        modulus[limbs - 1] < 0x7fff_fffe,
        "the no-carry Montgomery product needs a spare top bit in the modulus"
    );
    let w32 = |o: W32| match o {
        W32::T(j) => format!("%{j}"),
        W32::X(j) => format!("%{}", limbs + j),
        W32::Y => format!("%{}", 2 * limbs),
        W32::A => "ca".into(),
        W32::C => "cc".into(),
        W32::M => "m".into(),
        W32::D => "d".into(),
        W32::Imm(v) => format!("0x{v:08x}"),
    };
    let w64 = |o: W64| match o {
        W64::W => "w",
        W64::S => "s",
        W64::U => "u",
    };
    let t_ops: Vec<String> = (0..limbs).map(|j| format!("\"+r\"(t{j})")).collect();
    let a_ops: Vec<String> = (0..limbs).map(|j| format!("\"r\"(a.v[{j}])")).collect();
    let mut s = format!("KERNEL_MUL_ATTR {name} {name}_mul({name} a, {name} b) {{\n");
    let decl: Vec<String> = (0..limbs).map(|j| format!("t{j} = 0")).collect();
    let _ = writeln!(s, "  uint {};", decl.join(", "));
    for i in 0..limbs {
        let mut body = String::from("{ .reg .u32 ca, cc, m, d; .reg .u64 w, s, u;\\n\\t");
        for op in nocarry_row(i, limbs, modulus, inv, reduction) {
            let line = match op {
                Op::MulWide(d, x, y) => format!("mul.wide.u32 {}, {}, {};", w64(d), w32(x), w32(y)),
                Op::MadWide(d, x, y, a) => format!(
                    "mad.wide.u32 {}, {}, {}, {};",
                    w64(d),
                    w32(x),
                    w32(y),
                    w64(a)
                ),
                Op::Widen(d, x) => format!("cvt.u64.u32 {}, {};", w64(d), w32(x)),
                Op::Add64(d, a, b) => format!("add.u64 {}, {}, {};", w64(d), w64(a), w64(b)),
                Op::Split(lo, hi, w) => {
                    format!("mov.b64 {{{}, {}}}, {};", w32(lo), w32(hi), w64(w))
                }
                Op::MulLo(d, x, y) => format!("mul.lo.u32 {}, {}, {};", w32(d), w32(x), w32(y)),
                Op::Add32(d, x, y) => format!("add.u32 {}, {}, {};", w32(d), w32(x), w32(y)),
                Op::Neg(d, x) => format!("neg.s32 {}, {};", w32(d), w32(x)),
                Op::Min1(d, x) => format!("min.u32 {}, {}, 1;", w32(d), w32(x)),
            };
            body.push_str(&line);
            body.push_str("\\n\\t");
        }
        body.push('}');
        let _ = writeln!(
            s,
            "  asm(\"{body}\"\n      : {}\n      : {}, \"r\"(b.v[{i}]));",
            t_ops.join(", "),
            a_ops.join(", ")
        );
    }
    let r: Vec<String> = (0..limbs).map(|k| format!("t{k}")).collect();
    let _ = writeln!(s, "  {name} r = {{{{{}}}}};", r.join(", "));
    let _ = writeln!(s, "  return {name}_reduce_once(r);\n}}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_use_one_statement_and_number_operands_correctly() {
        let s = carry_chains("Fr", 8);
        assert!(s.contains("add.cc.u32 %0, %0, %8;"));
        assert!(s.contains("addc.u32 %7, %7, %15;"));
        assert!(s.contains("sub.cc.u32 %0, %0, %9;"));
        assert!(s.contains("subc.cc.u32 %7, %7, %16;"));
        assert!(s.contains("subc.u32 %8, 0, 0;"));
        assert_eq!(s.matches("asm(").count(), 2);
    }

    /// The registers of one row, for running the rows on the host.
    struct Regs<'a> {
        t: Vec<u32>,
        x: &'a [u32],
        y: u32,
        r32: [u32; 4], // A, C, M, D
        r64: [u64; 3], // W, S, U
    }

    impl Regs<'_> {
        fn get(&self, o: W32) -> u32 {
            match o {
                W32::T(j) => self.t[j],
                W32::X(j) => self.x[j],
                W32::Y => self.y,
                W32::A => self.r32[0],
                W32::C => self.r32[1],
                W32::M => self.r32[2],
                W32::D => self.r32[3],
                W32::Imm(v) => v,
            }
        }

        fn set(&mut self, o: W32, v: u32) {
            match o {
                W32::T(j) => self.t[j] = v,
                W32::A => self.r32[0] = v,
                W32::C => self.r32[1] = v,
                W32::M => self.r32[2] = v,
                W32::D => self.r32[3] = v,
                other => panic!("write to the input {other:?}"),
            }
        }

        fn wide(&mut self, o: W64) -> &mut u64 {
            &mut self.r64[o as usize]
        }

        /// One instruction; panics where the PTX would wrap (the no-carry bound).
        fn exec(&mut self, op: Op) {
            let prod = |r: &Self, p, q| u64::from(r.get(p)) * u64::from(r.get(q));
            match op {
                Op::MulWide(d, p, q) => *self.wide(d) = prod(self, p, q),
                Op::MadWide(d, p, q, e) => {
                    let e = *self.wide(e);
                    *self.wide(d) = prod(self, p, q).checked_add(e).expect("mad.wide wraps");
                }
                Op::Widen(d, p) => *self.wide(d) = u64::from(self.get(p)),
                Op::Add64(d, p, q) => {
                    let v = self
                        .wide(p)
                        .checked_add(*self.wide(q))
                        .expect("add.u64 wraps");
                    *self.wide(d) = v;
                }
                Op::Split(lo, hi, w) => {
                    let v = *self.wide(w);
                    self.set(lo, v as u32);
                    self.set(hi, (v >> 32) as u32);
                }
                Op::MulLo(d, p, q) => self.set(d, self.get(p).wrapping_mul(self.get(q))),
                Op::Add32(d, p, q) => {
                    let v = self.get(p).checked_add(self.get(q)).expect("add.u32 wraps");
                    self.set(d, v);
                }
                Op::Neg(d, p) => self.set(d, self.get(p).wrapping_neg()),
                Op::Min1(d, p) => self.set(d, self.get(p).min(1)),
            }
        }
    }

    /// Runs the no-carry rows as the GPU would, then the branch-free final reduction of the
    /// generated function (`reduce_once`): the Montgomery product of two reduced values.
    fn run_nocarry(
        x: &[u32],
        y: &[u32],
        modulus: &[u32],
        inv: u32,
        reduction: Reduction,
    ) -> Vec<u32> {
        let n = x.len();
        let mut regs = Regs {
            t: vec![0; n],
            x,
            y: 0,
            r32: [0; 4],
            r64: [0; 3],
        };
        for (i, &yi) in y.iter().enumerate() {
            regs.y = yi;
            for op in nocarry_row(i, n, modulus, inv, reduction) {
                regs.exec(op);
            }
        }
        let t = regs.t;
        // s = t - p with its borrow (the sub_nc chain), then per limb (t & keep) | (s & !keep)
        // with keep = 0 - borrow (all ones where t < p), as the generated code does.
        let mut s = vec![0u32; n];
        let mut borrow = 0u32;
        for k in 0..n {
            let (v, b1) = t[k].overflowing_sub(modulus[k]);
            let (v, b2) = v.overflowing_sub(borrow);
            s[k] = v;
            borrow = u32::from(b1 || b2);
        }
        let keep = 0u32.wrapping_sub(borrow);
        (0..n).map(|k| (t[k] & keep) | (s[k] & !keep)).collect()
    }

    fn limbs32(l: &[u64]) -> Vec<u32> {
        l.iter()
            .flat_map(|v| [*v as u32, (*v >> 32) as u32])
            .collect()
    }

    /// The rows' arithmetic, both reductions, against sluice-field for Fr and Fq: seeded
    /// random values and 0, 1, -1, in Montgomery form (the device's layout).
    #[test]
    fn nocarry_rows_compute_the_montgomery_product() {
        use ff::Field;
        use sluice_field::{Fq, Fr};

        use crate::repr::as_words;
        use crate::testing::rng;

        fn check<F: Field + crate::repr::DeviceRepr>(modulus: &[u32], inv: u32, seed: u64) {
            let mut r = rng(seed);
            let mut values = vec![F::ZERO, F::ONE, -F::ONE, -F::ONE - F::ONE];
            values.extend((0..60).map(|_| F::random(&mut r)));
            for reduction in [Reduction::Fused, Reduction::Split] {
                for x in &values {
                    for y in values.iter().take(12) {
                        let want = as_words(&[*x * *y]).to_vec();
                        for (a, b) in [(x, y), (y, x)] {
                            let got = run_nocarry(
                                as_words(&[*a]),
                                as_words(&[*b]),
                                modulus,
                                inv,
                                reduction,
                            );
                            assert_eq!(got, want, "{reduction:?}, seed {seed}");
                        }
                    }
                }
            }
        }
        check::<Fr>(&limbs32(&Fr::MODULUS_LIMBS), Fr::INV as u32, 11);
        check::<Fq>(&limbs32(&Fq::MODULUS_LIMBS), Fq::INV as u32, 12);
    }

    #[test]
    fn nocarry_rows_render_one_statement_per_row() {
        let p = limbs32(&sluice_field::Fr::MODULUS_LIMBS);
        let s = montgomery_mul_nocarry("Fr", 8, &p, 0xffff_ffff, Reduction::Fused);
        assert_eq!(s.matches("asm(").count(), 8);
        assert!(!s.contains(".cc"), "no instruction touches the carry flag");
        assert!(s.contains("mul.wide.u32 w, %8, %16;"));
        assert!(s.contains("mad.wide.u32 w, m, 0x00000001, s;"));
        assert!(s.contains("mov.b64 {%6, cc}, w;"));
        assert!(s.contains("mov.b64 {%7, ca}, w;"));
        assert!(s.contains("add.u32 %7, cc, ca;"));
        assert!(s.contains("\"r\"(b.v[7])"));
        assert!(
            s.contains("return Fr_reduce_once(r);"),
            "branch-free final reduction"
        );
        assert!(!s.contains("if ("), "no branch in the generated function");
        let s = montgomery_mul_nocarry("Fr", 8, &p, 0xffff_ffff, Reduction::Split);
        assert!(s.contains("neg.s32 m, %0;") && s.contains("min.u32 cc, %0, 1;"));
        assert!(s.contains("mul.wide.u32 w, m, 0xffffffff;\\n\\tadd.u64 w, w, s;"));
        assert!(
            !s.contains("mad.wide.u32 w, m,"),
            "no fused reduction product"
        );
        assert!(!s.contains(".cc"), "no instruction touches the carry flag");
    }
}
