//! A backend that runs two backends side by side and compares them after every operation,
//! so a whole proof can run under it and the first divergence is caught where it happens.

use ff::Field;
use sluice_backend::{
    BackendError, ComputeBackend, Density, Fr, G1Affine, G1Projective, G2Affine, G2Projective,
    MemoryInfo, MemoryTracker, NttOrder, Scalars, Transform,
};

/// Runs every operation on `primary` and `secondary` and compares the results.
///
/// Results come from the primary. On a divergence it **panics** with the operation, the
/// buffer name and the first differing index: it is an assertion tool for tests, not a
/// production backend.
pub struct Dual<P, S> {
    primary: P,
    secondary: S,
}

/// A scalar buffer held by both backends.
pub struct DualFr<P: ComputeBackend, S: ComputeBackend> {
    name: String,
    primary: P::FrBuffer,
    secondary: S::FrBuffer,
}

/// Bases resident in both backends.
pub struct DualBases<PB, SB> {
    primary: PB,
    secondary: SB,
}

impl<P: ComputeBackend, S: ComputeBackend> Dual<P, S> {
    /// Pairs two backends; `primary` supplies results, `secondary` is the reference.
    pub fn new(primary: P, secondary: S) -> Self {
        Dual { primary, secondary }
    }

    /// Both buffers' full contents must agree.
    fn compare(&self, op: &str, buf: &DualFr<P, S>) -> Result<(), BackendError> {
        let len = self.primary.fr_len(&buf.primary);
        let (mut p, mut s) = (vec![Fr::ZERO; len], vec![Fr::ZERO; len]);
        self.primary.read_fr(&buf.primary, 0, &mut p)?;
        self.secondary.read_fr(&buf.secondary, 0, &mut s)?;
        if let Some(i) = (0..len).find(|&i| p[i] != s[i]) {
            panic!(
                "dual backend divergence after {op} on `{}` ({} vs {}): first at index {i} of {len}: {:?} vs {:?}",
                buf.name,
                self.primary.name(),
                self.secondary.name(),
                p[i],
                s[i]
            );
        }
        Ok(())
    }

    fn agree<T: PartialEq + std::fmt::Debug>(&self, op: &str, p: T, s: T) -> T {
        assert_eq!(
            p,
            s,
            "dual backend divergence in {op} ({} vs {})",
            self.primary.name(),
            self.secondary.name()
        );
        p
    }
}

impl<P: ComputeBackend, S: ComputeBackend> ComputeBackend for Dual<P, S> {
    type FrBuffer = DualFr<P, S>;
    type G1Bases = DualBases<P::G1Bases, S::G1Bases>;
    type G2Bases = DualBases<P::G2Bases, S::G2Bases>;

    fn name(&self) -> String {
        format!("dual({}, {})", self.primary.name(), self.secondary.name())
    }

    fn tracker(&self) -> &MemoryTracker {
        self.primary.tracker()
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.primary.synchronize()?;
        self.secondary.synchronize()
    }

    fn memory_info(&self) -> Result<MemoryInfo, BackendError> {
        self.primary.memory_info()
    }

    fn alloc_fr(&self, name: &str, len: usize) -> Result<Self::FrBuffer, BackendError> {
        let buf = DualFr {
            name: name.to_owned(),
            primary: self.primary.alloc_fr(name, len)?,
            secondary: self.secondary.alloc_fr(name, len)?,
        };
        self.compare("alloc_fr", &buf)?;
        Ok(buf)
    }

    fn upload_fr(&self, name: &str, data: &[Fr]) -> Result<Self::FrBuffer, BackendError> {
        let buf = DualFr {
            name: name.to_owned(),
            primary: self.primary.upload_fr(name, data)?,
            secondary: self.secondary.upload_fr(name, data)?,
        };
        self.compare("upload_fr", &buf)?;
        Ok(buf)
    }

    fn copy_fr(&self, name: &str, src: &Self::FrBuffer) -> Result<Self::FrBuffer, BackendError> {
        let buf = DualFr {
            name: name.to_owned(),
            primary: self.primary.copy_fr(name, &src.primary)?,
            secondary: self.secondary.copy_fr(name, &src.secondary)?,
        };
        self.compare("copy_fr", &buf)?;
        Ok(buf)
    }

    fn write_fr(
        &self,
        buf: &mut Self::FrBuffer,
        offset: usize,
        data: &[Fr],
    ) -> Result<(), BackendError> {
        self.primary.write_fr(&mut buf.primary, offset, data)?;
        self.secondary.write_fr(&mut buf.secondary, offset, data)?;
        self.compare("write_fr", buf)
    }

    fn read_fr(
        &self,
        buf: &Self::FrBuffer,
        offset: usize,
        out: &mut [Fr],
    ) -> Result<(), BackendError> {
        let mut other = vec![Fr::ZERO; out.len()];
        self.primary.read_fr(&buf.primary, offset, out)?;
        self.secondary.read_fr(&buf.secondary, offset, &mut other)?;
        self.agree("read_fr", &*out, &other[..]);
        Ok(())
    }

    fn fr_len(&self, buf: &Self::FrBuffer) -> usize {
        self.agree(
            "fr_len",
            self.primary.fr_len(&buf.primary),
            self.secondary.fr_len(&buf.secondary),
        )
    }

    fn transform(
        &self,
        buf: &mut Self::FrBuffer,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        self.primary.transform(&mut buf.primary, transform, order)?;
        self.secondary
            .transform(&mut buf.secondary, transform, order)?;
        self.compare(&format!("{transform:?} ({order:?})"), buf)
    }

