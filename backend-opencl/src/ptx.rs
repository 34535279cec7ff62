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
}
