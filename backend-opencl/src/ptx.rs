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
/// reduction carry `C`, Montgomery factor `M`, a discarded word `D`, a carry `E` that
/// outlives its statement (the square's), or an immediate. `A`, `C`, `M` and `D` live within
/// one `asm` statement; `T`, `X`, `Y` and `E` are the statement's operands.
#[derive(Clone, Copy, Debug, PartialEq)]
enum W32 {
    T(usize),
    X(usize),
    Y,
    A,
    C,
    M,
    D,
    E,
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
    /// `shf.l.clamp.b32 d, lo, hi, 1`: d = (hi << 1) | (lo >> 31), a word of a doubling
    Shl1(W32, W32, W32),
}

/// Adds x y and `terms` (none, a word, or two words) into the 64-bit `W`: the low word of the
/// result is the new accumulator word, the high the carry. `split` multiplies and adds in two
/// instructions ([`Reduction::Split`]), otherwise in one `mad.wide`.
fn acc(ops: &mut Vec<Op>, x: W32, y: W32, terms: &[W32], split: bool) {
    use Op::*;
    use W64::*;
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
}

/// One op as a PTX instruction, its operands named by `w32`.
fn ptx_line(op: Op, w32: &dyn Fn(W32) -> String) -> String {
    let w64 = |o: W64| match o {
        W64::W => "w",
        W64::S => "s",
        W64::U => "u",
    };
    match op {
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
        Op::Split(lo, hi, w) => format!("mov.b64 {{{}, {}}}, {};", w32(lo), w32(hi), w64(w)),
        Op::MulLo(d, x, y) => format!("mul.lo.u32 {}, {}, {};", w32(d), w32(x), w32(y)),
        Op::Add32(d, x, y) => format!("add.u32 {}, {}, {};", w32(d), w32(x), w32(y)),
        Op::Neg(d, x) => format!("neg.s32 {}, {};", w32(d), w32(x)),
        Op::Min1(d, x) => format!("min.u32 {}, {}, 1;", w32(d), w32(x)),
        Op::Shl1(d, hi, lo) => format!("shf.l.clamp.b32 {}, {}, {}, 1;", w32(d), w32(lo), w32(hi)),
    }
}

/// The same op as OpenCL C, over `uint` / `ulong` variables named by `w32` (the square's
/// portable form).
fn c_line(op: Op, w32: &dyn Fn(W32) -> String) -> String {
    let w64 = |o: W64| match o {
        W64::W => "w",
        W64::S => "s",
        W64::U => "u",
    };
    match op {
        Op::MulWide(d, x, y) => format!("{} = (ulong){} * {};", w64(d), w32(x), w32(y)),
        Op::MadWide(d, x, y, a) => {
            format!("{} = (ulong){} * {} + {};", w64(d), w32(x), w32(y), w64(a))
        }
        Op::Widen(d, x) => format!("{} = (ulong){};", w64(d), w32(x)),
        Op::Add64(d, a, b) => format!("{} = {} + {};", w64(d), w64(a), w64(b)),
        Op::Split(lo, hi, w) => format!(
            "{} = (uint){}; {} = (uint)({} >> 32);",
            w32(lo),
            w64(w),
            w32(hi),
            w64(w)
        ),
        Op::MulLo(d, x, y) => format!("{} = {} * {};", w32(d), w32(x), w32(y)),
        Op::Add32(d, x, y) => format!("{} = {} + {};", w32(d), w32(x), w32(y)),
        Op::Neg(d, x) => format!("{} = 0u - {};", w32(d), w32(x)),
        Op::Min1(d, x) => format!("{} = min({}, 1u);", w32(d), w32(x)),
        Op::Shl1(d, hi, lo) => format!("{} = ({} << 1) | ({} >> 31);", w32(d), w32(hi), w32(lo)),
    }
}

