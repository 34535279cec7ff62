//! The typed pipeline configuration and the machine defaults it falls back to.

use std::time::Duration;

use sluice_groth16::Residency;

use crate::gate::{DeviceGate, Priority};
use crate::{HModeChoice, PipelineError, ResidencyChoice};

/// How the pipeline runs. Budgets left `None` come from the machine when the pipeline is
/// built: the host budget from `MemAvailable` in `/proc/meminfo`, each device budget from
/// the backend's [`memory_info`](sluice_backend::ComputeBackend::memory_info) (free bytes
/// where the driver tells, total otherwise), both less [`PipelineConfig::headroom_percent`].
///
/// For the CPU backend "device" memory is host RAM too: give explicit budgets that split
/// the machine between the two.
///
/// Operators can override workers and budgets from the environment with
/// [`PipelineConfig::with_env_overrides`].
#[derive(Clone, Debug)]
pub struct PipelineConfig {
    /// Partition workers asked for: partitions held at once (synthesizing, waiting or in
    /// device work), and the synthesis threads. Clamped to what the host budget holds.
    pub workers: usize,
    /// Host bytes partitions (and fixed host data such as CPU-side b_g2 bases) may hold.
    pub host_budget_bytes: Option<u64>,
    /// Device bytes, per device, the parameters and one partition's work may hold.
    pub device_budget_bytes: Option<u64>,
    /// Percent of the machine's figures left unbudgeted (for everything else the process
    /// and the machine hold) when a budget is taken from the machine.
    pub headroom_percent: u8,
    /// How H runs.
    pub h_mode: HModeChoice,
    /// Where the b_g2 MSM runs.
    pub b_g2: G2Placement,
    /// How long a partition waits for device memory held by others sharing the device
    /// (under the device budget) before it tries anyway and fails with the cause.
    pub device_wait: Duration,
    /// Turns shared with other pipelines on the same devices (`None`: this pipeline's
    /// partitions take the device whenever it is theirs).
    pub device_gate: Option<DeviceGate>,
    /// This pipeline's place at a shared [`DeviceGate`].
    pub priority: Priority,
    /// Which queries of the parameters stay on the devices (by default all where they fit,
    /// else the largest that do, the others streaming).
    pub residency: ResidencyChoice,
    /// Most partitions one pass over streamed parameters proves (`None`: the planner's
    /// choice from the device budget).
    pub pass_partitions: Option<usize>,
    /// Where a streamed h query's MSM waits for its bases. `Some(0)`: nowhere: each
    /// partition's h MSM runs from the device right after its H, h's bases streamed for
    /// it alone (no read-back; h's bases go up once a partition, not once a group), where
    /// the device holds h beside a batch. `Some(g)`: h read back to the host, g
    /// partitions' at a time (capped by the host budget). `None`: the planner's choice,
    /// from the device where that keeps a partition's streamed bytes within
    /// [`STREAMED_SHARE`](crate::STREAMED_SHARE) of the parameters, else the host's groups.
    pub pass_h_group: Option<usize>,
    /// Scalars per streamed batch of bases (`None`: the planner's choice from the device
    /// budget).
    pub stream_batch_len: Option<usize>,
}

impl PartialEq for PipelineConfig {
    fn eq(&self, other: &Self) -> bool {
        let gates_equal = match (&self.device_gate, &other.device_gate) {
            (None, None) => true,
            (Some(a), Some(b)) => a.same_as(b),
            _ => false,
        };
        gates_equal
            && self.workers == other.workers
            && self.host_budget_bytes == other.host_budget_bytes
            && self.device_budget_bytes == other.device_budget_bytes
            && self.headroom_percent == other.headroom_percent
            && self.h_mode == other.h_mode
            && self.b_g2 == other.b_g2
            && self.device_wait == other.device_wait
            && self.priority == other.priority
            && self.residency == other.residency
            && self.pass_partitions == other.pass_partitions
            && self.pass_h_group == other.pass_h_group
            && self.stream_batch_len == other.stream_batch_len
    }
}

