//! Twiddle tables, built on first use per device, size and direction, and kept for the
//! backend's life.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ff::Field;
use sluice_backend::{Allocation, BackendError};
use sluice_field::Fr;

use crate::fr_ops::FrOps;
use crate::repr::as_words;
use crate::util::lock;

/// The twiddles w^e for e < n/2 of one domain and direction, as two tables:
/// `w^e = lo[e mod 2^lo_bits] * hi[e >> lo_bits]` (O(sqrt n) memory instead of n/2).
pub(crate) struct Twiddles {
    pub(crate) lo: ocl::core::Mem,
    pub(crate) hi: ocl::core::Mem,
    pub(crate) lo_bits: u32,
    _tracked: Allocation,
}

impl Twiddles {
    /// The tables of 2^log_n, forward or `inverse`, on `ops`' device.
    fn new(ops: FrOps<'_>, log_n: u32, inverse: bool) -> Result<Self, BackendError> {
        let root =
            sluice_field::root_of_unity::<Fr>(log_n).map_err(|e| BackendError::DomainTooLarge {
                log_size: e.log_size(),
                max: e.max_log_size(),
            })?;
        let w = if inverse { root.omega_inv } else { root.omega };
        let bits = log_n - 1;
        let lo_bits = bits.div_ceil(2);
        let powers = |step: Fr, count: usize| {
            let mut v = Vec::with_capacity(count);
            let mut p = Fr::ONE;
            for _ in 0..count {
                v.push(p);
                p *= step;
            }
            v
        };
        let lo = powers(w, 1 << lo_bits);
        let hi = powers(w.pow_vartime([1u64 << lo_bits]), 1 << (bits - lo_bits));
        let tracked = ops.ctx.track(
            ops.tracker,
            "ntt twiddles",
            ((lo.len() + hi.len()) * 32) as u64,
        )?;
        let upload = |v: &[Fr]| -> Result<ocl::core::Mem, BackendError> {
            let m = ops.ctx.raw_buffer("ntt twiddles", v.len() * 8)?;
            ops.ctx.write(&m, 0, as_words(v))?;
            Ok(m)
        };
        Ok(Twiddles {
            lo: upload(&lo)?,
            hi: upload(&hi)?,
            lo_bits,
            _tracked: tracked,
        })
    }
}

/// Twiddle tables by (device, log2 size, inverse).
#[derive(Default)]
pub(crate) struct TwiddleCache {
    tables: Mutex<HashMap<(usize, u32, bool), Arc<Twiddles>>>,
}

impl TwiddleCache {
    /// The tables of 2^log_n on device `device` (`ops`' device), built on first use.
    pub(crate) fn get(
        &self,
        ops: FrOps<'_>,
        device: usize,
        log_n: u32,
        inverse: bool,
    ) -> Result<Arc<Twiddles>, BackendError> {
        let mut map = lock(&self.tables);
        if let Some(t) = map.get(&(device, log_n, inverse)) {
            return Ok(t.clone());
        }
        let t = Arc::new(Twiddles::new(ops, log_n, inverse)?);
        map.insert((device, log_n, inverse), t.clone());
        Ok(t)
    }
}
