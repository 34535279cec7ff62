//! The NVIDIA-only carry chains: the whole of the inline-PTX path besides `mac` in
//! `kernels/common.cl`, isolated here for review.
//!
//! PTX keeps the carry flag only within one `asm` statement, so a multi-limb addition or
//! subtraction must be a single statement; its text depends on the limb count, hence it is
//! generated. The portable equivalents are `FIELD_add_nc` / `FIELD_sub_nc` in `field.cl`.

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

/// `{name}_mul(a, b)`: the Montgomery product a b R^-1 (CIOS), each row one `asm`
/// statement. A row adds x y_i to the accumulator t (limbs + 2 words) as two carry chains,
/// the low halves of the products at word j and the high halves at word j + 1: two
/// instructions per limb product where a `mac` per product costs four. The reduction row
/// adds m p the same way, with p's limbs as immediates, and the accumulator shifts down one
/// word. The portable path in `field.cl` computes the same CIOS rows, one `mac` per product.
pub(crate) fn montgomery_mul(name: &str, limbs: usize, modulus: &[u32], inv: u32) -> String {
    let n = limbs;
    let t_ops: Vec<String> = (0..n + 2).map(|i| format!("\"+r\"(t{i})")).collect();
    // Operands: %0..%{n+1} = t, %{n+2}..%{2n+1} = x, %{2n+2} = y.
    let row = |x: &[String], y: &str| {
        let (xo, yo) = (n + 2, 2 * n + 2);
        let mut body = String::new();
        for j in 0..n {
            let op = if j == 0 { "mad.lo.cc" } else { "madc.lo.cc" };
            let _ = write!(body, "{op}.u32 %{j}, %{}, %{yo}, %{j};\\n\\t", xo + j);
        }
        let _ = write!(
            body,
            "addc.cc.u32 %{n}, %{n}, 0;\\n\\taddc.u32 %{}, %{}, 0;\\n\\t",
            n + 1,
            n + 1
        );
        for j in 0..n {
            let op = if j == 0 { "mad.hi.cc" } else { "madc.hi.cc" };
            let _ = write!(
                body,
                "{op}.u32 %{}, %{}, %{yo}, %{};\\n\\t",
                j + 1,
                xo + j,
                j + 1
            );
        }
        let _ = write!(body, "addc.u32 %{}, %{}, 0;", n + 1, n + 1);
        format!(
            "  asm(\"{body}\"\n      : {}\n      : {}, \"r\"({y}));\n",
            t_ops.join(", "),
            x.join(", ")
        )
    };
    let a: Vec<String> = (0..n).map(|j| format!("\"r\"(a.v[{j}])")).collect();
    let p: Vec<String> = modulus
        .iter()
        .map(|l| format!("\"r\"(0x{l:08x}u)"))
        .collect();
    let mut s = format!("SLUICE_MUL_ATTR {name} {name}_mul({name} a, {name} b) {{\n");
    let decl: Vec<String> = (0..n + 2).map(|i| format!("t{i} = 0")).collect();
    let _ = writeln!(s, "  uint {}, m;", decl.join(", "));
    for i in 0..n {
        s.push_str(&row(&a, &format!("b.v[{i}]")));
        let _ = writeln!(s, "  m = t0 * 0x{inv:08x}u;");
        s.push_str(&row(&p, "m"));
        // t0 is zero by the choice of m: shift down one word.
        let shift: Vec<String> = (0..n + 1).map(|k| format!("t{k} = t{};", k + 1)).collect();
        let _ = writeln!(s, "  {} t{} = 0;", shift.join(" "), n + 1);
    }
    let r: Vec<String> = (0..n).map(|k| format!("t{k}")).collect();
    let _ = writeln!(s, "  {name} r = {{{{{}}}}};", r.join(", "));
    let _ = writeln!(
        s,
        "  if (t{n} != 0 || {name}_gte(r, {name}_P)) {{\n    uint br;\n    r = {name}_sub_nc(r, {name}_P, &br);\n  }}\n  return r;\n}}"
    );
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

    #[test]
    fn montgomery_rows_chain_low_then_high_halves() {
        let s = montgomery_mul("Fr", 8, &[1, 2, 3, 4, 5, 6, 7, 8], 0xffff_ffff);
        // 2 rows per limb, each 8 + 2 + 8 + 1 instructions and 19 operands.
        assert_eq!(s.matches("asm(").count(), 16);
        assert!(s.contains("mad.lo.cc.u32 %0, %10, %18, %0;"));
        assert!(s.contains("madc.lo.cc.u32 %7, %17, %18, %7;"));
        assert!(s.contains("addc.cc.u32 %8, %8, 0;"));
        assert!(s.contains("mad.hi.cc.u32 %1, %10, %18, %1;"));
        assert!(s.contains("madc.hi.cc.u32 %8, %17, %18, %8;"));
        assert!(s.contains("addc.u32 %9, %9, 0;"));
        assert!(s.contains("\"r\"(0x00000008u), \"r\"(m)"));
        assert!(s.contains("m = t0 * 0xffffffffu;"));
    }
}
