//! Large host vectors on transparent huge pages, where the operating system offers them.
//!
//! A proof's host vectors are large (4 GiB each for a, b and the witness at 2^27), and with
//! 4 KiB pages the kernel's work on them is not small: a fresh vector is several times
//! faster to write, and far faster to free, on 2 MiB pages (BENCHMARKS.md#synthesis).
//! The prover frees a and b, and the witness as it returns, on its own thread. So vectors
//! of [`MIN_ADVISED_BYTES`] or more made by the prover ask the kernel for huge pages
//! (`madvise(MADV_HUGEPAGE)`) before their first write.
//!
//! The advice is only advice: where transparent huge pages are off (or on other systems)
//! the vectors are ordinary and nothing fails. [`set_policy`] (or `SLUICE_HUGE_PAGES=0`,
//! read by [`HugePages::from_env`]) asks for none, for example to compare, or where the
//! kernel's compaction for huge pages stalls. The policy is the process's: the vectors are
//! made far from any configuration, and the pages are the operating system's.

use std::ffi::OsString;
use std::sync::OnceLock;

use crate::{Allocation, BackendError};

/// Whether large host vectors are advised onto huge pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HugePages {
    /// Advise vectors of [`MIN_ADVISED_BYTES`] or more (the default on Linux).
    Advise,
    /// Advise none.
    Off,
}

/// `SLUICE_HUGE_PAGES` holds something other than `0` or `1`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("SLUICE_HUGE_PAGES={value:?}: expected 0 or 1")]
pub struct BadHugePages {
    /// What the variable holds.
    pub value: String,
}

impl HugePages {
    /// The policy `SLUICE_HUGE_PAGES` asks for: `0` off, `1` or unset advise.
    pub fn from_env() -> Result<Self, BadHugePages> {
        Self::from_value(std::env::var_os("SLUICE_HUGE_PAGES"))
    }

    fn from_value(value: Option<OsString>) -> Result<Self, BadHugePages> {
        match value.as_ref().map(|v| v.to_str().map(str::trim)) {
            None | Some(Some("1")) => Ok(HugePages::Advise),
            Some(Some("0")) => Ok(HugePages::Off),
            _ => Err(BadHugePages {
                value: value.unwrap_or_default().to_string_lossy().into_owned(),
            }),
        }
    }
}

/// The process's policy, set once: by [`set_policy`], else from the environment at the
/// first large vector.
static POLICY: OnceLock<HugePages> = OnceLock::new();

/// Sets the process's policy; `false` (and no change) when it is already set, by an
/// earlier call or by the first large vector made.
pub fn set_policy(policy: HugePages) -> bool {
    POLICY.set(policy).is_ok()
}

/// Vectors below this many bytes are left alone: the allocator may serve them from its
/// heap, and their page work is small.
pub const MIN_ADVISED_BYTES: usize = 8 << 20;

/// Whether vectors are advised: the policy set, else the environment's (a bad value is
/// reported and leaves the default).
fn enabled() -> bool {
    let policy = POLICY.get_or_init(|| {
        HugePages::from_env().unwrap_or_else(|e| {
            log::warn!("{e}; large host vectors stay advised onto huge pages");
            HugePages::Advise
        })
    });
    *policy == HugePages::Advise
}

/// An empty vector with room for `capacity` elements, its pages advised as huge
/// ([`advise_huge_pages`]); `None` when the allocator refuses the capacity.
pub fn vec_with_huge_pages<T>(capacity: usize) -> Option<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(capacity).ok()?;
    advise_huge_pages(&v);
    Some(v)
}

/// `len` copies of `value` in a vector advised as huge ([`vec_with_huge_pages`]), every
/// page written; `None` when the allocator refuses.
pub fn filled_with_huge_pages<T: Clone>(len: usize, value: T) -> Option<Vec<T>> {
    let mut v = vec_with_huge_pages(len)?;
    v.resize(len, value);
    Some(v)
}

/// [`filled_with_huge_pages`] for memory `allocation` already counts (as `what`): the
/// allocator refusing what the tracker allowed is [`BackendError::OutOfMemory`] all the
/// same, in the allocation's kind.
pub fn filled_for<T: Clone>(
    allocation: &Allocation,
    what: &str,
    len: usize,
    value: T,
) -> Result<Vec<T>, BackendError> {
    let mut v = empty_for(allocation, what, len)?;
    v.resize(len, value);
    Ok(v)
}

/// An empty vector with room for `capacity` elements ([`vec_with_huge_pages`]) for memory
/// `allocation` already counts, for callers that write every element themselves (on
/// several threads, so that the first touch of its pages is spread too); refused as in
/// [`filled_for`].
pub fn empty_for<T>(
    allocation: &Allocation,
    what: &str,
    capacity: usize,
) -> Result<Vec<T>, BackendError> {
    vec_with_huge_pages(capacity).ok_or_else(|| BackendError::OutOfMemory {
        kind: allocation.kind(),
        what: what.to_owned(),
        requested: allocation.bytes(),
        available: 0,
    })
}

