//! Sizing circuits to a domain. Counting a circuit is sluice's
//! [`count_constraints`](sluice::count_constraints).

/// The largest `k` with `base + k * step <= 2^log2`, for a circuit whose size grows by
/// `step` constraints per unit (a challenge, a sector) from `base`; 0 where one unit does
/// not fit.
pub(crate) fn units_for_domain(log2: u32, base: usize, step: usize) -> usize {
    let domain = 1usize.checked_shl(log2).unwrap_or(usize::MAX);
    domain.saturating_sub(base) / step.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_fill_the_domain() {
        assert_eq!(units_for_domain(4, 2, 3), 4);
        assert_eq!(units_for_domain(4, 1, 3), 5);
        assert_eq!(units_for_domain(4, 17, 3), 0);
        assert_eq!(units_for_domain(2, 0, 0), 4);
    }
}