/// How a row adds the reduction's limb products m p_j.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Reduction {
    /// `mad.wide.u32 w, m, p_j, s`, as the products x_j y.
    Fused,
    /// `mul.wide.u32 w, m, p_j` then `add.u64 w, w, s`; and where p_0 = 1 (so -p^-1 = -1
    /// mod 2^32, as in Fr), m = -t_0 and the first step's carry is t_0 != 0, without
    /// products. Offline (clang-15 PTX through `ptxas` 12.9 for sm_90, BENCHMARKS.md,
    /// eighth session) `ptxas` builds the fused form of Fr's rows from an `IMAD` plus a
    /// half-rate `IMAD.HI` per reduction product, and this one from `IMAD.WIDE`: the Fr
    /// product takes 448 instructions instead of 504 and the NTT pass 2312 instead of
    /// 2496, the multiply pipe's load unchanged. For Fq's rows `ptxas` already uses
    /// `IMAD.WIDE`, and the split form only moves carry additions onto the multiply pipe.
    /// On the H200 the NTT ran 6.5-7% faster with it (ninth session), so Fr's rows are
    /// split and Fq's fused (`source.rs`).
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

    /// The form's name in the build switch `SLUICE_<NAME>_<FIELD>_ROWS`.
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
/// (each of which becomes a multiply plus a carry addition); on an H200 the MSM accumulate
/// kernels ran 12-13% faster (BENCHMARKS.md, fourth session).
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
        W32::E => unreachable!("the product's rows carry nothing between statements"),
        W32::Imm(v) => format!("0x{v:08x}"),
    };
    let t_ops: Vec<String> = (0..limbs).map(|j| format!("\"+r\"(t{j})")).collect();
    let a_ops: Vec<String> = (0..limbs).map(|j| format!("\"r\"(a.v[{j}])")).collect();
    let mut s = format!("SLUICE_MUL_ATTR {name} {name}_mul({name} a, {name} b) {{\n");
    let decl: Vec<String> = (0..limbs).map(|j| format!("t{j} = 0")).collect();
    let _ = writeln!(s, "  uint {};", decl.join(", "));
    for i in 0..limbs {
        let mut body = String::from("{ .reg .u32 ca, cc, m, d; .reg .u64 w, s, u;\\n\\t");
        for op in nocarry_row(i, limbs, modulus, inv, reduction) {
            let line = ptx_line(op, &w32);
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

/// The `asm` statements of the Montgomery square a^2 R^-1 of `limbs`-limb values, by
/// separated operand scanning (SOS) over a `2 limbs`-word accumulator t (zero at the start):
///
/// 1. cross rows: t += a_j a_i 2^(32 (i + j)) for i < j, row i carrying into t_(i + limbs),
///    which no earlier row wrote;
/// 2. t = 2 t (one statement of funnel shifts, top word first; a^2 < 2^(64 limbs) leaves the
///    top bit free);
/// 3. diagonal rows: t += a_i^2 2^(64 i), the carry in `E` from one statement to the next;
/// 4. reduction rows: m = t_i (-p^-1), t += m p 2^(32 i), row i's carry plus `E` into
///    t_(i + limbs), with `E` taking what that carries out (0 or 1).
///
/// t / 2^(32 limbs) is then below 2p (and `E` zero). A product of two factors costs limbs^2
/// limb products and as many for the reduction; the square costs limbs (limbs + 1) / 2 and
/// the reduction's limbs^2 (222 against 288 for Fq), for a few more instructions (the
/// doubling). Every 64-bit sum stays below 2^64, as the tests check. `reduction` is the
/// form of the reduction products, as in [`nocarry_row`].
fn square_statements(
    limbs: usize,
    modulus: &[u32],
    inv: u32,
    reduction: Reduction,
) -> Vec<Vec<Op>> {
    use Op::*;
    use W32::*;
    use W64::*;
    let split = reduction == Reduction::Split;
    let mut statements = Vec::new();
    for i in 0..limbs - 1 {
        let mut ops = Vec::new();
        for j in i + 1..limbs {
            // Row 0 starts from t = 0; later rows read what row i - 1 wrote.
            let terms: &[W32] = match (i == 0, j == i + 1) {
                (true, true) => &[],
                (true, false) => &[A],
                (false, true) => &[T(i + j)],
                (false, false) => &[T(i + j), A],
            };
            acc(&mut ops, X(j), X(i), terms, false);
            let carry = if j + 1 == limbs { T(i + limbs) } else { A };
            ops.push(Split(T(i + j), carry, W));
        }
        statements.push(ops);
    }
    statements.push(
        (1..2 * limbs)
            .rev()
            .map(|k| Shl1(T(k), T(k), T(k - 1)))
            .collect(),
    );
    for i in 0..limbs {
        let mut ops = Vec::new();
        // t_0 is zero after the cross rows and the doubling.
        let terms = [T(2 * i), E];
        acc(
            &mut ops,
            X(i),
            X(i),
            if i == 0 { &[] } else { &terms },
            false,
        );
        ops.push(Split(T(2 * i), A, W));
        ops.extend([Widen(S, T(2 * i + 1)), Widen(U, A), Add64(W, S, U)]);
        ops.push(Split(T(2 * i + 1), E, W));
        statements.push(ops);
    }
    for i in 0..limbs {
        let mut ops = Vec::new();
        if split && modulus[0] == 1 && inv == u32::MAX {
            ops.push(Neg(M, T(i)));
            ops.push(Min1(C, T(i)));
        } else {
            ops.push(MulLo(M, T(i), Imm(inv)));
            acc(&mut ops, M, Imm(modulus[0]), &[T(i)], split);
            ops.push(Split(D, C, W)); // the low word is zero by the choice of m
        }
        for (j, &p_j) in modulus.iter().enumerate().take(limbs).skip(1) {
            acc(&mut ops, M, Imm(p_j), &[T(i + j), C], split);
            ops.push(Split(T(i + j), C, W));
        }
        ops.extend([Widen(S, T(i + limbs)), Widen(U, C), Add64(S, S, U)]);
        ops.extend([Widen(U, E), Add64(W, S, U), Split(T(i + limbs), E, W)]);
        statements.push(ops);
    }
    statements
}

/// The words of the accumulator t and the limbs of a that a statement names, each once, in
/// ascending order, and whether it names the carry `E`.
fn statement_operands(ops: &[Op]) -> (Vec<usize>, Vec<usize>, bool) {
    let (mut t, mut x, mut e) = (Vec::new(), Vec::new(), false);
    for op in ops {
        let words = match *op {
            Op::MulWide(_, a, b) | Op::MadWide(_, a, b, _) | Op::MulLo(_, a, b) => vec![a, b],
            Op::Split(a, b, _) | Op::Add32(_, a, b) => vec![a, b],
            Op::Widen(_, a) | Op::Neg(_, a) | Op::Min1(_, a) => vec![a],
            Op::Shl1(d, a, b) => vec![d, a, b],
            Op::Add64(..) => vec![],
        };
        for w in words {
            match w {
                W32::T(j) if !t.contains(&j) => t.push(j),
                W32::X(j) if !x.contains(&j) => x.push(j),
                W32::E => e = true,
                _ => {}
            }
        }
    }
    t.sort_unstable();
    x.sort_unstable();
    (t, x, e)
}

/// `{name}_sqr(a)`: the Montgomery square a^2 R^-1 ([`square_statements`]), each statement
/// one `asm` block whose operands are the words it names (`+r` for t and the carry `e`,
/// `r` for a's limbs), then `field.cl`'s `{name}_reduce_once`. With `ptx` false the same
/// statements are OpenCL C, for devices without the PTX path.
pub(crate) fn montgomery_sqr(
    name: &str,
    limbs: usize,
    modulus: &[u32],
    inv: u32,
    reduction: Reduction,
    ptx: bool,
) -> String {
    assert!(
        modulus[limbs - 1] < 0x7fff_fffe,
        "the reduction's bounds need a spare top bit in the modulus"
    );
    let mut s = format!("SLUICE_MUL_ATTR {name} {name}_sqr({name} a) {{\n");
    let decl: Vec<String> = (0..2 * limbs).map(|j| format!("t{j} = 0")).collect();
    let _ = writeln!(s, "  uint {}, e = 0;", decl.join(", "));
    for ops in square_statements(limbs, modulus, inv, reduction) {
        let (t, x, uses_e) = statement_operands(&ops);
        if ptx {
            // Operands: t's words, then e, then a's limbs.
            let at = |list: &[usize], j: usize| list.iter().position(|&k| k == j).expect("listed");
            let e_at = t.len();
            let x_at = t.len() + usize::from(uses_e);
            let w32 = |o: W32| match o {
                W32::T(j) => format!("%{}", at(&t, j)),
                W32::X(j) => format!("%{}", x_at + at(&x, j)),
                W32::E => format!("%{e_at}"),
                W32::A => "ca".into(),
                W32::C => "cc".into(),
                W32::M => "m".into(),
                W32::D => "d".into(),
                W32::Y => unreachable!("a square has one factor"),
                W32::Imm(v) => format!("0x{v:08x}"),
            };
            let mut body = String::from("{ .reg .u32 ca, cc, m, d; .reg .u64 w, s, u;\\n\\t");
            for op in &ops {
                body.push_str(&ptx_line(*op, &w32));
                body.push_str("\\n\\t");
            }
            body.push('}');
            let mut outs: Vec<String> = t.iter().map(|j| format!("\"+r\"(t{j})")).collect();
            if uses_e {
                outs.push("\"+r\"(e)".into());
            }
            let ins: Vec<String> = x.iter().map(|j| format!("\"r\"(a.v[{j}])")).collect();
            let _ = writeln!(
                s,
                "  asm(\"{body}\"\n      : {}\n      : {});",
                outs.join(", "),
                ins.join(", ")
            );
        } else {
            let w32 = |o: W32| match o {
                W32::T(j) => format!("t{j}"),
                W32::X(j) => format!("a.v[{j}]"),
                W32::E => "e".into(),
                W32::A => "ca".into(),
                W32::C => "cc".into(),
                W32::M => "m".into(),
                W32::D => "d".into(),
                W32::Y => unreachable!("a square has one factor"),
                W32::Imm(v) => format!("0x{v:08x}u"),
            };
            s.push_str("  {\n    uint ca, cc, m, d;\n    ulong w, s, u;\n");
            for op in &ops {
                let _ = writeln!(s, "    {}", c_line(*op, &w32));
            }
            s.push_str("  }\n");
        }
    }
    let r: Vec<String> = (limbs..2 * limbs).map(|k| format!("t{k}")).collect();
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

    /// The registers of the rows, for running them on the host. A statement's own registers
    /// (A, C, M, D and the 64-bit W, S, U) start unset in every statement, and reading one
    /// before writing it panics, as its value on the GPU would be undefined.
    struct Regs<'a> {
        t: Vec<u32>,
        x: &'a [u32],
        y: u32,
        e: u32,
        local: [Option<u32>; 4],
        wide: [Option<u64>; 3],
    }

    impl<'a> Regs<'a> {
        fn new(words: usize, x: &'a [u32]) -> Self {
            Regs {
                t: vec![0; words],
                x,
                y: 0,
                e: 0,
                local: [None; 4],
                wide: [None; 3],
            }
        }

        /// Runs one `asm` statement.
        fn statement(&mut self, ops: &[Op]) {
            self.local = [None; 4];
            self.wide = [None; 3];
            ops.iter().for_each(|&op| self.exec(op));
        }

        fn local_index(o: W32) -> Option<usize> {
            match o {
                W32::A => Some(0),
                W32::C => Some(1),
                W32::M => Some(2),
                W32::D => Some(3),
                _ => None,
            }
        }

        fn get(&self, o: W32) -> u32 {
            match o {
                W32::T(j) => self.t[j],
                W32::X(j) => self.x[j],
                W32::Y => self.y,
                W32::E => self.e,
                W32::Imm(v) => v,
                local => self.local[Self::local_index(local).unwrap()]
                    .unwrap_or_else(|| panic!("{local:?} read before written in its statement")),
            }
        }

        fn set(&mut self, o: W32, v: u32) {
            match o {
                W32::T(j) => self.t[j] = v,
                W32::E => self.e = v,
                W32::A | W32::C | W32::M | W32::D => {
                    self.local[Self::local_index(o).unwrap()] = Some(v)
                }
                other => panic!("write to the input {other:?}"),
            }
        }

        fn wide(&self, o: W64) -> u64 {
            self.wide[o as usize]
                .unwrap_or_else(|| panic!("{o:?} read before written in its statement"))
        }

        fn set_wide(&mut self, o: W64, v: u64) {
            self.wide[o as usize] = Some(v);
        }

        /// One instruction; panics where the PTX would wrap (the no-carry bound).
        fn exec(&mut self, op: Op) {
            let prod = |r: &Self, p, q| u64::from(r.get(p)) * u64::from(r.get(q));
            match op {
                Op::MulWide(d, p, q) => self.set_wide(d, prod(self, p, q)),
                Op::MadWide(d, p, q, e) => {
                    let v = prod(self, p, q).checked_add(self.wide(e));
                    self.set_wide(d, v.expect("mad.wide wraps"));
                }
                Op::Widen(d, p) => self.set_wide(d, u64::from(self.get(p))),
                Op::Add64(d, p, q) => {
                    let v = self.wide(p).checked_add(self.wide(q));
                    self.set_wide(d, v.expect("add.u64 wraps"));
                }
                Op::Split(lo, hi, w) => {
                    let v = self.wide(w);
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
                Op::Shl1(d, hi, lo) => {
                    let top = matches!(d, W32::T(k) if k + 1 == self.t.len());
                    assert!(!top || self.get(hi) >> 31 == 0, "the doubling drops a bit");
                    self.set(d, (self.get(hi) << 1) | (self.get(lo) >> 31));
                }
            }
        }
    }

    /// The generated functions' final `reduce_once(t)` for t < 2p: s = t - p with its borrow
    /// (the sub_nc chain), then per limb (t & keep) | (s & !keep) with keep = 0 - borrow (all
    /// ones where t < p).
    fn reduce_once(t: &[u32], modulus: &[u32]) -> Vec<u32> {
        let n = t.len();
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

    /// Runs the no-carry rows as the GPU would, one statement per row, then the final
    /// reduction: the Montgomery product of two reduced values.
    fn run_nocarry(
        x: &[u32],
        y: &[u32],
        modulus: &[u32],
        inv: u32,
        reduction: Reduction,
    ) -> Vec<u32> {
        let n = x.len();
        let mut regs = Regs::new(n, x);
        for (i, &yi) in y.iter().enumerate() {
            regs.y = yi;
            regs.statement(&nocarry_row(i, n, modulus, inv, reduction));
        }
        reduce_once(&regs.t, modulus)
    }

    /// Runs the square's statements as the GPU would, then the final reduction of the
    /// upper half: the Montgomery square of a reduced value.
    fn run_square(x: &[u32], modulus: &[u32], inv: u32, reduction: Reduction) -> Vec<u32> {
        let n = x.len();
        let mut regs = Regs::new(2 * n, x);
        for ops in square_statements(n, modulus, inv, reduction) {
            regs.statement(&ops);
        }
        assert_eq!(
            regs.e, 0,
            "the reduction leaves no carry past 2 limbs words"
        );
        reduce_once(&regs.t[n..], modulus)
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

    /// The square's statements, both reductions, against sluice-field for Fr and Fq: 0, 1,
    /// -1, -2 and seeded random values in Montgomery form. Each 64-bit sum is checked for
    /// wrapping, the doubling for a lost bit, and each register for a read before its write.
    #[test]
    fn square_statements_compute_the_montgomery_square() {
        use ff::Field;
        use sluice_field::{Fq, Fr};

        use crate::repr::as_words;
        use crate::testing::rng;

        fn check<F: Field + crate::repr::DeviceRepr>(modulus: &[u32], inv: u32, seed: u64) {
            let mut r = rng(seed);
            let mut values = vec![F::ZERO, F::ONE, -F::ONE, -F::ONE - F::ONE];
            values.extend((0..300).map(|_| F::random(&mut r)));
            for reduction in [Reduction::Fused, Reduction::Split] {
                for x in &values {
                    let want = as_words(&[x.square()]).to_vec();
                    let got = run_square(as_words(&[*x]), modulus, inv, reduction);
                    assert_eq!(got, want, "{reduction:?}, seed {seed}");
                }
            }
        }
        check::<Fr>(&limbs32(&Fr::MODULUS_LIMBS), Fr::INV as u32, 13);
        check::<Fq>(&limbs32(&Fq::MODULUS_LIMBS), Fq::INV as u32, 14);
    }

    /// The rendered square: one `asm` block per statement, each naming only operands it
    /// lists (the numbering is what the host run above cannot see), at most 25 of them (the
    /// product's rows use 25), and no carry flag; the C form has the same statements.
    #[test]
    fn square_renders_each_statement_with_its_operands() {
        let p = limbs32(&sluice_field::Fq::MODULUS_LIMBS);
        let inv = sluice_field::Fq::INV as u32;
        let statements = square_statements(12, &p, inv, Reduction::Fused).len();
        assert_eq!(statements, 11 + 1 + 12 + 12);
        let ptx = montgomery_sqr("Fq", 12, &p, inv, Reduction::Fused, true);
        assert_eq!(ptx.matches("asm(").count(), statements);
        assert!(
            !ptx.contains(".cc"),
            "no instruction touches the carry flag"
        );
        assert!(ptx.contains("shf.l.clamp.b32"));
        for block in ptx.split("asm(").skip(1) {
            let block = &block[..block.find(");").expect("the statement ends")];
            let operands = block.matches("\"+r\"(").count() + block.matches("\"r\"(").count();
            assert!(operands <= 25, "{operands} operands");
            let highest = block
                .split('%')
                .skip(1)
                .filter_map(|rest| {
                    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                    digits.parse::<usize>().ok()
                })
                .max()
                .expect("operands are named");
            assert!(
                highest < operands,
                "%{highest} of {operands} operands: {block}"
            );
        }
        assert!(ptx.contains("return Fq_reduce_once(r);"));
        let c = montgomery_sqr("Fq", 12, &p, inv, Reduction::Fused, false);
        assert!(!c.contains("asm("));
        assert_eq!(c.matches("  {\n").count(), statements);
        assert!(c.contains("t23 = (t23 << 1) | (t22 >> 31);"));
        assert!(c.contains("Fq r = {{t12, t13,"));
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
