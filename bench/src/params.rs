//! The `params` op: parameters memory-mapped from a bellperson-format file (read unchecked,
//! as Filecoin's provers read theirs) and made resident, the backend decoding the points
//! where it has a decoder of its own, side by side with the same upload decoded on the host.

use std::borrow::Cow;
use std::ops::Range;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use sluice_backend::{ComputeBackend, Scalars};
use sluice_field::{Fr, G1Affine, G2Affine};
use sluice_groth16::demo::MimcLike;
use sluice_groth16::{
    G1Query, Groth16Error, HostParameters, MappedParameters, ParameterInfo, ParameterSource,
    QueryLengths, ResidentParameters, VerifyingKey,
};

use crate::{bar, benchmark_parameters, Options};

/// The label suffix of the rows decoded on the host.
pub(crate) const HOST_DECODE: &str = "+host-decode";

/// `MappedParameters` with the backend's decoder turned off: every point decoded on the
/// host, as before backends decoded them (the other side of the comparison).
struct HostDecoded<'a>(&'a MappedParameters);

impl ParameterInfo for HostDecoded<'_> {
    fn vk(&self) -> &VerifyingKey {
        self.0.vk()
    }
    fn query_lengths(&self) -> QueryLengths {
        self.0.query_lengths()
    }
}

impl HostParameters for HostDecoded<'_> {
    fn g1_points(&self, query: G1Query) -> Result<Cow<'_, [G1Affine]>, Groth16Error> {
        self.0.g1_points(query)
    }
    fn b_g2_points(&self) -> Result<Cow<'_, [G2Affine]>, Groth16Error> {
        self.0.b_g2_points()
    }
    fn g1_points_range(
        &self,
        query: G1Query,
        range: Range<usize>,
    ) -> Result<Cow<'_, [G1Affine]>, Groth16Error> {
        self.0.g1_points_range(query, range)
    }
    fn b_g2_points_range(&self, range: Range<usize>) -> Result<Cow<'_, [G2Affine]>, Groth16Error> {
        self.0.b_g2_points_range(range)
    }
}

/// A parameter file removed when dropped.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Times of `ResidentParameters::upload` from the mapped parameters of MiMC at 2^`log`
/// (about 2^`log` points in each of h, l, a, b_g1 and b_g2; the file in the page cache
/// after it is written, so this times decoding and uploading, not the disk): the backend's
/// path, then the host-decoded one, alternating run by run after one warm-up of each.
/// Checks one MSM over each resident h against the host's MSM over the parameters.
pub(crate) fn mapped_side_by_side<B: ComputeBackend>(
    backend: &B,
    log: u32,
    opts: &Options,
) -> Result<(Vec<Duration>, Vec<Duration>), String> {
    let e = |e: Groth16Error| e.to_string();
    let mut rng = ChaCha20Rng::seed_from_u64(opts.seed);
    let circuit = MimcLike::filling_domain(log, Some(Fr::from(opts.seed)));
    let params = benchmark_parameters(circuit, &mut rng)?;
    let file = TempFile(opts.out_dir.join(format!("params-2^{log}.params")));
    std::fs::create_dir_all(&opts.out_dir).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    params.write(&mut bytes).map_err(e)?;
    std::fs::write(&file.0, &bytes).map_err(|e| format!("{}: {e}", file.0.display()))?;
    drop(bytes);
    let mapped = MappedParameters::open(&file.0, false).map_err(e)?;
    let host = HostDecoded(&mapped);

    let scalars: Vec<Fr> = (0..params.h.len()).map(|_| Fr::random(&mut rng)).collect();
    let want = sluice_msm::msm_g1_vartime(&params.h, &scalars, None).map_err(|e| e.to_string())?;
    drop(params);
    let check = |resident: &ResidentParameters<B>, what: &str| -> Result<(), String> {
        let h = resident.g1_bases(backend, G1Query::H).map_err(e)?;
        let got = backend
            .msm_vartime(&h, 0, Scalars::Host(&scalars), None)
            .map_err(|e| e.to_string())?;
        match got == want {
            true => Ok(()),
            false => Err(format!(
                "h's MSM over the {what} parameters differs from the host's"
            )),
        }
    };
    let run = |source: &dyn HostParameters| -> Result<(Duration, ResidentParameters<B>), String> {
        backend.synchronize().map_err(|e| e.to_string())?;
        let start = Instant::now();
        let resident = ResidentParameters::upload(source, backend).map_err(e)?;
        backend.synchronize().map_err(|e| e.to_string())?;
        Ok((start.elapsed(), resident))
    };
    check(&run(&mapped)?.1, "device-decoded")?;
    check(&run(&host)?.1, "host-decoded")?;
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for rep in 0..opts.reps {
        bar::runs(rep, opts.reps);
        ours.push(run(&mapped)?.0);
        theirs.push(run(&host)?.0);
    }
    Ok((ours, theirs))
}
