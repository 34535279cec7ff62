//! Limb arithmetic shared by every prime field of the crate.
//!
//! The Montgomery routines are generic over the limb count `N` and take the modulus as an
//! argument, so `Fr` (N = 4) and `Fq` (N = 6) share one implementation; `#[inline(always)]`
//! plus constant `N` lets LLVM fully unroll them per field. All routines are branch-free in
//! the values they process.

use ff::Field;
use subtle::Choice;

/// `a + b + carry` for a carry of 0 or 1, returning (sum, carry out).
///
/// On x86-64 through `_addcarry_u64`, which LLVM turns into one `adc` per limb of a chain;
/// the 128-bit form compiled to three or four instructions a limb.
#[inline(always)]
pub(crate) fn adc(a: u64, b: u64, carry: u64) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    {
        let mut sum = 0;
        let c = core::arch::x86_64::_addcarry_u64(carry as u8, a, b, &mut sum);
        (sum, u64::from(c))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let t = (a as u128) + (b as u128) + (carry as u128);
        (t as u64, (t >> 64) as u64)
    }
}

/// `a - b - borrow`, where `borrow` is 0 or `u64::MAX`; returns (difference, borrow out in the
/// same 0 / `u64::MAX` convention). On x86-64 through `_subborrow_u64`, as [`adc`].
#[inline(always)]
pub(crate) fn sbb(a: u64, b: u64, borrow: u64) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    {
        let mut diff = 0;
        let b_out = core::arch::x86_64::_subborrow_u64((borrow >> 63) as u8, a, b, &mut diff);
        (diff, 0u64.wrapping_sub(u64::from(b_out)))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let t = (a as u128).wrapping_sub((b as u128) + ((borrow >> 63) as u128));
        (t as u64, (t >> 64) as u64)
    }
}

/// `a + b * c + carry`, returning (low, high). Cannot overflow 128 bits.
#[inline(always)]
pub(crate) const fn mac(a: u64, b: u64, c: u64, carry: u64) -> (u64, u64) {
    let t = (a as u128) + (b as u128) * (c as u128) + (carry as u128);
    (t as u64, (t >> 64) as u64)
}

/// Returns `a - m` if `a >= m`, else `a` (constant time). Requires `a < 2m`.
#[inline(always)]
pub(crate) fn sub_if_ge<const N: usize>(a: [u64; N], m: &[u64; N]) -> [u64; N] {
    let mut d = [0u64; N];
    let mut borrow = 0;
    for i in 0..N {
        (d[i], borrow) = sbb(a[i], m[i], borrow);
    }
    // borrow == MAX means a < m: keep a.
    let mut out = [0u64; N];
    for i in 0..N {
        out[i] = (a[i] & borrow) | (d[i] & !borrow);
    }
    out
}

/// Plain `a + b` over any number of limbs; returns (sum, carry out).
#[inline(always)]
pub(crate) fn add_raw<const L: usize>(a: &[u64; L], b: &[u64; L]) -> ([u64; L], u64) {
    let mut s = [0u64; L];
    let mut carry = 0;
    for i in 0..L {
        (s[i], carry) = adc(a[i], b[i], carry);
    }
    (s, carry)
}

/// Plain `a - b` over any number of limbs, wrapping; returns (difference, borrow mask:
/// `u64::MAX` if `a < b`, else 0).
#[inline(always)]
pub(crate) fn sub_raw<const L: usize>(a: &[u64; L], b: &[u64; L]) -> ([u64; L], u64) {
    let mut d = [0u64; L];
    let mut borrow = 0;
    for i in 0..L {
        (d[i], borrow) = sbb(a[i], b[i], borrow);
    }
    (d, borrow)
}

/// Modular addition of reduced inputs. Needs the modulus' top bit clear (2m < 2^(64N)).
#[inline(always)]
pub(crate) fn add_mod<const N: usize>(a: &[u64; N], b: &[u64; N], m: &[u64; N]) -> [u64; N] {
    let mut s = [0u64; N];
    let mut carry = 0;
    for i in 0..N {
        (s[i], carry) = adc(a[i], b[i], carry);
    }
    sub_if_ge(s, m)
}

/// Modular subtraction of reduced inputs.
#[inline(always)]
pub(crate) fn sub_mod<const N: usize>(a: &[u64; N], b: &[u64; N], m: &[u64; N]) -> [u64; N] {
    let mut d = [0u64; N];
    let mut borrow = 0;
    for i in 0..N {
        (d[i], borrow) = sbb(a[i], b[i], borrow);
    }
    // On underflow add m back (masked by the borrow, no branch).
    let mut carry = 0;
    for i in 0..N {
        (d[i], carry) = adc(d[i], m[i] & borrow, carry);
    }
    d
}

