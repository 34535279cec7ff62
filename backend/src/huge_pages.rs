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
//! the vectors are ordinary and nothing fails. Set `SLUICE_HUGE_PAGES=0` to ask for none
//! (for example to compare, or where the kernel's compaction for huge pages stalls).

use crate::{Allocation, BackendError};

/// Vectors below this many bytes are left alone: the allocator may serve them from its
/// heap, and their page work is small.
pub const MIN_ADVISED_BYTES: usize = 8 << 20;

/// Whether vectors are advised: `SLUICE_HUGE_PAGES=0` turns it off (read once).
fn enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var("SLUICE_HUGE_PAGES").map_or(true, |v| v != "0"))
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
    filled_with_huge_pages(len, value).ok_or_else(|| BackendError::OutOfMemory {
        kind: allocation.kind(),
        what: what.to_owned(),
        requested: allocation.bytes(),
        available: 0,
    })
}

/// A copy of `src` in a vector advised as huge ([`vec_with_huge_pages`]); aborts like
/// `to_vec` when the allocator refuses.
pub fn copy_with_huge_pages<T: Clone>(src: &[T]) -> Vec<T> {
    let mut v = vec_with_huge_pages(src.len()).unwrap_or_default();
    v.extend_from_slice(src);
    v
}

/// Asks the kernel to back the whole pages of `v`'s allocation (its capacity) with huge
/// pages from their next first touch; pages already written keep their size. Returns
/// whether the advice was given and taken: `false` for vectors under
/// [`MIN_ADVISED_BYTES`], with `SLUICE_HUGE_PAGES=0`, off Linux, or when the kernel
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
    fn small_vectors_are_not_advised() {
        let v: Vec<u64> = Vec::with_capacity(1024);
        assert!(!advise_huge_pages(&v));
        assert_eq!(
            vec_with_huge_pages::<u64>(16).map(|v| v.capacity()),
            Some(16)
        );
    }

    #[test]
    fn copies_keep_their_contents() {
        let src: Vec<u64> = (0..(MIN_ADVISED_BYTES as u64 / 8 + 3)).collect();
        assert_eq!(copy_with_huge_pages(&src), src);
        assert_eq!(
            filled_with_huge_pages(src.len(), 7u64),
            Some(vec![7; src.len()])
        );
        assert!(copy_with_huge_pages::<u64>(&[]).is_empty());
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
