//! The threads the device's host-side work runs on: packing compact vectors, copies into
//! pinned staging, density counts. The device waits on this work, so it has a rayon pool
//! of its own: on rayon's global pool it queued behind the pipeline's forked synthesis,
//! which fills that pool with a task per challenge, while the device sat idle.

use std::sync::OnceLock;

/// The most threads the pool starts: enough to move memory at the link's speed, few
/// enough to leave the other cores to synthesis.
const MAX_THREADS: usize = 8;

/// The pool, started on first use (`None` where it could not start).
static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();

/// Runs `work` on the device's host pool, so its parallel iterators use that pool's
/// threads. Where the pool cannot start (the process is out of threads), the work runs on
/// rayon's global pool, which is only slower; a warning says so once.
pub(crate) fn install<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    let pool = POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_THREADS);
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("sluice-opencl-host-{i}"))
            .build()
            .map_err(|e| {
                log::warn!(
                    "the device's host pool did not start ({e}): its copies and packing \
                     share rayon's global pool with synthesis"
                )
            })
            .ok()
    });
    match pool {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests: a failed unwrap is a failed test.

    use std::sync::mpsc;
    use std::sync::{Arc, Barrier};
    use std::time::Duration;

    use rayon::prelude::*;

    /// With every thread of rayon's global pool busy (as forked synthesis keeps them), the
    /// device's parallel copy still runs: on the global pool it would wait for them all.
    #[test]
    fn device_copies_run_while_the_global_pool_is_busy() {
        let threads = rayon::current_num_threads();
        // Every global thread, and this test's, meet at the barrier after the copy.
        let release = Arc::new(Barrier::new(threads + 1));
        let (started_tx, started) = mpsc::channel();
        let hold = Arc::clone(&release);
        let busy = std::thread::spawn(move || {
            (0..threads).into_par_iter().for_each(|_| {
                started_tx.send(()).unwrap();
                hold.wait();
            })
        });
        for _ in 0..threads {
            started.recv_timeout(Duration::from_secs(30)).unwrap();
        }
        let (done_tx, done) = mpsc::channel();
        let copier = std::thread::spawn(move || {
            let src: Vec<u32> = (0..1 << 20).collect();
            let mut dst = vec![0u32; src.len()];
            crate::util::copy_words(&mut dst, &src);
            done_tx.send(dst == src).unwrap();
        });
        let copied = done.recv_timeout(Duration::from_secs(30));
        // Released whatever happened, so a failure fails rather than hangs.
        release.wait();
        busy.join().unwrap();
        assert_eq!(
            copied,
            Ok(true),
            "the copy waited for rayon's global pool ({threads} threads busy)"
        );
        copier.join().unwrap();
    }
}