    fn domain_to_coset(&self, buf: &mut Self::FrBuffer) -> Result<(), BackendError> {
        self.primary.domain_to_coset(&mut buf.primary)?;
        self.secondary.domain_to_coset(&mut buf.secondary)?;
        self.compare("domain_to_coset", buf)
    }

    fn coset_intt_scaled(&self, buf: &mut Self::FrBuffer, factor: Fr) -> Result<(), BackendError> {
        self.primary.coset_intt_scaled(&mut buf.primary, factor)?;
        self.secondary
            .coset_intt_scaled(&mut buf.secondary, factor)?;
        self.compare("coset_intt_scaled", buf)
    }

    fn mul_assign(&self, a: &mut Self::FrBuffer, b: &Self::FrBuffer) -> Result<(), BackendError> {
        self.primary.mul_assign(&mut a.primary, &b.primary)?;
        self.secondary.mul_assign(&mut a.secondary, &b.secondary)?;
        self.compare("mul_assign", a)
    }

    fn sub_assign(&self, a: &mut Self::FrBuffer, b: &Self::FrBuffer) -> Result<(), BackendError> {
        self.primary.sub_assign(&mut a.primary, &b.primary)?;
        self.secondary.sub_assign(&mut a.secondary, &b.secondary)?;
        self.compare("sub_assign", a)
    }

    fn scale(&self, a: &mut Self::FrBuffer, s: Fr) -> Result<(), BackendError> {
        self.primary.scale(&mut a.primary, s)?;
        self.secondary.scale(&mut a.secondary, s)?;
        self.compare("scale", a)
    }

    fn distribute_powers(&self, a: &mut Self::FrBuffer, g: Fr) -> Result<(), BackendError> {
        self.primary.distribute_powers(&mut a.primary, g)?;
        self.secondary.distribute_powers(&mut a.secondary, g)?;
        self.compare("distribute_powers", a)
    }

    fn transform_segments(
        &self,
        buf: &mut Self::FrBuffer,
        segment: usize,
        transform: Transform,
        order: NttOrder,
    ) -> Result<(), BackendError> {
        self.primary
            .transform_segments(&mut buf.primary, segment, transform, order)?;
        self.secondary
            .transform_segments(&mut buf.secondary, segment, transform, order)?;
        self.compare(&format!("segmented {transform:?} ({order:?})"), buf)
    }

    fn segment_powers(
        &self,
        buf: &mut Self::FrBuffer,
        segment: usize,
        base: Fr,
        ratio: Fr,
    ) -> Result<(), BackendError> {
        self.primary
            .segment_powers(&mut buf.primary, segment, base, ratio)?;
        self.secondary
            .segment_powers(&mut buf.secondary, segment, base, ratio)?;
        self.compare("segment_powers", buf)
    }

    fn upload_g1_bases(
        &self,
        name: &str,
        bases: &[G1Affine],
    ) -> Result<Self::G1Bases, BackendError> {
        Ok(DualBases {
            primary: self.primary.upload_g1_bases(name, bases)?,
            secondary: self.secondary.upload_g1_bases(name, bases)?,
        })
    }

    fn upload_g2_bases(
        &self,
        name: &str,
        bases: &[G2Affine],
    ) -> Result<Self::G2Bases, BackendError> {
        Ok(DualBases {
            primary: self.primary.upload_g2_bases(name, bases)?,
            secondary: self.secondary.upload_g2_bases(name, bases)?,
        })
    }

    fn g1_len(&self, bases: &Self::G1Bases) -> usize {
        self.agree(
            "g1_len",
            self.primary.g1_len(&bases.primary),
            self.secondary.g1_len(&bases.secondary),
        )
    }

    fn g2_len(&self, bases: &Self::G2Bases) -> usize {
        self.agree(
            "g2_len",
            self.primary.g2_len(&bases.primary),
            self.secondary.g2_len(&bases.secondary),
        )
    }

    fn msm_g1_vartime(
        &self,
        bases: &Self::G1Bases,
        skip: usize,
        scalars: Scalars<'_, Self>,
        density: Option<&Density>,
    ) -> Result<G1Projective, BackendError> {
        let (p, s) = split(scalars);
        let a = self
            .primary
            .msm_g1_vartime(&bases.primary, skip, p, density)?;
        let b = self
            .secondary
            .msm_g1_vartime(&bases.secondary, skip, s, density)?;
        Ok(self.agree("msm_g1_vartime", a, b))
    }

    fn msm_g2_vartime(
        &self,
        bases: &Self::G2Bases,
        skip: usize,
        scalars: Scalars<'_, Self>,
        density: Option<&Density>,
    ) -> Result<G2Projective, BackendError> {
        let (p, s) = split(scalars);
        let a = self
            .primary
            .msm_g2_vartime(&bases.primary, skip, p, density)?;
        let b = self
            .secondary
            .msm_g2_vartime(&bases.secondary, skip, s, density)?;
        Ok(self.agree("msm_g2_vartime", a, b))
    }
}

/// The scalars of a dual MSM as seen by each side.
fn split<'a, P: ComputeBackend, S: ComputeBackend>(
    scalars: Scalars<'a, Dual<P, S>>,
) -> (Scalars<'a, P>, Scalars<'a, S>) {
    match scalars {
        Scalars::Host(h) => (Scalars::Host(h), Scalars::Host(h)),
        Scalars::Buffer(b) => (Scalars::Buffer(&b.primary), Scalars::Buffer(&b.secondary)),
        Scalars::Owned(b) => (Scalars::Owned(b.primary), Scalars::Owned(b.secondary)),
    }
}