impl Eq for PipelineConfig {}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            host_budget_bytes: None,
            device_budget_bytes: None,
            headroom_percent: 10,
            h_mode: HModeChoice::Auto,
            b_g2: G2Placement::Auto,
            device_wait: Duration::from_secs(60),
            device_gate: None,
            priority: Priority::Normal,
            residency: ResidencyChoice::Auto,
            pass_partitions: None,
            pass_h_group: None,
            stream_batch_len: None,
        }
    }
}

/// Where the pipeline runs a partition's b_g2 MSM (the one G2 MSM of a proof).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum G2Placement {
    /// On the device when the backend is an accelerator
    /// ([`BackendInfo::accelerator`](sluice_backend::BackendInfo::accelerator)), else on the
    /// CPU: a GPU runs the G2 MSM many times faster than CPU cores shared with synthesis,
    /// which made the CPU placement the pipeline's bottleneck
    /// (BENCHMARKS.md#pipeline-and-residency).
    #[default]
    Auto,
    /// On the CPU right after synthesis, overlapped with other partitions' device work.
    /// The CPU copy of the b_g2 bases is fixed host memory.
    Cpu,
    /// On the device, with the partition's other MSMs.
    Device,
}

impl G2Placement {
    /// Whether the MSM runs on the CPU for a backend that is an accelerator or not.
    pub fn on_cpu(self, is_accelerator: bool) -> bool {
        match self {
            G2Placement::Auto => !is_accelerator,
            G2Placement::Cpu => true,
            G2Placement::Device => false,
        }
    }
}

impl PipelineConfig {
    /// The environment variables [`with_env_overrides`](Self::with_env_overrides) reads.
    pub const ENV_WORKERS: &'static str = "SLUICE_PIPELINE_WORKERS";
    /// See [`ENV_WORKERS`](Self::ENV_WORKERS).
    pub const ENV_HOST_BUDGET: &'static str = "SLUICE_HOST_BUDGET_BYTES";
    /// See [`ENV_WORKERS`](Self::ENV_WORKERS).
    pub const ENV_DEVICE_BUDGET: &'static str = "SLUICE_DEVICE_BUDGET_BYTES";
    /// See [`ENV_WORKERS`](Self::ENV_WORKERS).
    pub const ENV_B_G2: &'static str = "SLUICE_PIPELINE_B_G2";
    /// See [`ENV_WORKERS`](Self::ENV_WORKERS).
    pub const ENV_RESIDENCY: &'static str = "SLUICE_PIPELINE_RESIDENCY";
    /// See [`ENV_WORKERS`](Self::ENV_WORKERS).
    pub const ENV_PASS_PARTITIONS: &'static str = "SLUICE_PIPELINE_PASS_PARTITIONS";
    /// See [`ENV_WORKERS`](Self::ENV_WORKERS).
    pub const ENV_PASS_H_GROUP: &'static str = "SLUICE_PIPELINE_PASS_H_GROUP";
    /// See [`ENV_WORKERS`](Self::ENV_WORKERS).
    pub const ENV_STREAM_BATCH: &'static str = "SLUICE_PIPELINE_STREAM_BATCH";

    /// This configuration with operator overrides from the environment, where set:
    /// `SLUICE_PIPELINE_WORKERS` (workers), `SLUICE_HOST_BUDGET_BYTES` and
    /// `SLUICE_DEVICE_BUDGET_BYTES` (budgets, in bytes), `SLUICE_PIPELINE_B_G2` (`auto`,
    /// `cpu` or `device`: [`G2Placement`]), `SLUICE_PIPELINE_RESIDENCY` (`auto`,
    /// `resident`, `streamed`, or the resident queries comma-separated, e.g. `h,b_g2`:
    /// [`ResidencyChoice`]), `SLUICE_PIPELINE_PASS_PARTITIONS`,
    /// `SLUICE_PIPELINE_PASS_H_GROUP` and `SLUICE_PIPELINE_STREAM_BATCH` (numbers). Typed
    /// configuration comes first; these exist so a deployment can be tuned without a
    /// rebuild.
    pub fn with_env_overrides(self) -> Result<Self, PipelineError> {
        self.with_overrides(|name| std::env::var(name).ok())
    }

