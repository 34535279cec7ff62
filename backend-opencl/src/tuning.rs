//! The OpenCL backend's tuning: typed settings whose [`Default`] is what the backend was
//! measured fastest with, the ranges each may take, and their environment overrides (parsed
//! here from the values [`OpenClConfig::with_env_overrides`](crate::OpenClConfig::with_env_overrides)
//! reads).

use std::ffi::OsString;
use std::ops::RangeInclusive;
use std::path::PathBuf;

use crate::source::ProgramKind;

/// A tuning setting or environment override that is out of its range or unparsable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpenClConfigError {
    /// An environment override (`name`) holds `value`, which is not `expected`.
    #[error("{name}={value:?}: expected {expected}")]
    BadOverride {
        /// The variable.
        name: &'static str,
        /// What it holds.
        value: String,
        /// What it may hold.
        expected: String,
    },
    /// A typed setting (`field`, a path into [`OpenClTuning`]) is `value`, outside `expected`.
    #[error("OpenClTuning::{field} = {value}: expected {expected}")]
    OutOfRange {
        /// The setting.
        field: &'static str,
        /// Its value.
        value: u64,
        /// Its range.
        expected: String,
    },
}

/// Every tuning knob of an [`OpenClBackend`](crate::OpenClBackend): two backends in one
/// process may differ. The defaults are what the backend runs with unless told otherwise.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenClTuning {
    /// The MSM's plans and point kernels.
    pub msm: MsmTuning,
    /// The NTT's passes.
    pub ntt: NttTuning,
    /// Pinned staging of large transfers.
    pub staging: StagingTuning,
    /// The most page-locked host memory the backend lends for host vectors
    /// ([`host_allocator`](sluice_backend::ComputeBackend::host_allocator)), in bytes, where
    /// transfers are staged; `None` (the default): a quarter of the host's memory. 0 lends
    /// none.
    pub pinned_host_bytes: Option<u64>,
    /// Extra program build options, and whether build logs are printed.
    pub build_options: BuildOptions,
    /// Whether the queues record every command's device time, for
    /// [`OpenClBackend::profile_report`](crate::OpenClBackend::profile_report).
    pub profile: bool,
    /// With `profile`, the shortest idle gap a report lists one by one (when it began, how
    /// long, the commands around it), in milliseconds; `None` (the default): gaps of 10 ms
    /// or more. Lower it to see where a proof's short gaps lie, not only their sum.
    pub profile_gaps_listed_ms: Option<u32>,
    /// Launches to record for replay under NVIDIA's profiler; `None` (the default) records
    /// none.
    pub capture: Option<CaptureConfig>,
    /// Whether a dropped device buffer is released at once (and no MSM scratch kept for
    /// reuse). `false` (the default): it is freed at the queue's next drain (a blocking
    /// read, write or finish), still counted in its tracker until then, since on NVIDIA a
    /// release waits for the queued work and would hold the host back mid-phase; MSM
    /// scratch stays spare for the next MSM until a finish (BENCHMARKS.md#partition).
    pub immediate_releases: bool,
    /// Whether an MSM's scratch is freed once it is idle rather than kept (still counted)
    /// for the next MSM. `false` (the default): kept until a finish (the end of a proof)
    /// or an allocation that needs the memory, since on NVIDIA freeing an MSM's gigabytes
    /// of scratch idled the device at each MSM's end (BENCHMARKS.md#partition); `true`
    /// returns the memory at once, for callers that share the device.
    pub free_msm_scratch: bool,
}

/// The MSM's tuning: `None` leaves each choice to the planner's cost model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MsmTuning {
    /// Window bits c of every plan and of a shifted-bases table, 2 to 24; the planner
    /// chooses at most 20.
    pub window_bits: Option<usize>,
    /// Entries per accumulate segment, 1 to 2^20.
    pub segment_len: Option<usize>,
    /// Pieces per reduce work item, 1 to 2^20 (default 16).
    pub reduce_slice: Option<usize>,
    /// Work-group size of the point kernels (accumulate, reduce, window sums); by default
    /// 64 for G1 and the driver's choice for G2 on GPUs, 64 on CPU devices.
    pub point_group: Option<WorkGroup>,
    /// Scalars per work item of the count and the scatter, 1 to 64.
    pub scalars_per_item: Option<usize>,
}