/// Modular negation of a reduced input (`-0 = 0`).
#[inline(always)]
pub(crate) fn neg_mod<const N: usize>(a: &[u64; N], m: &[u64; N]) -> [u64; N] {
    let mut d = [0u64; N];
    let mut borrow = 0;
    for i in 0..N {
        (d[i], borrow) = sbb(m[i], a[i], borrow);
    }
    let mut acc = 0;
    for limb in a {
        acc |= limb;
    }
    // mask = 0 iff a == 0, so that -0 yields 0 rather than m.
    let mask = ((acc | acc.wrapping_neg()) >> 63).wrapping_neg();
    for limb in d.iter_mut() {
        *limb &= mask;
    }
    d
}

/// Montgomery multiplication `a * b / 2^(64N) mod m` (CIOS with the "no-carry" shortcut of
/// gnark-crypto: valid because the modulus' top limb is below `2^63 - 1`, so every
/// intermediate fits in N limbs and the final carry never needs a limb of its own).
///
/// Preconditions: `a < 2^(64N) - m` and `b < m` (so reduced inputs always qualify; `a` may be
/// any value below `2^(64N-1)`, which [`from_wide`] relies on). Output `< m`.
#[inline(always)]
pub(crate) fn mont_mul<const N: usize>(
    a: &[u64; N],
    b: &[u64; N],
    m: &[u64; N],
    inv: u64,
) -> [u64; N]
where
    [u64; N]: Mont,
{
    Mont::mont_mul(a, b, m, inv)
}

/// Montgomery squaring `a^2 / 2^(64N) mod m` of a reduced `a`: the 2N-limb square with each
/// cross product computed once (N(N+1)/2 multiplications instead of N^2), then a separate
/// Montgomery reduction.
#[inline(always)]
pub(crate) fn mont_sqr<const N: usize>(a: &[u64; N], m: &[u64; N], inv: u64) -> [u64; N]
where
    [u64; N]: Mont,
{
    Mont::mont_sqr(a, m, inv)
}

/// The limb counts with Montgomery arithmetic, implemented per N by `impl_mont!` so that the
/// outer loops are unrolled explicitly: LLVM unrolls the inner loops but not reliably the
/// outer ones, which cost ~2x in Fq2 multiplication.
pub(crate) trait Mont {
    /// See [`mont_mul`].
    fn mont_mul(a: &Self, b: &Self, m: &Self, inv: u64) -> Self;
    /// See [`mont_sqr`].
    fn mont_sqr(a: &Self, m: &Self, inv: u64) -> Self;
    /// The double-width type holding a full product.
    type Wide;
    /// The full product `a * b` (schoolbook, no reduction).
    fn mul_wide(a: &Self, b: &Self) -> Self::Wide;
    /// Montgomery reduction `t / 2^(64N) mod m` of `t < m * 2^(64N)`; output `< m`.
    fn redc(t: Self::Wide, m: &Self, inv: u64) -> Self;
    /// The portable [`mont_mul`](Self::mont_mul), where no assembly runs.
    fn portable_mul(a: &Self, b: &Self, m: &Self, inv: u64) -> Self;
    /// The portable [`mont_sqr`](Self::mont_sqr).
    fn portable_sqr(a: &Self, m: &Self, inv: u64) -> Self;
}

/// Repeats `$body` with `$v` bound to each listed constant (a compile-time unrolled loop).
macro_rules! unroll {
    ([$($i:literal)*], |$v:ident| $body:block) => {
        $( { let $v: usize = $i; $body } )*
    };
}