    fn with_overrides(
        mut self,
        var: impl Fn(&'static str) -> Option<String>,
    ) -> Result<Self, PipelineError> {
        let parse = |name: &'static str| -> Result<Option<u64>, PipelineError> {
            var(name)
                .map(|v| {
                    v.trim()
                        .parse::<u64>()
                        .map_err(|_| PipelineError::BadOverride { name, value: v })
                })
                .transpose()
        };
        if let Some(w) = parse(Self::ENV_WORKERS)? {
            self.workers = usize::try_from(w).unwrap_or(usize::MAX);
        }
        if let Some(b) = parse(Self::ENV_HOST_BUDGET)? {
            self.host_budget_bytes = Some(b);
        }
        if let Some(b) = parse(Self::ENV_DEVICE_BUDGET)? {
            self.device_budget_bytes = Some(b);
        }
        if let Some(k) = parse(Self::ENV_PASS_PARTITIONS)? {
            self.pass_partitions = Some(usize::try_from(k).unwrap_or(usize::MAX).max(1));
        }
        if let Some(g) = parse(Self::ENV_PASS_H_GROUP)? {
            self.pass_h_group = Some(usize::try_from(g).unwrap_or(usize::MAX));
        }
        if let Some(b) = parse(Self::ENV_STREAM_BATCH)? {
            self.stream_batch_len = Some(usize::try_from(b).unwrap_or(usize::MAX).max(1));
        }
        if let Some(v) = var(Self::ENV_RESIDENCY) {
            self.residency = parse_residency(&v).ok_or(PipelineError::BadOverride {
                name: Self::ENV_RESIDENCY,
                value: v,
            })?;
        }
        if let Some(v) = var(Self::ENV_B_G2) {
            self.b_g2 = match v.trim().to_ascii_lowercase().as_str() {
                "auto" => G2Placement::Auto,
                "cpu" => G2Placement::Cpu,
                "device" => G2Placement::Device,
                _ => {
                    return Err(PipelineError::BadOverride {
                        name: Self::ENV_B_G2,
                        value: v,
                    })
                }
            };
        }
        Ok(self)
    }

    /// `bytes` less [`headroom_percent`](Self::headroom_percent): what a budget taken from
    /// the machine's figure leaves for the pipeline.
    pub fn less_headroom(&self, bytes: u64) -> u64 {
        bytes / 100 * u64::from(100 - self.headroom_percent.min(100))
    }
}

/// `auto`, `resident`, `streamed`, or resident query names separated by commas (`h`, `l`,
/// `a`, `b_g1`, `b_g2`); `None` for anything else.
fn parse_residency(v: &str) -> Option<ResidencyChoice> {
    match v.trim().to_ascii_lowercase().as_str() {
        "auto" => Some(ResidencyChoice::Auto),
        "resident" => Some(ResidencyChoice::Resident),
        "streamed" => Some(ResidencyChoice::Fixed(Residency::NONE)),
        list => {
            let mut r = Residency::NONE;
            for name in list.split(',').map(str::trim) {
                let flag = match name {
                    "h" => &mut r.h,
                    "l" => &mut r.l,
                    "a" => &mut r.a,
                    "b_g1" => &mut r.b_g1,
                    "b_g2" => &mut r.b_g2,
                    _ => return None,
                };
                *flag = true;
            }
            Some(ResidencyChoice::Fixed(r))
        }
    }
}

/// `MemAvailable` from `/proc/meminfo`, in bytes; `None` where it cannot be read.
pub fn machine_host_available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_available(&info)
}

