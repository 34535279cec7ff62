//! The MSM's tuning knobs: [`MsmConfig`] and its bucket strategy [`Buckets`].

/// How buckets accumulate points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buckets {
    /// Jacobian buckets, one mixed addition (7M + 4S) per point.
    Jacobian,
    /// Affine buckets filled by batches of affine additions sharing one inversion
    /// (about 5M + 1S per point), with Jacobian overflow buckets for collisions.
    BatchAffine,
}

/// Tuning knobs for [`msm_with_config_vartime`](crate::msm_with_config_vartime). The
/// [`Default`] chooses everything from the input size and the thread count; the knobs exist
/// for benchmarks and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsmConfig {
    /// Window width in bits (4..=20); `None` picks the cheapest by a cost model.
    pub window_bits: Option<usize>,
    /// Bucket strategy; `None` picks the cheapest by the same cost model.
    pub buckets: Option<Buckets>,
    /// Drop zero scalars and add the bases of scalars equal to one directly (a batch affine
    /// addition tree) instead of through Pippenger, whose window then fits the remaining
    /// terms. On by default.
    pub small_scalar_fast_path: bool,
}

impl Default for MsmConfig {
    fn default() -> Self {
        MsmConfig {
            window_bits: None,
            buckets: None,
            small_scalar_fast_path: true,
        }
    }
}
