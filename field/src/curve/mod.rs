//! Arithmetic shared by G1 and G2: short Weierstrass curves `y^2 = x^3 + b` (a = 0) in Jacobian
//! coordinates, generic over the coordinate field, plus the macro that builds each group's
//! public types on top of it.
//!
//! Jacobian coordinates (x = X/Z^2, y = Y/Z^3, identity iff Z = 0) are blst's, so points cross to
//! and from `blst_p1`/`blst_p2` as coordinate copies. Affine points store the identity as
//! (0, 0), which is not on either curve because b != 0.
//!
//! The arithmetic is in `jacobian.rs`, the macro in `group_macro.rs`, their tests against
//! blst in `tests.rs`.

#[macro_use]
mod group_macro;
mod jacobian;
#[cfg(test)]
mod tests;

pub(crate) use jacobian::{Affine, CurveField, Jacobian};
