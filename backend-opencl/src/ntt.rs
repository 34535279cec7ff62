//! The NTT family on a device: radix-2 passes of up to 9 rounds in local memory, bit
//! reversal, coset scaling and the 1/n scale.

use ff::{Field, PrimeField};
use sluice_backend::{Allocation, BackendError, MemoryKind, NttOrder, Transform};
use sluice_field::Fr;

use crate::context::DeviceCtx;
use crate::repr::as_words;
use crate::source::ProgramKind;
use crate::{lock, OpenClBackend, OpenClFrBuffer};

/// Most radix-2 rounds one pass runs in local memory: 2^9 elements and their 2^9 - 1
/// twiddles, 32 KiB per work group (OpenCL guarantees 32 KiB of local memory); 2^27 takes
/// three passes.
const MAX_ROUNDS_PER_PASS: u32 = 9;

/// The twiddles w^e for e < n/2 of one domain and direction, as two tables:
/// w^e = lo[e mod 2^lo_bits] * hi[e >> lo_bits] (O(sqrt n) memory instead of n/2).
pub(crate) struct Twiddles {
    lo: ocl::core::Mem,
    hi: ocl::core::Mem,
    lo_bits: u32,
    _tracked: Allocation,
}

impl Twiddles {
    fn new(
        b: &OpenClBackend,
        ctx: &DeviceCtx,
        log_n: u32,
        inverse: bool,
    ) -> Result<Self, BackendError> {
        let root = if inverse {
            Fr::ROOT_OF_UNITY_INV
        } else {
            Fr::ROOT_OF_UNITY
        };
        let w = root.pow_vartime([1u64 << (Fr::S - log_n)]);
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
        let tracked = b.tracker.allocate(
            MemoryKind::Device,
            "ntt twiddles",
            ((lo.len() + hi.len()) * 32) as u64,
        )?;
        let upload = |v: &[Fr]| -> Result<ocl::core::Mem, BackendError> {
            let m = ctx.raw_buffer("ntt twiddles", v.len() * 8)?;
            ctx.write(&m, 0, as_words(v))?;
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

impl OpenClBackend {
    pub(crate) fn ntt_transform(
        &self,
        buf: &mut OpenClFrBuffer,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        let n = buf.data.len;
        if !n.is_power_of_two() {
            return Err(BackendError::LengthMismatch {
                what: "ntt domain (a power of two)",
                expected: n.next_power_of_two(),
                got: n,
            });
        }
        let log_n = n.trailing_zeros();
        if log_n > Fr::S {
            return Err(BackendError::DomainTooLarge {
                log_size: log_n,
                max: Fr::S,
            });
        }
        if buf.data.chunks.len() > 1 {
            return Err(BackendError::Unsupported(format!(
                "an NTT over a buffer split into {} chunks (2^{log_n} elements exceed the \
                 device's largest allocation)",
                buf.data.chunks.len()
            )));
        }
        if n == 1 {
            return Ok(()); // every transform of one element is the identity
        }
        let ctx = &self.devices[buf.data.device];
        let mem = &buf.data.chunks[0];
        let g = Fr::MULTIPLICATIVE_GENERATOR;
        let input_br = order.input_bit_reversed();
        let output_br = order.output_bit_reversed();
        match transform {
            Transform::Ntt => self.ntt(ctx, mem, log_n, false, input_br, output_br),
            Transform::Intt => self.ntt(ctx, mem, log_n, true, input_br, output_br),
            Transform::CosetNtt => {
                if input_br {
                    bit_reverse(ctx, mem, log_n)?;
                }
                self.distribute_chunk(ctx, mem, n, 0, g)?;
                self.ntt(ctx, mem, log_n, false, false, output_br)
            }
            Transform::CosetIntt => {
                self.ntt(ctx, mem, log_n, true, input_br, false)?;
                self.distribute_chunk(ctx, mem, n, 0, g.invert().unwrap_or(Fr::ONE))?;
                if output_br {
                    bit_reverse(ctx, mem, log_n)?;
                }
                Ok(())
            }
        }
    }

    /// (I)NTT of 2^log_n elements; input and output orders as given (not both
    /// bit-reversed). Natural input runs decimation in frequency (bit-reversed output),
    /// bit-reversed input decimation in time (natural output); a bit reversal fixes the
    /// order otherwise.
    fn ntt(
        &self,
        ctx: &DeviceCtx,
        mem: &ocl::core::Mem,
        log_n: u32,
        inverse: bool,
        input_br: bool,
        output_br: bool,
    ) -> Result<(), BackendError> {
        let tw = self.twiddles(ctx, log_n, inverse)?;
        if input_br {
            passes(ctx, mem, &tw, log_n, false)?;
            if output_br {
                bit_reverse(ctx, mem, log_n)?;
            }
        } else {
            passes(ctx, mem, &tw, log_n, true)?;
            if !output_br {
                bit_reverse(ctx, mem, log_n)?;
            }
        }
        if inverse {
            let n_inv = Fr::from(1u64 << log_n).invert().unwrap_or(Fr::ONE);
            self.scale_chunk(ctx, mem, 1 << log_n, n_inv)?;
        }
        Ok(())
    }

    fn twiddles(
        &self,
        ctx: &DeviceCtx,
        log_n: u32,
        inverse: bool,
    ) -> Result<std::sync::Arc<Twiddles>, BackendError> {
        let mut map = lock(&ctx.twiddles);
        if let Some(t) = map.get(&(log_n, inverse)) {
            return Ok(t.clone());
        }
        let t = std::sync::Arc::new(Twiddles::new(self, ctx, log_n, inverse)?);
        map.insert((log_n, inverse), t.clone());
        Ok(t)
    }
}

/// All radix-2 rounds, grouped into passes of up to MAX_ROUNDS_PER_PASS rounds.
fn passes(
    ctx: &DeviceCtx,
    mem: &ocl::core::Mem,
    tw: &Twiddles,
    log_n: u32,
    dif: bool,
) -> Result<(), BackendError> {
    // A pass of `deg` rounds needs 2^(deg-1) work items per group.
    let wg_log = usize::BITS - 1 - ctx.info.max_work_group_size.max(1).leading_zeros();
    let max_deg = MAX_ROUNDS_PER_PASS.min(wg_log + 1);
    let mut schedule = Vec::new();
    let mut log_m0 = 0;
    while log_m0 < log_n {
        let deg = max_deg.min(log_n - log_m0);
        schedule.push((log_m0, deg));
        log_m0 += deg;
    }
    if dif {
        schedule.reverse();
    }
    for (log_m0, deg) in schedule {
        ctx.kernel(ProgramKind::Fr, "fr_ntt_pass")?
            .mem(mem)?
            .mem(&tw.lo)?
            .mem(&tw.hi)?
            .local_words(16 << deg)?
            .u32(log_n)?
            .u32(log_m0)?
            .u32(deg)?
            .u32(tw.lo_bits)?
            .u32(u32::from(dif))?
            .run(1 << (log_n - 1), Some(1 << (deg - 1)))?;
    }
    Ok(())
}

fn bit_reverse(ctx: &DeviceCtx, mem: &ocl::core::Mem, log_n: u32) -> Result<(), BackendError> {
    ctx.kernel(ProgramKind::Fr, "fr_bit_reverse")?
        .mem(mem)?
        .u32(log_n)?
        .run(1 << log_n, None)
}

#[cfg(test)]
mod tests {
    use ff::Field;
    use sluice_backend::{BackendError, ComputeBackend, NttOrder, Transform};
    use sluice_field::Fr;
    use sluice_ntt::Domain;

    use crate::testing::{backend, rng, split_backend};

    /// The CPU reference (sluice-ntt) for one transform.
    fn reference(data: &mut [Fr], t: Transform, order: NttOrder) {
        let d = Domain::<Fr>::for_size(data.len()).unwrap();
        match t {
            Transform::Ntt => sluice_ntt::ntt(&d, data, order),
            Transform::Intt => sluice_ntt::intt(&d, data, order),
            Transform::CosetNtt => sluice_ntt::coset_ntt(&d, data, order),
            Transform::CosetIntt => sluice_ntt::coset_intt(&d, data, order),
        }
        .unwrap();
    }

    const TRANSFORMS: [Transform; 4] = [
        Transform::Ntt,
        Transform::Intt,
        Transform::CosetNtt,
        Transform::CosetIntt,
    ];

    #[test]
    fn every_transform_and_order_matches_sluice_ntt() {
        let Some(b) = backend() else { return };
        // 2^10 and 2^13 need a partial second pass; 2^9 ends on one full pass.
        for log_n in [0u32, 1, 2, 3, 5, 8, 9, 10, 13] {
            for (ti, t) in TRANSFORMS.into_iter().enumerate() {
                for (oi, order) in NttOrder::ALL.into_iter().enumerate() {
                    let seed = u64::from(log_n) * 100 + ti as u64 * 10 + oi as u64;
                    let mut r = rng(seed);
                    let input: Vec<Fr> = (0..1usize << log_n).map(|_| Fr::random(&mut r)).collect();
                    let mut want = input.clone();
                    reference(&mut want, t, order);
                    let mut buf = b.upload_fr("ntt", &input).unwrap();
                    b.transform(&mut buf, t, order).unwrap();
                    let mut got = vec![Fr::ZERO; input.len()];
                    b.read_fr(&buf, 0, &mut got).unwrap();
                    assert!(
                        got == want,
                        "{t:?} {order:?} of 2^{log_n} differs (seed {seed})"
                    );
                }
            }
        }
    }

    #[test]
    fn ntt_then_intt_is_the_identity_at_2_14() {
        let Some(b) = backend() else { return };
        let seed = 7;
        let mut r = rng(seed);
        let input: Vec<Fr> = (0..1 << 14).map(|_| Fr::random(&mut r)).collect();
        let mut buf = b.upload_fr("ntt", &input).unwrap();
        b.transform(
            &mut buf,
            Transform::CosetNtt,
            NttOrder::NaturalToBitReversed,
        )
        .unwrap();
        b.transform(
            &mut buf,
            Transform::CosetIntt,
            NttOrder::BitReversedToNatural,
        )
        .unwrap();
        let mut got = vec![Fr::ZERO; input.len()];
        b.read_fr(&buf, 0, &mut got).unwrap();
        assert!(got == input, "coset round trip at 2^14 (seed {seed})");
    }

    #[test]
    fn bad_sizes_and_split_buffers_are_errors() {
        let Some(b) = backend() else { return };
        let mut buf = b.alloc_fr("odd", 6).unwrap();
        assert!(matches!(
            b.transform(&mut buf, Transform::Ntt, NttOrder::NaturalToNatural),
            Err(BackendError::LengthMismatch {
                expected: 8,
                got: 6,
                ..
            })
        ));
        let Some(s) = split_backend() else { return };
        let mut buf = s.alloc_fr("split", 1024).unwrap();
        assert!(matches!(
            s.transform(&mut buf, Transform::Ntt, NttOrder::NaturalToNatural),
            Err(BackendError::Unsupported(_))
        ));
    }
}