/// A kernel's work-group size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkGroup {
    /// The driver chooses.
    Driver,
    /// This many work items (1 to 1024).
    Items(usize),
}

/// The NTT's passes. The defaults were the fastest measured on an H200
/// (BENCHMARKS.md#ntt).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NttTuning {
    /// log2 of the adjacent columns one work group owns in a pass, 0 to 3 (default 3: 256
    /// contiguous bytes per tile row; 0 gives one-column sets).
    pub columns_log: u32,
    /// Rounds each work item runs in registers between local-memory exchanges (log2 of the
    /// register radix), 1 or 2 (default 1: more registers cost occupancy).
    pub radix_log: u32,
    /// log2 of the tiles a work group runs with one twiddle table, 0 to 3 (default 3; 0
    /// computes the table for every tile).
    pub tiles_log: u32,
}

impl Default for NttTuning {
    fn default() -> Self {
        NttTuning {
            columns_log: 3,
            radix_log: 1,
            tiles_log: 3,
        }
    }
}

/// Pinned staging of large transfers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StagingTuning {
    /// The size of each of the two pinned pieces a large transfer goes through, in KiB, 64
    /// to 65536 (default 16384: smaller pieces start the DMA sooner but made MSMs slower on
    /// an H200, BENCHMARKS.md#pipeline-and-residency).
    pub piece_kib: usize,
}

impl Default for StagingTuning {
    fn default() -> Self {
        StagingTuning { piece_kib: 16384 }
    }
}

/// Extra OpenCL build options, after the backend's own (the PTX path on NVIDIA); part of
/// the program cache's key like every option.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildOptions {
    /// For every program: e.g. `-cl-nv-verbose` (registers and spills in the build log).
    pub all: String,
    /// For the Fr program: e.g. `-DKERNEL_FUSED_FR_ROWS`.
    pub fr: String,
    /// For the G1 MSM program: e.g. `-DKERNEL_NOINLINE_CURVE`, `-DKERNEL_SPLIT_FQ_ROWS`.
    pub g1_msm: String,
    /// For the G2 MSM program: e.g. `-DKERNEL_INLINE_CURVE`.
    pub g2_msm: String,
    /// Print each program's build log to stderr.
    pub print_log: bool,
}