/// Asks the kernel to back the whole pages of `v`'s allocation (its capacity) with huge
/// pages from their next first touch; pages already written keep their size. Returns
/// whether the advice was given and taken: `false` for vectors under
/// [`MIN_ADVISED_BYTES`], with the policy [`HugePages::Off`], off Linux, or when the kernel
/// refuses (no transparent huge pages).
pub fn advise_huge_pages<T>(v: &Vec<T>) -> bool {
    let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
    if bytes < MIN_ADVISED_BYTES || !enabled() {
        return false;
    }
    advise(v.as_ptr() as usize, bytes)
}

#[cfg(target_os = "linux")]
fn advise(addr: usize, bytes: usize) -> bool {
    // SAFETY: sysconf has no preconditions.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as usize,
        _ => return false,
    };
    // Only pages wholly inside the allocation: a neighbour's memory is never advised.
    let start = addr.next_multiple_of(page);
    let end = (addr + bytes) / page * page;
    if end <= start {
        return false;
    }
    // SAFETY: [start, end) is page-aligned and lies inside the vector's allocation, which
    // lives across the call; MADV_HUGEPAGE changes how the kernel backs those pages, never
    // their contents.
    unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn advise(_addr: usize, _bytes: usize) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_names_the_policy_and_bad_values_are_errors() {
        let v = |s: &str| Some(OsString::from(s));
        assert_eq!(HugePages::from_value(None), Ok(HugePages::Advise));
        assert_eq!(HugePages::from_value(v("1")), Ok(HugePages::Advise));
        assert_eq!(HugePages::from_value(v(" 0 ")), Ok(HugePages::Off));
        assert_eq!(
            HugePages::from_value(v("off")),
            Err(BadHugePages {
                value: "off".into()
            })
        );
    }

    #[test]
    fn small_vectors_are_not_advised() {
        let v: Vec<u64> = Vec::with_capacity(1024);
        assert!(!advise_huge_pages(&v));
        assert_eq!(
            vec_with_huge_pages::<u64>(16).map(|v| v.capacity()),
            Some(16)
        );
    }

    #[test]
    fn filled_vectors_hold_their_value() {
        let len = MIN_ADVISED_BYTES / 8 + 3;
        assert_eq!(filled_with_huge_pages(len, 7u64), Some(vec![7; len]));
        assert_eq!(filled_with_huge_pages(0, 7u64), Some(vec![]));
    }

    #[test]
    fn absurd_capacities_are_refused() {
        assert!(vec_with_huge_pages::<u64>(usize::MAX / 4).is_none());
        assert!(filled_with_huge_pages(usize::MAX / 4, 0u64).is_none());
        let tracker = crate::MemoryTracker::default();
        let counted = tracker
            .allocate(crate::MemoryKind::Host, "x", 1 << 20)
            .expect("no limit");
        assert!(matches!(
            filled_for(&counted, "x", usize::MAX / 4, 0u64),
            Err(BackendError::OutOfMemory {
                kind: crate::MemoryKind::Host,
                requested: 1048576,
                ..
            })
        ));
        assert_eq!(filled_for(&counted, "x", 3, 7u64).ok(), Some(vec![7; 3]));
    }

    /// Where the kernel takes the advice, the vector's mapping carries it: `hg` among the
    /// VmFlags of /proc/self/smaps (whether huge pages then back it is the system's call).
    #[cfg(target_os = "linux")]
    #[test]
    fn advised_mappings_carry_the_flag() {
        let v = vec_with_huge_pages::<u64>(4 * MIN_ADVISED_BYTES / 8).expect("allocation");
        if !advise_huge_pages(&v) {
            // Refused (a kernel without transparent huge pages): nothing to check.
            eprintln!("madvise(MADV_HUGEPAGE) refused here; skipping the smaps check");
            return;
        }
        let addr = v.as_ptr() as usize + v.capacity() * 4;
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        let mut inside = false;
        let mut flagged = None;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((lo, hi)) = range.split_once('-') {
                    if let (Ok(lo), Ok(hi)) =
                        (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                    {
                        inside = (lo..hi).contains(&addr);
                        continue;
                    }
                }
            }
            if inside {
                if let Some(flags) = line.strip_prefix("VmFlags:") {
                    flagged = Some(flags.split_whitespace().any(|f| f == "hg"));
                }
            }
        }
        assert_eq!(
            flagged,
            Some(true),
            "the vector's mapping lacks the hg flag"
        );
    }
}