fn parse_mem_available(info: &str) -> Option<u64> {
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mem_available() {
        let info = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(parse_mem_available(info), Some(20_000_000 * 1024));
        assert_eq!(parse_mem_available("MemTotal: 5 kB\n"), None);
        assert_eq!(parse_mem_available("MemAvailable: lots kB\n"), None);
        if std::path::Path::new("/proc/meminfo").exists() {
            assert!(machine_host_available_bytes().is_some_and(|b| b > 0));
        }
    }

    #[test]
    fn environment_overrides_replace_typed_values() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &'static str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let base = PipelineConfig {
            workers: 3,
            ..PipelineConfig::default()
        };
        let c = base
            .clone()
            .with_overrides(env(&[
                ("SLUICE_PIPELINE_WORKERS", "12"),
                ("SLUICE_HOST_BUDGET_BYTES", " 1000 "),
                ("SLUICE_PIPELINE_B_G2", "Device"),
            ]))
            .unwrap();
        assert_eq!(c.workers, 12);
        assert_eq!(c.b_g2, G2Placement::Device);
        assert_eq!(c.host_budget_bytes, Some(1000));
        assert_eq!(c.device_budget_bytes, None, "unset stays as typed");
        let c = base
            .clone()
            .with_overrides(env(&[
                ("SLUICE_PIPELINE_RESIDENCY", "h, b_g2"),
                ("SLUICE_PIPELINE_PASS_PARTITIONS", "10"),
                ("SLUICE_PIPELINE_PASS_H_GROUP", "3"),
                ("SLUICE_PIPELINE_STREAM_BATCH", "65536"),
            ]))
            .unwrap();
        let h_b_g2 = Residency {
            h: true,
            b_g2: true,
            ..Residency::NONE
        };
        assert_eq!(c.residency, ResidencyChoice::Fixed(h_b_g2));
        assert_eq!(
            (c.pass_partitions, c.pass_h_group, c.stream_batch_len),
            (Some(10), Some(3), Some(65536))
        );
        // 0: no h on the host (h's MSMs from the device).
        let c = (base.clone())
            .with_overrides(env(&[("SLUICE_PIPELINE_PASS_H_GROUP", "0")]))
            .unwrap();
        assert_eq!(c.pass_h_group, Some(0));
        for (v, expect) in [
            ("Streamed", ResidencyChoice::Fixed(Residency::NONE)),
            ("resident", ResidencyChoice::Resident),
            ("auto", ResidencyChoice::Auto),
        ] {
            assert_eq!(parse_residency(v), Some(expect), "{v}");
        }
        assert!(matches!(
            base.clone()
                .with_overrides(env(&[("SLUICE_PIPELINE_RESIDENCY", "h,c")])),
            Err(PipelineError::BadOverride {
                name: "SLUICE_PIPELINE_RESIDENCY",
                ..
            })
        ));
        assert_eq!(base.clone().with_overrides(env(&[])).unwrap(), base);
        assert!(matches!(
            base.clone()
                .with_overrides(env(&[("SLUICE_PIPELINE_B_G2", "gpu")])),
            Err(PipelineError::BadOverride {
                name: "SLUICE_PIPELINE_B_G2",
                ..
            })
        ));
        assert!(matches!(
            base.with_overrides(env(&[("SLUICE_DEVICE_BUDGET_BYTES", "16G")])),
            Err(PipelineError::BadOverride {
                name: "SLUICE_DEVICE_BUDGET_BYTES",
                ..
            })
        ));
    }

    #[test]
    fn auto_places_b_g2_on_accelerators() {
        assert!(!G2Placement::Auto.on_cpu(true));
        assert!(G2Placement::Auto.on_cpu(false));
        assert!(G2Placement::Cpu.on_cpu(true));
        assert!(!G2Placement::Device.on_cpu(false));
    }

    #[test]
    fn headroom() {
        let c = PipelineConfig::default();
        assert_eq!(c.less_headroom(1000), 900);
        assert!(c.workers >= 1);
    }
}