impl BuildOptions {
    /// The extra options of one program: `all`, then the program's own.
    pub(crate) fn for_program(&self, kind: ProgramKind) -> String {
        let own = match kind {
            ProgramKind::Fr => self.fr.as_str(),
            ProgramKind::G1Msm => &self.g1_msm,
            ProgramKind::G2Msm => &self.g2_msm,
            #[cfg(test)]
            ProgramKind::FieldTest => "",
        };
        [self.all.as_str(), own]
            .iter()
            .filter(|o| !o.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Launches to capture for replay outside OpenCL (`tools/replay_capture.py`): the first
/// `count` launches of each kernel in `kernels` go to `dir/<kernel>-<k>/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureConfig {
    /// Where the captures go.
    pub dir: PathBuf,
    /// The kernels to capture.
    pub kernels: Vec<String>,
    /// Launches captured per kernel (counted per backend).
    pub count: usize,
}

const WINDOW_BITS: RangeInclusive<usize> = 2..=24;
const SEGMENT_LEN: RangeInclusive<usize> = 1..=1 << 20;
const REDUCE_SLICE: RangeInclusive<usize> = 1..=1 << 20;
const POINT_GROUP: RangeInclusive<usize> = 1..=1024;
const SCALARS_PER_ITEM: RangeInclusive<usize> = 1..=64;
const COLUMNS_LOG: RangeInclusive<u32> = 0..=3;
const RADIX_LOG: RangeInclusive<u32> = 1..=2;
const TILES_LOG: RangeInclusive<u32> = 0..=3;
const PIECE_KIB: RangeInclusive<usize> = 64..=65536;

impl OpenClTuning {
    /// `Ok` when every setting is within its range; else the first that is not.
    pub fn check(&self) -> Result<(), OpenClConfigError> {
        fn within<T: Copy + PartialOrd + Into<u64>>(
            field: &'static str,
            v: T,
            range: RangeInclusive<T>,
        ) -> Result<(), OpenClConfigError> {
            match range.contains(&v) {
                true => Ok(()),
                false => Err(OpenClConfigError::OutOfRange {
                    field,
                    value: v.into(),
                    expected: format!("{}..={}", (*range.start()).into(), (*range.end()).into()),
                }),
            }
        }
        let n = |v: usize| v as u64;
        let wide = |r: RangeInclusive<usize>| n(*r.start())..=n(*r.end());
        let m = &self.msm;
        let optional = [
            ("msm.window_bits", m.window_bits, WINDOW_BITS),
            ("msm.segment_len", m.segment_len, SEGMENT_LEN),
            ("msm.reduce_slice", m.reduce_slice, REDUCE_SLICE),
            ("msm.scalars_per_item", m.scalars_per_item, SCALARS_PER_ITEM),
        ];
        for (field, v, range) in optional {
            v.map_or(Ok(()), |v| within(field, n(v), wide(range)))?;
        }
        if let Some(WorkGroup::Items(g)) = m.point_group {
            within("msm.point_group", n(g), wide(POINT_GROUP))?;
        }
        within("ntt.columns_log", self.ntt.columns_log, COLUMNS_LOG)?;
        within("ntt.radix_log", self.ntt.radix_log, RADIX_LOG)?;
        within("ntt.tiles_log", self.ntt.tiles_log, TILES_LOG)?;
        within(
            "staging.piece_kib",
            n(self.staging.piece_kib),
            wide(PIECE_KIB),
        )
    }

    /// This tuning with the overrides `var` returns (see
    /// [`OpenClConfig::with_env_overrides`](crate::OpenClConfig::with_env_overrides) for
    /// the names), each checked against its range.
    pub(crate) fn with_overrides(
        mut self,
        var: &dyn Fn(&'static str) -> Option<OsString>,
    ) -> Result<Self, OpenClConfigError> {
        let env = Overrides(var);
        let m = &mut self.msm;
        m.window_bits = env
            .number("SLUICE_MSM_WINDOW", WINDOW_BITS)?
            .or(m.window_bits);
        m.segment_len = env
            .number("SLUICE_MSM_CHUNK", SEGMENT_LEN)?
            .or(m.segment_len);
        m.reduce_slice = env
            .number("SLUICE_MSM_SLICE", REDUCE_SLICE)?
            .or(m.reduce_slice);
        m.scalars_per_item = env
            .number("SLUICE_MSM_PER_ITEM", SCALARS_PER_ITEM)?
            .or(m.scalars_per_item);
        if let Some(g) = env.number("SLUICE_MSM_GROUP", 0..=*POINT_GROUP.end())? {
            m.point_group = Some(match g {
                0 => WorkGroup::Driver,
                g => WorkGroup::Items(g),
            });
        }
        let t = &mut self.ntt;
        t.columns_log = env
            .number("SLUICE_NTT_COLUMNS", COLUMNS_LOG)?
            .unwrap_or(t.columns_log);
        t.radix_log = env
            .number("SLUICE_NTT_RADIX", RADIX_LOG)?
            .unwrap_or(t.radix_log);
        t.tiles_log = env
            .number("SLUICE_NTT_TILES", TILES_LOG)?
            .unwrap_or(t.tiles_log);
        let s = &mut self.staging;
        s.piece_kib = env
            .number("SLUICE_STAGING_KIB", PIECE_KIB)?
            .unwrap_or(s.piece_kib);
        if let Some(mib) = env.number("SLUICE_PINNED_HOST_MIB", 0..=u64::MAX >> 20)? {
            self.pinned_host_bytes = Some(mib << 20);
        }
        let b = &mut self.build_options;
        for (name, options) in [
            ("SLUICE_OPENCL_OPTIONS", &mut b.all),
            ("SLUICE_OPENCL_OPTIONS_FR", &mut b.fr),
            ("SLUICE_OPENCL_OPTIONS_G1_MSM", &mut b.g1_msm),
            ("SLUICE_OPENCL_OPTIONS_G2_MSM", &mut b.g2_msm),
        ] {
            if let Some(o) = env.text(name)? {
                *options = o;
            }
        }
        b.print_log = env.switch("SLUICE_BUILD_LOG")?.unwrap_or(b.print_log);
        self.profile = env.switch("SLUICE_PROFILE")?.unwrap_or(self.profile);
        self.immediate_releases = env
            .switch("SLUICE_OPENCL_IMMEDIATE_RELEASES")?
            .unwrap_or(self.immediate_releases);
        self.free_msm_scratch = env
            .switch("SLUICE_OPENCL_FREE_MSM_SCRATCH")?
            .unwrap_or(self.free_msm_scratch);
        if let Some(ms) = env.number("SLUICE_PROFILE_GAPS_MS", 0..=u32::MAX)? {
            self.profile_gaps_listed_ms = Some(ms);
        }
        if let Some(dir) = env.path("SLUICE_CAPTURE_DIR") {
            let kernels = env.text("SLUICE_CAPTURE_KERNEL")?.ok_or_else(|| {
                OpenClConfigError::BadOverride {
                    name: "SLUICE_CAPTURE_KERNEL",
                    value: String::new(),
                    expected: "the kernels to capture, as SLUICE_CAPTURE_DIR is set".into(),
                }
            })?;
            self.capture = Some(CaptureConfig {
                dir,
                kernels: kernels.split(',').map(|k| k.trim().to_owned()).collect(),
                count: env
                    .number("SLUICE_CAPTURE_COUNT", 0..=usize::MAX)?
                    .unwrap_or(1),
            });
        }
        self.check()?;
        Ok(self)
    }
}

/// Environment overrides, read through the caller's lookup.
pub(crate) struct Overrides<'a>(pub(crate) &'a dyn Fn(&'static str) -> Option<OsString>);

impl Overrides<'_> {
    /// The variable as text, where set; not valid UTF-8 is an error.
    pub(crate) fn text(&self, name: &'static str) -> Result<Option<String>, OpenClConfigError> {
        self.0(name)
            .map(|v| {
                v.into_string().map_err(|v| OpenClConfigError::BadOverride {
                    name,
                    value: v.to_string_lossy().into_owned(),
                    expected: "UTF-8 text".into(),
                })
            })
            .transpose()
    }

    /// The variable as a path, where set and not empty.
    pub(crate) fn path(&self, name: &'static str) -> Option<PathBuf> {
        self.0(name).filter(|v| !v.is_empty()).map(PathBuf::from)
    }

    /// The variable as a number within `range`, where set.
    fn number<T>(
        &self,
        name: &'static str,
        range: RangeInclusive<T>,
    ) -> Result<Option<T>, OpenClConfigError>
    where
        T: std::str::FromStr + PartialOrd + std::fmt::Display,
    {
        let Some(text) = self.text(name)? else {
            return Ok(None);
        };
        match text.trim().parse::<T>() {
            Ok(v) if range.contains(&v) => Ok(Some(v)),
            _ => Err(OpenClConfigError::BadOverride {
                name,
                value: text,
                expected: format!("an integer in {}..={}", range.start(), range.end()),
            }),
        }
    }

    /// The variable as `0` or `1`, where set.
    pub(crate) fn switch(&self, name: &'static str) -> Result<Option<bool>, OpenClConfigError> {
        match self.text(name)?.as_deref().map(str::trim) {
            None => Ok(None),
            Some("1") => Ok(Some(true)),
            Some("0") => Ok(Some(false)),
            Some(other) => Err(OpenClConfigError::BadOverride {
                name,
                value: other.to_owned(),
                expected: "0 or 1".into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lookup over fixed pairs, as the environment would answer.
    fn env(
        pairs: &'static [(&'static str, &'static str)],
    ) -> impl Fn(&'static str) -> Option<OsString> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn defaults_are_within_their_ranges_and_no_overrides_change_nothing() {
        let t = OpenClTuning::default();
        assert_eq!(t.check(), Ok(()));
        assert_eq!(t.clone().with_overrides(&env(&[])), Ok(t));
    }

    #[test]
    fn overrides_replace_typed_values() {
        let base = OpenClTuning {
            profile: true,
            ..OpenClTuning::default()
        };
        let t = base
            .with_overrides(&env(&[
                ("SLUICE_MSM_WINDOW", "18"),
                ("SLUICE_MSM_GROUP", "0"),
                ("SLUICE_MSM_PER_ITEM", " 4 "),
                ("SLUICE_NTT_RADIX", "2"),
                ("SLUICE_STAGING_KIB", "4096"),
                ("SLUICE_PINNED_HOST_MIB", "0"),
                ("SLUICE_OPENCL_OPTIONS", "-cl-nv-verbose"),
                ("SLUICE_OPENCL_OPTIONS_G2_MSM", "-DKERNEL_INLINE_CURVE"),
                ("SLUICE_PROFILE", "0"),
                ("SLUICE_PROFILE_GAPS_MS", "2"),
                ("SLUICE_OPENCL_IMMEDIATE_RELEASES", "1"),
                ("SLUICE_CAPTURE_DIR", "/tmp/c"),
                ("SLUICE_CAPTURE_KERNEL", "a, b"),
            ]))
            .unwrap();
        assert_eq!(t.msm.window_bits, Some(18));
        assert_eq!(t.msm.point_group, Some(WorkGroup::Driver));
        assert_eq!(t.msm.scalars_per_item, Some(4));
        assert_eq!(t.msm.segment_len, None, "unset stays as typed");
        assert_eq!(t.ntt.radix_log, 2);
        assert_eq!(t.ntt.columns_log, 3);
        assert_eq!(t.staging.piece_kib, 4096);
        assert_eq!(t.pinned_host_bytes, Some(0));
        assert_eq!(
            t.build_options.for_program(ProgramKind::G2Msm),
            "-cl-nv-verbose -DKERNEL_INLINE_CURVE"
        );
        assert_eq!(
            t.build_options.for_program(ProgramKind::Fr),
            "-cl-nv-verbose"
        );
        assert!(!t.profile, "an override turns a typed setting off too");
        assert_eq!(t.profile_gaps_listed_ms, Some(2));
        assert!(t.immediate_releases);
        let capture = t.capture.unwrap();
        assert_eq!(capture.kernels, ["a", "b"]);
        assert_eq!((capture.dir, capture.count), (PathBuf::from("/tmp/c"), 1));
    }

    #[test]
    fn bad_overrides_are_errors_naming_the_variable() {
        for (pairs, name) in [
            (&[("SLUICE_MSM_WINDOW", "25")][..], "SLUICE_MSM_WINDOW"),
            (&[("SLUICE_MSM_WINDOW", "1")], "SLUICE_MSM_WINDOW"),
            (&[("SLUICE_NTT_TILES", "three")], "SLUICE_NTT_TILES"),
            (&[("SLUICE_STAGING_KIB", "32")], "SLUICE_STAGING_KIB"),
            (&[("SLUICE_PROFILE", "yes")], "SLUICE_PROFILE"),
            (
                &[("SLUICE_PROFILE_GAPS_MS", "-1")],
                "SLUICE_PROFILE_GAPS_MS",
            ),
            (&[("SLUICE_CAPTURE_DIR", "/tmp/c")], "SLUICE_CAPTURE_KERNEL"),
        ] {
            let pairs: &'static [(&'static str, &'static str)] = Box::leak(pairs.into());
            match OpenClTuning::default().with_overrides(&env(pairs)) {
                Err(OpenClConfigError::BadOverride { name: got, .. }) => {
                    assert_eq!(got, name, "{pairs:?}")
                }
                other => panic!("{pairs:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn typed_settings_out_of_range_are_errors_naming_the_field() {
        let mut t = OpenClTuning::default();
        t.ntt.radix_log = 3;
        assert!(matches!(
            t.check(),
            Err(OpenClConfigError::OutOfRange {
                field: "ntt.radix_log",
                value: 3,
                ..
            })
        ));
        let mut t = OpenClTuning::default();
        t.msm.point_group = Some(WorkGroup::Items(0));
        assert!(matches!(
            t.check(),
            Err(OpenClConfigError::OutOfRange {
                field: "msm.point_group",
                ..
            })
        ));
    }
}
