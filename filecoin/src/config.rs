//! The typed configuration of a [`Prover`](crate::Prover), and the one place the
//! environment is read.

use filecoin_proofs::constants::{SECTOR_SIZE_32_GIB, SECTOR_SIZE_64_GIB};
use sluice::PipelineConfig;

use crate::error::FilecoinError;
use crate::kind::ProofKind;

/// When the prover may generate parameters that are not in the cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GenerateParameters {
    /// For the test sector sizes only (2 KiB to 1 GiB: never on chain); a missing 32 or
    /// 64 GiB file is an error, since proofs made with other parameters are useless there.
    #[default]
    TestSizes,
    /// For every sector size (benchmarks of the production circuits on a machine without
    /// the official files).
    Always,
    /// Never: a missing file is an error.
    Never,
}

impl GenerateParameters {
    /// Whether parameters of `kind` may be generated.
    pub fn allows(self, kind: ProofKind) -> bool {
        match self {
            GenerateParameters::Always => true,
            GenerateParameters::Never => false,
            GenerateParameters::TestSizes => {
                !matches!(kind.sector_size(), SECTOR_SIZE_32_GIB | SECTOR_SIZE_64_GIB)
            }
        }
    }
}

/// How a [`Prover`](crate::Prover) runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilecoinConfig {
    /// The pipelines' configuration (workers, budgets); each proof kind gets a pipeline of
    /// its own over the same devices, taking turns through one device gate.
    pub pipeline: PipelineConfig,
    /// When missing parameters are generated.
    pub generate: GenerateParameters,
    /// Whether PoSt and update proofs are checked with filecoin-proofs' verifier before
    /// they are returned (C2 proofs always are, as filecoin-proofs does).
    pub verify: bool,
    /// Whether PoRep and PoSt partitions are synthesized on every core, a part per
    /// challenge or sector ([`crate::fork`]); `false` synthesizes each partition on one
    /// thread, as filecoin-proofs does. The proofs are the same circuits' either way.
    pub forked_synthesis: bool,
    /// Whether each kind's constraint matrices are recorded once (or read from the cache,
    /// `<circuit id>.sluice-matrices`) so partitions synthesize their witness only, a and b
    /// evaluated from the matrices on every core. The matrices stay in host memory beside
    /// the kind's pipeline (planned as its fixed memory).
    pub matrices: bool,
}

impl Default for FilecoinConfig {
    fn default() -> Self {
        FilecoinConfig {
            pipeline: PipelineConfig::default(),
            generate: GenerateParameters::default(),
            verify: true,
            forked_synthesis: true,
            matrices: true,
        }
    }
}

impl FilecoinConfig {
    /// Chooses when parameters are generated: `never`, `test-sizes` or `always`.
    pub const ENV_GENERATE: &'static str = "SLUICE_FILECOIN_GENERATE_PARAMS";
    /// Whether PoSt and update proofs are verified: `0`/`false` or `1`/`true`.
    pub const ENV_VERIFY: &'static str = "SLUICE_FILECOIN_VERIFY";
    /// Whether partitions are synthesized forked, on every core: `0`/`false` or `1`/`true`.
    pub const ENV_FORKED: &'static str = "SLUICE_FILECOIN_FORKED_SYNTHESIS";
    /// Whether constraint matrices are used: `0`/`false` or `1`/`true`.
    pub const ENV_MATRICES: &'static str = "SLUICE_FILECOIN_MATRICES";

    /// This configuration with operator overrides from the environment: the pipeline's
    /// ([`PipelineConfig::with_env_overrides`]), [`ENV_GENERATE`](Self::ENV_GENERATE),
    /// [`ENV_VERIFY`](Self::ENV_VERIFY), [`ENV_FORKED`](Self::ENV_FORKED) and
    /// [`ENV_MATRICES`](Self::ENV_MATRICES). The parameter cache's directory is filecoin-proofs'
    /// own setting, `FIL_PROOFS_PARAMETER_CACHE`, so that its verifier reads the same files.
    pub fn with_env_overrides(self) -> Result<Self, FilecoinError> {
        self.with_overrides(|name| std::env::var(name).ok())
    }

    fn with_overrides(
        mut self,
        var: impl Fn(&'static str) -> Option<String>,
    ) -> Result<Self, FilecoinError> {
        self.pipeline =
            self.pipeline
                .with_env_overrides()
                .map_err(|source| FilecoinError::Setup {
                    kind: "configuration".into(),
                    source,
                })?;
        let bad = |name: &'static str, value: String, expected: &'static str| {
            FilecoinError::Input(format!("{name}={value:?}: expected {expected}"))
        };
        if let Some(v) = var(Self::ENV_GENERATE) {
            self.generate = match v.trim() {
                "never" => GenerateParameters::Never,
                "test-sizes" => GenerateParameters::TestSizes,
                "always" => GenerateParameters::Always,
                _ => return Err(bad(Self::ENV_GENERATE, v, "never, test-sizes or always")),
            };
        }
        let flag = |name: &'static str, default: bool| match var(name) {
            None => Ok(default),
            Some(v) => match v.trim() {
                "1" | "true" => Ok(true),
                "0" | "false" => Ok(false),
                _ => Err(bad(name, v, "0, 1, true or false")),
            },
        };
        self.verify = flag(Self::ENV_VERIFY, self.verify)?;
        self.forked_synthesis = flag(Self::ENV_FORKED, self.forked_synthesis)?;
        self.matrices = flag(Self::ENV_MATRICES, self.matrices)?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use filecoin_proofs_api::RegisteredSealProof;

    #[test]
    fn overrides_parse_and_bad_values_name_the_variable() {
        let c = FilecoinConfig::default()
            .with_overrides(|n| match n {
                FilecoinConfig::ENV_GENERATE => Some("never".into()),
                FilecoinConfig::ENV_VERIFY => Some("0".into()),
                FilecoinConfig::ENV_FORKED => Some("false".into()),
                FilecoinConfig::ENV_MATRICES => Some("0".into()),
                _ => None,
            })
            .unwrap();
        assert_eq!(c.generate, GenerateParameters::Never);
        assert!(!c.verify);
        assert!(!c.forked_synthesis);
        assert!(!c.matrices);
        assert!(FilecoinConfig::default().forked_synthesis);
        let e = FilecoinConfig::default()
            .with_overrides(|n| (n == FilecoinConfig::ENV_VERIFY).then(|| "maybe".into()))
            .unwrap_err();
        assert!(
            e.to_string().contains("SLUICE_FILECOIN_VERIFY=\"maybe\""),
            "{e}"
        );
    }

    #[test]
    fn test_sizes_are_generated_and_production_sizes_are_not() {
        let small = ProofKind::Seal(RegisteredSealProof::StackedDrg2KiBV1_1);
        let big = ProofKind::Seal(RegisteredSealProof::StackedDrg32GiBV1_1);
        assert!(GenerateParameters::TestSizes.allows(small));
        assert!(!GenerateParameters::TestSizes.allows(big));
        assert!(GenerateParameters::Always.allows(big));
        assert!(!GenerateParameters::Never.allows(small));
    }
}
