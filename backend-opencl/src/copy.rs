//! The host's copies into and out of pinned staging: parallel, and optionally with
//! streaming (non-temporal) stores. Self-contained (std and rayon only), so that the
//! `staging_copy` benchmark compiles this file as it is.

use rayon::prelude::*;

/// Words per parallel task (256 KiB).
const TASK_WORDS: usize = 1 << 16;

/// Copies `src` into `dst` (the shorter length of the two) on the rayon pool: one thread
/// copies far below a GPU's DMA speed. With `streaming`, the stores are non-temporal where
/// the target has them (x86-64): they do not read each destination cache line before
/// overwriting it (a third of a memory-bound copy's traffic) and leave the destination out
/// of the cache, which suits a staging buffer that only the DMA reads next.
pub fn copy_words(dst: &mut [u32], src: &[u32], streaming: bool) {
    dst.par_chunks_mut(TASK_WORDS)
        .zip(src.par_chunks(TASK_WORDS))
        .for_each(|(d, s)| match streaming {
            true => copy_streaming(d, s),
            false => {
                let n = d.len().min(s.len());
                d[..n].copy_from_slice(&s[..n]);
            }
        });
}

#[cfg(target_arch = "x86_64")]
fn copy_streaming(dst: &mut [u32], src: &[u32]) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
    let n = dst.len().min(src.len());
    // The words before the first 16-byte-aligned destination address go plainly.
    let head = dst.as_ptr().align_offset(16).min(n);
    dst[..head].copy_from_slice(&src[..head]);
    let body = (n - head) / 4 * 4;
    // SAFETY: SSE2 is part of x86-64. Words head..head + body lie within both slices; the
    // destination is 16-byte aligned from `head` on (align_offset), as the streaming store
    // requires, and the loads are unaligned ones.
    unsafe {
        let (s, d) = (src.as_ptr().add(head), dst.as_mut_ptr().add(head));
        for i in (0..body).step_by(4) {
            let v = _mm_loadu_si128(s.add(i) as *const __m128i);
            _mm_stream_si128(d.add(i) as *mut __m128i, v);
        }
        // Streaming stores are weakly ordered: make them visible before the task ends (and
        // so before the transfer that reads them is queued).
        _mm_sfence();
    }
    dst[head + body..n].copy_from_slice(&src[head + body..n]);
}

#[cfg(not(target_arch = "x86_64"))]
fn copy_streaming(dst: &mut [u32], src: &[u32]) {
    let n = dst.len().min(src.len());
    dst[..n].copy_from_slice(&src[..n]);
}

#[cfg(test)]
mod tests {
    // Paths rather than imports: the benchmark compiles this file without the test harness.

    /// Both ways, at every destination alignment and at lengths around the vector width
    /// and the task size, the copy is exact and writes nothing past its end.
    #[test]
    fn copies_are_exact_at_any_alignment_and_length() {
        let task = super::TASK_WORDS;
        let src: Vec<u32> = (0..3 * task as u32 + 7)
            .map(|i| i.wrapping_mul(0x9e37_79b9))
            .collect();
        for streaming in [false, true] {
            for offset in 0..4 {
                for len in [0, 1, 3, 4, 5, 17, task - 1, task + 5, src.len()] {
                    let mut buf = vec![0u32; src.len() + 8];
                    super::copy_words(&mut buf[offset..offset + len], &src[..len], streaming);
                    assert!(
                        buf[offset..offset + len] == src[..len]
                            && buf[..offset].iter().all(|&w| w == 0)
                            && buf[offset + len..].iter().all(|&w| w == 0),
                        "streaming {streaming}, offset {offset}, length {len}"
                    );
                }
            }
        }
    }
}