/// The portable Montgomery routines of `[u64; N]`, and for Fq (`$fast`) the dispatch to the
/// assembly product. Where the assembly runs, the portable product and square are kept out
/// of line, so that the dispatch is small enough to inline into every caller: inlined
/// together, the unrolled portable code made LLVM call the whole product out of line and
/// pass its operands through memory.
macro_rules! impl_mont {
    ($n:literal, $rows:tt) => {
        impl_mont!(@impl $n, $rows, [inline(always)]);
    };
    ($n:literal, $rows:tt, $fast:path) => {
        impl_mont!(@impl $n, $rows, [
            cfg_attr(target_arch = "x86_64", inline(never)),
            cfg_attr(not(target_arch = "x86_64"), inline(always))
        ], $fast);
    };
    (@impl $n:literal, $rows:tt, [$($portable:meta),*] $(, $fast:path)?) => {
        impl Mont for [u64; $n] {
            #[inline(always)]
            fn mont_mul(a: &Self, b: &Self, m: &Self, inv: u64) -> Self {
                $(
                    #[cfg(target_arch = "x86_64")]
                    if let Some(t) = $fast(a, b, m, inv) {
                        return sub_if_ge(t, m);
                    }
                )?
                Self::portable_mul(a, b, m, inv)
            }

            #[inline(always)]
            fn mont_sqr(a: &Self, m: &Self, inv: u64) -> Self {
                // Where the assembly product runs, it beats the portable square.
                $(
                    #[cfg(target_arch = "x86_64")]
                    if let Some(t) = $fast(a, a, m, inv) {
                        return sub_if_ge(t, m);
                    }
                )?
                Self::portable_sqr(a, m, inv)
            }

            type Wide = [u64; 2 * $n];

            #[inline(always)]
            fn mul_wide(a: &Self, b: &Self) -> Self::Wide {
                let mut r = [0u64; 2 * $n];
                unroll!($rows, |i| {
                    let mut carry = 0;
                    for j in 0..$n {
                        (r[i + j], carry) = mac(r[i + j], a[i], b[j], carry);
                    }
                    r[i + $n] = carry;
                });
                r
            }

            #[inline(always)]
            fn redc(mut r: Self::Wide, m: &Self, inv: u64) -> Self {
                // One limb at a time; `carry2` rides along the upper half (it ends at 0: the
                // result is below 2m < 2^(64N)).
                let mut carry2 = 0;
                unroll!($rows, |i| {
                    let k = r[i].wrapping_mul(inv);
                    let mut carry = 0;
                    for j in 0..$n {
                        (r[i + j], carry) = mac(r[i + j], k, m[j], carry);
                    }
                    (r[i + $n], carry2) = adc(r[i + $n], carry, carry2);
                });
                debug_assert_eq!(carry2, 0);
                let mut out = [0u64; $n];
                out.copy_from_slice(&r[$n..]);
                sub_if_ge(out, m)
            }

            /// The portable Montgomery product (no-carry CIOS).
            $(#[$portable])*
            fn portable_mul(a: &Self, b: &Self, m: &Self, inv: u64) -> Self {
                let mut t = [0u64; $n];
                unroll!($rows, |i| {
                    // t = (t + a * b[i] + k * m) / 2^64, k chosen to clear the low limb.
                    let (t0, mut hi_a) = mac(t[0], a[0], b[i], 0);
                    let k = t0.wrapping_mul(inv);
                    let (_, mut hi_m) = mac(t0, k, m[0], 0);
                    for j in 1..$n {
                        let (tj, c) = mac(t[j], a[j], b[i], hi_a);
                        hi_a = c;
                        (t[j - 1], hi_m) = mac(tj, k, m[j], hi_m);
                    }
                    t[$n - 1] = hi_m + hi_a;
                });
                sub_if_ge(t, m)
            }

            /// The portable Montgomery square: the cross products once, doubled, then the
            /// diagonal, then one reduction.
            $(#[$portable])*
            fn portable_sqr(a: &Self, m: &Self, inv: u64) -> Self {
                let mut r = [0u64; 2 * $n];
                // Cross products a[i] * a[j], i < j.
                unroll!($rows, |i| {
                    let mut carry = 0;
                    for j in i + 1..$n {
                        (r[i + j], carry) = mac(r[i + j], a[i], a[j], carry);
                    }
                    r[i + $n] = carry;
                });
                // Double them, then add the squares a[i]^2 on the diagonal.
                let mut top = 0;
                for limb in r.iter_mut() {
                    let next = *limb >> 63;
                    *limb = (*limb << 1) | top;
                    top = next;
                }
                let mut carry = 0;
                for i in 0..$n {
                    let (lo, hi) = mac(r[2 * i], a[i], a[i], carry);
                    r[2 * i] = lo;
                    (r[2 * i + 1], carry) = adc(r[2 * i + 1], hi, 0);
                }
                Self::redc(r, m, inv)
            }
        }
    };
}

impl_mont!(4, [0 1 2 3]);
impl_mont!(6, [0 1 2 3 4 5], crate::adx::fq_mont_mul);

/// `a mod m` as an element whose Montgomery form has the value of `lo + hi * 2^(64N-1)`:
/// uniform-input reduction for `Field::random`. Requires `lo, hi < 2^(64N-1)`;
/// `r2 = 2^(128N) mod m`, `wide = 2^(192N-1) mod m`.
#[inline(always)]
pub(crate) fn from_wide<const N: usize>(
    lo: &[u64; N],
    hi: &[u64; N],
    r2: &[u64; N],
    wide: &[u64; N],
    m: &[u64; N],
    inv: u64,
) -> [u64; N]
where
    [u64; N]: Mont,
{
    let a = mont_mul(lo, r2, m, inv);
    let b = mont_mul(hi, wide, m, inv);
    add_mod(&a, &b, m)
}

/// Whether `a < m` (constant time).
#[inline(always)]
pub(crate) fn lt<const N: usize>(a: &[u64; N], m: &[u64; N]) -> Choice {
    let mut borrow = 0;
    for i in 0..N {
        (_, borrow) = sbb(a[i], m[i], borrow);
    }
    Choice::from((borrow & 1) as u8)
}

/// Logical right shift of a multi-limb integer by `s < 64` bits (compile-time exponent helper).
pub(crate) const fn shr<const N: usize>(a: [u64; N], s: u32) -> [u64; N] {
    let mut out = [0u64; N];
    let mut i = 0;
    while i < N {
        out[i] = a[i] >> s;
        if s > 0 && i + 1 < N {
            out[i] |= a[i + 1] << (64 - s);
        }
        i += 1;
    }
    out
}

/// `a + v` for small `v` without overflow past the top limb (compile-time exponent helper).
pub(crate) const fn add_small<const N: usize>(a: [u64; N], v: u64) -> [u64; N] {
    let mut out = a;
    let mut carry = v;
    let mut i = 0;
    while i < N {
        let (s, c) = out[i].overflowing_add(carry);
        out[i] = s;
        carry = c as u64;
        i += 1;
    }
    out
}

/// `a - v` for small `v <= a` (compile-time exponent helper).
#[cfg(test)]
pub(crate) const fn sub_small<const N: usize>(a: [u64; N], v: u64) -> [u64; N] {
    let mut out = a;
    let mut borrow = 0;
    let mut i = 0;
    while i < N {
        let (d, b1) = out[i].overflowing_sub(if i == 0 { v } else { 0 });
        let (d, b2) = d.overflowing_sub(borrow);
        out[i] = d;
        borrow = (b1 | b2) as u64;
        i += 1;
    }
    out
}

/// `base^exp` with a fixed 4-bit window. The sequence of operations depends only on `exp`,
/// which must be a public constant (moduli-derived exponents in this crate), so this is
/// constant time in `base`.
pub(crate) fn pow_public<F: Field>(base: &F, exp: &[u64]) -> F {
    let mut table = [F::ONE; 16];
    for i in 1..16 {
        table[i] = table[i - 1] * base;
    }
    let mut res = F::ONE;
    let mut started = false;
    for limb in exp.iter().rev() {
        for w in (0..16).rev() {
            if started {
                for _ in 0..4 {
                    res = res.square();
                }
            }
            let nibble = ((limb >> (4 * w)) & 15) as usize;
            if nibble != 0 {
                res *= table[nibble];
                started = true;
            }
        }
    }
    res
}

/// Montgomery's batch inversion, shared by every field type: inverts every nonzero element
/// of `v` in place with one field inversion, leaves zeros at zero, and returns whether all
/// elements were nonzero. Constant time in the values (zeros are handled with selects).
#[cfg(feature = "alloc")]
pub(crate) fn batch_invert<F: Field>(v: &mut [F]) -> Choice {
    let mut prefix = alloc::vec::Vec::with_capacity(v.len());
    let mut acc = F::ONE;
    let mut all_nonzero = Choice::from(1);
    for x in v.iter() {
        prefix.push(acc);
        let z = x.is_zero();
        all_nonzero &= !z;
        acc = F::conditional_select(&(acc * x), &acc, z);
    }
    // acc is a product of nonzero elements, hence invertible.
    let mut inv = acc.invert().unwrap_or(F::ZERO);
    for (x, p) in v.iter_mut().rev().zip(prefix.into_iter().rev()) {
        let z = x.is_zero();
        let x_inv = inv * p;
        inv = F::conditional_select(&(inv * *x), &inv, z);
        *x = F::conditional_select(&x_inv, &F::ZERO, z);
    }
    all_nonzero
}
