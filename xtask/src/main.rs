//! sluice project commands.
fn main() {}
